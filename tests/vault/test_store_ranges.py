"""What a group commit remembers of its own chain (the index and the listing follow main without a tree
diff) must be exactly what the tree diff and the history walk would have found: a store that made the
commits and a fresh store opened on the same clone (which knows nothing and diffs) answer alike."""

from __future__ import annotations

import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pygit2
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from notegate.vault.store import Author, Change, CommitResult, Listing, VaultStore

AUTHOR = Author("Tester", "tester")
#: A small pool, so that writes in one group meet: notes in folders, a hidden folder (never listed), an
#: attachment, a path that only the chain creates.
POOL = ("a.md", "dir/b.md", "dir/sub/c.md", "new/d.md", ".hidden/e.md", "img/f.png")
TEXTS = (b"one\n", b"two\n", b"three\n", None)  # None: delete


def open_store(tmp_path: Path) -> VaultStore:
    origin = tmp_path / "origin.git"
    pygit2.init_repository(str(origin), bare=True, initial_head="main")
    store = VaultStore.create("personal", tmp_path / "srv" / "vault.git", str(origin))
    store.commit(
        [Change("a.md", b"one\n"), Change("dir/b.md", b"two\n"), Change(".hidden/e.md", b"one\n")],
        {},
        AUTHOR,
        "seed",
    )
    return store


def grouped(store: VaultStore, writes: list[Callable[[], CommitResult]]) -> None:
    """Queue every write behind this thread's hold of the write lock: the next holder commits them as one
    group (one chain, one push)."""

    errors: list[BaseException] = []

    def run(write: Callable[[], CommitResult]) -> None:
        try:
            write()
        except BaseException as exc:  # seen by the assertion below, in the test's thread
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(w,)) for w in writes]
    with store.write_lock():
        for t in threads:
            t.start()
        deadline = time.monotonic() + 30
        while len(store._queue) < len(writes):
            assert time.monotonic() < deadline, "writes did not queue"
            time.sleep(0.005)
    for t in threads:
        t.join(30)
    assert errors == []


def listing_state(listing: Listing) -> tuple:
    return listing.notes, listing.case_index, listing.folders, listing.folder_case, listing.attachments


requests = st.lists(
    st.lists(st.tuples(st.sampled_from(POOL), st.sampled_from(TEXTS)), min_size=1, max_size=3),
    min_size=1,
    max_size=5,
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(groups=st.lists(requests, min_size=1, max_size=3))
def test_remembered_ranges_equal_the_tree_diff(tmp_path_factory: pytest.TempPathFactory, groups) -> None:
    store = open_store(tmp_path_factory.mktemp("ranges"))
    store.listing()  # the listing follows main from here on, as in the server
    for group in groups:
        old = store.head()
        writes = []
        for changes in group:
            # later changes to one path win inside a request (build_tree keeps the last one)
            merged = {path: data for path, data in changes}
            batch = [Change(path, data) for path, data in merged.items()]
            writes.append(lambda batch=batch: store.commit(batch, {}, AUTHOR, "w"))
        grouped(store, writes)
        new = store.head()
        assert new is not None
        fresh = VaultStore("personal", store.repo_dir, store.origin_url)  # remembers nothing: diffs and walks
        if old == new:
            continue
        assert (old, new) in store._ranges  # the writer's answers below came from its record
        known = dict(store.changed_notes(old, new))
        assert known == dict(fresh.changed_notes(old, new))
        assert not any(p.startswith(".hidden/") for p in known)  # never descended into, as the diff
        assert store.last_changes(old, new, set(known), 2000) == fresh.last_changes(old, new, set(known), 2000)
        assert listing_state(store.listing()) == listing_state(fresh.listing())


def test_a_change_made_and_undone_in_one_group_is_no_change(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    old = store.head()
    grouped(
        store,
        [
            lambda: store.commit([Change("a.md", b"other\n")], {}, AUTHOR, "change"),
            lambda: store.commit([Change("a.md", b"one\n"), Change("new/d.md", b"x\n")], {}, AUTHOR, "undo"),
        ],
    )
    new = store.head()
    assert (old, new) in store._ranges
    assert store.changed_notes(old, new) == [("new/d.md", store.blob_id("new/d.md"))]
    commits = [str(c.id) for c in store.repo.walk(new)]
    assert store.last_changes(old, new, {"new/d.md"}, 2000) == {"new/d.md": commits[0]}


def test_ranges_are_bounded_and_an_unknown_range_is_diffed(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    first = store.head()
    for i in range(40):
        store.commit([Change(f"n/{i}.md", b"x\n")], {}, AUTHOR, f"w{i}")
    assert len(store._ranges) <= 16
    # a range no chain made (forty commits at once) comes from the tree diff, whole
    assert {p for p, _ in store.changed_notes(first, store.head())} == {f"n/{i}.md" for i in range(40)}


def folders(repo_dir: Path) -> set[str]:
    return {str(p.relative_to(repo_dir)) for p in repo_dir.rglob("*") if p.is_dir()}


def test_a_write_after_a_repack_makes_no_folder_in_the_clone_or_the_origin(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    for i in range(5):
        store.commit([Change(f"r/{i}.md", f"{i}\n".encode())], {}, AUTHOR, "r")
    store.repack()
    assert store.loose_object_count() == 0
    clone, origin = store.repo_dir, Path(store.origin_url)
    before = folders(clone), folders(origin)
    for i in range(20):
        store.commit([Change(f"s/{i}/n.md", f"fresh {i}\n".encode())], {}, AUTHOR, "s")
    assert (folders(clone), folders(origin)) == before
    assert store.loose_object_count() == 0 and store.loose_object_count(origin) == 0  # one pack per group
    assert store.pack_count() >= 20 and store.pack_count(origin) >= 20
    for repo_dir in (clone, origin):
        assert subprocess.run(["git", "--git-dir", str(repo_dir), "fsck", "--no-dangling"], check=False).returncode == 0
