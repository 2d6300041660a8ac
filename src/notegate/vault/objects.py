"""Git objects as bytes: trees read and edited from their raw form, commits formatted as libgit2 formats them,
so that a group commit writes all its objects as one pack (:func:`notegate.vault.bulk.pack_records`).

Why: libgit2 writes every object it creates as a loose file (a temporary file, deflated, renamed into a
fan-out folder), and a local push then linked each into the origin: a one-note commit is a blob, a tree per
folder on its path and a commit, ~5 files and ~5 links, which was most of a write's CPU on this machine's
disk (bench/probe_group_pack.py: 1.39 ms loose against 0.70 ms packed per lone write at 10,000 notes, 1.91
against 0.44 ms in groups of 8).  Here the same objects are made in memory and the group becomes one pack
and its index (two files, two links), whatever its size.

What is made is exactly what libgit2 makes (tests/vault/test_objects.py, by property: the same tree ids as
:func:`notegate.vault.store.build_tree` for any tree and changes, the same commit ids as ``create_commit``):

* A tree is a run of entries ``mode SP name NUL id20`` in git's order: names compared as bytes, a folder's
  name as if ``/`` followed it.  An edit finds an entry by bisection in that order and rewrites only the
  entries it touches; the other entries' bytes are copied as they are.
* A mode is written as libgit2 writes it (``%o`` of the entry's mode: ``040000`` becomes ``40000``), an entry
  name is refused as libgit2's tree builder refuses it (empty, ``.``, ``..``, ``.git``, holding ``/`` or NUL).
* A tree that is not in git's order, or names one entry twice (only a hand-made object can be), is put in
  order first, the last of two same-named entries winning, as libgit2's tree builder does.

Parsed trees are kept in a small cache by id (:class:`TreeCache`): an id names its bytes forever, so an entry
never goes stale, and a group's next commit starts from the trees the previous one just made.
"""

from __future__ import annotations

import hashlib
import operator
import re
import zlib
from bisect import bisect_left
from collections.abc import Callable, Sequence
from itertools import islice, repeat
from operator import itemgetter
from typing import Protocol

import pygit2
from pygit2.enums import FileMode, ObjectType

from notegate.vault.bulk import _object_header

#: The tree entry modes git writes (as libgit2 prints them), and the ones libgit2 reads as a folder / a file.
TREE_MODE = b"40000"
BLOB_MODE = b"100644"
_CANONICAL_MODES = frozenset({b"100644", b"100755", b"40000", b"120000", b"160000"})
_TREE = int(FileMode.TREE)
_COMMIT = int(FileMode.COMMIT)
_BLOB_EXECUTABLE = int(FileMode.BLOB_EXECUTABLE)
_BLOB_MODE_INTS = frozenset({int(FileMode.BLOB), _BLOB_EXECUTABLE})
_MODES: dict[bytes, int] = {}
ABSENT = "absent"
#: pack object types (gitformat-pack)
OBJ_COMMIT, OBJ_TREE, OBJ_BLOB = 1, 2, 3
_KIND_NAMES = {OBJ_COMMIT: b"commit", OBJ_TREE: b"tree", OBJ_BLOB: b"blob"}
#: zlib level for a group's blobs and commits: what libgit2 uses for loose objects (``Z_BEST_SPEED``).
LEVEL = 1
#: ... and for its trees: stored, not deflated. A tree is mostly 20-byte ids, so deflate saves ~30 % of it, and
#: at 100,000 notes a write's root and folder are ~26 KB each: level 1 cost 0.57 ms a tree on this machine
#: against 0.02 ms stored. The periodic roll-up deltas each tree against its predecessor and deflates that.
TREE_LEVEL = 0

#: What git's order puts after a name: "/" for a folder (canonical modes only; see RawTree.parse).
_FOLDER_SUFFIX = {TREE_MODE: b"/"}
_first, _second, _third = itemgetter(0), itemgetter(1), itemgetter(2)

#: One tree entry: octal mode, space, name (never holds a NUL), NUL, the 20-byte id.
_ENTRY = re.compile(rb"([0-7]+) ([^\0]*)\0(.{20})", re.DOTALL)
#: The same, with the whole entry's bytes first (what an edit copies as it is).
_WHOLE_ENTRY = re.compile(rb"(([0-7]+) ([^\0]*)\0.{20})", re.DOTALL)
#: A whole tree, entry after entry from its first byte, each name 1 to 65,535 bytes (libgit2 refuses to parse
#: an empty or a longer one), checked before ``findall`` reads it: ``findall`` alone restarts at every byte
#: after a bad entry and each restart scans to the next NUL, so a corrupt tree cost quadratic time (a 128 KiB
#: tree of "0 0 0 ..." took 59 s of CPU). Possessive, so this check never backtracks: one pass, ~15 % of a parse.
_WHOLE_TREE = re.compile(rb"(?:[0-7]++ [^\0]{1,65535}+\0.{20})*+", re.DOTALL)


def normal_mode(raw: bytes) -> int:
    """libgit2's ``normalize_filemode`` of a tree entry's octal mode."""
    mode = _MODES.get(raw)
    if mode is None:
        value = int(raw, 8)
        kind = value & 0o170000
        if kind == 0o040000:
            mode = _TREE
        elif value & 0o100:  # GIT_PERMS_IS_EXEC: the owner's x bit only (a 160001 stays a submodule)
            mode = int(FileMode.BLOB_EXECUTABLE)
        elif kind == 0o160000:
            mode = _COMMIT
        elif kind == 0o120000:
            mode = int(FileMode.LINK)
        else:
            mode = int(FileMode.BLOB)
        if len(_MODES) < 64:  # a few distinct modes exist; a hostile tree cannot grow this table
            _MODES[raw] = mode
    return mode


def raw_records(data: bytes) -> list[tuple[bytes, bytes, bytes]]:
    """(raw mode, raw name, 20-byte id) of each entry of a raw SHA-1 tree, found by one C-level scan; the
    entries must make the whole object (:data:`_WHOLE_TREE`), or it is refused."""
    if _WHOLE_TREE.fullmatch(data) is None:
        raise pygit2.GitError("corrupt tree object")
    return _ENTRY.findall(data)


def read_tree(repo: pygit2.Repository, oid: pygit2.Oid | bytes) -> bytes:
    """The raw bytes of the tree ``oid`` (refused when the object is not a tree)."""
    kind, data = repo.odb.read(oid if isinstance(oid, pygit2.Oid) else pygit2.Oid(raw=oid))
    if kind != ObjectType.TREE:
        raise pygit2.GitError("a tree entry's mode says folder, its object is not a tree")
    return data


def object_id(kind: int, data: bytes) -> bytes:
    """The 20-byte SHA-1 id git gives an object of this kind holding ``data``."""
    return hashlib.sha1(b"%s %d\x00" % (_KIND_NAMES[kind], len(data)) + data, usedforsecurity=False).digest()


class RawTree:
    """One tree, parsed once: each entry's sort key (its name, a folder's with ``/`` after it) and its bytes,
    both in git's order. Never changed once made (the cache shares it): an edit makes a new one."""

    __slots__ = ("entries", "keys", "size")

    def __init__(self, keys: list[bytes], entries: list[bytes], size: int) -> None:
        self.keys = keys
        self.entries = entries
        self.size = size  # bytes of the tree object (what the cache counts)

    @classmethod
    def parse(cls, data: bytes) -> RawTree:
        """Parsed with C-level passes only (``findall``, ``map``, ``set``) when every mode is one git writes:
        at 100,000 notes a folder has ~420 entries, and a Python loop per entry was most of a write's CPU
        (a tree is parsed whenever it is not in the cache)."""
        if _WHOLE_TREE.fullmatch(data) is None:
            raise pygit2.GitError("corrupt tree object")
        found = _WHOLE_ENTRY.findall(data)
        entries = list(map(_first, found))
        modes, names = list(map(_second, found)), list(map(_third, found))
        if _CANONICAL_MODES.issuperset(modes):
            keys = list(map(bytes.__add__, names, map(_FOLDER_SUFFIX.get, modes, repeat(b""))))
        else:  # a mode written as old gits or hand-made trees wrote it: normalised, rewritten as libgit2 does
            keys = [
                name + b"/" if normal_mode(mode) == _TREE else name for mode, name in zip(modes, names, strict=True)
            ]
            entries = [_entry(_mode_text(mode), name, whole[-20:]) for whole, mode, name in found]
        if not _in_git_order(keys, names):
            return cls._reordered(keys, entries, len(data))
        return cls(keys, entries, len(data))

    @classmethod
    def _reordered(cls, keys: list[bytes], entries: list[bytes], size: int) -> RawTree:
        """A tree out of git's order or naming an entry twice, as libgit2's builder reads it: by name, the
        last same-named entry winning, then sorted."""
        by_name: dict[bytes, tuple[bytes, bytes]] = {}
        for key, entry in zip(keys, entries, strict=True):
            by_name[key[:-1] if key.endswith(b"/") else key] = (key, entry)
        ordered = sorted(by_name.values())
        return cls([k for k, _e in ordered], [e for _k, e in ordered], size)

    def find(self, name: bytes) -> int:
        """The position of the entry named ``name`` (a file's or a folder's), or -1."""
        keys = self.keys
        at = bisect_left(keys, name)
        if at < len(keys) and keys[at] == name:
            return at
        folder = name + b"/"
        at = bisect_left(keys, folder, at)
        if at < len(keys) and keys[at] == folder:
            return at
        return -1

    def mode_and_id(self, at: int) -> tuple[int, bytes]:
        entry = self.entries[at]
        return normal_mode(entry[: entry.index(b" ")]), entry[-20:]

    def data(self) -> bytes:
        return b"".join(self.entries)


def _entry(mode: bytes, name: bytes, oid: bytes) -> bytes:
    return mode + b" " + name + b"\0" + oid


def _mode_text(raw: bytes) -> bytes:
    """The mode as libgit2 writes an entry it read (``%o`` of its value), refused past 16 bits as there."""
    value = int(raw, 8)
    if value > 0xFFFF:
        raise pygit2.GitError("corrupt tree object: a mode past 16 bits")
    return b"%o" % value


def _in_git_order(keys: list[bytes], names: list[bytes]) -> bool:
    """Strictly increasing keys and no name twice (a file and a folder of one name have different keys)."""
    return all(map(operator.lt, keys, islice(keys, 1, None))) and len(set(names)) == len(names)


def _check_name(name: bytes) -> None:
    """The names libgit2's tree builder refuses (``valid_entry_name``), refused here the same way: with
    ``core.protectNTFS`` on (its default) that includes what Windows reads as ``.git``: ``.git`` or its short
    name ``git~1`` in any case, followed by nothing but dots and spaces, or by ``\\`` or ``:``."""
    if not name or name in (b".", b"..") or b"/" in name or b"\0" in name or _ntfs_dotgit(name.lower()):
        raise ValueError(f"{name.decode('utf-8', 'replace')!r} is not a valid name for a tree entry")


def _ntfs_dotgit(lower: bytes) -> bool:
    """libgit2's ``verify_dotgit_ntfs`` refusal, of a lower-cased name."""
    for reserved in (b".git", b"git~1"):
        if lower.startswith(reserved):
            rest = lower[len(reserved) :]
            return rest[:1] in (b"\\", b":") or not rest.strip(b". ")
    return False


class TreeReader(Protocol):
    def __call__(self, oid: bytes) -> RawTree: ...


class TreeCache:
    """Parsed trees by id, the most recently used kept up to a byte budget (of the trees' raw size).

    Why: each write of a group reads the root and its note's folders; at 100,000 notes the root and a median
    folder are ~25 KB each, past libgit2's 4 KB object-cache limit for trees, so every read inflated and
    parsed them again. An id names its bytes forever, so nothing here is ever stale."""

    def __init__(self, repo: pygit2.Repository, budget: int) -> None:
        self._repo = repo
        self._budget = budget
        self._trees: dict[bytes, RawTree] = {}
        self._bytes = 0

    def __call__(self, oid: bytes) -> RawTree:
        tree = self._trees.pop(oid, None)
        if tree is None:
            tree = RawTree.parse(read_tree(self._repo, oid))
            self._bytes += tree.size
        self._trees[oid] = tree  # most recent last
        self._shrink()
        return tree

    def keep(self, trees: dict[bytes, RawTree]) -> None:
        """Keep the trees a group made (the next group starts from its last root and its hot folders)."""
        for oid, tree in trees.items():
            if oid not in self._trees:
                self._trees[oid] = tree
                self._bytes += tree.size
        self._shrink()

    def _shrink(self) -> None:
        while self._bytes > self._budget and len(self._trees) > 1:
            oldest = next(iter(self._trees))
            self._bytes -= self._trees.pop(oldest).size


def blob_at(read: TreeReader, root: bytes | None, path: str) -> str:
    """The blob id (hex) at ``path`` below the tree ``root``, or ABSENT (no such path, or not a file: a folder,
    a link, a submodule). As the store's ``_entry_blob`` answers from libgit2's tree lookup."""
    if root is None:
        return ABSENT
    try:
        parts = path.encode("utf-8").split(b"/")
    except UnicodeEncodeError:
        return ABSENT
    tree = read(root)
    for part in parts[:-1]:
        at = tree.find(part)
        if at < 0:
            return ABSENT
        mode, oid = tree.mode_and_id(at)
        if mode != _TREE:
            return ABSENT
        tree = read(oid)
    at = tree.find(parts[-1])
    if at < 0:
        return ABSENT
    mode, oid = tree.mode_and_id(at)
    if mode == _BLOB_EXECUTABLE and _gitlink(tree.entries[at]):
        return ABSENT  # libgit2 normalises 160100 as an executable blob, but its object type is a commit
    return oid.hex() if mode in _BLOB_MODE_INTS else ABSENT


def _gitlink(entry: bytes) -> bool:
    """Whether an entry's raw mode is a submodule's kind (``S_ISGITLINK``, what ``git_tree_entry_type`` reads)."""
    return int(entry[: entry.index(b" ")], 8) & 0o170000 == 0o160000


#: One object made for a pack: (kind, its bytes, its 20-byte id).
Made = tuple[int, bytes, bytes]


def nested_changes(changes: Sequence) -> dict:
    """``changes`` (each with ``path`` and ``data``) as a tree of dicts by path component, the last change to
    a path winning; a change below a path another change makes a file is refused (as libgit2's builder)."""
    nested: dict = {}
    for change in changes:
        parts = change.path.split("/")
        node = nested
        for part in parts[:-1]:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                raise ValueError(f"{change.path}: a parent is a file")
        node[parts[-1]] = change
    return nested


class Group:
    """The objects one group commit makes, until they are written as its pack: in order (for the pack), and
    its trees parsed by id (what the group's next commit reads before the pack exists)."""

    def __init__(self, read: TreeReader, blob_known: Callable[[bytes], bool] = lambda _oid: False) -> None:
        self.made: list[Made] = []
        self.trees: dict[bytes, RawTree] = {}
        #: path -> blob id, of the files the last :func:`build` wrote (what the commit reports, hashed once)
        self.blobs: dict[str, bytes] = {}
        self._read = read
        self.blob_known = blob_known  # a blob the repository has already (a bulk import's packed blobs)

    def read(self, oid: bytes) -> RawTree:
        tree = self.trees.get(oid)
        return tree if tree is not None else self._read(oid)

    def add(self, kind: int, data: bytes) -> bytes:
        oid = object_id(kind, data)
        self.made.append((kind, data, oid))
        return oid

    def mark(self) -> int:
        """Where the objects made so far end (for :meth:`drop_after`)."""
        return len(self.made)

    def drop_after(self, mark: int) -> None:
        """Forget what was made after ``mark`` (a request that failed half-way makes nothing)."""
        del self.made[mark:]


def build(group: Group, base: bytes | None, changes: Sequence) -> bytes:
    """The id of the tree ``base`` (an id, None for none) with ``changes`` applied. Every object it makes (the
    blobs of the changes, the trees on their paths) goes into ``group``, except a blob the repository has;
    ``group.blobs`` then holds the blob each written path has in the new tree."""
    group.blobs = {}
    built = _build(group, base, nested_changes(changes), top=True)
    assert built is not None, "the top tree is always written"
    return built


def _build(group: Group, base: bytes | None, nested: dict, top: bool) -> bytes | None:
    """``_build`` of the store, on raw trees: None for a folder left empty (its parent drops the entry)."""
    read = group.read
    tree = read(base) if base is not None else RawTree([], [], 0)
    keys, entries = list(tree.keys), list(tree.entries)
    lookup = RawTree(keys, entries, 0)  # the same lists, searched as they change
    for name, item in nested.items():
        raw = name.encode("utf-8")
        _check_name(raw)
        at = lookup.find(raw)
        if not isinstance(item, dict):  # a change to this file
            if item.data is None:
                if at >= 0:
                    del keys[at], entries[at]
                continue
            oid = group.blobs[item.path] = object_id(OBJ_BLOB, item.data)
            if not group.blob_known(oid):
                group.made.append((OBJ_BLOB, item.data, oid))
            _put(keys, entries, at, raw, raw, _entry(BLOB_MODE, raw, oid))
            continue
        sub_base = None
        if at >= 0:
            mode, sub_id = lookup.mode_and_id(at)
            if mode != _TREE:
                raise ValueError(f"{name} is a file, not a folder")
            sub_base = sub_id
        built = _build(group, sub_base, item, top=False)
        if built is None:
            if at >= 0:
                del keys[at], entries[at]
        else:
            _put(keys, entries, at, raw + b"/", raw, _entry(TREE_MODE, raw, built))
    if not entries and not top:
        return None
    data = b"".join(entries)
    oid = group.add(OBJ_TREE, data)
    group.trees[oid] = RawTree(keys, entries, len(data))
    return oid


def _put(keys: list[bytes], entries: list[bytes], at: int, key: bytes, name: bytes, entry: bytes) -> None:
    """Set the entry named ``name`` (found at ``at``, -1 for none) to ``entry``, whose sort key is ``key``."""
    if at >= 0 and keys[at] == key:
        entries[at] = entry
        return
    if at >= 0:  # a file becomes a folder or the other way: its place in the order moves
        del keys[at], entries[at]
    at = bisect_left(keys, key)
    keys.insert(at, key)
    entries.insert(at, entry)


def signature_bytes(sig: pygit2.Signature) -> bytes:
    """``name <email> time +hhmm`` as libgit2's ``git_signature__writebuf`` writes it (the name and email as
    libgit2 kept them: trimmed, no angle brackets).  A control character would break the commit's header
    lines, so it is refused (libgit2 would write it)."""
    name, email = sig.raw_name, sig.raw_email
    if any(c < 0x20 or c == 0x7F for c in name + email):
        raise ValueError("an author's name or email holds a control character")
    offset = sig.offset
    sign = b"-" if offset < 0 else b"+"
    offset = abs(offset)
    return b"%s <%s> %d %s%02d%02d" % (name, email, sig.time, sign, offset // 60, offset % 60)


def commit_bytes(
    tree: bytes, parents: Sequence[bytes], author: pygit2.Signature, committer: pygit2.Signature, message: str
) -> bytes:
    """A commit object's bytes as libgit2's ``create_commit`` writes them (no encoding header: UTF-8).  A NUL
    in the message is refused: libgit2 reads the message as a C string and would silently cut it there."""
    if "\0" in message:
        raise ValueError("a commit message holds a NUL character")
    head = [b"tree " + tree.hex().encode()]
    head.extend(b"parent " + parent.hex().encode() for parent in parents)
    head.append(b"author " + signature_bytes(author))
    head.append(b"committer " + signature_bytes(committer))
    return b"\n".join(head) + b"\n\n" + message.encode("utf-8")


def pack_record(kind: int, data: bytes, oid: bytes) -> tuple[bytes, bytes, int]:
    """The pack record of one object (:data:`notegate.vault.bulk.Record`)."""
    record = _object_header(kind, len(data)) + zlib.compress(data, TREE_LEVEL if kind == OBJ_TREE else LEVEL)
    return oid, record, zlib.crc32(record)
