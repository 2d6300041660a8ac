"""Output gate: untrusted model output in; a validated value or a deterministic refusal out.

Theory of operation
-------------------
A model's answer is treated like a request from a stranger.  :func:`check_output` runs five
steps; the first one that refuses decides the error code, and nothing of the output survives a
refusal — the caller gets a *provenance-only fallback* (how many sources the job handed the
model, and the code), never a fragment of what the model said.

1. **Parse strictly** (:func:`parse_strict`): RFC 8259 JSON and nothing more.  Duplicate keys at
   any depth, ``NaN``/``Infinity`` (and numbers that overflow to them), absurdly long integers,
   lone surrogates, data after the value, a byte-order mark and excessive nesting are refused.
2. **Unwrap** (:func:`unwrap`) by known shapes only: the Claude CLI envelope
   (``structured_output``, else ``result`` as a JSON string or object) and a text that is, as a
   whole, exactly one fenced ```json block.  JSON is never scraped out of prose.  At most
   ``MAX_ENVELOPE_DEPTH`` wrappers (envelope objects, fences) are removed.
3. **Validate** against a named Draft 2020-12 schema shipped in ``notegate/schemas/``
   (``additionalProperties: false`` everywhere, every string and array capped).  Of all errors
   the one with the smallest instance location (keys compared as text, indexes as numbers) is
   reported, so the code does not depend on the order jsonschema happens to yield errors in.
4. **Gate content**: every string, every key and every integer goes through all six content
   gates (``contentgates.py``) after NFKC, invisible-character stripping and confusable mapping.
5. **Check citations**: every string a schema marks as a source (``"x-notegate-sources": true``
   on an array of strings or on a string) must be in the job's manifest.

Error codes (stable; doors and the CLI print them)::

    invalid-json  duplicate-json-key  non-finite-number  number-too-large  trailing-data
    not-json  too-deep  too-large  schema-invalid:<json-pointer>  unsafe-content:<gate>
    source-not-in-manifest  unknown-schema (a caller bug: raised, not returned)

Invariants
1. Pure: no os/io/subprocess/network/git.  The only outside read is package data through
   ``importlib.resources`` (the shipped schemas).
2. :func:`check_output` never raises for anything a model can produce; :func:`parse_strict` and
   :func:`unwrap` raise nothing but :class:`OutputGateError` for any ``str``.
3. Codes, messages and ``field`` never contain model text: pointers are built from schema
   property names and array indexes only (an unknown key is reported at its parent object; an
   unsafe key is reported at its parent object).
4. Deterministic: the same input, schema and manifest always yield the same result.
"""

from __future__ import annotations

import functools
import importlib.resources
import json
import math
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from jsonschema import Draft202012Validator, validators
from jsonschema.exceptions import ValidationError

from notegate.errors import GateRejected
from notegate.safety.contentgates import ALL_GATES, CREDENTIAL, scan_content
from notegate.safety.rules import Finding
from notegate.safety.secrets import scan_joined

__all__ = [
    "ALL_GATES",
    "MAX_ENVELOPE_DEPTH",
    "MAX_INT_DIGITS",
    "MAX_NESTING",
    "MAX_OUTPUT_CHARS",
    "SOURCES_KEYWORD",
    "Finding",
    "GateResult",
    "OutputGateError",
    "check_output",
    "ecma_pattern",
    "load_schema",
    "parse_strict",
    "rescan_text",
    "scan_content",
    "unwrap",
]

#: Largest model output considered at all (characters).  Our biggest schema fits in ~60 KiB.
MAX_OUTPUT_CHARS = 1 << 20
#: Wrappers (CLI envelopes, whole-text fences) removed before the payload; a fourth is refused.
MAX_ENVELOPE_DEPTH = 3
#: Arrays/objects nested deeper than this are refused (our schemas need 3).
MAX_NESTING = 32
#: Integers longer than this (in digits) are refused: no schema needs them, and int() of huge
#: strings is slow (CPython caps it at 4300 digits anyway).
MAX_INT_DIGITS = 64
#: Schema annotation marking a string, or an array of strings, as source identifiers.
SOURCES_KEYWORD = "x-notegate-sources"

_REMEDY = (
    "Nothing of the model output was used; the item keeps its provenance only. Re-run the model or review by hand."
)


class OutputGateError(GateRejected):
    """The output gate refused a model output.  ``code`` is machine-readable, ``field`` a JSON pointer."""

    rule = "output-gate"

    def __init__(self, code: str, field: str | None = None) -> None:
        where = f" at {field or '(root)'}" if field is not None else ""
        super().__init__(f"model output refused by the output gate: {code}{where}.", rule=code, remedy=_REMEDY)
        self.code = code
        self.field = field


@dataclass(frozen=True)
class GateResult:
    """Outcome of :func:`check_output`: the value when ``ok``, else a code and a provenance-only fallback."""

    ok: bool
    value: Any | None
    error: str | None
    fallback: dict[str, Any] | None
    field: str | None = None


# --------------------------------------------------------------------------------------------
# 1. Strict parsing
# --------------------------------------------------------------------------------------------

_JSON_WS = " \t\n\r"


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        raise OutputGateError("duplicate-json-key")
    return obj


def _constant(name: str) -> Any:
    raise OutputGateError("non-finite-number")


def _float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):  # 1e400 parses to inf
        raise OutputGateError("non-finite-number")
    return value


def _int(text: str) -> int:
    if len(text) - text.startswith("-") > MAX_INT_DIGITS:
        raise OutputGateError("number-too-large")
    return int(text)


_DECODER = json.JSONDecoder(
    object_pairs_hook=_object, parse_constant=_constant, parse_float=_float, parse_int=_int, strict=True
)


def _valid_text(s: str) -> bool:
    """No lone surrogates: they cannot be written as UTF-8, so nothing downstream could store them."""
    if s.isascii():
        return True
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _check_tree(value: Any) -> None:
    """Refuse nesting beyond MAX_NESTING and strings/keys with lone surrogates (iteratively)."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, str):
            if not _valid_text(node):
                raise OutputGateError("invalid-json")
        elif isinstance(node, dict | list):
            if depth >= MAX_NESTING:
                raise OutputGateError("too-deep")
            if isinstance(node, dict):
                for key, child in node.items():
                    if not _valid_text(key):
                        raise OutputGateError("invalid-json")
                    stack.append((child, depth + 1))
            else:
                stack.extend((child, depth + 1) for child in node)


def parse_strict(raw: str) -> Any:
    """Parse one JSON text, refusing everything RFC 8259 merely tolerates.

    Raises only :class:`OutputGateError` (for ``bytes``, invalid UTF-8 is ``invalid-json``).
    """
    if isinstance(raw, bytes | bytearray):
        try:
            raw = bytes(raw).decode("utf-8")
        except UnicodeDecodeError:
            raise OutputGateError("invalid-json") from None
    if not isinstance(raw, str):
        raise OutputGateError("invalid-json")
    if len(raw) > MAX_OUTPUT_CHARS:
        raise OutputGateError("too-large")
    start = len(raw) - len(raw.lstrip(_JSON_WS))
    try:
        value, end = _DECODER.raw_decode(raw, start)
    except json.JSONDecodeError:
        raise OutputGateError("invalid-json") from None
    except RecursionError:
        raise OutputGateError("too-deep") from None
    except ValueError:  # int() limits and similar: still not something we accept
        raise OutputGateError("invalid-json") from None
    if raw[end:].strip(_JSON_WS):
        raise OutputGateError("trailing-data")
    _check_tree(value)
    return value


# --------------------------------------------------------------------------------------------
# 2. Unwrapping
# --------------------------------------------------------------------------------------------

_FENCE = re.compile(
    r"\A[ \t\r\n]*```[ \t]*(?:json)?[ \t]*\r?\n(?P<body>.*?)\r?\n[ \t]*```[ \t\r\n]*\Z", re.DOTALL | re.IGNORECASE
)
_FENCE_LINE = re.compile(r"^[ \t]*```", re.MULTILINE)


def _count_level(levels: int) -> int:
    levels += 1
    if levels > MAX_ENVELOPE_DEPTH:
        raise OutputGateError("too-deep")
    return levels


def _from_text(text: str | bytes | bytearray, levels: int) -> tuple[Any, int]:
    """A text is either bare JSON (object or array) or exactly one whole fenced JSON block."""
    if isinstance(text, bytes | bytearray):
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError:
            raise OutputGateError("invalid-json") from None
    if len(text) > MAX_OUTPUT_CHARS:
        raise OutputGateError("too-large")
    if text.lstrip(_JSON_WS).startswith("\ufeff"):
        raise OutputGateError("invalid-json")  # RFC 8259 section 8.1: no byte order mark
    fence = _FENCE.match(text)
    if fence is not None:
        body = fence.group("body")
        if _FENCE_LINE.search(body):
            raise OutputGateError("not-json")  # two blocks, or a block with prose between fences
        return parse_strict(body), _count_level(levels)
    if not text.lstrip(_JSON_WS).startswith(("{", "[")):
        raise OutputGateError("not-json")
    return parse_strict(text), levels


def _envelope_inner(value: dict[str, Any]) -> tuple[bool, Any]:
    """The Claude CLI's result envelope: prefer ``structured_output``, else ``result``."""
    inner = value.get("structured_output")
    if inner is not None:
        return True, inner
    inner = value.get("result")
    if isinstance(inner, str | dict):
        return True, inner
    return False, None


def _unwrap_value(value: Any, levels: int) -> Any:
    while isinstance(value, dict):
        is_envelope, inner = _envelope_inner(value)
        if not is_envelope:
            break
        levels = _count_level(levels)
        if isinstance(inner, str):
            value, levels = _from_text(inner, levels)
        else:
            value = inner
    return value


def unwrap(value_or_text: Any) -> Any:
    """The payload inside a model answer: text is parsed (bare or one whole fence), envelopes removed.

    A ``str``/``bytes`` argument is always treated as text; anything else as an already
    parsed JSON value (still checked for nesting and lone surrogates).
    """
    if isinstance(value_or_text, str | bytes | bytearray):
        value, levels = _from_text(value_or_text, 0)
    else:
        _check_tree(value_or_text)
        value, levels = value_or_text, 0
    return _unwrap_value(value, levels)


# --------------------------------------------------------------------------------------------
# 3. Schemas
# --------------------------------------------------------------------------------------------

_SCHEMA_NAME = re.compile(r"[a-z][a-z0-9-]{0,31}")


@functools.lru_cache(maxsize=32)
def _schema_text(name: str) -> str:
    # Only names that exist are cached: lru_cache does not cache a raised exception.
    if not isinstance(name, str) or not _SCHEMA_NAME.fullmatch(name):
        raise OutputGateError("unknown-schema")
    resource = importlib.resources.files("notegate").joinpath("schemas").joinpath(f"{name}.json")
    if not resource.is_file():
        raise OutputGateError("unknown-schema")
    return resource.read_text(encoding="utf-8")


def load_schema(name: str) -> dict[str, Any]:
    """A fresh copy of the named schema shipped in ``notegate/schemas/`` (``unknown-schema`` if none)."""
    schema: dict[str, Any] = json.loads(_schema_text(name))
    return schema


def ecma_pattern(pattern: str) -> str:
    """A JSON Schema (ECMA-262) pattern as Python ``re`` must read it: ``$`` becomes ``\\Z``.

    In ECMA-262 ``$`` (no multiline flag) matches only at the end of the input; in Python it
    also matches before a final newline, so ``^[a-z]+$`` accepted ``"aa\\n"`` (found in review).
    Escapes and character classes are copied as they are.
    """
    out: list[str] = []
    i = 0
    in_class = False
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\":
            out.append(pattern[i : i + 2])
            i += 2
            continue
        if in_class:
            in_class = ch != "]"
        elif ch == "[":
            in_class = True
            if pattern[i + 1 : i + 2] == "]":  # "[]...]": a leading "]" is a member
                out.append("[]")
                i += 2
                continue
        elif ch == "$":
            ch = "\\Z"
        out.append(ch)
        i += 1
    return "".join(out)


@functools.lru_cache(maxsize=256)
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(ecma_pattern(pattern))


def _pattern(validator: Any, patrn: str, instance: Any, schema: Any) -> Iterator[ValidationError]:
    """``pattern`` with ECMA-262 semantics (see :func:`ecma_pattern`): searched, ``$`` = end of input."""
    if validator.is_type(instance, "string") and _compiled(patrn).search(instance) is None:
        yield ValidationError(f"{instance!r} does not match {patrn!r}")


_StrictValidator = validators.extend(Draft202012Validator, {"pattern": _pattern})


def strict_validator(schema: dict[str, Any]) -> Draft202012Validator:
    """A Draft 2020-12 validator for ``schema`` with this gate's semantics (ECMA-262 ``pattern``, formats
    checked); the schema itself is checked first. Also used for machine contracts' input."""
    Draft202012Validator.check_schema(schema)
    validator: Draft202012Validator = _StrictValidator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER)
    return validator


@functools.lru_cache(maxsize=32)
def _validator(name: str) -> Draft202012Validator:
    schema = load_schema(name)
    Draft202012Validator.check_schema(schema)
    validator: Draft202012Validator = _StrictValidator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER)
    return validator


def _pointer(parts: Iterable[str | int]) -> str:
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def _schema_error(validator: Draft202012Validator, value: Any) -> str | None:
    """Pointer of the first error in a stable order, or None when the value is valid."""
    best: tuple[Any, ...] | None = None
    best_parts: list[str | int] = []
    for error in validator.iter_errors(value):
        parts: list[str | int] = list(error.absolute_path)
        if error.validator == "required" and isinstance(error.instance, dict):
            missing = [n for n in error.validator_value if n not in error.instance]
            parts.extend(missing[:1])  # a schema name, never model text
        key = (
            tuple((0, p, "") if isinstance(p, int) else (1, 0, p) for p in parts),
            str(error.validator),
            tuple(map(str, error.absolute_schema_path)),
        )
        if best is None or key < best:
            best, best_parts = key, parts
    return None if best is None else _pointer(best_parts)


# --------------------------------------------------------------------------------------------
# 4. Content and 5. citations
# --------------------------------------------------------------------------------------------


def _first_unsafe(value: Any, pointer: str) -> tuple[str, str] | None:
    """(gate, pointer) of the first unsafe string, key or integer in document order."""
    if isinstance(value, str):
        found = scan_content(value)
        return (found[0].gate, pointer) if found else None
    if isinstance(value, bool) or value is None or isinstance(value, float):
        return None
    if isinstance(value, int):
        found = scan_content(str(value))
        return (found[0].gate, pointer) if found else None
    if isinstance(value, dict):
        for key, child in value.items():
            found = scan_content(key)
            if found:
                return found[0].gate, pointer  # the parent: never put an unsafe key in a pointer
            hit = _first_unsafe(child, pointer + _pointer([key]))
            if hit:
                return hit
        return None
    for index, child in enumerate(value):
        hit = _first_unsafe(child, f"{pointer}/{index}")
        if hit:
            return hit
    return None


def _strings(value: Any, pointer: str) -> Iterator[tuple[str, str]]:
    """(pointer, string) for every string value in document order."""
    if isinstance(value, str):
        yield pointer, value
    elif isinstance(value, dict):
        for key, child in value.items():
            yield from _strings(child, pointer + _pointer([key]))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            yield from _strings(child, f"{pointer}/{index}")


def _split_secret(value: Any) -> str | None:
    """Pointer of the first field where a provider token split across fields begins.

    Each string passed the gates alone; a renderer may still put two of them side by side
    (``- ghp_abc`` / ``- def…``), so the strings are also read back to back.
    """
    found = list(_strings(value, ""))
    hits = scan_joined(text for _, text in found)
    return found[hits[0][0]][0] if hits else None


def _source_claims(schema: Any, value: Any, pointer: str) -> Iterator[tuple[str, str]]:
    """(pointer, source) for every string the schema marks with ``x-notegate-sources``."""
    if not isinstance(schema, dict):
        return
    if schema.get(SOURCES_KEYWORD) is True:
        if isinstance(value, str):
            yield pointer, value
        elif isinstance(value, list):
            yield from ((f"{pointer}/{i}", item) for i, item in enumerate(value) if isinstance(item, str))
    properties = schema.get("properties")
    if isinstance(value, dict) and isinstance(properties, dict):
        for name, sub in properties.items():
            if name in value:
                yield from _source_claims(sub, value[name], pointer + _pointer([name]))
    items = schema.get("items")
    if isinstance(value, list) and isinstance(items, dict):
        for i, item in enumerate(value):
            yield from _source_claims(items, item, f"{pointer}/{i}")


# --------------------------------------------------------------------------------------------
# The recipe
# --------------------------------------------------------------------------------------------


def _fallback(sources_seen: int, code: str) -> dict[str, Any]:
    return {"sources_seen": sources_seen, "note": f"model output withheld: {code}"}


def check_output(raw: str, schema_name: str, manifest: Iterable[str]) -> GateResult:
    """Run the whole gate.  Bad model output never raises: it yields ``ok=False`` and a fallback.

    ``manifest`` lists the source identifiers the job gave the model (for ``review``: the inbox
    item paths).  An unknown ``schema_name`` or a manifest that is a single string are caller
    bugs and raise.
    """
    if isinstance(manifest, str):
        raise TypeError("manifest must be an iterable of source identifiers, not one string")
    allowed = frozenset(manifest)
    validator = _validator(schema_name)
    try:
        value = unwrap(raw)
        pointer = _schema_error(validator, value)
        if pointer is not None:
            raise OutputGateError(f"schema-invalid:{pointer}", pointer)
        unsafe = _first_unsafe(value, "")
        if unsafe is not None:
            raise OutputGateError(f"unsafe-content:{unsafe[0]}", unsafe[1])
        split = _split_secret(value)
        if split is not None:
            raise OutputGateError(f"unsafe-content:{CREDENTIAL}", split)
        for where, source in _source_claims(validator.schema, value, ""):
            if source not in allowed:
                raise OutputGateError("source-not-in-manifest", where)
    except OutputGateError as refused:
        return GateResult(False, None, refused.code, _fallback(len(allowed), refused.code), refused.field)
    return GateResult(True, value, None, None)


def rescan_text(text: str | bytes) -> list[Finding]:
    """All six gates over the exact text about to be committed (rendered Markdown, a diff).

    ``bytes`` are decoded as UTF-8 with replacement, so positions refer to the decoded text.
    """
    if isinstance(text, bytes | bytearray):
        text = bytes(text).decode("utf-8", errors="replace")
    return scan_content(text, ALL_GATES)
