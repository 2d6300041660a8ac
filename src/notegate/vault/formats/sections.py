"""The one section iterator: heading lines → spans of "text between two headings", and the sectioned layout.

Every format that reads a section (handoff, log, project summary, the generic edits) walks the note with
:func:`sections`; none scans for headings itself.  A section runs from its heading line to the next
level-1/2 heading line or the end of the text.

Headings are ``#``/``##`` at the start of a ``\\n``-separated line.  Fenced code blocks are deliberately not
skipped: structure must not depend on whether some fence in free text is closed (an unclosed fence in one
section would otherwise swallow every later heading).  Text notegate writes is escaped
(:func:`notegate.vault.lines.escape_lines`), so this only matters for hand-written notes with ``## `` lines
inside code blocks.  One pass with ``str.find``: linear in the text.

Layout shared by the sectioned formats (handoff, project summary): the body right after the front matter
is ``## Heading\\n`` + escaped text + ``\\n``, the sections joined by one blank line (``\\n``).
:func:`section_text` strips exactly that separator again, so section texts may be anything, including
leading or trailing blank lines.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from notegate.vault.frontmatter import FormatError
from notegate.vault.lines import escape_lines, unescape_lines

_BLANKS = " \t"


@dataclass(frozen=True)
class Section:
    """One heading and the text under it, as offsets into the note."""

    level: int  # 1 or 2
    title: str  # trailing blanks and CR dropped
    start: int  # offset of the heading's '#'
    body: int  # offset just after the heading line's '\n' (or the end of the text)
    end: int  # offset of the next heading's '#', or the end of the text
    last: bool  # no heading follows

    def content(self, text: str) -> str:
        """The raw text between this heading line and the next heading (separator and escapes kept)."""
        return text[self.body : self.end]


def _heading_line(line: str) -> tuple[int, str] | None:
    """``#``/``##`` + blanks + title (trailing blanks and CR dropped) → (level, title); a scanner,
    because ``[ \\t]+(.*?)[ \\t\\r]*$`` is quadratic in a run of blanks inside the title."""
    level = len(line) - len(line.lstrip("#"))
    if level > 2:
        return None
    rest = line[level:]
    if not rest.strip(" \t\r"):
        return level, ""
    if rest[0] not in _BLANKS:
        return None
    return level, rest.lstrip(_BLANKS).rstrip(" \t\r")


def _heading_lines(text: str, start: int) -> Iterator[tuple[int, int, int, str]]:
    """(start, body, level, title) of each level-1/2 heading line at a ``\\n`` line start from ``start`` on."""
    n = len(text)
    pos = start
    if pos and text[pos - 1] != "\n":  # not a line start: begin at the next line
        nl = text.find("\n", pos)
        pos = n + 1 if nl == -1 else nl + 1
    while pos <= n:
        nl = text.find("\n", pos)
        stop = n if nl == -1 else nl
        if text.startswith("#", pos):
            heading = _heading_line(text[pos:stop])
            if heading is not None:
                yield pos, stop if nl == -1 else nl + 1, heading[0], heading[1]
        if nl == -1:
            break
        pos = nl + 1


def sections(text: str, start: int = 0) -> Iterator[Section]:
    """Every level-1/2 heading from ``start`` on, with the span of the text under it, in order."""
    previous = None
    for head in _heading_lines(text, start):
        if previous is not None:
            yield Section(previous[2], previous[3], previous[0], previous[1], head[0], last=False)
        previous = head
    if previous is not None:
        yield Section(previous[2], previous[3], previous[0], previous[1], len(text), last=True)


def strip_separator(content: str, *, last: bool) -> str:
    """Undo the layout: a section's text is followed by ``\\n``, plus ``\\n`` before the next heading."""
    if not last and content.endswith("\n\n"):
        return content[:-2]
    if content.endswith("\n"):
        return content[:-1]
    return content


def section_text(text: str, found: Section) -> str:
    """The text that was put in the section: layout separator and escaping undone."""
    return unescape_lines(strip_separator(found.content(text), last=found.last))


def render_sections(items: Iterable[tuple[str, str]]) -> str:
    """``## heading`` + escaped text per section, in the shared layout."""
    return "\n".join(f"## {heading}\n{escape_lines(text)}\n" for heading, text in items)


def parse_sections(body: str, expected: Sequence[str], what: str) -> list[str]:
    """Texts of exactly the ``expected`` level-2 sections, in order, filling the whole body."""
    found = list(sections(body))
    titles = [f"{'#' * s.level} {s.title}" for s in found]
    wanted = [f"## {title}" for title in expected]
    if titles != wanted or found[0].start != 0:
        raise FormatError(
            f"{what}: expected exactly the sections {wanted} right after the front matter, found {titles}.",
            rule="format-sections",
            remedy="Write the note through its format's render() instead of by hand.",
        )
    return [section_text(body, s) for s in found]
