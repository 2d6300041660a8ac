"""The project summary (``projects/<project>.md``) and its "Recent sessions" block, rebuilt by code.

Six fixed sections in the shared layout (:mod:`notegate.vault.formats.sections`), then ``## Recent
sessions`` holding the block between the sessions markers.  Section text is escaped, so it cannot forge a
marker; the block is rewritten in place, everything around it kept byte for byte, under a size cap.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime

from notegate.safety.unicode_tables import SUMMARY_BLANKED_CATEGORIES
from notegate.vault.formats.sections import parse_sections, render_sections, sections, strip_separator
from notegate.vault.formats.values import check_extra, set_field, take, take_list
from notegate.vault.frontmatter import FormatError, FrontMatter, render_front_matter, split_front_matter
from notegate.vault.lines import check_inline

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
SUMMARY_SECTIONS = (
    "Goal",
    "Current state",
    "Key files",
    "Recent decisions",
    "Open tasks / blockers",
    "Context to resume",
)
TRIM_MARK = "… [trimmed to keep the project summary within its size cap]"

_MARKER_RE = re.compile(r"^<!-- SESSIONS:(START|END) -->[ \t\r]*$", re.MULTILINE)
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
        path = check_inline(self.path, "session path")
        if not path.endswith(".md") or any(bad in path for bad in ("[", "]", "|", "#")) or path.startswith("/"):
            raise FormatError(
                f"session path {path!r} must be a relative .md path without [ ] | #.", rule="format-value"
            )
        day = self.date
        if isinstance(day, datetime):
            day = day.date()
        if not isinstance(day, date):
            raise FormatError("session date must be a date.", rule="format-value")
        set_field(self, "date", day)
        if not isinstance(self.summary, str):
            raise FormatError("session summary must be a string.", rule="format-value")
        visible = "".join(" " if unicodedata.category(ch) in SUMMARY_BLANKED_CATEGORIES else ch for ch in self.summary)
        summary = " ".join(visible.split()) or "(no summary)"
        if len(summary) > MAX_SESSION_SUMMARY_CHARS:
            summary = summary[: MAX_SESSION_SUMMARY_CHARS - 1].rstrip() + "…"
        set_field(self, "summary", summary)

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
        check_inline(self.project, "summary project")
        check_inline(self.status, "summary status")
        render_front_matter({"cwd": self.cwd})  # one line, no control characters
        set_field(self, "tags", tuple(check_inline(tag, "tag") for tag in self.tags))
        for name in self._TEXTS:
            if not isinstance(getattr(self, name), str):
                raise FormatError(f"summary {name} must be a string.", rule="format-value")
        set_field(self, "sessions", tuple(_newest(self.sessions)))
        set_field(self, "extra", check_extra(self.extra, self._KEYS, "project summary"))

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
            + render_sections(zip(SUMMARY_SECTIONS, texts, strict=True))
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
        values = {key: take(data, key, "project summary") for key in ("project", "cwd", "status")}
        tags = take_list(data, "tags")
        found = list(sections(body))
        last = found[-1] if found else None  # only the last heading can open the sessions section
        sessions: list[SessionRef] = []
        if last is not None and last.title == RECENT_SESSIONS_HEADING and last.level == 2:
            block = strip_separator(last.content(body), last=True)
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
            body = body[: last.start]
            body = body[:-1] if body.endswith("\n") else body  # the blank line before the heading
        texts = parse_sections(body, SUMMARY_SECTIONS, "project summary")
        return cls(
            tags=tags, sessions=tuple(sessions), extra=data, **values, **dict(zip(cls._TEXTS, texts, strict=True))
        )
