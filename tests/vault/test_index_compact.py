"""The search index's segment merging (``SearchIndex.compact``): a catch-up of many notes marks the index, the
merge runs in bounded steps outside any write, leaves one segment per table and the same index token for
token (and the same search results), clears the mark, and a small catch-up marks nothing.  Why it exists: a
big build's segments on FTS5's lowest levels were otherwise rewritten inside later writes' commits (seconds
at 100,000 notes, inside the write lock)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from notegate.services.runtime import Runtime, policy_fingerprint
from notegate.vault import index as index_module
from notegate.vault.index import COMPACT_META, SearchIndex
from notegate.vault.store import Author, Change, VaultStore
from support.index import instances

AUTHOR = Author("Test", "owner")
WORDS = [f"w{i:03d}" for i in range(400)] + ["otter", "river", "fox"]


def segments(idx: SearchIndex, table: str = "fts") -> int:
    """How many segments the FTS5 table holds: the distinct segment ids of its data rows (FTS5 numbers a
    leaf row ``segid << 37 | …``; rows below that are the structure and averages records)."""
    query = f"SELECT count(DISTINCT id >> 37) FROM {table}_data WHERE id >> 37 > 0"
    return idx._conn().execute(query).fetchone()[0]


def many_notes(store: VaultStore, count: int, seed: int = 1) -> str:
    rng = random.Random(seed)
    changes = [
        Change(f"bulk/n{i:04d}.md", (" ".join(rng.choice(WORDS) for _ in range(60)) + "\n").encode())
        for i in range(count)
    ]
    return store.commit(changes, {c.path: store.blob_id(c.path) for c in changes}, AUTHOR, "bulk").commit


def write(store: VaultStore, path: str, text: str) -> None:
    store.commit([Change(path, text.encode())], {path: store.blob_id(path)}, AUTHOR, "one")


@pytest.fixture
def small(monkeypatch: pytest.MonkeyPatch) -> None:
    """A build that flushes often (many segments) and a low threshold, so a test vault shows what 100,000
    notes do; steps of a few pages, so a merge takes several."""
    monkeypatch.setattr(index_module, "FTS_HASHSIZE", 16 << 10)
    monkeypatch.setattr(index_module, "COMPACT_AFTER", 100)
    monkeypatch.setattr(index_module, "COMPACT_STEP_PAGES", 8)


def fresh(rt: Runtime, store: VaultStore, path: Path) -> SearchIndex:
    idx = SearchIndex(path, rt.classify, policy_fingerprint(rt.policy))
    idx.catch_up(store)
    return idx


QUERIES = ["otter", "w001", "w002 w003", '"w004 w005"', "river fox"]


def results(idx: SearchIndex) -> list[list[tuple[str, str]]]:
    return [[(h.path, h.snippet) for h in idx.search(q, limit=50)] for q in QUERIES]


def test_a_big_catch_up_is_merged_in_steps_into_one_segment_with_the_same_index(
    rt: Runtime, store: VaultStore, small: None, tmp_path: Path
) -> None:
    many_notes(store, 300)
    idx = fresh(rt, store, tmp_path / "index.sqlite")
    try:
        assert idx._meta(COMPACT_META) == "full"
        assert segments(idx) > 1  # the build flushed several times
        before_tokens, before_hits = instances(idx), results(idx)
        assert any(before_hits)
        steps = idx.compact()
        assert steps > 1  # bounded steps, not one transaction
        assert segments(idx) == 1
        assert idx._meta(COMPACT_META) is None
        assert instances(idx) == before_tokens
        assert results(idx) == before_hits
        assert idx.compact() == 0  # nothing left: a tidy pass changes nothing
    finally:
        idx.close()


def test_writes_between_steps_are_kept_and_the_merge_still_finishes(
    rt: Runtime, store: VaultStore, small: None, tmp_path: Path
) -> None:
    many_notes(store, 300)
    idx = fresh(rt, store, tmp_path / "index.sqlite")
    try:
        for i in range(200):
            idx.compact(max_steps=1)
            if idx._meta(COMPACT_META) is None:
                break
            write(store, f"bulk/n{i:04d}.md", f"otter rewritten {i}\n")
            idx.catch_up(store)
        else:
            pytest.fail("the merge never finished")
        assert i > 1  # it took several passes of one step, with writes between them
        assert idx._meta(COMPACT_META) is None
        # the merged segment, and the last writes' own ones beside it (a tidy pass merges from four on)
        assert segments(idx) <= 4
        reference = fresh(rt, store, tmp_path / "reference.sqlite")
        try:
            assert instances(idx) == instances(reference)
            # the same hits; their order may differ (the rewritten rows have new ids, and common words are
            # sampled over runs of rows)
            assert [sorted(r) for r in results(idx)] == [sorted(r) for r in results(reference)]
        finally:
            reference.close()
    finally:
        idx.close()


def test_a_small_catch_up_marks_nothing(rt: Runtime, store: VaultStore, small: None, tmp_path: Path) -> None:
    many_notes(store, 60)  # with the starter vault's notes, below the threshold of 100
    idx = fresh(rt, store, tmp_path / "index.sqlite")
    try:
        assert idx._meta(COMPACT_META) is None
        write(store, "bulk/n0001.md", "otter\n")
        idx.catch_up(store)
        assert idx._meta(COMPACT_META) is None
    finally:
        idx.close()


def test_the_mark_survives_a_reopen_and_maintain_merges(rt: Runtime, store: VaultStore, small: None) -> None:
    """The import builds the index and leaves; the server's ``maintain`` (and its start-up build) merges it."""
    many_notes(store, 300)
    env = rt.environment(None)
    env.index.catch_up(env.store)  # as the import does, in its own process: marked
    assert env.index._meta(COMPACT_META) == "full"
    path = env.index.path
    env.index.close()
    reopened = SearchIndex(path, rt.classify, policy_fingerprint(rt.policy))
    try:
        assert reopened._meta(COMPACT_META) == "full"
    finally:
        reopened.close()
    rt.maintain()
    assert env.index._meta(COMPACT_META) is None
    assert segments(env.index) == 1
