"""Line boundaries, one-line identifiers and the escaping of free text, shared by the fence and the formats.

"Line start" means after *every* boundary Python or Unicode knows (``\\r\\n``, ``\\r``, ``\\n``, ``\\v``,
``\\f``, ``\\x1c``-``\\x1e``, ``\\x85``, U+2028, U+2029; ``unicode_tables.LINE_BOUNDARIES``), not only ``\\n``:
a text must not be able to hide a line break that some other reader honours.

Escaping: free text placed in a note goes through :func:`escape_lines` first.  Any line that starts (after
up to three spaces) with backslashes and then a block -- an ATX heading, a setext underline, a rule, a code
fence, an HTML block (our sessions markers among them), a link reference definition -- gets one more
backslash.  A link reference definition renders as nothing wherever it stands, so it is also looked for
inside block quotes and list items, at any indentation (:func:`_container_end`).  Markdown renders
``\\##`` as a literal ``##``, our parsers never see it as structure, and :func:`unescape_lines`
removes exactly that one backslash again, so every text round-trips byte for byte.

Pure: no I/O; the Unicode sets come from :mod:`notegate.safety.unicode_tables`, the only copy.
"""

from __future__ import annotations

import re
import unicodedata

from notegate.safety.unicode_tables import INLINE_FORBIDDEN_CATEGORIES, LINE_BOUNDARIES, parse_ranges
from notegate.vault.frontmatter import FormatError

#: The boundary characters, one by one (``\\r\\n`` is two of them, read as one boundary).
BOUNDARY_CHARS = frozenset(chr(cp) for lo, hi in parse_ranges(LINE_BOUNDARIES) for cp in range(lo, hi + 1))
# Every line boundary str.splitlines() honours; CommonMark's (\r\n, \r, \n) are a subset.
_BOUNDARY_CLASS = "".join(re.escape(chr(lo)) + "-" + re.escape(chr(hi)) for lo, hi in parse_ranges(LINE_BOUNDARIES))
BOUNDARY = "\r\n|[" + _BOUNDARY_CLASS + "]"
BOUNDARY_RE = re.compile(BOUNDARY)
_BOUNDARY_KEEP_RE = re.compile(f"({BOUNDARY})")

_BLANKS = " \t"
#: Every character a block-starting line (or an escaped one) can begin with, after its indentation.
_BLOCK_FIRST = frozenset("#=-*_`~<[+\\")
#: ... and every character a block-quote or list-item line can begin with (a hidden definition inside).
_CONTAINER_FIRST = frozenset(" \t>-+*0123456789")
_DIGITS = frozenset("0123456789")
_HTML_START = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ/!?")


def check_inline(value: object, what: str, *, forbid: str = "") -> str:
    """A one-line identifier: non-empty, trimmed, only assigned characters, no line break or control/format one.

    Unassigned code points (category Cn, which includes U+FFFE/U+FFFF) and lone
    surrogates are refused too: YAML and UTF-8 cannot carry them.
    """
    if not isinstance(value, str) or not value or value != value.strip():
        raise FormatError(f"{what} must be a non-empty string without surrounding whitespace.", rule="format-value")
    if value.isprintable() and not any(ch in value for ch in forbid):
        return value  # C-speed: no printable character is in Cc, Cf, Cn, Cs, Zl or Zp
    for ch in value:
        if unicodedata.category(ch) in INLINE_FORBIDDEN_CATEGORIES or ch in forbid:
            raise FormatError(f"{what} must not contain {ch!r}.", rule="format-value")
    return value


def normalize_line_endings(text: str) -> str:
    """Replace every line boundary (see module docstring) with ``\\n``."""
    return BOUNDARY_RE.sub("\n", text)


_NEWLINE_RE = re.compile(r"\r?\n")


def line_break_of(text: str) -> str | None:
    """The line break ``text`` is written with, for an addition to follow: ``"\\r\\n"`` when every LF in it
    ends a CRLF, ``"\\n"`` when none does.  None when it has no LF, or mixes the two: a mixed note has no one
    style to follow, so an addition is written as it comes (as before) rather than by a guess.  Only LF and
    CRLF count: a bare CR or a Unicode boundary is not a style any editor saves a note in."""
    lf = text.count("\n")
    if not lf:
        return None
    crlf = text.count("\r\n")
    if crlf == lf:
        return "\r\n"
    return "\n" if not crlf else None


def with_line_breaks(text: str, newline: str) -> str:
    """``text`` with every LF and CRLF written as ``newline`` (``"\\n"`` or ``"\\r\\n"``).  Other boundaries,
    a bare CR among them, are left as they are: rewriting them would change what the text says, and the
    floor judges them in the committed bytes."""
    return _NEWLINE_RE.sub(newline, text)


def strip_blank_edges(text: str) -> str:
    """Drop blank lines (blanks then a line boundary) at the start, and line boundaries with the blanks
    after them at the end -- by index, because ``(?:\\n[ \\t]*)+\\Z`` retries from every boundary."""
    start = 0
    pos = 0
    n = len(text)
    while True:
        while pos < n and text[pos] in _BLANKS:
            pos += 1
        if pos < n and text[pos] in BOUNDARY_CHARS:
            pos += 2 if text.startswith("\r\n", pos) else 1
            start = pos
            continue
        break
    end = n
    pos = n
    while pos > start:
        while pos > start and text[pos - 1] in _BLANKS:
            pos -= 1
        if pos > start and text[pos - 1] in BOUNDARY_CHARS:
            pos -= 1
            end = pos
            continue
        break
    return text[start:end]


def _is_block_start(rest: str, *, list_marks: bool) -> bool:
    """Whether a line whose indentation (up to 3 spaces) and backslashes are gone would start a block
    that can end a log entry or a section, or make one look like two, in our parser or in a renderer.

    Plain string tests, linear in the line: ATX headings and setext underlines (headings), thematic
    breaks and ``---`` (rules, front matter), code fences (they swallow what follows), HTML blocks (our
    sessions markers among them), link reference definitions (they render as nothing), and for summary
    paragraphs also list markers.
    """
    if not rest:
        return False
    first = rest[0]
    if first == "#":
        hashes = len(rest) - len(rest.lstrip("#"))
        return hashes <= 6 and (hashes == len(rest) or rest[hashes] in _BLANKS)
    if first in "=-" and not rest.rstrip(_BLANKS).strip(first):
        return True  # a setext underline (and '---', front matter's delimiter)
    if first in "*-_" and len(rest) >= 3 and rest.count(first) >= 3 and not rest.replace(first, "").strip(_BLANKS):
        return True  # a thematic break: '***', '- - -', '_ _ _'
    if first in "`~" and rest.startswith(first * 3):
        return True
    if first == "<" and len(rest) > 1 and rest[1] in _HTML_START:
        return True
    if first == "[" and _may_define_link(rest):
        return True
    return list_marks and first in "-+*" and (len(rest) == 1 or rest[1] in _BLANKS)


def _may_define_link(rest: str) -> bool:
    """Whether ``rest`` (which starts with ``[``) could open a link reference definition: its label's first
    unescaped ``]`` is followed by ``:``, or the label does not close on this line (labels may span lines).

    Over-inclusive on purpose -- an escaped ``[`` renders the same -- but ``[ ] task`` stays a checkbox.
    """
    pos = 1
    n = len(rest)
    while pos < n:
        ch = rest[pos]
        if ch == "\\":
            pos += 2
            continue
        if ch == "]":
            return rest[pos + 1 : pos + 2] == ":"
        pos += 1
    return True


def _container_end(line: str) -> int:
    """Where a line's content starts after its indentation and every block-quote (``>``) and list-item
    (``-``, ``+``, ``*``, ``1.``, ``1)``) marker: CommonMark reads a definition inside those containers too,
    and nested lists make any indentation a possible container.  One pass, each step moves forward."""
    pos = 0
    n = len(line)
    while True:
        while pos < n and line[pos] in _BLANKS:
            pos += 1
        if pos >= n:
            return pos
        ch = line[pos]
        if ch == ">":
            pos += 1
            continue
        if ch in "-+*" and (pos + 1 == n or line[pos + 1] in _BLANKS):
            pos += 1
            continue
        digits = pos
        while digits < n and digits - pos < 9 and line[digits] in _DIGITS:
            digits += 1
        if digits > pos and digits < n and line[digits] in ".)" and (digits + 1 == n or line[digits + 1] in _BLANKS):
            pos = digits + 1
            continue
        return pos


def _definition_at(line: str, *, escaped: bool) -> int | None:
    """Where the backslash goes for a link reference definition inside a container (or indented), or None."""
    start = _container_end(line)
    after = line[start:]
    backslashes = len(after) - len(after.lstrip("\\"))
    if escaped and not backslashes:
        return None
    rest = after[backslashes:]
    return start if rest[:1] == "[" and _may_define_link(rest) else None


def _escape_at(line: str, *, list_marks: bool, escaped: bool) -> int | None:
    """Where the backslash goes (or is removed) in ``line``, or None when the line is left alone.

    A line is escaped when, after up to three spaces and any backslashes, it starts a block
    (:func:`_is_block_start`); :func:`escape_lines` adds one backslash there and
    :func:`unescape_lines` removes one from lines that have at least one, so they are exact inverses.
    """
    indent = len(line) - len(line.lstrip(" "))
    if indent <= 3:
        after = line[indent:]
        backslashes = len(after) - len(after.lstrip("\\"))
        if (backslashes or not escaped) and _is_block_start(after[backslashes:], list_marks=list_marks):
            return indent
    # Not a block start at the top: a definition inside a container.  Inverse-safe: when the top-level
    # test fails on a line it also fails once a backslash is added after a marker or 4+ blanks.
    return _definition_at(line, escaped=escaped)


def _map_line_starts(text: str, *, insert: bool, list_marks: bool) -> str:
    parts = _BOUNDARY_KEEP_RE.split(text)
    for i in range(0, len(parts), 2):
        line = parts[i]
        if not line or (line[0] not in _CONTAINER_FIRST and line[0] not in _BLOCK_FIRST):
            continue  # the common case, decided without a call
        cut = _escape_at(line, list_marks=list_marks, escaped=not insert)
        if cut is not None:
            parts[i] = line[:cut] + "\\" + line[cut:] if insert else line[:cut] + line[cut + 1 :]
    return "".join(parts)


def escape_lines(text: str) -> str:
    """Neutralise block-starting lines (headings, rules, fences, HTML, markers...) in free text.

    Invert with :func:`unescape_lines`.
    """
    return _map_line_starts(text, insert=True, list_marks=False)


def unescape_lines(text: str) -> str:
    """Exact inverse of :func:`escape_lines`."""
    return _map_line_starts(text, insert=False, list_marks=False)


def escape_paragraph(text: str) -> str:
    """:func:`escape_lines`, and list markers too: a summary paragraph cannot pass for the bullet list."""
    return _map_line_starts(text, insert=True, list_marks=True)


def unescape_paragraph(text: str) -> str:
    """Exact inverse of :func:`escape_paragraph`."""
    return _map_line_starts(text, insert=False, list_marks=True)
