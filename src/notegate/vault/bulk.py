"""Many blobs written as one git pack, for a bulk write (the importer's batches) to commit through the recipe.

Why: libgit2 writes each new blob as a loose object (a file of its own, compressed), a local push links
each into the origin, and an import of 100,000 notes then left 200,000 files for ``git repack`` to read
and compress again -- most of an import's disk time.  Written here first as one pack per batch (in the
clone, and hard-linked into a local bare origin), the same blobs are found by libgit2 when the recipe's
tree building "creates" them (``git_odb_write`` of an object the odb has only freshens it), so the commit
writes loose only its trees and the commit object, and the final repack copies packed data instead of
compressing every blob again.

Nothing is decided here and nothing is committed: a pack of blobs no commit names is inert (git's gc drops
unreachable objects in time), so a batch that the recipe then refuses leaves no note behind.  The format
is git's own pack v2 and index v2 (``Documentation/gitformat-pack.txt``); ``git verify-pack`` and
``git fsck`` accept what this writes (tests/vault/test_bulk.py).
"""

from __future__ import annotations

import hashlib
import os
import struct
import zlib
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager, suppress
from pathlib import Path

import pygit2

from notegate.vault import durable, filepool

OBJ_BLOB = 3
#: zlib level 1: an import's notes are each one version of unrelated text; the later repack (``--window=0``)
#: reuses this data as it is, and level 1 costs a third of the default's CPU for a few per cent more bytes.
LEVEL = 1


#: libgit2 keeps a tree in its object cache only up to this many bytes (its default, restored afterwards).
TREE_CACHE_DEFAULT = 4096
#: ... and during a bulk write, up to this many: every folder tree of a 100,000-note vault (the root alone is
#: ~25 KB; the generated vault's largest folder ~350 KB).
TREE_CACHE_BULK = 1 << 24


@contextmanager
def trees_cached() -> Iterator[None]:
    """Let libgit2 cache trees of any size while a bulk write runs, then go back to its default.

    Why: each path the recipe checks (``tree[path]``: the expectation, the blob before and after) walks the
    trees from the root, and libgit2 caches no tree over 4 KiB, so at 100,000 notes every lookup inflated
    and parsed the root and the big folders again: 300 us a lookup against 1.4 us cached (a random 6,000
    of the 100,000 imported notes), 61 s of a 204 s import's profile, three lookups per file.  The cache
    holds immutable objects only (what is read is what an uncached read gives) and stays bounded by
    libgit2's total cache size.  The setting is the process's: a server writing in this process meanwhile
    only reads faster."""
    kind = pygit2.enums.ObjectType.TREE
    pygit2.settings.cache_object_limit(kind, TREE_CACHE_BULK)
    try:
        yield
    finally:
        pygit2.settings.cache_object_limit(kind, TREE_CACHE_DEFAULT)


#: repository path (libgit2's ``repo.path``) -> ids of the blobs a bulk write in progress has packed there
_PACKED: dict[str, set[bytes]] = {}


@contextmanager
def packed_blobs(repo: pygit2.Repository) -> Iterator[set[bytes]]:
    """While a bulk write runs: the set to add the ids of the blobs it has packed into ``repo`` (after the
    pack is in place), so that :func:`stored_blob` finds them without writing them again."""
    ids = _PACKED.setdefault(repo.path, set())
    try:
        yield ids
    finally:
        _PACKED.pop(repo.path, None)


def stored_blob(repo: pygit2.Repository, data: bytes) -> pygit2.Oid:
    """The blob holding ``data`` in ``repo``: the one a bulk write in progress packed there, else written.

    Why: ``create_blob`` streams every blob through a temporary file in ``objects/`` (deflated, then
    deleted when the object turns out to be there already): 170-290 us of CPU a blob, 39 s of a 146 s
    profiled import of 100,000 notes, whose blobs were all packed a moment before.  A blob found here is
    in a pack this process wrote for this commit (registered after the pack was in place); libgit2 still
    checks that the object exists when the tree names it (strict object creation), so a blob that went away
    is an error, never a tree naming nothing.  Outside a bulk write this is ``create_blob``, as before."""
    packed = _PACKED.get(repo.path) if _PACKED else None
    if packed:
        oid = pygit2.hash(data)
        if oid.raw in packed:
            return oid
    return repo.create_blob(data)


def bulk_write_running(repo: pygit2.Repository) -> bool:
    """Whether a bulk write (an import) runs in ``repo`` in this process: it ends with a full repack, so the
    store does not roll its packs up meanwhile (a roll-up in the middle of a 100,000-note import rewrote the
    batches' blob packs once more, here and in the origin)."""
    return repo.path in _PACKED


def is_packed(repo: pygit2.Repository, oid: bytes) -> bool:
    """Whether a bulk write in progress has packed the blob ``oid`` (20 bytes) into ``repo`` (so a commit
    that names it need not write it again)."""
    packed = _PACKED.get(repo.path) if _PACKED else None
    return bool(packed) and oid in packed


def blob_id(data: bytes) -> bytes:
    """The 20-byte git id of a blob holding ``data``."""
    return hashlib.sha1(b"blob %d\x00" % len(data) + data, usedforsecurity=False).digest()


def _object_header(kind: int, size: int) -> bytes:
    out = bytearray()
    byte = (kind << 4) | (size & 0x0F)
    size >>= 4
    while size:
        out.append(byte | 0x80)
        byte = size & 0x7F
        size >>= 7
    out.append(byte)
    return bytes(out)


#: One blob as a pack holds it: (its 20-byte id, its pack record: type-and-size header and zlib data, the
#: record's crc32).  Pure work on the blob's bytes, so the importer's pool workers make them.
Record = tuple[bytes, bytes, int]


def blob_record(data: bytes) -> Record:
    """The :data:`Record` of a blob holding ``data``."""
    record = _object_header(OBJ_BLOB, len(data)) + zlib.compress(data, LEVEL)
    return blob_id(data), record, zlib.crc32(record)


def pack_blobs(blobs: Iterable[bytes]) -> tuple[bytes, bytes, str] | None:
    """(pack bytes, index bytes, the pack's name) holding each distinct blob once, or None for none."""
    return pack_records(blob_record(data) for data in blobs)


def pack_records(records: Iterable[Record]) -> tuple[bytes, bytes, str] | None:
    """:func:`pack_blobs` of blobs already made into records (each distinct id once)."""
    entries: dict[bytes, tuple[int, int]] = {}  # id -> (offset, crc32)
    body = bytearray()
    parts: list[bytes] = []
    offset = 12
    for oid, record, crc in records:
        if oid in entries:
            continue
        entries[oid] = (offset, crc)
        parts.append(record)
        offset += len(record)
    if not entries:
        return None
    body += b"PACK" + struct.pack(">II", 2, len(entries))
    for record in parts:
        body += record
    checksum = hashlib.sha1(body, usedforsecurity=False).digest()
    body += checksum
    ids = sorted(entries)
    fanout = [0] * 256
    for oid in ids:
        fanout[oid[0]] += 1
    total = 0
    for i in range(256):
        total += fanout[i]
        fanout[i] = total
    small: list[int] = []
    large: list[int] = []
    for oid in ids:
        at = entries[oid][0]
        if at < 0x80000000:
            small.append(at)
        else:
            small.append(0x80000000 | len(large))
            large.append(at)
    index = bytearray(b"\xfftOc" + struct.pack(">I", 2))
    index += struct.pack(">256I", *fanout)
    index += b"".join(ids)
    index += struct.pack(f">{len(ids)}I", *(entries[oid][1] for oid in ids))
    index += struct.pack(f">{len(ids)}I", *small)
    if large:
        index += struct.pack(f">{len(large)}Q", *large)
    index += checksum
    index += hashlib.sha1(index, usedforsecurity=False).digest()
    return bytes(body), bytes(index), f"pack-{checksum.hex()}"


def write_pack(repo_dirs: Iterable[Path], blobs: Iterable[bytes]) -> str | None:
    """Write ``blobs`` as one pack into the first repository of ``repo_dirs`` and link it into the others
    (copied where a link is impossible).  The ``.pack`` goes before its ``.idx`` in each: git only sees a
    pack through its index, so no reader finds an index without its pack.  Returns the pack's name."""
    return write_records(repo_dirs, (blob_record(data) for data in blobs))


def write_records(repo_dirs: Iterable[Path], records: Iterable[Record], *, strict: bool = False) -> str | None:
    """:func:`write_pack` of objects already made into records (by :func:`blob_record`, maybe elsewhere).

    ``strict``: the pack must reach every repository (a commit's objects, before a local origin's ref names
    them): an :class:`OSError` when one lacks its pack folder or can take neither a link nor a copy."""
    built = pack_records(records)
    if built is None:
        return None
    pack, index, name = built
    dirs = [Path(d) / "objects" / "pack" for d in repo_dirs]
    first = dirs[0]
    first.mkdir(parents=True, exist_ok=True)
    for suffix, data in ((".pack", pack), (".idx", index)):
        filepool.write_new(first, first / f"{name}{suffix}", data)  # files made ahead: see filepool.py
    for other in dirs[1:]:
        try:
            _share(first, other, name, {".pack": pack, ".idx": index})
            durable.flush_folder(other)  # the links' names, before any ref names the pack
        except OSError:
            if strict:  # nothing half-written stays behind: the pack leaves the repositories it reached
                for folder in dirs:
                    for suffix in (".idx", ".pack"):
                        with suppress(OSError):
                            (folder / f"{name}{suffix}").unlink()
                raise
    return name


def _share(first: Path, other: Path, name: str, data: Mapping[str, bytes]) -> None:
    """The pack into another repository's pack folder, which must be there (a gone origin is never created
    here): linked, or written from ``data`` (its bytes by suffix) where a link is impossible -- another disk,
    or the file already gone from ``first``: the store's roll-up (``git repack --geometric=2 -d``, without the
    write lock) may have packed a group's objects anew and deleted its pack between the two steps.  An
    :class:`OSError` when neither works; the ``.idx`` is only shared after the ``.pack``, so no reader finds an
    index without its pack. Outside a strict write a failure is left to the push, which copies each object it
    lacks."""
    if not other.is_dir():
        raise FileNotFoundError(f"no pack folder at {other.name}")
    for suffix in (".pack", ".idx"):
        target = other / f"{name}{suffix}"
        try:
            os.link(first / f"{name}{suffix}", target)
        except FileExistsError:
            continue  # the same pack, by its checksum name: the same bytes
        except OSError:
            _copy_new(data[suffix], other, target)


def _copy_new(data: bytes, folder: Path, target: Path) -> None:
    """``data`` written as the read-only ``target`` in ``folder``, through a file of a new, unguessable name
    (``mkstemp``: ``O_EXCL``, so never a symlink someone planted there, nor the file of a second process
    copying the same pack, as a fixed ``tmp_bulk_<name>`` name was). Not through the folder's pool: a copy
    happens only where a link is impossible, rarely, and the origin keeps no pool files."""
    filepool.write_new(folder, target, data, pooled=False)


def local_origin_dir(origin_url: str) -> Path | None:
    """The origin's directory when it is a bare repository on this machine (as the store's local push
    finds it), else None: a remote origin gets the blobs in the push's own pack."""
    if "://" in origin_url or ":" in origin_url.split("/")[0]:
        return None
    path = Path(origin_url)
    return path if (path / "HEAD").exists() and (path / "objects").is_dir() else None
