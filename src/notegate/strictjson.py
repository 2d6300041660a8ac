"""Strict JSON for bodies and files a stranger, a device or a cut-short write controls: UTF-8, one value, no
repeated key, no ``NaN`` or ``Infinity``.

Why one reader: Python's ``json`` keeps the last of two equal keys and accepts ``NaN``, while CouchDB, a
JSON-schema validator or a second reader may keep the first or refuse the constant, so ``{"_id": a,
"_id": b}`` could be judged as one document and stored as another.  The LiveSync gate, the machine
contracts and the backup manifest each carried a copy of this check; a door wraps the ``ValueError`` in its
own refusal (its rule and its words).  Pure: no I/O.
"""

from __future__ import annotations

import json
from typing import Any


class _NotStrict(ValueError):
    """A key written twice in one object (``key``, as written: the caller shows it safely), or a constant
    JSON does not have (``constant``: NaN, Infinity, -Infinity)."""

    def __init__(self, message: str, *, key: str | None = None, constant: str | None = None) -> None:
        super().__init__(message)
        self.key, self.constant = key, constant


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _NotStrict("a key is repeated", key=key)
        out[key] = value
    return out


def _no_constant(name: str) -> Any:
    raise _NotStrict(f"{name} is not JSON", constant=name)


def loads(raw: bytes | str) -> Any:
    """The one JSON value of ``raw``; ``ValueError`` (``UnicodeDecodeError`` among them) when it is not strict
    JSON, ``RecursionError`` when it nests deeper than Python's stack.  :func:`repeated_key` and
    :func:`constant_named` tell what a refusal found."""
    text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
    return json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_no_constant)


def repeated_key(error: BaseException) -> str | None:
    """The key a :func:`loads` refusal found twice, or None when it refused for another reason."""
    return error.key if isinstance(error, _NotStrict) else None


def constant_named(error: BaseException) -> str | None:
    """The constant (NaN, Infinity) a :func:`loads` refusal found, or None when it refused for another reason."""
    return error.constant if isinstance(error, _NotStrict) else None
