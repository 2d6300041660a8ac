"""A backup's ``NAME.partial`` folder: claimed under a lock while it is written, removed by a later backup when a
cut (a power loss, a kill, a full disk) left it behind.

Why: a backup is written as ``notegate-backup-<time>.partial`` and renamed once whole, so one cut short never
looks like a backup; but nothing removed the ``.partial`` folder, and each cut left one more, as large as a
backup, for the owner to find and delete by hand (issue 28).

Theory of operation
-------------------
* **Claim** (:func:`claim`): a backup makes its folder (``mkdir``: one owner per name) and holds an exclusive
  ``flock`` on the folder itself until it has renamed it whole (or removed it).  The kernel keeps the lock with
  the process: a backup that died holds none.  A claim that lost its folder between the ``mkdir`` and the lock
  (a sweep took the empty folder in that instant) takes the next name.
* **Sweep** (:func:`sweep`, as every backup starts, in the folder it writes into): a ``notegate-backup-*.partial``
  folder whose lock can be taken at once belongs to no running backup, so a cut left it; it is removed while
  the sweep holds its lock.  A folder whose lock is held is a backup under way (here or in another process) and
  is left alone.  A finished backup never ends in ``.partial`` (it is renamed while locked), and a name is
  removed only if it still names the very folder that was locked (same inode), so a folder renamed whole
  meanwhile is never touched.
* Where the file system cannot lock a folder (some network file systems refuse ``flock`` on a directory),
  nothing is swept: a ``.partial`` folder there stays for the owner to delete, as before.
"""

from __future__ import annotations

import fcntl
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

PREFIX = "notegate-backup-"
SUFFIX = ".partial"


class _NoLocks(OSError):
    """The file system refused to lock a folder: nothing can be known about its owner."""


@dataclass
class Claim:
    """A backup's own ``.partial`` folder and the lock it holds on it (``fd`` None where folders cannot be
    locked); ``final`` is the name it takes once whole."""

    final: Path
    partial: Path
    fd: int | None

    def release(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


def _locked(folder: Path, *, wait: bool) -> int | None:
    """A descriptor of ``folder`` holding its exclusive lock, or None when another holds it (``wait=False``).

    Raises ``FileNotFoundError`` when the folder went away, :class:`_NoLocks` where it cannot be locked."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
    except BlockingIOError:
        os.close(fd)
        return None
    except OSError as exc:
        os.close(fd)
        raise _NoLocks(exc.errno, exc.strerror) from None
    return fd


def _same(fd: int, path: Path) -> bool:
    """Does ``path`` still name the folder ``fd`` holds (not removed, not renamed away and replaced)?"""
    try:
        named = os.stat(path, follow_symlinks=False)
    except FileNotFoundError:
        return False
    held = os.fstat(fd)
    return (named.st_dev, named.st_ino) == (held.st_dev, held.st_ino)


def claim(to_dir: Path, stamp: str) -> Claim:
    """A new ``notegate-backup-<stamp>[-n].partial`` folder in ``to_dir``, made and locked by this backup."""
    for n in range(1, 10_000):
        name = f"{PREFIX}{stamp}" if n == 1 else f"{PREFIX}{stamp}-{n}"
        final, partial = to_dir / name, to_dir / f"{name}{SUFFIX}"
        if os.path.lexists(final) or os.path.lexists(partial):
            continue
        try:
            partial.mkdir(mode=0o700)
        except FileExistsError:
            continue  # another backup took the name this instant
        try:
            fd = _locked(partial, wait=True)
        except FileNotFoundError:
            continue  # swept as an abandoned empty folder before the lock: take the next name
        except _NoLocks:
            return Claim(final, partial, None)
        if fd is not None and _same(fd, partial):
            return Claim(final, partial, fd)
        if fd is not None:
            os.close(fd)
    raise FileExistsError(f"no free backup name for {stamp} in {to_dir}")


def sweep(to_dir: Path) -> list[str]:
    """Remove the ``.partial`` folders in ``to_dir`` that no running backup holds; returns their names."""
    removed: list[str] = []
    try:
        entries = sorted(os.scandir(to_dir), key=lambda e: e.name)
    except FileNotFoundError:
        return removed
    for entry in entries:
        if not (entry.name.startswith(PREFIX) and entry.name.endswith(SUFFIX)):
            continue
        if not entry.is_dir(follow_symlinks=False):
            continue  # a file or a link by that name is not a backup's folder: not ours to remove
        path = Path(entry.path)
        try:
            fd = _locked(path, wait=False)
        except OSError:  # gone meanwhile, or the file system cannot tell: leave it
            continue
        if fd is None:
            continue  # a backup under way
        try:
            if _same(fd, path):
                shutil.rmtree(path, ignore_errors=True)
                if not os.path.lexists(path):
                    removed.append(entry.name)
        finally:
            os.close(fd)
    return removed
