"""Words in more than half of the notes are matched but not ranked (``SearchIndex._common_terms``).

Why a property: the fast path leaves such words out of bm25 (FTS5 clamps their IDF to ~0) and lists the
notes holding only them newest first; it must find exactly the notes the plain path finds, tier by tier,
and rank the notes holding a rarer word exactly as the plain path does.
"""

from __future__ import annotations

import itertools
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from notegate.vault import index as index_module
from notegate.vault.index import SearchIndex
from support.rowindex import index_of_rows

NOTES = 300
# word -> share of the notes holding it (``common`` and ``most`` are above one half)
SHARES = {"common": 1.0, "most": 0.8, "half": 0.3, "some": 0.1, "rare": 0.02, "none": 0.0}


def corpus() -> list[tuple]:
    """Rows as ``SearchIndex._insert`` takes them: (path, folder, blob, last commit, private, inbox, text)."""
    rnd = random.Random(7)
    rows = []
    for i in range(NOTES):
        words = [w for w, share in SHARES.items() for _ in range(rnd.randint(1, 3)) if rnd.random() < share]
        rnd.shuffle(words)
        filler = " ".join(rnd.choice(("lorem", "ipsum", "dolor")) for _ in range(rnd.randint(2, 30)))
        private = int(i % 50 == 0)
        rows.append((f"n/{i:04}.md", "n", f"{i:040x}", None, private, 0, f"{' '.join(words)} {filler}\n"))
    return rows


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory):
    yield from index_of_rows(tmp_path_factory.mktemp("common") / "index.sqlite", corpus())


def plain(idx: SearchIndex, query: str, monkeypatch: pytest.MonkeyPatch) -> list:
    with monkeypatch.context() as m:
        m.setattr(idx, "_common_terms", lambda table, terms, **_: set())
        return idx.search(query, limit=1000, include_private=True)


def test_the_sampled_shares_find_the_common_words(index: SearchIndex) -> None:
    q = index_module.parse_query(" ".join(SHARES))
    assert q is not None
    common = index._common_terms("fts", q.terms)
    assert {q.terms[i].words[0] for i in common} == {"common", "most"}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from([*SHARES, "most*", "ra*"]), min_size=1, max_size=3))
def test_the_fast_path_finds_what_the_plain_path_finds(
    index: SearchIndex, monkeypatch: pytest.MonkeyPatch, words: list[str]
) -> None:
    query = " ".join(words)
    fast = index.search(query, limit=1000, include_private=True)
    slow = plain(index, query, monkeypatch)
    assert sorted((h.matched, h.path) for h in fast) == sorted((h.matched, h.path) for h in slow)
    # Notes whose score comes from a rarer word keep the plain path's order (up to the clamped ~1e-6 terms).
    plain_score = {h.path: h.score for h in slow}
    ranked = [h for h in fast if h.score > 1e-5]
    for a, b in itertools.pairwise(ranked):
        assert a.matched != b.matched or plain_score[a.path] >= plain_score[b.path] - 1e-4, (query, a, b)
    for h in ranked:
        assert h.score == pytest.approx(plain_score[h.path], abs=1e-4)


def test_a_word_in_every_note_lists_newest_first_without_counting_every_match(index: SearchIndex) -> None:
    statements: list[str] = []
    conn = index._conn()
    index.search("common")  # the verdict is remembered until the index changes
    conn.set_trace_callback(lambda sql: sql.startswith("--") or statements.append(sql))
    try:
        hits = index.search("common", limit=5)
    finally:
        conn.set_trace_callback(None)
    assert [h.path for h in hits] == [f"n/{i:04}.md" for i in range(NOTES - 1, NOTES - 7, -1) if i % 50][:5]
    assert not any("count(" in s for s in statements) and not any("bm25" in s for s in statements)


def test_a_sparse_tables_samples_are_its_own_rows(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The private notes of an import are scattered over the id range (1 in 64 here). The sample windows are
    runs of the private table's own rows, so a word in most private notes is still found common, even when the
    few private notes that windows of consecutive *ids* would catch are exactly the ones without it."""
    monkeypatch.setattr(index_module, "COMMON_TERM_MIN_NOTES", 32)
    rows = []
    for i in range(4096):
        private = int(i % 64 == 0)
        # ids start at 1: windows of ids (1..64, 513..576, ...) would hold only the private rows i = 0, 512, ...
        word = "" if private and i % 512 == 0 else "pelican"
        rows.append((f"n/{i:05}.md", "n", f"{i:040x}", None, private, 0, f"{word} filler {i}\n"))
    gen = index_of_rows(tmp_path / "sparse.sqlite", rows)
    idx = next(gen)
    try:
        total, windows, sampled = idx._stats["fts_private"]
        assert (total, sampled) == (64, 64) and windows == ((1, 4033),)
        q = index_module.parse_query("pelican")
        assert q is not None
        assert idx._common_terms("fts_private", q.terms) == {0}
    finally:
        gen.close()


def test_a_full_verdict_cache_never_loses_a_verdict_a_query_still_needs(
    index: SearchIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cache of common-word verdicts is cleared when full.  A query holding a word judged before (cached)
    and a new one, arriving when the cache is full, cleared the cached verdict and then looked it up: a
    KeyError, so a search failed (found on a real 1,875-note vault by bench/bench_known_item.py)."""
    monkeypatch.setattr(index_module, "COMMON_CACHE", 2)
    index._common.clear()
    assert index.search("common", limit=5)  # "common" judged and remembered
    assert index.search("rare", limit=5)  # the cache holds two verdicts: full
    found = index.search("common half", limit=5)  # "common" remembered, "half" new: the cache is cleared
    assert found == plain(index, "common half", monkeypatch)[:5]
    q = index_module.parse_query("common most half")
    assert q is not None
    assert {q.terms[i].words[0] for i in index._common_terms("fts", q.terms)} == {"common", "most"}


def test_a_common_word_filters_the_ranked_match_and_never_drives_it(index: SearchIndex) -> None:
    """A query holding a common word ranks by its rarer words and requires the common one through a sub-select
    of the rows holding them all.  With the bare rowid, SQLite drove the statement by that list: each listed row
    looked up and the ranked MATCH run again for it ('can myrkpol' at 10,000 notes: 51 ms where the list filter
    takes 1.3 ms).  Asserted on the plan: no FTS5 scan is driven by a rowid equality (idxStr '=')."""
    statements: list[str] = []
    conn = index._conn()
    conn.set_trace_callback(statements.append)
    try:
        assert index.search("common some", limit=200)  # past the phrase tier: the all-words tier runs too
    finally:
        conn.set_trace_callback(None)
    filtered = [sql for sql in statements if "rowid IN (SELECT rowid FROM" in sql]
    assert filtered, statements  # the common word took the sub-select path
    for sql in filtered:
        plan = [row[3] for row in conn.execute(f"EXPLAIN QUERY PLAN {sql}")]
        assert not any("VIRTUAL TABLE INDEX 0:=" in step for step in plan), plan
