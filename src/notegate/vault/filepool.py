"""Empty files made ahead of need in a folder, so that writing a file there takes one that exists.

Why: on this machine's ext4 disk making a file (a new inode) costs ~1.1 ms of kernel CPU (create, write and
close p50 1.25 ms), against ~20 us to rename or link one (bench figures in bench/RESULTS.md).  A one-note
write made four (its pack, the pack's index, and the ref locks of the origin and the clone); the pack's two
now come from here, made by the pool's own thread while the writer does something else (a system call
holds no GIL), as PostgreSQL recycles WAL segment files rather than creating them.  The ref locks are not
(:mod:`notegate.vault.refwrite` makes them with ``O_EXCL``): linking a pool file to the lock's name takes three
system calls for one, each of which gives the GIL away and waits to take it back, and measured beside a busy
thread that cost the update more than the inode it saved (bench/RESULTS.md, sixteenth session).

A file is taken empty, written, made read-only and renamed into place by the caller; the pool makes more in
the background once fewer than half are left, and a caller finding none makes its own (the pool only ever
saves time).  Names start ``tmp_``: git never reads them as objects or packs, and ``git gc`` (``git prune``)
removes ``tmp_`` files two weeks old, which is all a crashed process's unused pool files can become.
"""

from __future__ import annotations

import itertools
import os
import re
import tempfile
import threading
from contextlib import suppress
from pathlib import Path

from notegate.vault import durable

#: Files one pool keeps ready (a group commit takes two).
SIZE = 8
PREFIX = "tmp_pool_"
#: A pool file's name: ``tmp_pool_<pid>_<n>`` (what the pool's thread makes; a caller's own fallback file is
#: ``tmp_pool_own_<random>`` and never matches).
_POOL_NAME = re.compile(r"tmp_pool_(\d{1,10})_\d{1,20}")

_POOLS: dict[tuple[int, str], FilePool] = {}
_POOLS_LOCK = threading.Lock()


class FilePool:
    """The ready files of one folder, for this process (a forked child gets its own)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._ready: list[str] = []
        self._lock = threading.Lock()
        self._filling = False
        self._names = itertools.count()

    def take(self) -> str | None:
        """An empty file of the pool (its path; the caller now owns it), or None when none is ready.  Starts
        the refill when the pool runs low."""
        with self._lock:
            path = self._ready.pop() if self._ready else None
            refill = len(self._ready) < SIZE // 2 and not self._filling
            if refill:
                self._filling = True
        if refill:
            threading.Thread(target=self._fill, name="file-pool", daemon=True).start()
        return path

    def _fill(self) -> None:
        try:
            while True:
                with self._lock:
                    if len(self._ready) >= SIZE:
                        return
                path = os.path.join(self.folder, f"{PREFIX}{os.getpid()}_{next(self._names)}")
                os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))
                with self._lock:
                    self._ready.append(path)
        except OSError:
            return  # a full disk, a folder gone: callers make their own files (and meet the error themselves)
        finally:
            with self._lock:
                self._filling = False

    def ready(self) -> int:
        with self._lock:
            return len(self._ready)


def pool(folder: Path) -> FilePool:
    """This process's pool for ``folder``; the first one a process opens there removes the files that processes
    no longer alive left (a crash or a kill between making and using them)."""
    key = (os.getpid(), str(folder))
    with _POOLS_LOCK:
        found = _POOLS.get(key)
        if found is None:
            found = _POOLS[key] = FilePool(folder)
            _sweep_dead(folder)
        return found


def _sweep_dead(folder: Path) -> None:
    """Remove ``tmp_pool_<pid>_<n>`` files whose process is gone.  A live process with that number (even an
    unrelated one that reused it) keeps them: they are only ever removed when nobody can be using them."""
    try:
        names = os.listdir(folder)
    except OSError:
        return
    for name in names:
        made = _POOL_NAME.fullmatch(name)  # not a caller's own file (``tmp_pool_own_...``, being written now)
        if made is None or int(made[1]) == os.getpid() or _alive(int(made[1])):
            continue
        with suppress(OSError):
            os.unlink(os.path.join(folder, name))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process: alive
        return True
    return True


def write_new(folder: Path, target: Path, data: bytes, *, pooled: bool = True) -> None:
    """``data`` as the read-only file ``target`` in ``folder``, appearing whole (written under a temporary
    name, then renamed), in a file of the folder's pool when one is ready."""
    path = pool(folder).take() if pooled else None
    fd = -1
    if path is not None:
        try:
            # O_NOFOLLOW: a symlink planted at a pool file's (guessable) name must not make this write,
            # truncate and chmod the file it points at.
            fd = os.open(path, os.O_WRONLY | os.O_TRUNC | os.O_NOFOLLOW)
        except OSError:  # removed meanwhile (a cleanup of tmp_ files), or a symlink: make one as before
            fd = -1
    if fd < 0:
        fd, path = tempfile.mkstemp(dir=folder, prefix=f"{PREFIX}own_")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            os.fchmod(handle.fileno(), 0o444)
            handle.flush()
            durable.flush_file(handle.fileno())  # the bytes before the name: see notegate.vault.durable
        os.replace(path, target)
        durable.flush_folder(folder)
    except BaseException:
        with suppress(OSError):
            os.unlink(path)
        raise
