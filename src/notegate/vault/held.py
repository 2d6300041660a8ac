"""`inbox/_held.md`: the readable list of held inbox items (pure render and parse, round-trip tested).

The state database is the working copy of the holds; this note is what a person (or a session) reads,
and it is versioned like everything else.  Reasons come from reviewers and models, so they are reduced
to one printable line with table pipes escaped: a reason cannot add rows, columns or headings.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MAX_REASON_CHARS = 300
TITLE = "# Held inbox items"
INTRO = (
    "Items a reviewer held, with the reason. The floor holds some items whatever anyone says; an item that "
    "changes after its hold is reviewed again. Maintained by notegate: do not edit by hand."
)
HEADER = "| item | version | reason | reviewer | date |"
RULE = "| --- | --- | --- | --- | --- |"
_CELL = r"((?:[^|\\]|\\.)*?)"  # a cell: anything but a bare pipe; backslash escapes the next character
_ROW = re.compile(rf"^\| {_CELL} \| ([0-9a-f]{{40}}) \| {_CELL} \| {_CELL} \| (\d{{4}}-\d{{2}}-\d{{2}}) \|$")


@dataclass(frozen=True)
class HeldRow:
    item: str
    version: str
    reason: str
    reviewer: str
    date: str  # YYYY-MM-DD


def clean_reason(reason: str) -> str:
    """One printable line, bounded: what a table cell can hold without changing the table."""
    flat = " ".join("".join(ch if ch.isprintable() else " " for ch in reason).split())
    return flat[:MAX_REASON_CHARS] or "(no reason given)"


def _escape(cell: str) -> str:
    return cell.replace("\\", "\\\\").replace("|", "\\|")


def _unescape(cell: str) -> str:
    return re.sub(r"\\(.)", r"\1", cell)


def render_held(rows: list[HeldRow]) -> str:
    lines = [TITLE, "", INTRO, "", HEADER, RULE]
    for row in sorted(rows, key=lambda r: r.item):
        cells = [row.item, row.version, clean_reason(row.reason), clean_reason(row.reviewer), row.date]
        lines.append("| " + " | ".join(_escape(c) for c in cells) + " |")
    return "\n".join(lines) + "\n"


def parse_held(text: str) -> list[HeldRow]:
    rows = []
    for line in text.splitlines():
        match = _ROW.match(line)
        if match:
            rows.append(
                HeldRow(
                    item=_unescape(match[1]),
                    version=match[2],
                    reason=_unescape(match[3]),
                    reviewer=_unescape(match[4]),
                    date=match[5],
                )
            )
    return rows
