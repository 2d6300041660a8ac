"""The Markdown shapes notegate reads and writes: fence, handoff, log, session note, project summary.

Theory of operation
-------------------
Every note here is text a model may have written, later read back by code (to
parse it) and by another model (at session start).  Two things must hold:

1. **Structure comes only from code.**  The sections of a note are found by
   heading lines (``#``/``##`` at the start of a ``\\n``-separated line).  Free
   text placed in a section goes through :func:`escape_lines` first: any line
   that starts (after up to three spaces) with backslashes and then an ATX
   heading (``#`` to ``######`` followed by a space, tab or end of line) or a
   sessions-block marker gets one more backslash.  Markdown renders ``\\##`` as
   a literal ``##``, our parser never sees it as a heading, and
   :func:`unescape_lines` removes exactly that one backslash again, so every
   text round-trips byte for byte.  "Line start" means after *every* boundary
   Python or Unicode knows (``\\r\\n``, ``\\r``, ``\\n``, ``\\v``, ``\\f``,
   ``\\x1c``-``\\x1e``, ``\\x85``, U+2028, U+2029), not only ``\\n``, so a text
   cannot smuggle a heading behind a line break some other reader honours.
   A log entry therefore cannot forge another entry, a handoff section cannot
   forge a section, and section text cannot forge a sessions marker.

2. **Text loaded at session start is quoted data.**  :func:`fence_untrusted`
   wraps it so it cannot be closed from inside (see that function).

Layout shared by the sectioned formats (handoff, project summary): the body
right after the front matter is ``## Heading\\n`` + escaped text + ``\\n``, the
sections joined by one blank line (``\\n``).  A parser strips exactly that
separator again, so section texts may be anything, including leading or
trailing blank lines.

Times are parameters (``datetime`` values with a time zone), never read from a
clock; they are stored in UTC.  Pure: no I/O, no clock, standard library only.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime

from notegate.vault.fence import fence_untrusted, unfence
from notegate.vault.frontmatter import (
    FormatError,
    FrontMatter,
    FrontMatterError,
    front_matter_end,
    render_front_matter,
    split_front_matter,
)
from notegate.vault.lines import BOUNDARY as _BOUNDARY
from notegate.vault.lines import BOUNDARY_RE as _BOUNDARY_RE
from notegate.vault.lines import check_inline as _check_inline

__all__ = [
    "HANDOFF_SECTIONS",
    "MAX_SESSION_SUMMARY_CHARS",
    "MAX_SUMMARY_CHARS",
    "MIN_KEPT_SESSIONS",
    "RECENT_SESSIONS",
    "SESSIONS_END",
    "SESSIONS_START",
    "SUMMARY_SECTIONS",
    "FormatError",
    "FrontMatterError",
    "Handoff",
    "LogEntry",
    "ProjectSummary",
    "SessionNote",
    "SessionRef",
    "append_under_heading",
    "escape_lines",
    "fence_untrusted",
    "insert_log_entry",
    "normalize_line_endings",
    "parse_log",
    "rebuild_sessions_block",
    "render_front_matter",
    "render_log_entry",
    "section",
    "split_front_matter",
    "unescape_lines",
    "unfence",
]

# ---------------------------------------------------------------- constants --

#: A project summary, front matter included, never exceeds this many characters.
MAX_SUMMARY_CHARS = 12_000
#: How many session notes the "Recent sessions" block lists.
RECENT_SESSIONS = 10
#: Sessions kept while the cap trims section text; dropped only if that is not enough.
MIN_KEPT_SESSIONS = 3
#: A session's one-line summary in the block is cut to this length.
MAX_SESSION_SUMMARY_CHARS = 160

SESSIONS_START = "<!-- SESSIONS:START -->"
SESSIONS_END = "<!-- SESSIONS:END -->"
RECENT_SESSIONS_HEADING = "Recent sessions"
HANDOFF_SECTIONS = ("Where it stopped", "Next step", "Open questions", "Repo state")
SUMMARY_SECTIONS = (
    "Goal",
    "Current state",
    "Key files",
    "Recent decisions",
    "Open tasks / blockers",
    "Context to resume",
)
TRIM_MARK = "… [trimmed to keep the project summary within its size cap]"

# ------------------------------------------------------------ line handling --

# Every line boundary str.splitlines() honours; CommonMark's (\r\n, \r, \n) are a subset.
_BOUNDARY_KEEP_RE = re.compile(f"({_BOUNDARY})")

_MARKER_RE = re.compile(r"^<!-- SESSIONS:(START|END) -->[ \t\r]*$", re.MULTILINE)
_BLANKS = " \t"
_BOUNDARY_CHARS = frozenset("\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")
#: Every character a block-starting line (or an escaped one) can begin with, after its indentation.
_BLOCK_FIRST = frozenset("#=-*_`~<[+\\")
_HTML_START = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ/!?")


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
    if first == "[":
        close = rest.find("]")
        if close > 0 and rest[close + 1 : close + 2] == ":":
            return True
    return list_marks and first in "-+*" and (len(rest) == 1 or rest[1] in _BLANKS)


def _escape_at(line: str, *, list_marks: bool, escaped: bool) -> int | None:
    """Where the backslash goes (or is removed) in ``line``, or None when the line is left alone.

    A line is escaped when, after up to three spaces and any backslashes, it starts a block
    (:func:`_is_block_start`); :func:`escape_lines` adds one backslash there and
    :func:`unescape_lines` removes one from lines that have at least one, so they are exact inverses.
    """
    indent = len(line) - len(line.lstrip(" "))
    if indent > 3:
        return None
    after = line[indent:]
    backslashes = len(after) - len(after.lstrip("\\"))
    if escaped and not backslashes:
        return None
    return indent if _is_block_start(after[backslashes:], list_marks=list_marks) else None


def _strip_blank_edges(text: str) -> str:
    """Drop blank lines (blanks then a line boundary) at the start, and line boundaries with the blanks
    after them at the end -- by index, because ``(?:\\n[ \\t]*)+\\Z`` retries from every boundary."""
    start = 0
    pos = 0
    n = len(text)
    while True:
        while pos < n and text[pos] in _BLANKS:
            pos += 1
        if pos < n and text[pos] in _BOUNDARY_CHARS:
            pos += 2 if text.startswith("\r\n", pos) else 1
            start = pos
            continue
        break
    end = n
    pos = n
    while pos > start:
        while pos > start and text[pos - 1] in _BLANKS:
            pos -= 1
        if pos > start and text[pos - 1] in _BOUNDARY_CHARS:
            pos -= 1
            end = pos
            continue
        break
    return text[start:end]


def normalize_line_endings(text: str) -> str:
    """Replace every line boundary (see module docstring) with ``\\n``."""
    return _BOUNDARY_RE.sub("\n", text)


def _map_line_starts(text: str, *, insert: bool, list_marks: bool) -> str:
    parts = _BOUNDARY_KEEP_RE.split(text)
    for i in range(0, len(parts), 2):
        line = parts[i]
        if not line or line.lstrip(" ")[:1] not in _BLOCK_FIRST:
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


def _escape_paragraph(text: str) -> str:
    # A summary paragraph also escapes list markers, so it cannot pass for the bullet list.
    return _map_line_starts(text, insert=True, list_marks=True)


def _unescape_paragraph(text: str) -> str:
    return _map_line_starts(text, insert=False, list_marks=True)


@dataclass(frozen=True)
class _Heading:
    start: int  # offset of the '#'
    end: int  # offset just after the line's '\n' (or the end of the text)
    level: int
    title: str


def _headings(text: str, start: int = 0) -> list[_Heading]:
    """Level-1 and level-2 ATX headings at the start of ``\\n`` lines, from ``start`` on.

    Fenced code blocks are not skipped: structure must not depend on whether
    some fence in free text is closed.  Text we write is escaped, so this only
    matters for hand-written notes with ``## `` lines inside code blocks.
    """
    found = []
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
                found.append(_Heading(pos, stop if nl == -1 else nl + 1, heading[0], heading[1]))
        if nl == -1:
            break
        pos = nl + 1
    return found


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


def _strip_separator(content: str, *, last: bool) -> str:
    """Undo the layout: a section's text is followed by ``\\n``, plus ``\\n`` before the next heading."""
    if not last and content.endswith("\n\n"):
        return content[:-2]
    if content.endswith("\n"):
        return content[:-1]
    return content


def _render_sections(sections: Iterable[tuple[str, str]]) -> str:
    return "\n".join(f"## {heading}\n{escape_lines(text)}\n" for heading, text in sections)


def _parse_sections(body: str, expected: Sequence[str], what: str) -> list[str]:
    """Texts of exactly the ``expected`` level-2 sections, in order, filling the whole body."""
    heads = _headings(body)
    titles = [f"{'#' * h.level} {h.title}" for h in heads]
    wanted = [f"## {title}" for title in expected]
    if titles != wanted or heads[0].start != 0:
        raise FormatError(
            f"{what}: expected exactly the sections {wanted} right after the front matter, found {titles}.",
            rule="format-sections",
            remedy="Write the note through its format's render() instead of by hand.",
        )
    texts = []
    for i, head in enumerate(heads):
        last = i + 1 == len(heads)
        content = body[head.end : len(body) if last else heads[i + 1].start]
        texts.append(unescape_lines(_strip_separator(content, last=last)))
    return texts


# ----------------------------------------------------------- value checking --


def _utc(value: object, what: str, *, minutes: bool = False) -> datetime:
    """An aware datetime in UTC, cut to the precision the format stores (so round trips are exact)."""
    if not isinstance(value, datetime) or value.utcoffset() is None:
        raise FormatError(f"{what} must be a datetime with a time zone (UTC is stored).", rule="format-value")
    value = value.astimezone(UTC).replace(microsecond=0)
    return value.replace(second=0) if minutes else value


def _format_timestamp(value: datetime) -> str:
    return value.replace(tzinfo=None).isoformat(timespec="seconds") + "Z"


def _parse_timestamp(raw: str, what: str) -> datetime:
    try:
        parsed = datetime.fromisoformat(raw)
    except ValueError:
        parsed = None
    if parsed is None or parsed.utcoffset() is None:
        raise FormatError(f"{what} must be an ISO 8601 timestamp with a zone, like 2025-01-02T10:00:00Z.")
    return _utc(parsed, what)


def _set(obj: object, name: str, value: object) -> None:
    object.__setattr__(obj, name, value)  # normalising a frozen dataclass in __post_init__


def _check_extra(extra: object, known: Sequence[str], what: str) -> dict[str, str | list[str]]:
    if not isinstance(extra, dict):
        raise FormatError(f"{what}: extra front matter must be a dict.", rule="format-value")
    clash = sorted(set(extra) & set(known))
    if clash:
        raise FormatError(f"{what}: extra front matter repeats the keys {clash}.", rule="format-value")
    render_front_matter(extra)  # raises FrontMatterError on an unsafe key or value
    return dict(extra)


def _take(data: FrontMatter, key: str, what: str) -> str:
    value = data.pop(key, None)
    if not isinstance(value, str):
        raise FormatError(f"{what}: front matter needs a one-line '{key}' value.", rule="format-front-matter")
    return value


def _take_list(data: FrontMatter, key: str) -> tuple[str, ...]:
    # Obsidian writes an empty list property as 'key:' and a single tag as 'key: tag'.
    value = data.pop(key, [])
    if isinstance(value, str):
        return (value,) if value else ()
    return tuple(value)


# ----------------------------------------------------------------- handoff --


@dataclass(frozen=True)
class Handoff:
    """The latest handoff of a project (``handoffs/<project>.md``): where the next session picks up.

    ``written`` is stored as ``YYYY-MM-DDTHH:MM:SSZ`` (seconds, UTC).  Front
    matter keys other than the five known ones are kept in ``extra`` so that
    properties a person adds in Obsidian survive a rewrite.
    """

    project: str
    branch: str
    written: datetime
    session: str
    client: str
    where_it_stopped: str = ""
    next_step: str = ""
    open_questions: str = ""
    repo_state: str = ""
    extra: dict[str, str | list[str]] = field(default_factory=dict)

    _KEYS = ("project", "branch", "written", "session", "client")

    def __post_init__(self) -> None:
        for key in ("project", "branch", "session", "client"):
            _check_inline(getattr(self, key), f"handoff {key}")
        _set(self, "written", _utc(self.written, "handoff written"))
        for name in ("where_it_stopped", "next_step", "open_questions", "repo_state"):
            if not isinstance(getattr(self, name), str):
                raise FormatError(f"handoff {name} must be a string.", rule="format-value")
        _set(self, "extra", _check_extra(self.extra, self._KEYS, "handoff"))

    def render(self) -> str:
        """The note text; ``Handoff.parse(h.render()) == h``."""
        front: FrontMatter = {
            "project": self.project,
            "branch": self.branch,
            "written": _format_timestamp(self.written),
            "session": self.session,
            "client": self.client,
            **self.extra,
        }
        texts = (self.where_it_stopped, self.next_step, self.open_questions, self.repo_state)
        return render_front_matter(front) + _render_sections(zip(HANDOFF_SECTIONS, texts, strict=True))

    @classmethod
    def parse(cls, text: str) -> Handoff:
        """Read a handoff; raises :class:`FormatError` unless it has exactly the four sections."""
        data, body = split_front_matter(text)
        values = {key: _take(data, key, "handoff") for key in cls._KEYS}
        written = _parse_timestamp(values.pop("written"), "handoff written")
        where, nxt, questions, repo = _parse_sections(body, HANDOFF_SECTIONS, "handoff")
        return cls(
            written=written,
            where_it_stopped=where,
            next_step=nxt,
            open_questions=questions,
            repo_state=repo,
            extra=data,
            **values,
        )


# --------------------------------------------------------------------- log --

# '## YYYY-MM-DD HH:MM · <branch> · <client>', time in UTC; '·' is U+00B7 MIDDLE DOT.
_LOG_STAMP_RE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}\Z")


def _log_header(line: str) -> tuple[str, str, str] | None:
    """``## <stamp> · <branch> · <client>`` → (stamp, branch, client), or None.

    Branch and client hold no ``·``, so each is fixed by where the dots are; trailing blanks and CR
    after the client are dropped.  A scanner: ``([^·]+?)[ \\t\\r]*\\Z`` is quadratic in a run of blanks.
    """
    if not line.startswith("## ") or not _LOG_STAMP_RE.match(line[3:19]) or not line.startswith(" · ", 19):
        return None
    rest = line[22:]
    dot = rest.find("·")
    if dot < 2 or rest[dot - 1] != " " or not rest.startswith(" ", dot + 1):
        return None
    branch, tail = rest[: dot - 1], rest[dot + 2 :]
    if not tail or "·" in tail:
        return None
    client = tail.rstrip(" \t\r") or tail[0]  # the client has at least one character
    return line[3:19], branch, client


@dataclass(frozen=True)
class LogEntry:
    """One session-log entry.  ``when`` is kept to the minute, in UTC, as its header shows it.

    ``branch`` and ``client`` may not contain ``·``, the header's separator.
    """

    when: datetime
    branch: str
    client: str
    text: str

    def __post_init__(self) -> None:
        _set(self, "when", _utc(self.when, "log entry time", minutes=True))
        _check_inline(self.branch, "log entry branch", forbid="·")
        _check_inline(self.client, "log entry client", forbid="·")
        if not isinstance(self.text, str):
            raise FormatError("log entry text must be a string.", rule="format-value")

    @property
    def header(self) -> str:
        """``## 2025-01-02 10:00 · main · claude-code`` (UTC)."""
        stamp = self.when.replace(tzinfo=None).isoformat(sep=" ", timespec="minutes")
        return f"## {stamp} · {self.branch} · {self.client}"


def render_log_entry(entry: LogEntry) -> str:
    """The entry as it sits in the log: header line, escaped text, one ``\\n``."""
    return f"{entry.header}\n{escape_lines(entry.text)}\n"


def _log_headings(text: str) -> list[_Heading]:
    """The log's headings, the first being its title; raises unless the title comes first."""
    start = front_matter_end(text)
    heads = _headings(text, start)
    if not heads or heads[0].level != 1 or text[start : heads[0].start].strip():
        raise FormatError(
            "the log does not start with a '# <project> log' title.",
            rule="log-malformed",
            remedy="Restore the title line at the top of the log (after any front matter).",
        )
    return heads


def insert_log_entry(log_text: str | None, project: str, entry: LogEntry) -> str:
    """Add ``entry`` as the newest entry; everything already in the log is kept byte for byte.

    A missing or blank log becomes ``# <project> log`` plus the entry.  The
    entry goes just before the first existing entry header, so it sits right
    after the title and any words a person put under it; with no entries yet,
    it goes at the end, after one blank line.  Entries are not re-sorted: the
    route to the log is "newest on top", whatever the timestamps say.
    """
    _check_inline(project, "project")
    rendered = render_log_entry(entry)
    if log_text is None or not log_text.strip():
        return f"# {project} log\n\n{rendered}"
    heads = _log_headings(log_text)
    for head in heads[1:]:
        if _log_header(log_text[head.start : head.end].rstrip("\n")):
            return log_text[: head.start] + rendered + "\n" + log_text[head.start :]
    prefix = log_text if log_text.endswith("\n") else log_text + "\n"
    if not prefix.endswith("\n\n"):
        prefix += "\n"
    return prefix + rendered


def parse_log(text: str) -> list[LogEntry]:
    """The entries of a log, in file order (newest first when written by :func:`insert_log_entry`).

    Words between the title and the first entry are ignored.  Any level-1/2
    heading after the title that is not an entry header raises
    :class:`FormatError`: entry text is escaped, so such a line was not
    written by notegate and the log's structure can no longer be trusted.
    """
    heads = _log_headings(text)
    entries = []
    for i, head in enumerate(heads[1:], start=1):
        line = text[head.start : head.end].rstrip("\n")
        match = _log_header(line)
        if match is None:
            raise FormatError(
                f"log line {line[:80]!r} is a heading but not an entry header "
                "'## YYYY-MM-DD HH:MM · <branch> · <client>'.",
                rule="log-malformed",
            )
        try:
            when = datetime.fromisoformat(match[0]).replace(tzinfo=UTC)
        except ValueError:
            raise FormatError(f"log header {line[:80]!r} has an impossible date.", rule="log-malformed") from None
        last = i + 1 == len(heads)
        content = text[head.end : len(text) if last else heads[i + 1].start]
        body = unescape_lines(_strip_separator(content, last=last))
        entries.append(LogEntry(when=when, branch=match[1], client=match[2], text=body))
    return entries


# ------------------------------------------------------------ session note --


@dataclass(frozen=True)
class SessionNote:
    """An immutable note about one session (``sessions/<project>/<stem>.md``).

    Body: ``# <title>``, a blank line, the summary paragraph (no blank lines
    in it; lines that would read as headings or list items are escaped), a
    blank line, then one ``- <bullet>`` line per bullet (one line each;
    ``[[wikilinks]]`` welcome).  An empty summary or empty bullet list is
    simply left out.
    """

    project: str
    session: str
    created: datetime
    updated: datetime
    title: str
    summary: str = ""
    bullets: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    extra: dict[str, str | list[str]] = field(default_factory=dict)

    _KEYS = ("project", "session", "created", "updated", "tags")

    def __post_init__(self) -> None:
        _check_inline(self.project, "session note project")
        _check_inline(self.session, "session note session")
        _check_inline(self.title, "session note title")
        _set(self, "created", _utc(self.created, "session note created"))
        _set(self, "updated", _utc(self.updated, "session note updated"))
        _set(self, "tags", tuple(_check_inline(tag, "tag") for tag in self.tags))
        if not isinstance(self.summary, str):
            raise FormatError("session note summary must be a string.", rule="format-value")
        if self.summary and any(not piece.strip(" \t") for piece in _BOUNDARY_RE.split(self.summary)):
            raise FormatError(
                "session note summary must be one paragraph: no blank lines, no leading or trailing line break.",
                rule="format-value",
            )
        bullets = tuple(self.bullets)
        for bullet in bullets:
            if not isinstance(bullet, str) or _BOUNDARY_RE.search(bullet):
                raise FormatError("each session note bullet must be a one-line string.", rule="format-value")
        _set(self, "bullets", bullets)
        _set(self, "extra", _check_extra(self.extra, self._KEYS, "session note"))

    def render(self) -> str:
        """The note text; ``SessionNote.parse(n.render()) == n``."""
        front: FrontMatter = {
            "project": self.project,
            "session": self.session,
            "created": _format_timestamp(self.created),
            "updated": _format_timestamp(self.updated),
            "tags": list(self.tags),
            **self.extra,
        }
        body = f"# {self.title}\n"
        if self.summary:
            body += f"\n{_escape_paragraph(self.summary)}\n"
        if self.bullets:
            body += "\n" + "".join(f"- {bullet}\n" for bullet in self.bullets)
        return render_front_matter(front) + body

    @classmethod
    def parse(cls, text: str) -> SessionNote:
        """Read a session note written by :meth:`render`; anything else raises :class:`FormatError`."""
        data, body = split_front_matter(text)
        values = {key: _take(data, key, "session note") for key in ("project", "session", "created", "updated")}
        tags = _take_list(data, "tags")
        title_line, _, rest = body.partition("\n")
        if not title_line.startswith("# "):
            raise FormatError("session note: the body must start with '# <title>'.", rule="format-sections")
        summary, bullets = "", ()
        if rest:
            if not rest.startswith("\n") or not rest.endswith("\n"):
                raise FormatError("session note: expected a blank line after the title.", rule="format-sections")
            blocks = rest[1:-1].split("\n\n")
            first_line = blocks[0].split("\n", 1)[0]
            if not (first_line.startswith("- ") or first_line == "-"):
                summary = _unescape_paragraph(blocks.pop(0))
            if len(blocks) > 1:
                raise FormatError("session note: unexpected text after the bullet list.", rule="format-sections")
            if blocks:
                lines = blocks[0].split("\n")
                if any(not (line.startswith("- ") or line == "-") for line in lines):
                    raise FormatError("session note: every bullet line must start with '- '.", rule="format-sections")
                bullets = tuple(line[2:] for line in lines)
        return cls(
            created=_parse_timestamp(values.pop("created"), "session note created"),
            updated=_parse_timestamp(values.pop("updated"), "session note updated"),
            title=title_line[2:],
            summary=summary,
            bullets=bullets,
            tags=tags,
            extra=data,
            **values,
        )


# --------------------------------------------------------- project summary --

_SESSION_LINE_RE = re.compile(r"- \[\[([^\[\]|#\n]+)\]\] — ([0-9]{4}-[0-9]{2}-[0-9]{2}) — (.*)\Z")


@dataclass(frozen=True)
class SessionRef:
    """One line of the "Recent sessions" block.

    ``path`` is the session note's vault path (``sessions/<project>/<stem>.md``);
    the link is that path without ``.md``.  ``summary`` is folded to one line
    (all whitespace runs become one space, control characters dropped) and cut
    to :data:`MAX_SESSION_SUMMARY_CHARS` here, so what is stored is what is shown.
    """

    path: str
    date: date
    summary: str

    def __post_init__(self) -> None:
        path = _check_inline(self.path, "session path")
        if not path.endswith(".md") or any(bad in path for bad in ("[", "]", "|", "#")) or path.startswith("/"):
            raise FormatError(
                f"session path {path!r} must be a relative .md path without [ ] | #.", rule="format-value"
            )
        day = self.date
        if isinstance(day, datetime):
            day = day.date()
        if not isinstance(day, date):
            raise FormatError("session date must be a date.", rule="format-value")
        _set(self, "date", day)
        if not isinstance(self.summary, str):
            raise FormatError("session summary must be a string.", rule="format-value")
        visible = "".join(" " if unicodedata.category(ch) in ("Cc", "Cf") else ch for ch in self.summary)
        summary = " ".join(visible.split()) or "(no summary)"
        if len(summary) > MAX_SESSION_SUMMARY_CHARS:
            summary = summary[: MAX_SESSION_SUMMARY_CHARS - 1].rstrip() + "…"
        _set(self, "summary", summary)

    @property
    def line(self) -> str:
        return f"- [[{self.path[:-3]}]] — {self.date.isoformat()} — {self.summary}"


SessionLike = SessionRef | tuple[str, date, str]


def _newest(sessions: Iterable[SessionLike]) -> list[SessionRef]:
    """The :data:`RECENT_SESSIONS` newest sessions, newest first (ties: path, descending)."""
    refs = [s if isinstance(s, SessionRef) else SessionRef(*s) for s in sessions]
    refs.sort(key=lambda ref: (ref.date, ref.path), reverse=True)
    return refs[:RECENT_SESSIONS]


def _sessions_block(refs: Sequence[SessionRef]) -> str:
    return SESSIONS_START + "\n" + "".join(ref.line + "\n" for ref in refs) + SESSIONS_END


def _too_long(cap: int) -> FormatError:
    return FormatError(
        f"the project summary cannot fit in {cap:,} characters even with its text trimmed.",
        rule="summary-too-long",
        remedy="Shorten the front matter or the text outside the sessions block.",
    )


def rebuild_sessions_block(text: str, sessions: Iterable[SessionLike], *, cap: int = MAX_SUMMARY_CHARS) -> str:
    """Rewrite only the lines between the sessions markers; everything else stays byte for byte.

    ``sessions`` are ``SessionRef`` values or ``(path, date, summary)`` tuples;
    the :data:`RECENT_SESSIONS` newest are listed, newest first.  Without
    markers, a ``## Recent sessions`` section holding the block is appended.
    The text outside the block is not ours to cut, so the cap is honoured by
    dropping the oldest listed sessions; if even an empty block does not fit,
    :class:`FormatError` (``summary-too-long``) is raised -- re-render the
    summary with :meth:`ProjectSummary.render`, which also trims sections.
    """
    refs = _newest(sessions)
    markers = list(_MARKER_RE.finditer(text))
    kinds = [m.group(1) for m in markers]

    build: Callable[[Sequence[SessionRef]], str]
    if not markers:
        prefix = text if not text or text.endswith("\n") else text + "\n"
        prefix += "\n" if prefix else ""

        def build(chosen: Sequence[SessionRef]) -> str:
            return f"{prefix}## {RECENT_SESSIONS_HEADING}\n{_sessions_block(chosen)}\n"

    elif kinds == ["START", "END"]:
        inner_start = markers[0].end() + 1  # the END marker follows, so the START line ends with '\n'
        inner_end = markers[1].start()

        def build(chosen: Sequence[SessionRef]) -> str:
            return text[:inner_start] + "".join(ref.line + "\n" for ref in chosen) + text[inner_end:]

    else:
        raise FormatError(
            f"the note has sessions markers in the order {kinds}; expected one START then one END.",
            rule="summary-markers",
            remedy=f"Keep exactly one '{SESSIONS_START}' line followed by one '{SESSIONS_END}' line.",
        )
    while True:
        out = build(refs)
        if len(out) <= cap:
            return out
        if not refs:
            raise _too_long(cap)
        refs.pop()  # the oldest goes first


def _trim(text: str, level: int) -> str:
    if len(text) <= level:
        return text
    return (text[:level].rstrip() + "\n\n" + TRIM_MARK).lstrip("\n")


@dataclass(frozen=True)
class ProjectSummary:
    """The project summary (``projects/<project>.md``).

    Body: the six :data:`SUMMARY_SECTIONS`, then ``## Recent sessions`` holding
    the sessions block.  ``sessions`` is normalised to the newest
    :data:`RECENT_SESSIONS`, newest first.  ``render`` enforces the cap.
    """

    project: str
    cwd: str = ""
    status: str = "active"
    tags: tuple[str, ...] = ()
    goal: str = ""
    current_state: str = ""
    key_files: str = ""
    recent_decisions: str = ""
    open_tasks: str = ""
    context_to_resume: str = ""
    sessions: tuple[SessionRef, ...] = ()
    extra: dict[str, str | list[str]] = field(default_factory=dict)

    _KEYS = ("project", "cwd", "status", "tags")
    _TEXTS = ("goal", "current_state", "key_files", "recent_decisions", "open_tasks", "context_to_resume")

    def __post_init__(self) -> None:
        _check_inline(self.project, "summary project")
        _check_inline(self.status, "summary status")
        render_front_matter({"cwd": self.cwd})  # one line, no control characters
        _set(self, "tags", tuple(_check_inline(tag, "tag") for tag in self.tags))
        for name in self._TEXTS:
            if not isinstance(getattr(self, name), str):
                raise FormatError(f"summary {name} must be a string.", rule="format-value")
        _set(self, "sessions", tuple(_newest(self.sessions)))
        _set(self, "extra", _check_extra(self.extra, self._KEYS, "project summary"))

    def _render(self, texts: Sequence[str], sessions: Sequence[SessionRef]) -> str:
        front: FrontMatter = {
            "project": self.project,
            "cwd": self.cwd,
            "status": self.status,
            "tags": list(self.tags),
            **self.extra,
        }
        return (
            render_front_matter(front)
            + _render_sections(zip(SUMMARY_SECTIONS, texts, strict=True))
            + f"\n## {RECENT_SESSIONS_HEADING}\n{_sessions_block(sessions)}\n"
        )

    def render(self, *, cap: int = MAX_SUMMARY_CHARS) -> str:
        """The note text, at most ``cap`` characters.  Oldest material goes first:

        1. the oldest sessions in the block, down to :data:`MIN_KEPT_SESSIONS`;
        2. the tails of the longest sections: all sections longer than some
           level L are cut to L (largest L that fits) and end with
           :data:`TRIM_MARK` -- short sections are untouched, headings always stay;
        3. only if every section is down to the mark: the remaining sessions;
        4. then :class:`FormatError` (``summary-too-long``: front matter too big).

        Untrimmed, ``ProjectSummary.parse(s.render()) == s``.
        """
        texts = [getattr(self, name) for name in self._TEXTS]
        sessions = list(self.sessions)
        floor = min(MIN_KEPT_SESSIONS, len(sessions))
        for keep in range(len(sessions), floor - 1, -1):
            out = self._render(texts, sessions[:keep])
            if len(out) <= cap:
                return out
        for keep in range(floor, -1, -1):

            def at(level: int, keep: int = keep) -> str:
                return self._render([_trim(t, level) for t in texts], sessions[:keep])

            if len(at(0)) > cap:
                continue
            low, high = 0, max(len(t) for t in texts)
            while low < high:  # invariant: at(low) fits
                mid = (low + high + 1) // 2
                if len(at(mid)) <= cap:
                    low = mid
                else:
                    high = mid - 1
            return at(low)
        raise _too_long(cap)

    @classmethod
    def parse(cls, text: str) -> ProjectSummary:
        """Read a summary: the six sections in order, optionally followed by the sessions section."""
        data, body = split_front_matter(text)
        values = {key: _take(data, key, "project summary") for key in ("project", "cwd", "status")}
        tags = _take_list(data, "tags")
        heads = _headings(body)
        has_block = bool(heads) and heads[-1].title == RECENT_SESSIONS_HEADING and heads[-1].level == 2
        sessions: list[SessionRef] = []
        if has_block:
            block = _strip_separator(body[heads[-1].end :], last=True)
            lines = block.split("\n")
            if len(lines) < 2 or lines[0] != SESSIONS_START or lines[-1] != SESSIONS_END:
                raise FormatError("project summary: malformed sessions block.", rule="summary-markers")
            for line in lines[1:-1]:
                match = _SESSION_LINE_RE.match(line)
                if not match:
                    raise FormatError(f"project summary: bad session line {line[:80]!r}.", rule="summary-markers")
                try:
                    day = date.fromisoformat(match.group(2))
                except ValueError:
                    raise FormatError(f"project summary: bad date in {line[:80]!r}.") from None
                sessions.append(SessionRef(match.group(1) + ".md", day, match.group(3)))
            body = body[: heads[-1].start]
            body = body[:-1] if body.endswith("\n") else body  # the blank line before the heading
        texts = _parse_sections(body, SUMMARY_SECTIONS, "project summary")
        return cls(
            tags=tags, sessions=tuple(sessions), extra=data, **values, **dict(zip(cls._TEXTS, texts, strict=True))
        )


# ------------------------------------------------------------ generic edits --


def section(text: str, heading: str) -> str | None:
    """The text of the first ``## <heading>`` section (up to the next ``#``/``##`` heading), or None.

    Undoes the layout separator and the escaping, so for notes this module
    wrote it returns exactly the text that was put in.
    """
    heads = _headings(text, front_matter_end(text))
    for i, head in enumerate(heads):
        if head.level == 2 and head.title == heading:
            last = i + 1 == len(heads)
            content = text[head.end : len(text) if last else heads[i + 1].start]
            return unescape_lines(_strip_separator(content, last=last))
    return None


def append_under_heading(text: str | None, heading: str, block: str, *, title: str) -> str:
    """Append ``block`` at the end of the ``## <heading>`` section; the rest stays byte for byte.

    Used to route promoted decisions under ``## Proposed`` in design notes.
    The block's leading and trailing blank lines are dropped and its lines are
    escaped (:func:`escape_lines`), so it cannot open a section of its own.  It
    lands after the section's last non-blank line, preceded by a blank line.
    A missing section is added at the end of the note; a missing (``None`` or
    empty) note becomes ``# <title>`` plus the section.
    """
    _check_inline(heading, "heading")
    _check_inline(title, "title")
    if not isinstance(block, str):
        raise FormatError("the block must be a string.", rule="format-value")
    block = _strip_blank_edges(block)
    if not block.strip():
        raise FormatError("the block to append is empty.", rule="format-value")
    body = escape_lines(block)
    if not text:
        return f"# {title}\n\n## {heading}\n\n{body}\n"
    start = front_matter_end(text)
    if start == 0 and text.split("\n", 1)[0].rstrip("\r") == "---":
        # An unclosed front matter: a '---' line in what we append would close it and swallow the note.
        raise FrontMatterError(
            "the note opens front matter with '---' but it is unclosed or has CRLF line endings.",
            remedy="Close the front matter with a '---' line and save the note with LF line endings.",
        )
    heads = _headings(text, start)
    for i, head in enumerate(heads):
        if head.level == 2 and head.title == heading:
            content = text[head.end : heads[i + 1].start if i + 1 < len(heads) else len(text)]
            insert_at = head.end
            if content.strip():  # after the '\n' that ends the section's last non-blank line
                newline = content.find("\n", len(content.rstrip()))
                insert_at += len(content) if newline == -1 else newline + 1
            lead = "" if text[:insert_at].endswith("\n") else "\n"
            return text[:insert_at] + lead + f"\n{body}\n" + text[insert_at:]
    prefix = text if text.endswith("\n") else text + "\n"
    return prefix + f"\n## {heading}\n\n{body}\n"
