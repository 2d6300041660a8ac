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
"""

from __future__ import annotations

import os
import struct
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import pygit2
from pygit2.enums import ObjectType

from notegate.errors import NotegateError
from notegate.policy import MODE_GITLINK, Decision, Policy, decide_pushed_objects

__all__ = ["Quarantine", "check_quarantine", "read_quarantine"]

_OID = 20
_HEX = frozenset("0123456789abcdef")
_IDX_V2 = b"\xfftOc"


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
