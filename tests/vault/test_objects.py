"""The group commit's objects made as bytes (vault/objects.py) are exactly libgit2's: the same tree id as the
tree builder (``store.build_tree``) for any tree and changes, the same errors, the same lookups as libgit2's
tree walk, and the same commit id as ``create_commit`` (issue 15: one pack per group commit)."""

from __future__ import annotations

import pygit2
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from pygit2.enums import FileMode

from notegate.vault import objects
from notegate.vault.store import Change, _entry_blob, build_tree

# Names chosen to stress git's order: a folder sorts as if "/" followed its name, so "a" (folder) sorts after
# "a-b" and "a.md" but before "a0"; bytes past ASCII compare as UTF-8.
NAMES = ["a", "a.md", "a-b", "a0", "a.b", "b", "é.md", "Z", "a b", "x100644 a", "-", "a!"]
PATHS = st.lists(st.sampled_from(NAMES), min_size=1, max_size=3).map("/".join)
DATA = st.sampled_from([b"", b"one\n", b"two\n", b"three\n" * 50])
CHANGE = st.builds(Change, PATHS, st.one_of(st.none(), DATA))


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> pygit2.Repository:
    return pygit2.init_repository(str(tmp_path_factory.mktemp("objects") / "r.git"), bare=True)


def _raw(repo: pygit2.Repository, changes: list[Change], base: pygit2.Tree | None) -> tuple[str, objects.Group]:
    group = objects.Group(objects.TreeCache(repo, 1 << 20))
    tree = objects.build(group, base.id.raw if base is not None else None, changes)
    return tree.hex(), group


def _libgit2(repo: pygit2.Repository, changes: list[Change], base: pygit2.Tree | None) -> str:
    return str(build_tree(repo, base, changes))


def _outcome(make):
    try:
        return "ok", make()
    except ValueError:  # both refuse a change below a file, and a name git cannot hold
        return "refused", None


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(CHANGE, max_size=8), st.lists(CHANGE, min_size=1, max_size=8))
def test_build_makes_libgit2s_tree(repo: pygit2.Repository, seed: list[Change], changes: list[Change]) -> None:
    seeded = _outcome(lambda: _libgit2(repo, seed, None))
    if seeded[0] != "ok":
        assert _outcome(lambda: _raw(repo, seed, None)[0]) == seeded
        return
    base = repo[seeded[1]].peel(pygit2.Tree)
    expected = _outcome(lambda: _libgit2(repo, changes, base))
    got = _outcome(lambda: _raw(repo, changes, base)[0])
    assert got == expected
    if got[0] == "ok":
        _, group = _raw(repo, changes, base)
        made = {oid.hex(): (kind, data) for kind, data, oid in group.made}
        assert got[1] in made  # the new root is among the objects for the pack
        for oid, (kind, data) in made.items():  # and every object made is what its id says
            assert objects.object_id(kind, data).hex() == oid
            assert repo.odb.read(oid)[1] == data  # libgit2 made the same bytes under the same id


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(CHANGE, max_size=10), PATHS)
def test_blob_at_answers_as_libgit2s_lookup(repo: pygit2.Repository, seed: list[Change], path: str) -> None:
    try:
        tree_id = build_tree(repo, None, seed)
    except ValueError:
        return
    tree = repo[tree_id].peel(pygit2.Tree)
    cache = objects.TreeCache(repo, 1 << 20)
    assert objects.blob_at(cache, tree_id.raw, path) == _entry_blob(tree, path)


def _tree_of(repo: pygit2.Repository, entries: list[tuple[bytes, bytes, pygit2.Oid]]) -> pygit2.Oid:
    """A tree object written byte by byte, as a hostile or old git may have: any order, any mode text."""
    data = b"".join(mode + b" " + name + b"\0" + oid.raw for mode, name, oid in entries)
    return repo.odb.write(pygit2.enums.ObjectType.TREE, data)


MODES = [b"100644", b"100755", b"100664", b"0100644", b"40000", b"040000", b"120000"]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(st.tuples(st.sampled_from(MODES), st.sampled_from(NAMES[:10])), min_size=1, max_size=6, unique=True),
    st.lists(st.builds(Change, st.sampled_from(["new.md", "a.md", "b", "zz/q.md"]), DATA), min_size=1, max_size=3),
)
def test_an_odd_base_tree_is_read_as_libgit2_reads_it(
    repo: pygit2.Repository, entries: list[tuple[bytes, str]], changes: list[Change]
) -> None:
    """Modes written with a leading zero or an old 100664, entries out of git's order, a name twice: libgit2's
    builder rewrites the mode as %o, sorts, and keeps the last of two same-named entries; so does the raw edit."""
    blob = repo.create_blob(b"x\n")
    empty_dir = repo.TreeBuilder()
    empty_dir.insert("f.md", blob, FileMode.BLOB)
    sub = empty_dir.write()
    base_id = _tree_of(
        repo,
        [(mode, name.encode(), sub if mode.lstrip(b"0").startswith(b"4") else blob) for mode, name in entries],
    )
    base = repo[base_id].peel(pygit2.Tree)
    assert _outcome(lambda: _raw(repo, changes, base)[0]) == _outcome(lambda: _libgit2(repo, changes, base))


@pytest.mark.parametrize("name", ["", ".", "..", ".git", ".GIT", "a\0b"])
def test_names_libgit2_refuses_are_refused(repo: pygit2.Repository, name: str) -> None:
    with pytest.raises(ValueError, match="not a valid name"):
        _raw(repo, [Change(f"dir/{name}" if name else "dir//x.md", b"x\n")], None)


def test_a_change_below_a_file_is_refused_as_libgit2_refuses_it(repo: pygit2.Repository) -> None:
    base = repo[build_tree(repo, None, [Change("a.md", b"x\n")])].peel(pygit2.Tree)
    with pytest.raises(ValueError, match=r"a\.md is a file, not a folder"):
        _libgit2(repo, [Change("a.md/b.md", b"y\n")], base)
    with pytest.raises(ValueError, match=r"a\.md is a file, not a folder"):
        _raw(repo, [Change("a.md/b.md", b"y\n")], base)


NAME_TEXT = st.text(
    st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="<>"), min_size=1, max_size=12
).filter(lambda t: t.strip())


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    NAME_TEXT,
    NAME_TEXT,
    st.text(max_size=40).filter(lambda t: "\0" not in t),
    st.integers(0, 2**32 - 1),
    st.integers(-720, 840),
    st.booleans(),
)
def test_commit_bytes_are_create_commits(
    repo: pygit2.Repository, name: str, login: str, message: str, when: int, offset: int, orphan: bool
) -> None:
    tree = build_tree(repo, None, [Change("n.md", b"n\n")])
    parent = None if orphan else repo.create_commit(None, *[pygit2.Signature("p", "p@x", 1, 0)] * 2, "p", tree, [])
    try:  # libgit2 trims "crud" (spaces, dots, quotes...) at both ends and refuses what is left empty
        author = pygit2.Signature(name, f"{login}@notegate", when, offset)
    except pygit2.InvalidError:
        assume(False)
    committer = pygit2.Signature("notegate", "notegate@localhost", when, offset)
    expected = repo.create_commit(None, author, committer, message, tree, [parent] if parent else [])
    data = objects.commit_bytes(tree.raw, [parent.raw] if parent else [], author, committer, message)
    assert objects.object_id(objects.OBJ_COMMIT, data) == expected.raw


def test_a_control_character_in_a_signature_is_refused() -> None:
    sig = pygit2.Signature("a\nb", "x@notegate")
    with pytest.raises(ValueError, match="control character"):
        objects.signature_bytes(sig)


def test_the_tree_cache_keeps_its_budget(repo: pygit2.Repository) -> None:
    ids = [build_tree(repo, None, [Change(f"n{i}/{'x' * 40}.md", b"x\n")]) for i in range(50)]
    cache = objects.TreeCache(repo, 600)
    for oid in ids:
        cache(oid.raw)
    assert cache._bytes <= 600 and len(cache._trees) >= 1
    assert cache(ids[0].raw).data() == repo.odb.read(ids[0])[1]  # an evicted tree is read again
