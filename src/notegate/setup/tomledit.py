"""Add or remove one table of a user's TOML file (Codex's ``~/.codex/config.toml``) as text, keeping every
other byte of it: comments, order, spacing.  There is no TOML writer in the standard library, and
round-tripping through one would reformat the user's file.

Invariant: an edit is accepted only if ``tomllib`` reads the result as exactly the original document with
that one table added (or removed); anything else (an inline ``mcp_servers = {…}``, a table defined twice)
is refused, and the file is left alone.
"""

from __future__ import annotations

import tomllib
from typing import Any

from notegate.errors import NotegateError


class TomlEditRefused(NotegateError):
    """The edit would not give the expected document; the message says why, never a value."""

    rule = "setup-conflict"


def _parse(text: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise TomlEditRefused(f"it is not valid TOML ({exc})") from None


def _get(doc: dict[str, Any], dotted: tuple[str, ...]) -> Any:
    node: Any = doc
    for key in dotted:
        if not isinstance(node, dict) or key not in node:
            return None
        node = node[key]
    return node


def _without(doc: dict[str, Any], dotted: tuple[str, ...]) -> dict[str, Any]:
    """``doc`` without the table at ``dotted``, and without parents that only held it."""
    if len(dotted) == 1:
        return {k: v for k, v in doc.items() if k != dotted[0]}
    head, rest = dotted[0], dotted[1:]
    child = _without(doc[head], rest)
    out = {k: v for k, v in doc.items() if k != head}
    if child:
        out[head] = child
    return out


def _render(value: str) -> str:
    escaped = value.replace("\\", "\\\\").replace('"', '\\"')
    if any(ord(c) < 0x20 for c in value):
        raise TomlEditRefused("a value holds a control character")
    return f'"{escaped}"'


def table_block(dotted: tuple[str, ...], values: dict[str, str], comment: str) -> str:
    """The text of one table: a comment line, its header and ``key = "value"`` lines."""
    lines = [f"# {comment}", "[" + ".".join(dotted) + "]"]
    lines += [f"{key} = {_render(value)}" for key, value in values.items()]
    return "\n".join(lines) + "\n"


def add_table(text: str, dotted: tuple[str, ...], values: dict[str, str], comment: str) -> tuple[str, str]:
    """``text`` with the table appended; returns (new text, the exact block inserted, its separator included).
    Refused when the table exists already or the result would read differently than expected."""
    before = _parse(text)
    if _get(before, dotted) is not None:
        raise TomlEditRefused(f"[{'.'.join(dotted)}] is there already")
    separator = "" if not text else ("\n" if text.endswith("\n") else "\n\n")
    block = separator + table_block(dotted, values, comment)
    after_text = text + block
    after = _parse(after_text)
    if _get(after, dotted) != values or _without(after, dotted) != before:
        raise TomlEditRefused(f"[{'.'.join(dotted)}] cannot be added next to what the file defines")
    return after_text, block


def remove_block(text: str, block: str, dotted: tuple[str, ...]) -> str | None:
    """``text`` without ``block`` (what :func:`add_table` inserted), or None when that exact block is no longer
    there (edited since) or removing it would change anything else."""
    at = text.rfind(block)
    if at < 0:
        return None
    after_text = text[:at] + text[at + len(block) :]
    try:
        before, after = _parse(text), _parse(after_text)
    except TomlEditRefused:
        return None
    if _get(before, dotted) is None or _without(before, dotted) != after:
        return None
    return after_text
