"""Ranking inside the FTS table before joining ``notes`` (``SearchIndex.RANK_FIRST``) changes no result.

Why a property: the rank-first statement moves the inbox filter into the FTS table's WHERE (a NOT IN over
the partial index ``notes_inbox``) and limits before the join; it must return the notes the joined
statement returns, in the same order, with the same scores, for every tier, visibility and limit.
"""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from notegate.vault.index import SearchIndex
from support.rowindex import index_of_rows

NOTES = 300
WORDS = ("alpha", "beta", "gamma", "delta", "common", "rare", "inboxonly")


def corpus() -> list[tuple]:
    """Rows as ``SearchIndex._insert`` takes them; every note's length differs (no bm25 ties: an order)."""
    rnd = random.Random(11)
    rows = []
    for i in range(NOTES):
        inbox = int(i % 7 == 0)
        private = int(i % 13 == 0)
        words = ["common"] * rnd.randint(1, 2)
        words += [w for w in ("alpha", "beta", "gamma", "delta") if rnd.random() < 0.35]
        words += ["rare"] if rnd.random() < 0.03 else []
        words += ["inboxonly"] if inbox and rnd.random() < 0.5 else []
        rnd.shuffle(words)
        text = f"{' '.join(words)} {' '.join(['lorem'] * i)}\n"
        folder = "inbox" if inbox else ("a/b" if i % 3 else "a")
        rows.append((f"{folder}/{i:04}.md", folder, f"{i:040x}", None, private, inbox, text))
    return rows


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory):
    yield from index_of_rows(tmp_path_factory.mktemp("rank-first") / "index.sqlite", corpus())


def joined(idx: SearchIndex, monkeypatch: pytest.MonkeyPatch, *args, **kwargs) -> list:
    with monkeypatch.context() as m:
        m.setattr(idx, "RANK_FIRST", False)
        return idx.search(*args, **kwargs)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    words=st.lists(st.sampled_from([*WORDS, "al*", "ga*"]), min_size=1, max_size=3),
    limit=st.integers(1, 40),
    include_private=st.booleans(),
    include_inbox=st.booleans(),
    folder=st.sampled_from(["", "", "a", "inbox"]),
)
def test_rank_first_returns_what_the_joined_statement_returns(
    index: SearchIndex,
    monkeypatch: pytest.MonkeyPatch,
    words: list[str],
    limit: int,
    include_private: bool,
    include_inbox: bool,
    folder: str,
) -> None:
    query = " ".join(words)
    kwargs = {"folder": folder, "limit": limit, "include_private": include_private, "include_inbox": include_inbox}
    assert index.search(query, **kwargs) == joined(index, monkeypatch, query, **kwargs)


def test_the_inbox_stays_hidden_before_the_limit(index: SearchIndex) -> None:
    """The inbox filter is applied before the LIMIT: a word mostly in the inbox still fills the limit with
    the notes outside it, and none inside it."""
    hits = index.search("common", limit=50)
    assert len(hits) == 50
    assert not any(h.inbox or h.path.startswith("inbox/") for h in hits)
    assert {h.path for h in index.search("inboxonly", limit=50)} == set()
    assert all(h.inbox for h in index.search("inboxonly", limit=50, include_inbox=True))


def test_the_statement_ranks_in_the_fts_table_with_the_partial_index(index: SearchIndex) -> None:
    plan = " ".join(
        str(row[3])
        for row in index._conn().execute(
            "EXPLAIN QUERY PLAN SELECT rowid FROM fts WHERE fts MATCH 'alpha' "
            "AND rowid NOT IN (SELECT id FROM notes WHERE inbox = 1)"
        )
    )
    assert "notes_inbox" in plan


def test_an_index_from_before_gets_the_partial_index_at_open(tmp_path: Path) -> None:
    path = tmp_path / "index.sqlite"
    SearchIndex(path, lambda p: (False, False), "test").close()
    with sqlite3.connect(path) as db:
        db.execute("DROP INDEX notes_inbox")
    idx = SearchIndex(path, lambda p: (False, False), "test")
    try:
        names = {r[0] for r in idx._conn().execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
        assert "notes_inbox" in names
    finally:
        idx.close()
