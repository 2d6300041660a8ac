"""The contentless FTS tables: every row is removed with exactly the values it went in with, so after any run
of writes, deletes, renames and private moves the inverted index is, token for token, what a fresh build of
the same tip holds; snippets come from git; an old-format index, or a row whose old blob is gone, starts
over from git."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from notegate.services.runtime import Runtime, policy_fingerprint
from notegate.vault import index as index_module
from notegate.vault.index import SearchIndex
from notegate.vault.store import ABSENT, Author, Change, VaultStore
from support.index import instances

AUTHOR = Author("Test", "owner")


def commit(store: VaultStore, files: dict[str, bytes | None]) -> str:
    expect = {p: store.blob_id(p) for p in files}
    return store.commit([Change(p, data) for p, data in files.items()], expect, AUTHOR, "test").commit


def fresh(rt: Runtime, store: VaultStore, path: Path) -> SearchIndex:
    idx = SearchIndex(path, rt.classify, policy_fingerprint(rt.policy))
    idx.catch_up(store)
    return idx


NAMES = ["ideas/otter.md", "ideas/sub/fox-den.md", "private/diary.md", "inbox/notes/x.md", "board.canvas", "a_b.md"]
WORDS = ["otter", "river", "fox", "Éclair", "naïve", "den", "# Heading line", "\n", " ", "ünïcödé", "\ufffd"]
texts = st.lists(st.sampled_from(WORDS), max_size=12).map(" ".join)


def content(path: str, text: str) -> bytes:
    if path.endswith(".canvas"):
        return json.dumps({"nodes": [{"id": "a", "type": "text", "text": text}], "edges": []}).encode()
    return text.encode() + (b"\xff\xfe bad utf-8" if "den" in text else b"")


steps = st.lists(
    st.tuples(st.sampled_from(NAMES), st.one_of(st.none(), texts)),
    min_size=1,
    max_size=12,
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(batches=st.lists(steps, min_size=1, max_size=5))
def test_after_any_changes_the_index_is_a_fresh_builds_token_for_token(
    rt: Runtime, store: VaultStore, tmp_path_factory: pytest.TempPathFactory, batches
) -> None:
    work = tmp_path_factory.mktemp("contentless")
    live = fresh(rt, store, work / "live.sqlite")
    try:
        for batch in batches:
            files: dict[str, bytes | None] = {}
            for path, text in batch:
                files[path] = None if text is None else content(path, text)
            files = {p: d for p, d in files.items() if d is not None or store.blob_id(p) != ABSENT}
            if files:
                commit(store, files)
                live.catch_up(store)
        rebuilt = fresh(rt, store, work / "rebuilt.sqlite")
        try:
            assert instances(live) == instances(rebuilt)
            assert live.paths() == rebuilt.paths()
        finally:
            rebuilt.close()
    finally:
        live.close()


def test_the_tables_hold_no_text_and_snippets_come_from_git(index: SearchIndex, store: VaultStore) -> None:
    commit(store, {"ideas/otter.md": b"# Otters\nriver otters hold hands while they sleep\n"})
    index.catch_up(store)
    conn = index._conn()
    assert conn.execute("SELECT body FROM fts WHERE fts MATCH 'otters'").fetchall() == [(None,)]
    (hit,) = index.search("sleep")
    assert hit.path == "ideas/otter.md" and "**sleep**" in hit.snippet


def test_an_index_of_the_old_layout_is_emptied_and_rebuilt(rt: Runtime, store: VaultStore, tmp_path: Path) -> None:
    """An index written with another ``INDEX_FORMAT`` (the tables that kept a copy of the text) is started over
    at open, so no delete is ever made against rows inserted another way."""
    path = tmp_path / "old.sqlite"
    fingerprint = policy_fingerprint(rt.policy)
    idx = fresh(rt, store, path)
    assert idx.count() > 0
    idx.close()
    conn = sqlite3.connect(path)
    conn.execute("UPDATE meta SET value = ? WHERE key = 'policy'", (f"{fingerprint} content-copy-0",))
    conn.commit()
    conn.close()
    reopened = SearchIndex(path, rt.classify, fingerprint)
    try:
        assert reopened.count() == 0 and reopened.indexed_commit is None
        reopened.catch_up(store)
        assert reopened.count() == len(store.listing().notes)
    finally:
        reopened.close()


def test_a_row_whose_old_blob_is_gone_starts_the_index_over(
    rt: Runtime, store: VaultStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The old bytes a contentless delete needs cannot be read (history rewritten, objects collected): the
    catch-up rolls back and builds the index again from the tip, never leaving the old row's tokens behind."""
    commit(store, {"ideas/otter.md": b"kestrel\n"})
    idx = fresh(rt, store, tmp_path / "gone.sqlite")
    try:
        old_blob = store.blob_id("ideas/otter.md")
        commit(store, {"ideas/otter.md": b"plover\n"})
        real = VaultStore.read_unverified_blob_fast

        def missing(self: VaultStore, blob_id: str) -> bytes:
            if blob_id == old_blob:
                raise KeyError(blob_id)
            return real(self, blob_id)

        monkeypatch.setattr(VaultStore, "read_unverified_blob_fast", missing)
        rebuilds: list[int] = []
        monkeypatch.setattr(
            index_module, "_empty_tables", lambda db, real=index_module._empty_tables: (rebuilds.append(1), real(db))[1]
        )
        idx.catch_up(store)
        assert rebuilds == [1]
        assert idx.search("kestrel") == [] and [h.path for h in idx.search("plover")] == ["ideas/otter.md"]
        assert idx.indexed_commit == store.head()
        monkeypatch.undo()
        rebuilt = fresh(rt, store, tmp_path / "rebuilt.sqlite")
        try:
            assert instances(idx) == instances(rebuilt)
        finally:
            rebuilt.close()
    finally:
        idx.close()


def test_index_size_is_the_index_not_a_copy_of_the_vault(index: SearchIndex, store: VaultStore) -> None:
    """300 KB of text: the contentless tables hold its tokens, not its bytes (a copy would be > 300 KB)."""
    words = " ".join(f"w{i % 500}" for i in range(30_000))
    commit(store, {f"bulk/n{i}.md": f"# n{i}\n{words}\n".encode() for i in range(2)})
    index.catch_up(store)
    conn = index._conn()
    stored = conn.execute("SELECT sum(length(block)) FROM fts_data").fetchone()[0]
    content_tables = conn.execute("SELECT count(*) FROM sqlite_master WHERE name LIKE 'fts%content'").fetchone()[0]
    assert content_tables == 0
    assert stored < 600_000  # two notes of ~300 KB: positions only, delta-encoded
