"""Acknowledged means durable: what notegate flushes to stable storage before it says "written".

Theory of operation
-------------------
A write returns only after its commit is on the origin (git's ref update is the linearization point).  A
killed process cannot undo that, but a power cut or a kernel crash can: a file whose bytes are still in the
page cache is lost, and a rename can reach the disk before the data of the file it names (ext4's delayed
allocation leaves a zero-length file behind a rename that was not preceded by a flush).  So, with
durability on (``[server] durability``, on by default), every file a write depends on is flushed in this
order, which is git's own ``core.fsync`` order (objects, then the ref that names them):

1. **The group's pack** (:mod:`notegate.vault.bulk`, written by notegate's own code, not libgit2): the
   ``.pack`` and ``.idx`` are each ``fsync``-ed before they are renamed into place, then the pack folder is
   ``fsync``-ed so the names are on disk too; the links into a local origin's pack folder are followed by an
   ``fsync`` of that folder.  One pack per group commit, so one set of flushes per group, not per write.
2. **The origin's ref, then the clone's** (:mod:`notegate.vault.refwrite`, git's lock-file protocol in Python):
   the ``<ref>.lock`` file is ``fsync``-ed before it is renamed over the ref, then the ref's folder is.  A ref is
   written only after the objects it names are flushed (step 1), so no power cut leaves a ref naming a missing
   object.  Not libgit2's ``set_target``: it keeps the GIL through its flushes, so every group commit stood the
   whole server still for them (bench/probe_ref_gil.py).  :func:`enable` still turns on libgit2's global
   ``ENABLE_FSYNC_GITDIR`` for what libgit2 writes itself (a fetch's packs and tracking ref, a remote push's
   pending ref, ``packed-refs``): with it libgit2 1.9 ``fsync``-s every ``.lock`` file it commits, every loose
   object, the packs and indexes its indexer writes, and after each rename the folder that holds the file.
3. **The state rows** (:mod:`notegate.sqlite`): SQLite in WAL mode with ``synchronous=FULL`` syncs the WAL at
   every commit, so a row the write implies (its audit row, inbox authorship, a contract's idempotency key)
   is on disk when its transaction returns.  The search index stays ``NORMAL``: it is rebuilt from git
   (:meth:`~notegate.vault.index.SearchIndex.catch_up` finds its tip behind, or gone, and catches up).
4. **git's own processes** (repack, maintenance) get ``-c core.fsync=all`` (:func:`git_config_args`): a
   repack writes the new pack and deletes the old ones, and the new one must be on disk first.

With durability off, nothing is flushed (the process-kill guarantee only): the documented control of the
power-loss harness (``bench/power_loss.py``).  Process-wide: libgit2's option is global, so one process has
one mode; the server sets it at start (:class:`~notegate.services.runtime.Runtime`).
"""

from __future__ import annotations

import os
from pathlib import Path

import pygit2
from pygit2.enums import Option

_state = {"on": False}


def enable(on: bool) -> None:
    """Set this process's mode: libgit2's flushes and notegate's own (pack files, pack folders)."""
    pygit2.option(Option.ENABLE_FSYNC_GITDIR, bool(on))
    _state["on"] = bool(on)


def enabled() -> bool:
    return _state["on"]


def flush_file(fd: int) -> None:
    """The file's data and size on stable storage, when durability is on (``fsync``, not ``fdatasync``: a
    new file's size is metadata, and a pack read back short is a corrupt pack)."""
    if _state["on"]:
        os.fsync(fd)


def flush_folder(folder: Path | str) -> None:
    """The folder's entries (a file renamed or linked into it) on stable storage, when durability is on."""
    if not _state["on"]:
        return
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def flush_tree(root: Path) -> None:
    """Every file and folder under ``root`` (``root`` included) on stable storage, when durability is on: what a
    program wrote with no flush of its own (age, a bundle fetch, a hook file) before a name declares it whole
    (a backup folder renamed from ``.partial``, a restored folder's config).  Symlinks are not followed."""
    if not _state["on"]:
        return
    for folder, _dirs, files in os.walk(root, topdown=False):
        for name in files:
            path = os.path.join(folder, name)
            if os.path.islink(path):
                continue
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        flush_folder(folder)


def git_config_args() -> list[str]:
    """``-c`` options for a ``git`` process this one starts, so git flushes what it writes as we do."""
    return ["-c", "core.fsync=all", "-c", "core.fsyncMethod=fsync"] if _state["on"] else []


#: The lock files git and libgit2 leave beside what they were replacing when their process dies mid-update.
_LOCK_FILES = ("HEAD.lock", "packed-refs.lock")  # not config.lock: a starting process may be writing it


def clear_stale_locks(repo_dir: Path, write_lock: Path) -> list[str]:
    """Remove the ref and config lock files a process that died mid-update left in the server's own clone.

    Why: a power cut (or a kill) between creating ``refs/heads/main.lock`` and renaming it leaves the lock
    file, and libgit2 then refuses every later update of that ref ("failed to lock file"): the server would
    not start again.  Only the clone's: every writer of it holds ``write_lock`` (taken here, so none is
    writing now), whereas a local origin's lock may belong to a live ``git receive-pack``.  Returns the
    removed names (relative), for the log."""
    import fcntl

    removed: list[str] = []
    if not repo_dir.is_dir():
        return removed
    with open(write_lock, "a+") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            found = [repo_dir / name for name in _LOCK_FILES]
            found += list((repo_dir / "refs").rglob("*.lock")) if (repo_dir / "refs").is_dir() else []
            for path in found:
                try:
                    path.unlink()
                except FileNotFoundError:
                    continue
                removed.append(str(path.relative_to(repo_dir)))
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
    return removed


#: A ref lock older than this in a local origin belongs to no live process: git and libgit2 hold one only for
#: the moment of the ref update (after the pre-receive hook has run), milliseconds even with every flush.  Were
#: a stalled live one removed, its own rename fails and its push reports an error (nothing is lost or
#: corrupted); a stale one left in place refuses every push until someone removes it by hand.
STALE_REF_LOCK_SECONDS = 1.0


def clear_stale_ref_lock(repo_dir: Path, ref: str) -> bool:
    """Remove ``ref``'s lock file in a repository other processes also write (a local origin) once it is older
    than :data:`STALE_REF_LOCK_SECONDS`: what a power cut or a kill between its creation and its rename left,
    which otherwise refuses every later push to that ref.  A younger one is waited for (at most that long: a
    live update renames it within milliseconds) and removed only if the same file is still there.  True when
    one was removed (the caller pushes again)."""
    import time

    lock = repo_dir / f"{ref}.lock"
    try:
        first = lock.stat()
    except OSError:
        return False
    age = time.time() - first.st_mtime
    if age < STALE_REF_LOCK_SECONDS:
        time.sleep(STALE_REF_LOCK_SECONDS - max(age, 0.0))
        try:
            now = lock.stat()
        except OSError:
            return True  # its owner finished meanwhile: push again
        if (now.st_ino, now.st_mtime_ns) != (first.st_ino, first.st_mtime_ns):
            return True  # another update's own lock: push again (and meet it again if it is still there)
    try:
        lock.unlink()
    except FileNotFoundError:
        return True
    except OSError:
        return False
    return True
