"""The Markdown shapes notegate reads and writes: handoff, log, session note, project summary, generic edits.

Theory of operation
-------------------
Every note here is text a model may have written, later read back by code (to
parse it) and by another model (at session start).  Two things must hold:

1. **Structure comes only from code.**  The sections of a note are found by
   heading lines (``#``/``##`` at the start of a ``\\n``-separated line), by one
   iterator (:mod:`.sections`) that every format uses.  Free text placed in a
   section goes through :func:`escape_lines` first (:mod:`notegate.vault.lines`):
   any line that would start a block (a heading, a rule, a fence, HTML, a
   sessions marker...) after *any* line boundary Python or Unicode knows gets
   one more backslash, and :func:`unescape_lines` removes exactly that one
   again, so every text round-trips byte for byte.  A log entry therefore
   cannot forge another entry, a handoff section cannot forge a section, and
   section text cannot forge a sessions marker.

2. **Text loaded at session start is quoted data.**  :func:`fence_untrusted`
   (:mod:`notegate.vault.fence`) wraps it so it cannot be closed from inside.

One module per format: :mod:`.handoff`, :mod:`.log`, :mod:`.session`,
:mod:`.summary` (with the sessions block), :mod:`.edits` (generic edits);
:mod:`.values` holds the value checks they share.  This package re-exports
their public names, so callers import from ``notegate.vault.formats`` only.

Times are parameters (``datetime`` values with a time zone), never read from a
clock; they are stored in UTC.  Pure: no I/O, no clock, standard library only
(plus the Unicode sets of :mod:`notegate.safety.unicode_tables`).
"""

from __future__ import annotations

from notegate.vault.fence import fence_untrusted, unfence
from notegate.vault.formats.edits import append_under_heading, section
from notegate.vault.formats.handoff import HANDOFF_SECTIONS, Handoff
from notegate.vault.formats.log import LogEntry, insert_log_entry, parse_log, render_log_entry
from notegate.vault.formats.session import SessionNote
from notegate.vault.formats.summary import (
    MAX_SESSION_SUMMARY_CHARS,
    MAX_SUMMARY_CHARS,
    MIN_KEPT_SESSIONS,
    RECENT_SESSIONS,
    RECENT_SESSIONS_HEADING,
    SESSIONS_END,
    SESSIONS_START,
    SUMMARY_SECTIONS,
    TRIM_MARK,
    ProjectSummary,
    SessionLike,
    SessionRef,
    rebuild_sessions_block,
)
from notegate.vault.frontmatter import (
    FormatError,
    FrontMatter,
    FrontMatterError,
    front_matter_end,
    render_front_matter,
    split_front_matter,
)
from notegate.vault.lines import escape_lines, normalize_line_endings, unescape_lines

__all__ = [
    "HANDOFF_SECTIONS",
    "MAX_SESSION_SUMMARY_CHARS",
    "MAX_SUMMARY_CHARS",
    "MIN_KEPT_SESSIONS",
    "RECENT_SESSIONS",
    "RECENT_SESSIONS_HEADING",
    "SESSIONS_END",
    "SESSIONS_START",
    "SUMMARY_SECTIONS",
    "TRIM_MARK",
    "FormatError",
    "FrontMatter",
    "FrontMatterError",
    "Handoff",
    "LogEntry",
    "ProjectSummary",
    "SessionLike",
    "SessionNote",
    "SessionRef",
    "append_under_heading",
    "escape_lines",
    "fence_untrusted",
    "front_matter_end",
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
