"""The index's update after a write costs the write's paths, not the vault: it is answered from what the store's
chain recorded (no tree diff) and parses the few changed paths itself instead of advancing the listing (a
copy of every note's entry), inside the write lock.  What it indexes is exactly what it indexed before."""

from __future__ import annotations

import json

from notegate.vault.index import LISTING_CHANGES, SearchIndex
from notegate.vault.store import Author, Change, VaultStore

AUTHOR = Author("Test", "owner")
CANVAS = json.dumps({"nodes": [{"id": "1", "type": "text", "text": "canvasword"}], "edges": []}).encode()


def write(store: VaultStore, index: SearchIndex, changes: list[Change]) -> str:
    return store.commit(changes, {}, AUTHOR, "w", on_advance=lambda _o, _n: index.catch_up(store)).commit


def test_a_write_is_indexed_without_advancing_the_listing(store: VaultStore, index: SearchIndex) -> None:
    index.catch_up(store)
    before = store.listing()
    commit = write(
        store,
        index,
        [
            Change("notes/fresh.md", b"# Fresh\nzebraword\n"),
            Change("boards/plan.canvas", CANVAS),
            Change("img/pic.png", b"\x89PNG\r\n\x1a\nzebraword"),  # an attachment: never indexed
            Change(".hidden/x.md", b"zebraword\n"),  # a hidden folder: never indexed
        ],
    )
    assert index.indexed_commit == commit
    assert store._listing is before and before.commit != commit  # no copy made inside the lock
    assert [h.path for h in index.search("zebraword", include_private=True)] == ["notes/fresh.md"]
    assert [h.path for h in index.search("canvasword", include_private=True)] == ["boards/plan.canvas"]
    # the listing catches up on the next read, and agrees
    assert store.listing().commit == commit and "notes/fresh.md" in store.listing().notes


def test_a_change_and_a_delete_are_followed(store: VaultStore, index: SearchIndex) -> None:
    write(store, index, [Change("a/one.md", b"firstword\n"), Change("a/two.md", b"secondword\n")])
    write(store, index, [Change("a/one.md", b"thirdword\n"), Change("a/two.md", None)])
    assert index.search("firstword", include_private=True) == []
    assert index.search("secondword", include_private=True) == []
    assert [h.path for h in index.search("thirdword", include_private=True)] == ["a/one.md"]
    assert {p: b for p, b in index.paths().items() if p.endswith(".md")} == store.listing().notes


def test_a_large_change_still_uses_the_listing(store: VaultStore, index: SearchIndex) -> None:
    index.catch_up(store)
    changes = [Change(f"bulk/{i}.md", f"bulkword {i}\n".encode()) for i in range(LISTING_CHANGES + 1)]
    commit = write(store, index, changes)
    assert store._listing is not None and store._listing.commit == commit
    assert len(index.search("bulkword", limit=200, include_private=True)) == LISTING_CHANGES + 1


def test_a_first_build_reads_the_listing_not_a_second_tree_walk(
    store: VaultStore, index: SearchIndex, monkeypatch
) -> None:
    """A first build indexes what a tree diff would (notes and canvas files, nothing else) from the listing the
    store built when the environment opened: the whole-tree walk is not done twice."""
    write(
        store,
        index,
        [
            Change("notes/a.md", b"# A\nbuildword\n"),
            Change("boards/plan.canvas", CANVAS),
            Change("img/pic.png", b"\x89PNG\r\n\x1a\nbuildword"),
            Change(".hidden/x.md", b"buildword\n"),
        ],
    )
    expected = index.paths()
    fresh = SearchIndex(index.path.with_name("fresh.sqlite"), lambda p: (p.startswith("private/"), False), "t")
    try:
        store.listing()
        monkeypatch.setattr(store, "changed_notes", lambda *a: (_ for _ in ()).throw(AssertionError("tree walk")))
        fresh.catch_up(store)
        assert fresh.paths() == expected
        assert [h.path for h in fresh.search("buildword", include_private=True)] == ["notes/a.md"]
        assert [h.path for h in fresh.search("canvasword", include_private=True)] == ["boards/plan.canvas"]
    finally:
        fresh.close()
