"""What one check found: a name, a status, what it saw and what to do instead.

A result never carries a secret, a token or a note's contents: checks describe files, refs, counts and
settings by name.  Pure data.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum


class Status(StrEnum):
    OK = "ok"
    WARN = "warn"
    FAIL = "fail"


@dataclass(frozen=True)
class CheckResult:
    """``check`` is the stable name scripts and tests match (``origin.reachable``); ``subject`` says which
    environment, file or device it looked at, when there are several."""

    check: str
    status: Status
    found: str
    remedy: str = ""
    subject: str = ""

    def to_json(self) -> dict[str, str]:
        return {
            "check": self.check,
            "subject": self.subject,
            "status": str(self.status),
            "found": self.found,
            "remedy": self.remedy,
        }


def ok(check: str, found: str, *, subject: str = "") -> CheckResult:
    return CheckResult(check, Status.OK, found, "", subject)


def warn(check: str, found: str, remedy: str, *, subject: str = "") -> CheckResult:
    return CheckResult(check, Status.WARN, found, remedy, subject)


def fail(check: str, found: str, remedy: str, *, subject: str = "") -> CheckResult:
    return CheckResult(check, Status.FAIL, found, remedy, subject)


def exit_status(results: Iterable[CheckResult]) -> int:
    """1 when any check failed, else 0 (warnings do not fail the doctor)."""
    return 1 if any(r.status is Status.FAIL for r in results) else 0
