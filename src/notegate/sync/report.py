"""What ``notegate sync`` answers: the exit statuses, the :class:`Stop` that halts syncing a vault (and the
marker it is kept in), and one tick's :class:`TickReport`.

Why its own module: the doctor reads a stopped vault's marker (``notegate doctor --vault``) with the very
function every tick reads it with (:func:`read_stop`), without importing the daemon, which commits through
the server's recipe (:mod:`notegate.sync.daemon` re-exports every name here).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from notegate.errors import remedy_for
from notegate.sync.incoming import Finding, shown_path

__all__ = [
    "EXIT_CODES",
    "MARKER_NAME",
    "Stop",
    "TickReport",
    "read_stop",
]

# Exit statuses of `notegate sync --once` (and of the loop when it stops); README "notegate sync".
EXIT_OK = 0  # synced, or nothing to do
EXIT_RETRY = 1  # the origin could not be reached: nothing lost, the next tick tries again
EXIT_USAGE = 2  # not a vault clone, or a config error
EXIT_CONFLICT = 3  # stopped: the same note changed here and on the origin
EXIT_INCOMING = 4  # stopped: the origin holds commits the policy refuses
EXIT_LOCAL = 5  # stopped: the local change is refused as a whole (too many deletions or files, a bad commit)
EXIT_PUSH = 6  # stopped: the origin refused the push
EXIT_LEFT_OUT = 7  # synced, but files the policy refuses were left out (named)
EXIT_CODES = {
    EXIT_OK: "synced",
    EXIT_RETRY: "origin unavailable; try again",
    EXIT_USAGE: "usage or config error",
    EXIT_CONFLICT: "stopped: conflict",
    EXIT_INCOMING: "stopped: incoming commits refused",
    EXIT_LOCAL: "stopped: local change refused",
    EXIT_PUSH: "stopped: push refused",
    EXIT_LEFT_OUT: "synced; some files left out",
}

#: The stop marker, inside the clone's git directory (never in the vault, never committed).
MARKER_NAME = "notegate-sync-stopped"


@dataclass(frozen=True)
class Stop:
    """Why syncing this vault stopped; written to the marker and printed."""

    code: int
    rule: str
    message: str
    lines: tuple[str, ...] = ()
    conflicts: tuple[str, ...] = ()
    stopped_at: float = 0.0

    def explain(self) -> str:
        remedy = remedy_for(self.rule)
        return f"Refused [{self.rule}]: {self.message}" + (f" {remedy}" if remedy else "")

    def to_json(self) -> dict:
        return {
            "rule": self.rule,
            "code": self.code,
            "message": self.message,
            "lines": list(self.lines),
            "conflicts": list(self.conflicts),
            "stopped_at": self.stopped_at,
            "resume": "notegate sync --resume DIR (after fixing what is named above)",
        }


@dataclass
class TickReport:
    committed: str | None = None
    pulled: int = 0  # work-tree files written from the origin
    pushed: str | None = None
    pending: list[str] = field(default_factory=list)  # unsettled files, left for the next tick
    left_out: list[Finding] = field(default_factory=list)
    ignored: int = 0  # files that are neither notes nor allowed attachments, left alone
    postponed: str | None = None  # why the origin's changes wait for the next tick
    retry: str | None = None  # the origin could not be reached
    stop: Stop | None = None

    @property
    def code(self) -> int:
        if self.stop is not None:
            return self.stop.code
        if self.retry is not None:
            return EXIT_RETRY
        return EXIT_LEFT_OUT if self.left_out else EXIT_OK

    def lines(self) -> list[str]:
        out: list[str] = []
        if self.committed:
            out.append(f"committed {self.committed[:12]} (local changes)")
        if self.pulled:
            out.append(f"updated {self.pulled} file(s) from the origin")
        if self.pushed:
            out.append(f"pushed {self.pushed[:12]}")
        out += [f"still being written, next tick: {shown_path(p)}" for p in self.pending]
        for f in self.left_out:
            out.append(f"left out (not committed): {shown_path(f.path)}: Refused [{f.rule}]: {f.what}")
        for rule in sorted({f.rule for f in self.left_out}):
            remedy = remedy_for(rule)
            if remedy:
                out.append(f"What to do instead [{rule}]: {remedy}")
        if self.postponed:
            out.append(f"origin's changes wait for the next tick: {self.postponed}")
        if self.retry:
            out.append(self.retry)
        if self.stop is not None:
            out.append(f"SYNC STOPPED: {self.stop.explain()}")
            out += [f"  {line}" for line in self.stop.lines]
            out.append(
                f"  (exit {self.stop.code}; written to .git/{MARKER_NAME}; nothing else syncs until "
                "`notegate sync --resume DIR`)"
            )
        if not out:
            out.append("in sync")
        return out


def read_stop(marker: Path) -> Stop | None:
    """The stop a vault's marker records (None when it is syncing); an unreadable marker still stops it.
    Read by every tick and by ``notegate doctor --vault``."""
    try:
        data = json.loads(marker.read_text(encoding="utf-8"))
        return Stop(
            code=int(data["code"]),
            rule=str(data["rule"]),
            message=str(data["message"]),
            lines=tuple(str(x) for x in data.get("lines", [])),
            conflicts=tuple(str(x) for x in data.get("conflicts", [])),
            stopped_at=float(data.get("stopped_at", 0.0)),
        )
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError):
        return Stop(EXIT_LOCAL, rule="sync-stopped", message="the stop marker is unreadable; syncing stays stopped.")
