"""Moving one branch of a files-backend repository, in Python, with git's own lock-file protocol.

Why not libgit2: pygit2 keeps the GIL while libgit2 writes a ref, and with durability on libgit2 flushes the lock
file and its folder inside that call.  On this machine's disk a durable ``set_target`` took ~37 ms, during which
every other thread of the server (the HTTP door, the next group's callers) stood still: measured, another thread
was blocked for 0.93 s of 1.13 s while 30 of them ran.  ``os.fsync`` releases the GIL, so the same flushes made
here cost the group's writer its time and nobody else theirs.

The protocol is git's (``lockfile.c``, ``refs/files-backend.c``), so ``git receive-pack``, libgit2 and this module
exclude each other on the same ref:

1. create ``<ref>.lock`` with ``O_CREAT | O_EXCL`` (it exists: another process is moving the ref, or one died while
   it did → :class:`FileExistsError`);
2. read the ref's value under the lock (its loose file, else its line in ``packed-refs``) and compare it with the
   expected one (a compare-and-swap: another writer got there first → :data:`MOVED`);
3. write ``<hex>\\n`` into the lock file, flush it (durability on), rename it over ``<ref>``, flush the folder.

Crash safety: the rename is the commit point; a crash before it leaves the old value and a stale lock file, which
the callers already clear (:func:`notegate.vault.durable.clear_stale_locks`, ``clear_stale_ref_lock``).

The reflog is kept as git keeps it: appended (and flushed) before the rename when ``logs/<ref>`` exists or
``core.logAllRefUpdates`` asks for it (``always``; ``true`` for branches, which a non-bare repository defaults to).
Both of the server's repositories are bare, where it defaults to off: an owner who turns it on in the origin keeps
the history of its main, as with git.
"""

from __future__ import annotations

import errno
import os
import re
import time
from pathlib import Path

import pygit2

from notegate.vault import durable

#: The expectation "whatever it is now" (a forced update).
ANY = object()

_OID = re.compile(rb"[0-9a-f]{40}|[0-9a-f]{64}")
#: Who a reflog line names as having moved the ref (git takes the committer identity).
REFLOG_IDENTITY = "notegate <notegate@localhost>"
_LOGGED_PREFIXES = ("refs/heads/", "refs/remotes/", "refs/notes/")
#: repository folder -> (its config file's (mtime, size), (``core.logAllRefUpdates`` in effect, the ref storage))
_settings: dict[Path, tuple[tuple[int, int], tuple[str, str]]] = {}


def read_ref(repo_dir: Path, ref: str) -> str | None:
    """The ref's object id as stored on disk (loose file first, as git reads it), or None when it does not exist."""
    try:  # os.open and one read: each system call gives the GIL away and waits to take it back
        fd = os.open(repo_dir / ref, os.O_RDONLY)
    except FileNotFoundError:
        return _packed(repo_dir, ref)
    try:
        data = os.read(fd, 256)
    except IsADirectoryError as exc:
        raise _unreadable(f"{ref} is a folder") from exc
    finally:
        os.close(fd)
    value = data.strip()
    if _OID.fullmatch(value) is None:
        raise _unreadable(f"{ref} does not hold an object id")
    return value.decode("ascii")


def _packed(repo_dir: Path, ref: str) -> str | None:
    """The ref's line in ``packed-refs`` (``<oid> <name>``; ``#`` header and ``^`` peeled lines skipped)."""
    try:
        data = (repo_dir / "packed-refs").read_bytes()
    except FileNotFoundError:
        return None
    wanted = ref.encode()
    for line in data.splitlines():
        if line[:1] in (b"#", b"^"):
            continue
        oid, _, name = line.partition(b" ")
        if name == wanted and _OID.fullmatch(oid):
            return oid.decode("ascii")
    return None


def update_ref(repo_dir: Path, ref: str, new: str, old: object = ANY, message: str = "notegate: update") -> bool:
    """Set ``ref`` of the repository at ``repo_dir`` to ``new`` if it is now ``old`` (None: it does not exist;
    :data:`ANY`: whatever it is). True when moved; False when it held something else (nothing written).  Raises
    :class:`FileExistsError` when the ref's lock file exists (another process holds it, or a crash left it), and
    :class:`OSError` when the disk refuses or the ref is not an object id (a symbolic ref, a torn file, a
    reftable repository): left to git to judge, never overwritten."""
    log_setting, storage = _repo_settings(repo_dir)
    if storage != "files":  # git 2.45's reftable: these files are not its refs (libgit2 1.9 cannot open it at all)
        raise _unreadable(f"the repository keeps its refs in {storage!r}, not in files")
    path = repo_dir / ref
    lock = path.with_name(path.name + ".lock")
    try:
        fd = _create_lock(lock)
    except FileNotFoundError:  # the ref's folder is not there yet (the first ref under it)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = _create_lock(lock)
    renamed = False
    try:
        try:
            if old is not ANY and read_ref(repo_dir, ref) != old:
                return False
            os.write(fd, new.encode("ascii") + b"\n")
            durable.flush_file(fd)
        finally:
            os.close(fd)
        reflog = _reflog(repo_dir, ref, log_setting)
        if reflog is not None:
            _append_reflog(reflog, read_ref(repo_dir, ref) if old is ANY else old, new, message)
        os.rename(lock, path)
        renamed = True
    finally:
        if not renamed:
            lock.unlink(missing_ok=True)
    durable.flush_folder(path.parent)
    return True


def _create_lock(lock: Path) -> int:
    return os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)


def _unreadable(what: str) -> OSError:
    return OSError(errno.EINVAL, f"not a ref this can move: {what}")


def _reflog(repo_dir: Path, ref: str, setting: str) -> Path | None:
    """Where this update's reflog line goes, or None when git would write none."""
    log = repo_dir / "logs" / ref
    if log.exists():
        return log
    if setting == "always" or (setting == "true" and ref.startswith(_LOGGED_PREFIXES)):
        return log
    return None


def _repo_settings(repo_dir: Path) -> tuple[str, str]:
    """(``core.logAllRefUpdates`` as "always", "true" or "false", unset meaning true unless the repository is bare;
    ``extensions.refStorage``, "files" unless set), read again only when the config file changes."""
    config = repo_dir / "config"
    try:
        info = config.stat()
    except FileNotFoundError:
        return "false", "files"
    stamp = (info.st_mtime_ns, info.st_size)
    cached = _settings.get(repo_dir)
    if cached is not None and cached[0] == stamp:
        return cached[1]
    parsed = pygit2.Config(str(config))
    value = str(parsed["core.logallrefupdates"]).lower() if "core.logallrefupdates" in parsed else None
    if value is None:
        bare = "core.bare" in parsed and parsed.get_bool("core.bare")
        log_setting = "false" if bare else "true"
    elif value == "always":
        log_setting = "always"
    else:
        log_setting = "true" if value in ("true", "yes", "on", "1") else "false"
    storage = str(parsed["extensions.refstorage"]).lower() if "extensions.refstorage" in parsed else "files"
    _settings[repo_dir] = (stamp, (log_setting, storage))
    return log_setting, storage


def _append_reflog(log: Path, old: str | None, new: str, message: str) -> None:
    offset = time.localtime().tm_gmtoff // 60
    zone = f"{'+' if offset >= 0 else '-'}{abs(offset) // 60:02d}{abs(offset) % 60:02d}"
    line = f"{old or '0' * len(new)} {new} {REFLOG_IDENTITY} {int(time.time())} {zone}\t{message}\n"
    log.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o666)
    try:
        os.write(fd, line.encode("utf-8"))
        durable.flush_file(fd)
    finally:
        os.close(fd)
