"""The session log (``log/<project>.md``): a title, then entries, newest first.

Entry text is escaped (:func:`notegate.vault.lines.escape_lines`), so an entry cannot forge another entry:
every level-1/2 heading after the title must be an entry header, or the log is refused as malformed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime

from notegate.vault.formats.sections import Section, section_text, sections
from notegate.vault.formats.values import set_field, utc
from notegate.vault.frontmatter import FormatError, front_matter_end
from notegate.vault.lines import check_inline, escape_lines

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
        set_field(self, "when", utc(self.when, "log entry time", minutes=True))
        check_inline(self.branch, "log entry branch", forbid="·")
        check_inline(self.client, "log entry client", forbid="·")
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


def _log_sections(text: str) -> list[Section]:
    """The log's sections, the first being its title; raises unless the title comes first."""
    start = front_matter_end(text)
    found = list(sections(text, start))
    if not found or found[0].level != 1 or text[start : found[0].start].strip():
        raise FormatError(
            "the log does not start with a '# <project> log' title.",
            rule="log-malformed",
            remedy="Restore the title line at the top of the log (after any front matter).",
        )
    return found


def _header_line(text: str, found: Section) -> str:
    return text[found.start : found.body].rstrip("\n")


def insert_log_entry(log_text: str | None, project: str, entry: LogEntry) -> str:
    """Add ``entry`` as the newest entry; everything already in the log is kept byte for byte.

    A missing or blank log becomes ``# <project> log`` plus the entry.  The
    entry goes just before the first existing entry header, so it sits right
    after the title and any words a person put under it; with no entries yet,
    it goes at the end, after one blank line.  Entries are not re-sorted: the
    route to the log is "newest on top", whatever the timestamps say.
    """
    check_inline(project, "project")
    rendered = render_log_entry(entry)
    if log_text is None or not log_text.strip():
        return f"# {project} log\n\n{rendered}"
    for found in _log_sections(log_text)[1:]:
        if _log_header(_header_line(log_text, found)):
            return log_text[: found.start] + rendered + "\n" + log_text[found.start :]
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
    entries = []
    for found in _log_sections(text)[1:]:
        line = _header_line(text, found)
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
        entries.append(LogEntry(when=when, branch=match[1], client=match[2], text=section_text(text, found)))
    return entries
