"""Reading and building git trees for the store: a path's blob in a tree, the paths two trees differ by (from
their raw bytes), and a new tree from a base and changes (:func:`build_tree`).  Reads git objects; writes none
but the trees :func:`build_tree` is asked for.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import pygit2
from pygit2.enums import DeltaStatus, DiffFind, FileMode, ObjectType

from notegate.policy import MODE_GITLINK, RENAME_LIMIT
from notegate.vault import objects
from notegate.vault.bulk import stored_blob
from notegate.vault.storebase import (
    _BLOB_MODES,
    ABSENT,
    Change,
)


def _entry_blob(tree: pygit2.Tree | None, path: str) -> str:
    if tree is None:
        return ABSENT
    try:
        entry = tree[path]
    except (KeyError, ValueError):
        return ABSENT
    if entry.filemode not in _BLOB_MODES or entry.type != ObjectType.BLOB:
        return ABSENT
    return str(entry.id)


def _walk_tree(repo: pygit2.Repository, tree: pygit2.Tree, prefix: str) -> Iterator[tuple[str, str]]:
    """(path, blob id) of every blob below ``tree``, hidden folders left out."""
    yield from _walk_raw(repo, _read_tree(repo, tree.id), prefix)


def changed_paths(
    repo: pygit2.Repository, old: pygit2.Tree | None, new: pygit2.Tree, prefix: str = ""
) -> Iterator[tuple[str, str]]:
    """(path, new blob id or ABSENT) for every blob path that differs between two trees.

    Subtrees with equal ids are skipped without being read (libgit2's diff visits every entry), so the
    cost follows the size of the change, not of the vault. Hidden folders are never descended into.
    """
    if old is None:
        yield from _walk_tree(repo, new, prefix)
        return
    if old.id == new.id:
        return
    yield from _changed_raw(repo, _read_tree(repo, old.id), _read_tree(repo, new.id), prefix)


# Trees are read from their raw bytes (``mode name\0 id`` per entry, :mod:`notegate.vault.objects`) rather than
# through pygit2's entry objects: each ``entry.filemode`` builds a Python enum (~5-20 us), two per entry compared,
# which made the 16-commit walk of a 100,000-note index build 2.5 million enum calls and a one-note change in a
# 4,800-entry folder ~200 ms.  The modes are normalised exactly as libgit2's ``git_tree_entry_filemode`` does,
# names are decoded as pygit2 decodes them (UTF-8, surrogateescape); tests/vault/test_store_rawtree.py holds the
# equivalence with the entry-object walk.
_TREE = int(FileMode.TREE)
_BLOB_MODE_INTS = frozenset(int(m) for m in _BLOB_MODES)
_normal_mode = objects.normal_mode
_raw_records = objects.raw_records
_read_tree = objects.read_tree


def _name(raw: bytes) -> str:
    return raw.decode("utf-8", "surrogateescape")


def _walk_raw(repo: pygit2.Repository, data: bytes, prefix: str) -> Iterator[tuple[str, str]]:
    for raw_mode, raw_name, oid in _raw_records(data):
        mode = _normal_mode(raw_mode)
        if mode == _TREE:
            if not raw_name.startswith(b"."):
                yield from _walk_raw(repo, _read_tree(repo, oid), f"{prefix}{_name(raw_name)}/")
        elif mode in _BLOB_MODE_INTS:
            yield f"{prefix}{_name(raw_name)}", oid.hex()


def _changed_raw(repo: pygit2.Repository, old: bytes, new: bytes, prefix: str) -> Iterator[tuple[str, str]]:
    """Entries equal byte for byte are dropped by one set comparison; the rest are compared by name with
    normalised modes, in the new tree's order and then the old tree's (as the entry walk did)."""
    old_records, new_records = _raw_records(old), _raw_records(new)
    same = set(old_records).intersection(new_records)
    old_entries = {name: (_normal_mode(mode), oid) for mode, name, oid in old_records if (mode, name, oid) not in same}
    for raw_mode, raw_name, oid in new_records:
        if (raw_mode, raw_name, oid) in same:
            continue
        mode = _normal_mode(raw_mode)
        before = old_entries.pop(raw_name, None)
        if before is not None and before[1] == oid and before[0] == mode:
            continue
        yield from _entry_change(repo, before, (mode, oid), prefix, raw_name)
    for raw_name, before in old_entries.items():
        yield from _entry_change(repo, before, None, prefix, raw_name)


def _entry_change(
    repo: pygit2.Repository,
    before: tuple[int, bytes] | None,
    after: tuple[int, bytes] | None,
    prefix: str,
    raw_name: bytes,
) -> Iterator[tuple[str, str]]:
    path = f"{prefix}{_name(raw_name)}"
    old_is_tree = before is not None and before[0] == _TREE
    new_is_tree = after is not None and after[0] == _TREE
    if (old_is_tree or new_is_tree) and raw_name.startswith(b"."):
        return  # hidden folders are never served
    if before is not None and not old_is_tree and (after is None or new_is_tree):
        yield path, ABSENT  # a file that went away (or became a folder)
    if old_is_tree and new_is_tree:
        yield from _changed_raw(repo, _read_tree(repo, before[1]), _read_tree(repo, after[1]), f"{path}/")
    elif old_is_tree:
        for sub, _blob in _walk_raw(repo, _read_tree(repo, before[1]), f"{path}/"):
            yield sub, ABSENT
    if new_is_tree and not old_is_tree:
        yield from _walk_raw(repo, _read_tree(repo, after[1]), f"{path}/")
    elif after is not None and not new_is_tree:
        yield path, after[1].hex() if after[0] in _BLOB_MODE_INTS else ABSENT


def build_tree(
    repo: pygit2.Repository,
    base: pygit2.Tree | None,
    changes: Sequence[Change],
    created: list[pygit2.Oid] | None = None,
) -> pygit2.Oid:
    """A new tree: ``base`` with ``changes`` applied, rebuilding only the trees on the changed paths.

    ``created`` collects every object written (blobs and trees), which is what a local push must copy.
    """
    return _build(repo, base, objects.nested_changes(changes), created if created is not None else [])[0]


def _build(
    repo: pygit2.Repository, base: pygit2.Tree | None, nested: dict, created: list[pygit2.Oid]
) -> tuple[pygit2.Oid, int]:
    """The tree's id and how many entries it holds (so an emptied folder is seen without reading back and
    parsing the tree just written: up to ~350 KB for a folder of a 100,000-note vault)."""
    builder = repo.TreeBuilder(base) if base is not None else repo.TreeBuilder()
    for name, item in nested.items():
        existing = base[name] if base is not None and name in base else None
        if isinstance(item, Change):
            if item.data is None:
                if existing is not None:
                    builder.remove(name)
            else:
                blob = stored_blob(repo, item.data)  # a bulk import's blobs are packed already
                created.append(blob)
                builder.insert(name, blob, FileMode.BLOB)
        else:
            sub_base = None
            if existing is not None and existing.filemode == FileMode.TREE:
                sub_base = repo[existing.id].peel(pygit2.Tree)
            elif existing is not None:
                raise ValueError(f"{name} is a file, not a folder")
            sub_id, entries = _build(repo, sub_base, item, created)
            if entries == 0:
                if existing is not None:
                    builder.remove(name)
            else:
                builder.insert(name, sub_id, FileMode.TREE)
    entries = len(builder)
    tree_id = builder.write()
    created.append(tree_id)
    return tree_id, entries


def similar_deletions(repo: pygit2.Repository, base: pygit2.Tree | None, changes: Sequence[Change]) -> int:
    """The files ``changes`` delete from ``base`` that git's similarity detection (``-M``, at most
    :data:`notegate.policy.RENAME_LIMIT` files) does not pair with a file they add: the renamed-and-edited
    files the git door does not count as deletions.  Asked by the recipe only when exact renames leave a
    change over ``max_deletions_per_commit``, so the server counts renames as the pre-receive hook does;
    it writes the change's objects (the commit would write the same ones)."""
    if base is None:
        return 0
    new = repo[build_tree(repo, base, changes)].peel(pygit2.Tree)
    diff = base.diff_to_tree(new)
    diff.find_similar(flags=DiffFind.FIND_RENAMES, rename_limit=RENAME_LIMIT)
    return sum(1 for d in diff.deltas if d.status == DeltaStatus.DELETED and d.old_file.mode != MODE_GITLINK)
