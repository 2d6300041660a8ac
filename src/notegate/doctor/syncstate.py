"""Is a workstation vault still syncing? ``notegate sync`` stops loudly on a conflict or a refusal and
records why in ``.git/notegate-sync-stopped``; the doctor repeats it, red, so a stopped vault is not missed
by someone who only runs the doctor."""

from __future__ import annotations

from pathlib import Path

from notegate.doctor.result import CheckResult, fail, ok
from notegate.sync.report import MARKER_NAME, read_stop

CHECK = "sync.stopped"


def check_sync_stop(label: str, vault: Path) -> CheckResult:
    marker = vault / ".git" / MARKER_NAME
    stop = read_stop(marker)
    if stop is None:
        return ok(CHECK, "no sync stop is recorded", subject=label)
    return fail(
        CHECK,
        f"notegate sync stopped this vault [{stop.rule}] (exit {stop.code}): {stop.message}",
        f"Fix the cause (README: notegate sync), then run `notegate sync --resume {vault}`.",
        subject=label,
    )
