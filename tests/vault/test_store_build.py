"""The commit recipe's tree building: the blobs it reports and the folders it empties are what the new
tree holds, now that neither is read back from the tree just written (issue 15)."""

from __future__ import annotations

from pathlib import Path

import pygit2

from notegate.vault.store import ABSENT, Author, Change, VaultStore, _entry_blob, build_tree

AUTHOR = Author("Tester", "tester")


def make_store(tmp_path: Path) -> VaultStore:
    origin = tmp_path / "origin.git"
    pygit2.init_repository(str(origin), bare=True, initial_head="main")
    store = VaultStore.create("personal", tmp_path / "srv" / "vault.git", str(origin))
    store.commit(
        [Change("a.md", b"alpha\n"), Change("dir/b.md", b"beta\n"), Change("dir/sub/c.md", b"gamma\n")],
        {},
        AUTHOR,
        "seed",
    )
    return store


def test_reported_blobs_are_the_new_trees(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    changes = [
        Change("a.md", b"alpha 2\n"),
        Change("dir/sub/c.md", None),  # empties dir/sub: the folder goes
        Change("new/deep/d.md", b"delta\n"),
        Change("gone.md", None),  # never there
        Change("twice.md", b"first\n"),
        Change("twice.md", b"second\n"),  # the last change to a path wins
    ]
    result = store.commit(changes, {"a.md": store.blob_id("a.md")}, AUTHOR, "mixed")
    tree = store.repo[result.commit].peel(pygit2.Tree)
    assert result.blobs == {c.path: _entry_blob(tree, c.path) for c in changes}
    assert result.blobs["twice.md"] != ABSENT and store.read("twice.md")[0] == b"second\n"
    assert result.blobs["dir/sub/c.md"] == ABSENT and result.blobs["gone.md"] == ABSENT
    assert [e.name for e in store.repo[tree["dir"].id].peel(pygit2.Tree)] == ["b.md"]


def test_a_folder_emptied_is_removed_and_an_empty_new_one_never_made(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    base = store.repo[store.head()].peel(pygit2.Tree)
    created: list[pygit2.Oid] = []
    tree_id = build_tree(
        store.repo, base, [Change("dir/sub/c.md", None), Change("dir/b.md", None), Change("x/y.md", None)], created
    )
    tree = store.repo[tree_id].peel(pygit2.Tree)
    assert sorted(e.name for e in tree) == ["a.md"]
    assert tree_id in created
