"""The hooks' small local memory: what was written already, and when each segment was last saved.

One JSON file, ``hooks-state.json`` in the state directory (``$XDG_STATE_HOME/notegate`` or
``~/.local/state/notegate``), read and rewritten under an exclusive ``flock`` so a Stop hook and a
detached session-end worker never lose each other's updates.  It holds no note text except the
log entry this machine last wrote for a segment (to replace it instead of adding a second one).

* ``written``: dedup registry, ``"<session>:<segment>:<turns>" → time``.  A key present means that
  exact state of the conversation was already written back: skip.
* ``segments``: ``"<session>:<segment>" → {first_seen, last_writeback, log_entry, session_note}``.
  The Stop hook writes back at most every :data:`PERIODIC_SECONDS` per segment, counted from the
  last write-back, or from the first Stop that saw the segment long enough to write back (4 turns).

Old entries are pruned (:data:`KEEP_ENTRIES` newest) so the file stays a few kilobytes.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

STATE_FILE = "hooks-state.json"
LOCK_FILE = "hooks-state.lock"
LOG_FILE = "hooks.log"
#: A periodic write-back happens at most this often per segment.
PERIODIC_SECONDS = 30 * 60
KEEP_ENTRIES = 500

try:  # POSIX; elsewhere the lock is a no-op (hooks rarely race there)
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]


def dedup_key(session: str, segment: int, turns: int) -> str:
    return f"{session}:{segment}:{turns}"


def segment_key(session: str, segment: int) -> str:
    return f"{session}:{segment}"


def _empty() -> dict[str, Any]:
    return {"written": {}, "segments": {}}


def _prune(table: dict[str, Any], stamp: Any) -> dict[str, Any]:
    if len(table) <= KEEP_ENTRIES:
        return table
    ordered = sorted(table.items(), key=lambda kv: stamp(kv[1]), reverse=True)
    return dict(ordered[:KEEP_ENTRIES])


class HookState:
    """Read-modify-write access to the state file; use :meth:`locked` around every change."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.path = directory / STATE_FILE
        self.data = _empty()

    def _load(self) -> None:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            data = _empty()
        if not isinstance(data, dict):
            data = _empty()
        for key in ("written", "segments"):
            if not isinstance(data.get(key), dict):
                data[key] = {}
        self.data = data

    def _save(self) -> None:
        self.data["written"] = _prune(self.data["written"], lambda v: v if isinstance(v, int | float) else 0)
        self.data["segments"] = _prune(
            self.data["segments"], lambda v: max(v.get("last_writeback") or 0, v.get("first_seen") or 0)
        )
        tmp = self.path.with_name(f".{STATE_FILE}.{os.getpid()}")
        tmp.write_text(json.dumps(self.data, ensure_ascii=False, sort_keys=True), encoding="utf-8")
        os.replace(tmp, self.path)

    @contextlib.contextmanager
    def locked(self) -> Iterator[HookState]:
        """Hold the lock, load, yield, save."""
        self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        with open(self.directory / LOCK_FILE, "a+b") as lock:
            if fcntl is not None:
                fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
            try:
                self._load()
                yield self
                self._save()
            finally:
                if fcntl is not None:
                    fcntl.flock(lock.fileno(), fcntl.LOCK_UN)

    def read(self) -> HookState:
        """Load without locking (for quick checks that change nothing)."""
        self._load()
        return self

    # ---------------------------------------------------------------- queries
    def was_written(self, key: str) -> bool:
        return key in self.data["written"]

    def segment(self, key: str) -> dict[str, Any]:
        entry = self.data["segments"].get(key)
        return entry if isinstance(entry, dict) else {}

    # ---------------------------------------------------------------- changes
    def mark_written(self, key: str, now: float) -> None:
        self.data["written"][key] = now

    def update_segment(self, key: str, **values: Any) -> None:
        entry = dict(self.segment(key))
        entry.update(values)
        self.data["segments"][key] = entry


def periodic_due(state: HookState, key: str, now: float, *, interval: float = PERIODIC_SECONDS) -> bool:
    """Whether the Stop hook should write back now; the first sighting starts the clock.

    Call inside :meth:`HookState.locked` (it records ``first_seen``).
    """
    entry = state.segment(key)
    first = entry.get("first_seen")
    if not isinstance(first, int | float):
        state.update_segment(key, first_seen=now)
        return False
    last = entry.get("last_writeback")
    since = max(first, last) if isinstance(last, int | float) else first
    return now - since >= interval
