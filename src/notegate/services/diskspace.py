"""A full disk is an ordinary, named condition: ``[disk-full]``, never a traceback or a half-write.

Theory of operation
-------------------
* **Before a write** (:func:`check_room`, called by the recipe before the store builds anything): the disks
  holding the environment's clone, its origin when the origin is a local bare repository, and the SQLite
  state database must each have at least the policy's ``min_free_bytes`` free (``statvfs``, a few
  microseconds).  Below it the write is refused whole ``[disk-full]``: the margin is what lets the writes
  already under way, the state rows they imply and SQLite's checkpoints finish.
* **If the disk fills anyway** (another program filled it between the check and the write, or the margin is
  0): :func:`no_space` recognises the error, whichever layer raised it (an ``OSError`` with ``ENOSPC`` or
  ``EDQUOT``, libgit2's or SQLite's message), and the recipe turns it into the same ``[disk-full]`` refusal.
  The store writes a group's pack before any ref names it and moves a ref only by renaming a fully written
  lock file, so a write that failed here left at most an unreferenced pack (dropped by the next full
  repack) and no ref, in the clone or the origin.
* **Reads keep working**: a read writes nothing but its audit row, and an audit row that cannot be written
  for lack of space is logged (``audit-lost``: tool, outcome, no path) and the read answered all the same
  (:meth:`~notegate.services.notes.NotesService.audited`); a write's own record is its commit and trailers.
* **No restart**: nothing here is remembered; the next write checks again.

Where statvfs cannot answer (a path on a disk that went away), the part is reported with ``None`` free and
never blocks a write: the write then meets the real error, if any.
"""

from __future__ import annotations

import errno
import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path

import pygit2

from notegate.errors import DiskFull, NotegateError
from notegate.policy import Policy, decide_room
from notegate.services.envdirs import CLONE_NAME, env_dir

#: What libgit2 and SQLite say when a write met a full disk (their errors carry no errno).
_NO_SPACE_WORDS = ("no space left on device", "disk quota exceeded", "database or disk is full")


@dataclass(frozen=True)
class Part:
    """One disk a write needs: what it holds (for the refusal and the doctor) and a path on it."""

    what: str
    path: Path


@dataclass(frozen=True)
class Room:
    part: Part
    free_bytes: int | None

    def low(self, policy: Policy) -> bool:
        return self.free_bytes is not None and not decide_room(policy, part="", free_bytes=self.free_bytes).allowed


def parts(config, environment: str) -> list[Part]:
    """The disks a write to ``environment`` needs: its clone, a local origin, the SQLite state database."""
    env = config.environment(environment)
    found = [Part(f"the server's clone of environment '{env.name}'", env_dir(config.state_dir, env.name) / CLONE_NAME)]
    if env.is_local_origin:
        found.append(Part(f"the origin of environment '{env.name}'", Path(env.origin_url)))
    if not config.state_url:  # PostgreSQL keeps its own disk, and says so itself
        found.append(Part("the state database", config.state_dir))
    return found


def free_bytes(path: Path) -> int | None:
    """Bytes an unprivileged writer may still use on the disk holding ``path`` (or its nearest folder).

    The parents are walked only when ``path`` is missing: on every write ``path`` exists, and spelling out all
    its parents first (``*path.parents``) cost more than the three ``statvfs`` calls themselves."""
    try:
        return _free_at(path)
    except FileNotFoundError:
        pass
    for candidate in path.parents:
        try:
            return _free_at(candidate)
        except FileNotFoundError:
            continue
    return None


def _free_at(path: Path) -> int | None:
    """``statvfs`` of ``path``: None when it cannot answer; FileNotFoundError when ``path`` is not there."""
    try:
        st = os.statvfs(path)
    except FileNotFoundError:
        raise
    except OSError:
        return None
    return st.f_bavail * st.f_frsize


def rooms(config, environment: str) -> list[Room]:
    return [Room(part, free_bytes(part.path)) for part in parts(config, environment)]


def health(policy: Policy, config, environment: str) -> dict[str, object]:
    """What /healthz shows an environment's own token: the least free space of the disks a write needs, the
    policy's threshold, and "low" below it (names no path)."""
    known = [r.free_bytes for r in rooms(config, environment) if r.free_bytes is not None]
    free = min(known) if known else None
    low = free is not None and not decide_room(policy, part="", free_bytes=free).allowed
    return {"status": "low" if low else "ok", "free_bytes": free, "min_free_bytes": policy.min_free_bytes}


def any_low(policy: Policy, config) -> bool:
    """Is any disk a write to any environment needs below ``min_free_bytes`` (the anonymous /healthz)?"""
    return any(room.low(policy) for name in config.environments for room in rooms(config, name))


def check_room(policy: Policy, config, environment: str) -> None:
    """Refuse a new write ``[disk-full]`` while a disk it needs is below the policy's ``min_free_bytes``."""
    if policy.min_free_bytes == 0:  # no margin kept: a full disk is still named, by the write that meets it
        return
    for room in rooms(config, environment):
        if room.free_bytes is None:
            continue
        decision = decide_room(policy, part=room.part.what, free_bytes=room.free_bytes)
        if not decision.allowed:
            raise DiskFull(decision.reason)


def no_space(exc: BaseException | None) -> bool:
    """Did ``exc`` (or what caused it) come from a full disk or an exhausted quota?"""
    seen = 0
    while exc is not None and seen < 8:
        if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
            return True
        if isinstance(exc, sqlite3.OperationalError | pygit2.GitError | OSError | NotegateError):
            text = str(exc).casefold()
            if any(word in text for word in _NO_SPACE_WORDS):
                return True
        exc = exc.__cause__ or exc.__context__
        seen += 1
    return False


def refused(exc: BaseException, what: str) -> DiskFull:
    """The ``[disk-full]`` refusal for a write whose storing met a full disk (``what``: the environment)."""
    return DiskFull(f"the disk filled up while the write to {what} was being stored; it was not acknowledged")
