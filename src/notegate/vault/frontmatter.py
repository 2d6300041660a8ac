"""A strict, round-tripping subset of YAML front matter, with no YAML library.

Theory of operation
-------------------
Obsidian notes open with a ``---`` block of YAML properties.  notegate needs
only flat string properties and lists of strings, and it must never let a value
change the structure of a note, so it reads and writes a deliberately small
subset itself instead of depending on a YAML parser:

* the block starts at offset 0 with a line that is exactly ``---`` and ends at
  the next line that is exactly ``---`` (LF line endings only: a CR inside the
  block is refused, never silently mis-read);
* every entry is ``key: scalar``, ``key: [a, b]`` (a flow list of scalars) or
  ``key:`` followed by block items ``- a`` (indented or not); a bare ``key:``
  with no items reads as the empty string, as Obsidian writes empty properties;
* scalars are plain, ``"double quoted"`` (escapes ``\\\\`` and ``\\"`` only) or
  ``'single quoted'`` (``''`` for a quote);
* anything else -- comments, nested maps, anchors, tags, block scalars,
  duplicate keys, other escapes -- raises :class:`FrontMatterError`.

Invariants (tested):

* ``split_front_matter(render_front_matter(d) + body) == (d, body)`` for every
  valid ``d`` and every ``body``;
* a rendered value never contains a line boundary of any kind, so no value can
  end the block or add a key.  Values holding a line boundary or a control
  character are refused (not escaped): no property notegate writes needs one.
* the writer quotes every value a YAML reader could take for something other
  than a string (``true``, ``null``, ``12``, ``1e3``, ``.inf``...) or that holds
  YAML syntax (``: ``, `` #``, a leading indicator or quote, flow brackets), so
  Obsidian and other YAML readers see the same strings we do.  ISO timestamps
  such as ``2025-01-02T10:00:00Z`` stay plain: they are dates to every reader.

Pure: no I/O; imports only the standard library's ``re`` and the one Unicode table it needs
(``unicode_tables.FRONT_MATTER_UNSAFE``).
"""

from __future__ import annotations

import re

from notegate.errors import ContentRejected
from notegate.safety.unicode_tables import FRONT_MATTER_UNSAFE, parse_ranges

__all__ = [
    "FormatError",
    "FrontMatter",
    "FrontMatterError",
    "front_matter_end",
    "render_front_matter",
    "split_front_matter",
]

FrontMatter = dict[str, str | list[str]]

_DELIMITER = "---"
_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*\Z")
_BLANKS = " \t"
# A plain item of a flow list: everything up to the next separator or bracket (one pass, no backtracking).
_FLOW_PLAIN = re.compile(r"[^,\[\]{}]*")
# Plain scalars a YAML 1.1/1.2 reader would type as bool/null/number: quote them.
_YAML_WORDS = frozenset({"true", "false", "yes", "no", "on", "off", "y", "n", "null", "~", "=", "<<"})
_NUMBERISH = re.compile(r"[-+]?(?:[0-9.][0-9a-fA-FxXoObB_.:eE+-]*|\.(?:inf|nan))\Z", re.IGNORECASE)
_INDICATORS = frozenset("-?:,[]{}#&*!|>'\"%@`")
_PLAIN_FORBIDDEN = (": ", " #", "\t", ",", "[", "]", "{", "}")


class FormatError(ContentRejected, ValueError):
    """A note is not in the shape its format requires, or a value cannot be written safely.

    Also a ``ValueError``, so plain Python callers can catch it without knowing
    the notegate family.
    """

    rule = "format-invalid"


class FrontMatterError(FormatError):
    """The front matter uses YAML outside the supported subset, or a value is unsafe."""

    rule = "front-matter-invalid"


def _fail(message: str) -> FrontMatterError:
    return FrontMatterError(
        message,
        remedy="Use only 'key: value', 'key: [a, b]' or 'key:' with '- item' lines, "
        "with one-line values, between two '---' lines.",
    )


# Exactly the categories Cc (minus TAB), Cs, Zl and Zp, plus U+FFFE/U+FFFF: one C-speed search per line.
_UNSAFE = re.compile(
    "[" + "".join(re.escape(chr(lo)) + "-" + re.escape(chr(hi)) for lo, hi in parse_ranges(FRONT_MATTER_UNSAFE)) + "]"
)


def _unsafe_char(text: str) -> str | None:
    """The first character YAML cannot hold in a one-line value: line breaks, controls, surrogates, U+FFFE/F."""
    found = _UNSAFE.search(text)
    return found.group() if found else None


def _check_value(value: object, where: str) -> str:
    if not isinstance(value, str):
        raise _fail(f"{where}: values must be strings or lists of strings, not {type(value).__name__}.")
    bad = _unsafe_char(value)
    if bad is not None:
        raise _fail(f"{where}: value contains a line break or control character (U+{ord(bad):04X}).")
    return value


def _needs_quotes(value: str) -> bool:
    return (
        value == ""
        or value != value.strip()
        or value[0] in _INDICATORS
        or value.endswith(":")
        or any(token in value for token in _PLAIN_FORBIDDEN)
        or value.lower() in _YAML_WORDS
        or _NUMBERISH.match(value) is not None
    )


def _render_scalar(value: str) -> str:
    if _needs_quotes(value):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return value


def render_front_matter(data: FrontMatter) -> str:
    """Render ``data`` as a front matter block, keys in insertion order.

    Always emits the block, even for an empty mapping (``---\\n---\\n``), so that
    a body which itself starts with ``---`` can never be mistaken for front
    matter on the way back.
    """
    lines = [_DELIMITER]
    for key, value in data.items():
        if not isinstance(key, str) or not _KEY.match(key):
            raise _fail(f"key {key!r} is not a simple name (letters, digits, '_' and '-').")
        if isinstance(value, list | tuple):
            items = [_render_scalar(_check_value(item, key)) for item in value]
            if items:
                lines.append(f"{key}:")
                lines.extend(f"  - {item}" for item in items)
            else:
                lines.append(f"{key}: []")
        else:
            lines.append(f"{key}: {_render_scalar(_check_value(value, key))}")
    lines.append(_DELIMITER)
    return "\n".join(lines) + "\n"


def front_matter_end(text: str) -> int:
    """Offset where the body starts: just after the closing ``---`` line, or 0.

    Finds the block by its delimiters only, without reading it, so callers that
    edit the body of hand-written notes can skip front matter they cannot parse.
    """
    if not text.startswith(_DELIMITER + "\n"):
        return 0
    # The first later line that is exactly the delimiter: each line start is just after a newline (the
    # first one at offset 3), found by str.find at C speed (a search reads this for each of its hits).
    at = text.find("\n" + _DELIMITER, len(_DELIMITER))
    width = len(_DELIMITER) + 1
    while at >= 0:
        after = at + width
        if after == len(text):
            return after
        if text[after] == "\n":
            return after + 1
        at = text.find("\n" + _DELIMITER, after)
    return 0


def _quoted_at(raw: str, start: int, where: str) -> tuple[str, int]:
    """Read one quoted scalar opening at ``raw[start]``; return (value, offset just after it).

    Offsets, not slices: a flow list of many quoted items stays linear in its length.
    """
    quote = raw[start]
    out: list[str] = []
    i = start + 1
    n = len(raw)
    while i < n:
        ch = raw[i]
        if quote == '"' and ch == "\\":
            nxt = raw[i + 1 : i + 2]
            if nxt not in ("\\", '"'):
                raise _fail(f"{where}: unsupported escape \\{nxt} in a double-quoted value.")
            out.append(nxt)
            i += 2
            continue
        if ch == quote:
            if quote == "'" and raw[i + 1 : i + 2] == "'":
                out.append("'")
                i += 2
                continue
            return "".join(out), i + 1
        out.append(ch)
        i += 1
    raise _fail(f"{where}: unterminated quoted value.")


def _parse_quoted(raw: str, where: str) -> tuple[str, str]:
    """Read one quoted scalar at the start of ``raw``; return (value, rest)."""
    value, end = _quoted_at(raw, 0, where)
    return value, raw[end:]


def _parse_scalar(raw: str, where: str) -> str:
    if raw[:1] in ('"', "'"):
        value, rest = _parse_quoted(raw, where)
        if rest.strip():
            raise _fail(f"{where}: unexpected text after a quoted value.")
        return value
    if raw[:1] in _INDICATORS and not (raw[0] == "-" and raw[1:2] not in ("", " ")):
        raise _fail(f"{where}: value starts with YAML syntax {raw[0]!r}; quote it.")
    if " #" in raw or ": " in raw or raw.endswith(":"):
        raise _fail(f"{where}: comments and nested mappings are not supported; quote the value.")
    return raw


def _skip_spaces(raw: str, i: int) -> int:
    n = len(raw)
    while i < n and raw[i] == " ":
        i += 1
    return i


def _parse_flow_list(raw: str, where: str) -> list[str]:
    """``[a, 'b', "c"]`` → items; one left-to-right pass over offsets (linear in the line)."""
    items: list[str] = []
    i = 1
    while True:
        i = _skip_spaces(raw, i)
        if not items and raw.startswith("]", i):
            i += 1
            break
        if raw[i : i + 1] in ('"', "'"):
            value, i = _quoted_at(raw, i, where)
            i = _skip_spaces(raw, i)
        else:
            end = _FLOW_PLAIN.match(raw, i).end()  # type: ignore[union-attr] - '*' always matches
            value = raw[i:end].rstrip(" ")
            i = end
            if not value:
                raise _fail(f"{where}: empty or nested item in a flow list.")
            value = _parse_scalar(value, where)
        items.append(value)
        if raw.startswith(",", i):
            i += 1
            continue
        if raw.startswith("]", i):
            i += 1
            break
        raise _fail(f"{where}: malformed flow list; write [a, b] with simple items.")
    if raw[i:].strip():
        raise _fail(f"{where}: unexpected text after a flow list.")
    return items


def _list_item(line: str) -> tuple[bool, str | None]:
    """``- value`` (indented or not) → (True, value); a bare ``-`` → (True, None); else (False, None).

    A scanner, not a pattern: ``[ \\t]+(.*?)[ \\t]*\\Z`` is quadratic in a run of blanks.
    """
    stripped = line.lstrip(_BLANKS)
    if not stripped.startswith("-"):
        return False, None
    rest = stripped[1:]
    if not rest:
        return True, None
    if rest[0] not in _BLANKS:
        return False, None
    return True, rest.strip(_BLANKS)


def _entry(line: str) -> tuple[str, str | None] | None:
    """``key: value`` → (key, value); ``key:`` (blanks allowed after) → (key, None or ""); else None.

    The key is everything before the first ``:``; the value loses its surrounding blanks.
    """
    colon = line.find(":")
    if colon <= 0 or line[0].isspace():
        return None
    key, rest = line[:colon], line[colon + 1 :]
    if not rest:
        return key, None
    if rest[0] not in _BLANKS:
        return None
    return key, rest.strip(_BLANKS)


def split_front_matter(text: str) -> tuple[FrontMatter, str]:
    """Split a note into its front matter mapping and its body.

    A note without a front matter block gives ``({}, text)``.  A block that
    exists but is outside the subset raises :class:`FrontMatterError`, naming
    the line; it is never skipped silently.
    """
    first_line = text.split("\n", 1)[0]
    if first_line.rstrip("\r") == _DELIMITER and first_line != _DELIMITER:
        raise _fail("front matter uses CR line endings; save the note with LF line endings.")
    end = front_matter_end(text)
    if end == 0:
        if first_line == _DELIMITER:
            raise _fail("front matter opened with '---' but never closed.")
        return {}, text
    block = text[len(_DELIMITER) + 1 : end].split("\n")
    lines = block[: block.index(_DELIMITER)]  # the first '---' line is the closing one
    data: FrontMatter = {}
    current_list: list[str] | None = None
    current_key = ""
    for number, line in enumerate(lines, start=2):
        where = f"front matter line {number}"
        bad = _unsafe_char(line)
        if bad is not None:
            raise _fail(f"{where}: line break or control character U+{ord(bad):04X} (CRLF files are refused).")
        if not line.strip():
            continue
        if line.lstrip().startswith("#"):
            raise _fail(f"{where}: comments are not supported.")
        is_item, value = _list_item(line)
        if is_item:
            if current_list is None:
                raise _fail(f"{where}: list item without a 'key:' line above it.")
            if value is None:
                raise _fail(f'{where}: empty list item; write "" for an empty string.')
            current_list.append(_parse_scalar(value, where))
            data[current_key] = current_list
            continue
        if line[0] in " \t":
            raise _fail(f"{where}: nested or multi-line values are not supported.")
        entry = _entry(line)
        if entry is None or not _KEY.match(entry[0]):
            raise _fail(f"{where}: expected 'key: value' with a simple key.")
        key, raw = entry
        if key in data:
            raise _fail(f"{where}: duplicate key {key!r}.")
        current_list = None
        if raw is None or raw == "":
            data[key] = ""
            current_list, current_key = [], key
        elif raw.startswith("["):
            data[key] = _parse_flow_list(raw, where)
        else:
            data[key] = _parse_scalar(raw, where)
    return data, text[end:]
