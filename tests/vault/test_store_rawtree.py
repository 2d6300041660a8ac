"""The store reads trees from their raw bytes (``_raw_entries``) instead of pygit2's entry objects.

The oracle below is the entry-object walk the store used before (``entry.filemode``, ``entry.name``,
``entry.id``), kept here verbatim in behaviour: for any two trees, hostile modes and names included, the
raw walk must yield exactly what it yields, in the same order.
"""

from __future__ import annotations

from collections.abc import Iterator

import pygit2
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pygit2.enums import FileMode, ObjectType

from notegate.vault.store import ABSENT, _walk_tree, changed_paths

_OLD_BLOB_MODES = (FileMode.BLOB, FileMode.BLOB_EXECUTABLE)


def old_walk(repo: pygit2.Repository, tree: pygit2.Tree, prefix: str) -> Iterator[tuple[str, str]]:
    for entry in tree:
        path = f"{prefix}{entry.name}"
        if entry.filemode == FileMode.TREE:
            if entry.name.startswith("."):
                continue
            yield from old_walk(repo, repo[entry.id].peel(pygit2.Tree), f"{path}/")
        elif entry.filemode in _OLD_BLOB_MODES:
            yield path, str(entry.id)


def old_changed(repo, old, new, prefix=""):
    if old is None:
        yield from old_walk(repo, new, prefix)
        return
    if old.id == new.id:
        return
    old_entries = {e.name: e for e in old}
    for entry in new:
        before = old_entries.pop(entry.name, None)
        if before is not None and before.id == entry.id and before.filemode == entry.filemode:
            continue
        yield from old_entry_change(repo, before, entry, f"{prefix}{entry.name}")
    for before in old_entries.values():
        yield from old_entry_change(repo, before, None, f"{prefix}{before.name}")


def old_entry_change(repo, before, after, path):
    is_tree = FileMode.TREE
    touches_tree = (before is not None and before.filemode == is_tree) or (
        after is not None and after.filemode == is_tree
    )
    if touches_tree and path.rsplit("/", 1)[-1].startswith("."):
        return
    old_tree = repo[before.id].peel(pygit2.Tree) if before is not None and before.filemode == is_tree else None
    new_tree = repo[after.id].peel(pygit2.Tree) if after is not None and after.filemode == is_tree else None
    if before is not None and before.filemode != is_tree and (after is None or after.filemode == is_tree):
        yield path, ABSENT
    if old_tree is not None and new_tree is not None:
        yield from old_changed(repo, old_tree, new_tree, f"{path}/")
    elif old_tree is not None:
        for sub, _blob in old_walk(repo, old_tree, f"{path}/"):
            yield sub, ABSENT
    if new_tree is not None and old_tree is None:
        yield from old_walk(repo, new_tree, f"{path}/")
    elif after is not None and after.filemode != is_tree:
        yield path, str(after.id) if after.filemode in _OLD_BLOB_MODES else ABSENT


# Names: a small alphabet so two trees share names and subtrees often; a hidden name; bytes that are not
# UTF-8 (pygit2 decodes them with surrogateescape); a space (the raw format's separator).
NAMES = [b"a.md", b"b", b"c d.md", b".hidden", b"caf\xe9.md", b"\xe2\x80\x8bz.md", b"note.md"]
# Raw modes as git and other tools write them: normal, executable, group-writable (old git), symlink,
# submodule (its id names a commit that need not exist) and a folder.
FILE_MODES = [b"100644", b"100755", b"100664", b"120000", b"160000"]
CONTENTS = [b"one", b"two", b""]

node = st.recursive(
    st.tuples(st.just("blob"), st.sampled_from(FILE_MODES), st.sampled_from(CONTENTS)),
    lambda children: st.dictionaries(st.sampled_from(NAMES), children, max_size=4),
    max_leaves=14,
)
trees = st.dictionaries(st.sampled_from(NAMES), node, max_size=5)


def _sort_key(item: tuple[bytes, object]) -> bytes:
    name, value = item
    return name + b"/" if isinstance(value, dict) else name  # git's tree order


def write_tree(repo: pygit2.Repository, spec: dict) -> pygit2.Oid:
    raw = b""
    for name, value in sorted(spec.items(), key=_sort_key):
        if isinstance(value, dict):
            mode, oid = b"40000", write_tree(repo, value)
        else:
            _, mode, content = value
            oid = repo.create_blob(content) if mode != b"160000" else pygit2.Oid(hex="ab" * 20)
        raw += mode + b" " + name + b"\0" + oid.raw
    return repo.odb.write(ObjectType.TREE, raw)


@pytest.fixture(scope="module")
def repo(tmp_path_factory) -> pygit2.Repository:
    return pygit2.init_repository(str(tmp_path_factory.mktemp("rawtree")), bare=True)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(old=trees, new=trees)
def test_the_raw_walk_yields_what_the_entry_walk_yields(repo, old, new) -> None:
    old_tree = repo[write_tree(repo, old)].peel(pygit2.Tree)
    new_tree = repo[write_tree(repo, new)].peel(pygit2.Tree)
    assert list(_walk_tree(repo, new_tree, "p/")) == list(old_walk(repo, new_tree, "p/"))
    assert list(changed_paths(repo, old_tree, new_tree)) == list(old_changed(repo, old_tree, new_tree))
    assert list(changed_paths(repo, None, new_tree)) == list(old_changed(repo, None, new_tree))


def test_a_mode_change_alone_is_seen_only_where_it_changes_what_is_served(repo) -> None:
    """100644 -> 100664 normalises to the same mode (no change); a file becoming a symlink leaves the listing."""
    base = repo[write_tree(repo, {b"a.md": ("blob", b"100644", b"one")})].peel(pygit2.Tree)
    same = repo[write_tree(repo, {b"a.md": ("blob", b"100664", b"one")})].peel(pygit2.Tree)
    link = repo[write_tree(repo, {b"a.md": ("blob", b"120000", b"one")})].peel(pygit2.Tree)
    assert list(changed_paths(repo, base, same)) == []
    assert list(changed_paths(repo, base, link)) == [("a.md", ABSENT)]


def test_a_truncated_tree_is_refused_not_misread(repo) -> None:
    blob = repo.create_blob(b"x")
    raw = b"100644 a.md\0" + blob.raw[:7]
    oid = repo.odb.write(ObjectType.TREE, raw)
    with pytest.raises(pygit2.GitError):
        list(_walk_tree(repo, repo[oid].peel(pygit2.Tree), ""))
