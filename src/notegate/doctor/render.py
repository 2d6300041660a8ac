"""The doctor's report: one line per check for a person (failures red and loud), or a JSON list."""

from __future__ import annotations

import json
from collections.abc import Sequence

from notegate.doctor.result import CheckResult, Status

_RED = "\033[1;31m"
_YELLOW = "\033[33m"
_GREEN = "\033[32m"
_RESET = "\033[0m"
_LABEL = {Status.OK: "ok", Status.WARN: "WARN", Status.FAIL: "FAIL"}
_COLOR = {Status.OK: _GREEN, Status.WARN: _YELLOW, Status.FAIL: _RED}


def _clean(text: str) -> str:
    """No control characters from a file name or a git message reach the terminal."""
    return "".join(ch if ch.isprintable() else "?" for ch in text)


def render_text(results: Sequence[CheckResult], *, color: bool) -> str:
    lines = []
    for r in results:
        label = f"{_LABEL[r.status]:<4}"
        if color:
            label = f"{_COLOR[r.status]}{label}{_RESET}"
        name = r.check + (f" [{r.subject}]" if r.subject else "")
        lines.append(f"{label}  {_clean(name)}: {_clean(r.found)}")
        if r.remedy and r.status is not Status.OK:
            lines.append(f"      -> {_clean(r.remedy)}")
    counts = {s: sum(1 for r in results if r.status is s) for s in Status}
    summary = f"{counts[Status.OK]} ok, {counts[Status.WARN]} warning(s), {counts[Status.FAIL]} failed"
    if counts[Status.FAIL]:
        summary = f"DOCTOR FOUND {counts[Status.FAIL]} FAILURE(S): {summary}"
        summary = f"{_RED}{summary}{_RESET}" if color else summary
    else:
        summary = f"doctor: all checks passed ({summary})"
    lines.append(summary)
    return "\n".join(lines)


def render_json(results: Sequence[CheckResult]) -> str:
    return json.dumps([r.to_json() for r in results], indent=2, ensure_ascii=False)
