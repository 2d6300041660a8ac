"""What a push stores: every object in git's quarantine must be named by a pushed commit.

git keeps every object of an accepted pack, whether or not any commit names it: one clean commit plus a
60 MB blob that no tree names (a hand-made pack) would be accepted by a check that looks only at the
pushed commits, and kept until maintenance prunes it, weeks later.  Inside the pre-receive hook the pushed
objects still sit in the quarantine directory git names (``GIT_QUARANTINE_PATH``); a refused push deletes
it, so refusing is pruning.

Theory of operation
-------------------
* **Enumerate what came**: loose objects (``xx/<38 hex>``) and the names in each pack's ``.idx`` (version 2
  and version 1), read straight from the files: one pass over them, linear in the objects pushed.  The
  bytes the push stores are the sizes of its packs and loose objects.
* **Walk what the pushed tips name**, from each updated ref's new tip, entering only objects that are in
  the quarantine: an object outside it is already in the origin, and so is everything it names (git's
  connectivity check holds for the origin).  Commits are read for ``tree`` and ``parent`` lines, trees
  entry by entry (a gitlink names a commit of another repository: not followed).
* **The rest is refused** ``[push-unreferenced-object]`` -- unless the origin already has it: git's
  ``index-pack --fix-thin`` copies the bases of a thin pack's deltas into the quarantine, and those are
  old objects, not new ones.
* **Never raise on hostile input**: an unreadable index or object is a finding ``[incoming-malformed]``.

What a cut push leaves
----------------------
git deletes its quarantine when the push ends, accepted or refused, but a push cut short (a power cut, a kill
of ``git receive-pack``) leaves ``objects/tmp_objdir-incoming-XXXXXX`` (``incoming-XXXXXX`` in older git)
with everything the push had sent.  git itself never reuses or removes it at the next push; only ``git prune``
does (inside ``git gc``, once it is two weeks old), and notegate's repacks never run either: each cut left a
folder for good (measured with git 2.39; issue 28).  So every push the hook judges removes, whatever its
verdict, the quarantines of earlier pushes older than :data:`STALE_QUARANTINE_SECONDS` (:func:`sweep_stale`),
and ``notegate doctor`` reports any it finds (``origin.quarantine``).  Nothing acknowledged is in them: a push
is acknowledged only once git moved its objects into the repository and the quarantine is gone.
"""

from __future__ import annotations

import os
import shutil
import struct
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import pygit2
from pygit2.enums import ObjectType

from notegate.errors import NotegateError
from notegate.policy import MODE_GITLINK, Decision, Policy, decide_pushed_objects

__all__ = ["Quarantine", "check_quarantine", "read_quarantine", "stale_quarantines", "sweep_stale"]

_OID = 20
_HEX = frozenset("0123456789abcdef")
_IDX_V2 = b"\xfftOc"
#: How old a quarantine folder (its newest file) must be before a later push removes it.  A push lives seconds
#: (``push_inspection_seconds`` bounds the hook, 60 s by default; a slow link adds its upload), so one untouched
#: for a day belongs to no push still running: a cut or a kill ended it.
STALE_QUARANTINE_SECONDS = 24 * 3600
#: The names git gives a push's quarantine inside ``objects/`` (today's git, and older git).
_QUARANTINE_PREFIXES = ("tmp_objdir-incoming-", "incoming-")


class _Unreadable(NotegateError):
    """An index or object that cannot be read as git writes it (becomes an incoming-malformed finding)."""

    rule = "incoming-malformed"


@dataclass(frozen=True)
class Quarantine:
    objects: frozenset[bytes]  # raw ids of every object the push brought
    stored_bytes: int  # the sizes of its packs and loose objects


def _idx_names(data: bytes) -> list[bytes]:
    """The object names of a pack index (version 2, or the original version 1)."""
    if data[:4] == _IDX_V2:
        if data[4:8] != b"\0\0\0\2":
            raise _Unreadable("a pack index has a version notegate does not read")
        fanout, names = 8, 8 + 256 * 4
        count = struct.unpack(">I", data[fanout + 255 * 4 : fanout + 256 * 4])[0]
        if len(data) < names + count * _OID:
            raise _Unreadable("a pack index is truncated")
        return [data[names + i * _OID : names + (i + 1) * _OID] for i in range(count)]
    if len(data) < 256 * 4:
        raise _Unreadable("a pack index is truncated")
    count = struct.unpack(">I", data[255 * 4 : 256 * 4])[0]
    start, stride = 256 * 4, 4 + _OID
    if len(data) < start + count * stride:
        raise _Unreadable("a pack index is truncated")
    return [data[start + i * stride + 4 : start + (i + 1) * stride] for i in range(count)]


def read_quarantine(directory: Path) -> Quarantine:
    """Every object in git's quarantine directory, and the bytes they take."""
    objects: set[bytes] = set()
    stored = 0
    with os.scandir(directory) as entries:
        for entry in entries:
            if entry.name == "pack" and entry.is_dir(follow_symlinks=False):
                with os.scandir(entry.path) as packs:
                    for item in packs:
                        if item.name.endswith(".pack"):
                            stored += item.stat(follow_symlinks=False).st_size
                        elif item.name.endswith(".idx"):
                            objects.update(_idx_names(Path(item.path).read_bytes()))
            elif len(entry.name) == 2 and set(entry.name) <= _HEX and entry.is_dir(follow_symlinks=False):
                with os.scandir(entry.path) as loose:
                    for item in loose:
                        if len(item.name) == 38 and set(item.name) <= _HEX:
                            objects.add(bytes.fromhex(entry.name + item.name))
                            stored += item.stat(follow_symlinks=False).st_size
    return Quarantine(frozenset(objects), stored)


def _named(kind: int, data: bytes) -> Iterable[bytes]:
    """The objects one commit, tree or tag names (raw ids)."""
    if kind == ObjectType.COMMIT or kind == ObjectType.TAG:
        for line in data.split(b"\n\n", 1)[0].split(b"\n"):
            key, _, value = line.partition(b" ")
            if key in (b"tree", b"parent", b"object"):
                try:
                    yield bytes.fromhex(value.decode("ascii"))
                except (UnicodeDecodeError, ValueError):
                    raise _Unreadable("a commit names an object that is not a hex id") from None
    elif kind == ObjectType.TREE:
        i, size = 0, len(data)
        while i < size:
            nul = data.find(b"\0", i)
            if nul < 0 or nul + 1 + _OID > size:
                raise _Unreadable("a tree object is truncated or malformed")
            mode = data[i : data.find(b" ", i, nul)]
            if mode.isdigit() and int(mode, 8) != MODE_GITLINK:
                yield data[nul + 1 : nul + 1 + _OID]
            i = nul + 1 + _OID


def unreferenced(
    repo: pygit2.Repository, origin: pygit2.Repository, tips: Iterable[str], pushed: frozenset[bytes]
) -> int:
    """How many pushed objects no pushed tip names, and the origin does not already have."""
    seen: set[bytes] = set()
    stack = [raw for raw in (bytes.fromhex(t) for t in tips) if raw in pushed]
    while stack:
        oid = stack.pop()
        if oid in seen:
            continue
        seen.add(oid)
        try:
            kind, data = repo.odb.read(pygit2.Oid(raw=oid))
        except (KeyError, ValueError, pygit2.GitError):
            raise _Unreadable("a pushed object cannot be read") from None
        stack.extend(child for child in _named(int(kind), data) if child in pushed and child not in seen)
    return sum(1 for oid in pushed - seen if pygit2.Oid(raw=oid) not in origin.odb)


def check_quarantine(
    policy: Policy, repo: pygit2.Repository, git_dir: str | Path, directory: Path, tips: Iterable[str]
) -> Decision:
    """May the push store what it brought (``directory``: git's quarantine)?  Every object named by a pushed
    tip (or already in the origin), and no more than ``max_push_bytes`` of them."""
    try:
        pushed = read_quarantine(directory)
        origin = pygit2.Repository(str(git_dir))  # the origin's own objects, without the quarantine
        loose = unreferenced(repo, origin, tips, pushed.objects)
    except (_Unreadable, OSError) as exc:
        what = exc.message if isinstance(exc, _Unreadable) else "the pushed objects cannot be listed"
        return Decision(False, _Unreadable.rule, what)
    return decide_pushed_objects(unreferenced=loose, pushed_bytes=pushed.stored_bytes, policy=policy)


@dataclass(frozen=True)
class LeftQuarantine:
    """A quarantine folder no running push can own: its path, the bytes it holds, its age in seconds."""

    path: Path
    stored_bytes: int
    age_seconds: float


def _newest_and_size(folder: str) -> tuple[float, int]:
    """The newest modification time under ``folder`` (itself included) and the bytes of its files (no link
    followed)."""
    newest, size = os.lstat(folder).st_mtime, 0
    for parent, _dirs, files in os.walk(folder):
        newest = max(newest, os.lstat(parent).st_mtime)
        for name in files:
            st = os.lstat(os.path.join(parent, name))
            newest, size = max(newest, st.st_mtime), size + st.st_size
    return newest, size


def stale_quarantines(
    git_dir: str | Path, *, now: float, keep: Path | None = None, older_than: float = STALE_QUARANTINE_SECONDS
) -> list[LeftQuarantine]:
    """The quarantine folders in ``git_dir/objects`` untouched for ``older_than`` seconds (never ``keep``: the
    running push's own); [] when there is no such folder or it cannot be listed."""
    objects = Path(git_dir) / "objects"
    kept = os.path.realpath(keep) if keep is not None else None
    found: list[LeftQuarantine] = []
    try:
        entries = sorted(os.scandir(objects), key=lambda e: e.name)
    except OSError:
        return found
    for entry in entries:
        if not entry.name.startswith(_QUARANTINE_PREFIXES) or not entry.is_dir(follow_symlinks=False):
            continue
        if kept is not None and os.path.realpath(entry.path) == kept:
            continue
        try:
            newest, size = _newest_and_size(entry.path)
        except OSError:  # removed meanwhile (its push ended)
            continue
        if now - newest >= older_than:
            found.append(LeftQuarantine(Path(entry.path), size, now - newest))
    return found


def sweep_stale(git_dir: str | Path, *, now: float, keep: Path | None = None) -> list[LeftQuarantine]:
    """Remove the quarantines cut pushes left (:func:`stale_quarantines`); returns those now gone.  Never raises:
    what cannot be removed stays for the next push (and the doctor names it)."""
    gone = []
    for left in stale_quarantines(git_dir, now=now, keep=keep):
        shutil.rmtree(left.path, ignore_errors=True)
        if not os.path.lexists(left.path):
            gone.append(left)
    return gone
