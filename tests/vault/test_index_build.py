"""A first build of the index (issue 15): a larger FTS5 buffer and the last-commit walk after the commit change how
long the build takes, never what a search returns."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from notegate.services.runtime import Runtime, policy_fingerprint
from notegate.vault import index as index_module
from notegate.vault.index import FTS_HASHSIZE, SearchIndex
from notegate.vault.store import ABSENT, Author, Change, VaultStore

AUTHOR = Author("Test", "owner")
SMALL_HASHSIZE = 8 << 10  # far below SQLite's default (1 MiB, every build before FTS_HASHSIZE): many merges


def _vault(store: VaultStore, notes: int = 420, seed: int = 7) -> list[str]:
    """Generated notes (~1.6 MB of text: a build with a small FTS5 buffer flushes and merges many segments); the
    vocabulary, for queries."""
    rng = random.Random(seed)
    vocab = ["".join(rng.choice("bcdfgklmnprstvz") + rng.choice("aeiou") for _ in range(3)) for _ in range(600)]
    vocab += ["otter", "river", "the"]
    changes = []
    for i in range(notes):
        words = rng.choices(vocab, k=rng.randint(200, 900))
        if i % 3 == 0:
            words[rng.randrange(len(words))] = "otter river"
        body = "\n\n".join(" ".join(words[j : j + 40]) for j in range(0, len(words), 40))
        folder = ("private/", "inbox/", "ideas/", "")[i % 4]
        changes.append(Change(f"{folder}note-{i:04d}.md", f"# Note {vocab[i % len(vocab)]}\n\n{body}\n".encode()))
    store.commit(changes, {c.path: ABSENT for c in changes}, AUTHOR, "generated")
    return vocab


def _results(index: SearchIndex, queries: list[str]) -> list[list[tuple]]:
    out = []
    for query in queries:
        for private, inbox, folder in ((False, False, ""), (True, True, ""), (True, False, "ideas")):
            hits = index.search(query, include_private=private, include_inbox=inbox, folder=folder, limit=15)
            out.append([(h.path, h.snippet, h.score, h.inbox, h.matched) for h in hits])
    return out


def test_the_build_buffer_changes_no_search_result(
    rt: Runtime, store: VaultStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    vocab = _vault(store)
    rng = random.Random(3)
    queries = ["otter", "the", '"otter river"', "river otter", "ott*", "note", *rng.sample(vocab, 12)]
    queries += [f"{a} {b}" for a, b in zip(rng.sample(vocab, 8), rng.sample(vocab, 8), strict=True)]
    built = {}
    for name, size in (("old", SMALL_HASHSIZE), ("new", FTS_HASHSIZE)):
        monkeypatch.setattr(index_module, "FTS_HASHSIZE", size)
        idx = SearchIndex(tmp_path / f"{name}.sqlite", rt.classify, policy_fingerprint(rt.policy))
        try:
            idx.catch_up(store)
            segments = idx._conn().execute("SELECT count(*) FROM fts_data").fetchone()[0]
            built[name] = (_results(idx, queries), idx.paths(), segments)
        finally:
            idx.close()
    assert built["old"][2] > built["new"][2]  # the small buffer really wrote more index pages
    assert built["new"][0] == built["old"][0]
    assert built["new"][1] == built["old"][1]
    assert any(built["new"][0]) and all(len(r) <= 15 for r in built["new"][0])


def test_a_build_sets_the_buffer_on_both_tables(index: SearchIndex, store: VaultStore) -> None:
    index.catch_up(store)
    for table in ("fts", "fts_private"):
        row = index._conn().execute(f"SELECT v FROM {table}_config WHERE k = 'hashsize'").fetchone()
        assert row == (FTS_HASHSIZE,)


def test_the_last_commit_walk_runs_once_the_build_is_searchable(
    index: SearchIndex, store: VaultStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Search never waits for the walk: the build's commit is visible before it starts; the ids it finds are
    still recorded."""
    seen: list[str | None] = []
    walk = index._last_commits

    def recording(*args, **kwargs):
        seen.append(index.indexed_commit)
        return walk(*args, **kwargs)

    monkeypatch.setattr(index, "_last_commits", recording)
    head = store.head()
    index.catch_up(store)
    assert seen == [head]
    for path in store.listing().notes:
        assert index.last_commit(path) == str(store.history(path, 1)[0][0].id)


def test_a_read_before_the_walk_keeps_its_own_last_commit(index: SearchIndex, store: VaultStore) -> None:
    """A row a read already gave its id (``remember_last_commit``) keeps it: the walk sets only empty rows."""
    path = sorted(store.listing().notes)[0]
    walk = index._last_commits

    def read_first(*args, **kwargs):
        index.remember_last_commit(path, "f" * 40)
        return walk(*args, **kwargs)

    index._last_commits = read_first  # type: ignore[method-assign]
    index.catch_up(store)
    assert index.last_commit(path) == "f" * 40


def _fts_pages(index: SearchIndex) -> int:
    conn = index._conn()
    return sum(conn.execute(f"SELECT count(*) FROM {t}_data").fetchone()[0] for t in ("fts", "fts_private"))


def test_a_rebuild_and_a_policy_change_leave_the_index_a_fresh_build_makes(
    rt: Runtime, store: VaultStore, tmp_path: Path
) -> None:
    """Emptying the FTS tables drops and recreates them: no delete marker of the old rows stays behind (FTS5's
    row-by-row ``DELETE`` re-tokenized every old body and left a marker per word), and searches are unchanged."""
    vocab = _vault(store, notes=120)
    queries = ["otter", '"otter river"', "ott*", *vocab[:10]]
    fresh = SearchIndex(tmp_path / "fresh.sqlite", rt.classify, policy_fingerprint(rt.policy))
    fresh.catch_up(store)
    expected, pages = _results(fresh, queries), _fts_pages(fresh)
    fresh.close()
    path = tmp_path / "again.sqlite"
    idx = SearchIndex(path, rt.classify, policy_fingerprint(rt.policy))
    idx.catch_up(store)
    assert idx.rebuild(store) == len(store.listing().notes)
    assert (_results(idx, queries), _fts_pages(idx)) == (expected, pages)
    idx.close()
    idx = SearchIndex(path, rt.classify, "another policy")  # a policy change: emptied, rebuilt on catch-up
    assert idx.count() == 0 and _fts_pages(idx) <= 4  # two rows per empty FTS5 table
    idx.catch_up(store)
    assert (_results(idx, queries), _fts_pages(idx)) == (expected, pages)
    idx.close()


def test_blobs_streamed_through_git_index_the_same_rows(
    rt: Runtime, store: VaultStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A build reading its blobs through ``git cat-file`` (past STREAM_BLOBS_FROM) stores exactly what one
    reading them in process stores."""
    _vault(store, notes=120)
    tables = {}
    real = VaultStore.stream_blobs
    for name, threshold in (("in-process", 10**9), ("streamed", 1)):
        monkeypatch.setattr(index_module, "STREAM_BLOBS_FROM", threshold)
        streamed: list[int] = []

        def counted(s: VaultStore, ids, streamed=streamed):
            streamed.append(len(ids))
            return real(s, ids)

        monkeypatch.setattr(VaultStore, "stream_blobs", counted)
        idx = SearchIndex(tmp_path / f"{name}.sqlite", rt.classify, policy_fingerprint(rt.policy))
        try:
            idx.catch_up(store)
            conn = idx._conn()
            tables[name] = [
                conn.execute("SELECT path, folder, blob, private, inbox FROM notes ORDER BY path").fetchall(),
                # the inverted index itself, page for page (the tables are contentless: no text to compare)
                conn.execute("SELECT id, block FROM fts_data ORDER BY id").fetchall(),
                conn.execute("SELECT id, block FROM fts_private_data ORDER BY id").fetchall(),
            ]
        finally:
            idx.close()
        assert bool(streamed) == (name == "streamed")
    assert tables["in-process"] == tables["streamed"]
    assert len(tables["streamed"][0]) >= 120  # the generated notes and the fixture's own
