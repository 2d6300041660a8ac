"""A big catch-up's rows read in a child process (vault/rowreader.py): the same rows as read inline, the same
index, whether the child answers, dies or was never started."""

from __future__ import annotations

import random
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pygit2
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from notegate.services.runtime import Runtime, policy_fingerprint
from notegate.vault import index as index_module
from notegate.vault import rowreader
from notegate.vault.index import SearchIndex
from notegate.vault.store import ABSENT, Author, Change, VaultStore

AUTHOR = Author("Test", "owner")

_LINE = st.one_of(
    st.text(st.characters(blacklist_categories=("Cs",)), max_size=60),
    st.sampled_from(["# Title", "## Heading ##", "---", "aliases: [a, b]", "tags:", "- tag", "lang: es", "#tag x"]),
    st.sampled_from(["the and of", "el los las que", "東京タワーに行きました", "Привет мир", "running runners ran"]),
)
_TEXT = st.lists(_LINE, max_size=12).map("\n".join)
_PATH = st.sampled_from(["a.md", "es/b.md", "de/notes/c.md", "x/Board.canvas", "private/p.md", "inbox/i.md"])


@pytest.fixture(scope="module")
def reader(tmp_path_factory: pytest.TempPathFactory) -> Iterator[rowreader.RowReader]:
    """One child for every example, over an empty repository: every text travels, no blob is read."""
    path = tmp_path_factory.mktemp("rows") / "v.git"
    pygit2.init_repository(str(path), bare=True)
    started = rowreader.start(path)
    assert started is not None
    yield started
    started.close()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(_PATH, _TEXT), min_size=1, max_size=8))
def test_the_child_reads_the_rows_inline_reading_would(
    reader: rowreader.RowReader, notes: list[tuple[str, str]]
) -> None:
    reader.send([(path, "0" * 40, text) for path, text in notes])
    assert reader.receive() == rowreader.rows_of(notes)


def _vault(store: VaultStore, notes: int, seed: int = 5) -> list[str]:
    rng = random.Random(seed)
    vocab = ["".join(rng.choice("bcdfgklmnprstvz") + rng.choice("aeiou") for _ in range(3)) for _ in range(300)]
    vocab += ["running", "runners", "otter"]
    changes = []
    for i in range(notes):
        words = " ".join(rng.choices(vocab, k=rng.randint(20, 120)))
        folder = ("private/", "inbox/", "es/", "")[i % 4]
        front = f"---\naliases: [Alias {i}]\ntags: [t{i % 7}]\n---\n" if i % 5 == 0 else ""
        changes.append(
            Change(f"{folder}note-{i:04d}.md", f"{front}# Note {vocab[i % 300]}\n\n## Part\n{words}\n".encode())
        )
    store.commit(changes, {c.path: ABSENT for c in changes}, AUTHOR, "generated")
    return vocab


def _contents(index: SearchIndex, queries: list[str]) -> tuple:
    db = index._conn()
    notes = db.execute("SELECT id, path, folder, blob, private, inbox FROM notes ORDER BY id").fetchall()
    names = db.execute("SELECT name, id, part FROM names ORDER BY name, id, part").fetchall()
    stems = db.execute("SELECT stem FROM stems ORDER BY stem").fetchall()
    hits = [
        [(h.path, h.snippet, h.score, h.part, h.matched) for h in index.search(q, include_private=True, limit=20)]
        for q in queries
    ]
    return notes, names, stems, hits, index.languages()


def _build(rt: Runtime, store: VaultStore, path: Path, queries: list[str]) -> tuple:
    idx = SearchIndex(path, rt.classify, policy_fingerprint(rt.policy))
    try:
        assert idx.catch_up(store) == len(store.listing().notes)
        return _contents(idx, queries)
    finally:
        idx.close()


@pytest.mark.parametrize("how", ["child", "child dies", "no child"])
def test_a_build_through_the_reader_is_the_inline_build(
    rt: Runtime, store: VaultStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    """Same notes, names, stems, languages and search results as a build that reads every row inline; a child
    that dies mid-build (killed after two answers) or cannot start changes nothing but the speed."""
    vocab = _vault(store, 1300)
    queries = ["otter", "run", "runner", "Alias 5", "note", "t3", *vocab[:10]]
    monkeypatch.setattr(index_module, "INSERT_BATCH", 100)
    monkeypatch.setattr(index_module, "PIPELINE_FROM", 10**9)
    inline = _build(rt, store, tmp_path / "inline.sqlite", queries)

    monkeypatch.setattr(index_module, "PIPELINE_FROM", 1)
    started: list[rowreader.RowReader] = []
    real_start, real_receive = rowreader.start, rowreader.RowReader.receive

    def start(git_dir: Path) -> rowreader.RowReader | None:
        reader = None if how == "no child" else real_start(git_dir)
        started.extend([reader] if reader is not None else [])
        return reader

    def dying(self: rowreader.RowReader) -> list:
        self.answered = getattr(self, "answered", 0) + 1
        if self.answered == 3:
            self._proc.kill()
            self._proc.wait()
        return real_receive(self)

    monkeypatch.setattr(rowreader, "start", start)
    if how == "child dies":
        monkeypatch.setattr(rowreader.RowReader, "receive", dying)
    piped = _build(rt, store, tmp_path / "piped.sqlite", queries)

    assert len(started) == (0 if how == "no child" else 1)
    for reader in started:
        assert reader._proc.poll() is not None  # ended with the build
        assert reader.broken is (how == "child dies")
    assert piped == inline
    assert any(inline[3])


def test_a_blob_the_child_cannot_read_fails_the_build_as_inline_does(
    rt: Runtime, store: VaultStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The child ends at a blob it cannot read; the parent reads that batch itself and meets the same error,
    so the catch-up rolls back exactly as without a child (nothing half-indexed)."""
    _vault(store, 30)
    monkeypatch.setattr(index_module, "PIPELINE_FROM", 1)
    real = store.read_unverified_blob_fast

    def unreadable(blob: str) -> bytes:
        raise ValueError(f"{blob} is not a blob")

    monkeypatch.setattr(store, "read_unverified_blob_fast", unreadable)
    monkeypatch.setattr(store, "repo_dir", tmp_path / "missing.git")  # the child cannot open it: it dies
    idx = SearchIndex(tmp_path / "i.sqlite", rt.classify, policy_fingerprint(rt.policy))
    try:
        with pytest.raises(ValueError, match="is not a blob"):
            idx.catch_up(store)
        assert idx.count() == 0
        monkeypatch.setattr(store, "read_unverified_blob_fast", real)
        assert idx.catch_up(store) == len(store.listing().notes)
    finally:
        idx.close()


def test_a_child_that_never_answers_is_killed_and_the_rows_read_inline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stuck child (here: one that reads and never writes) cannot stall a build: its answer times out."""
    monkeypatch.setattr(rowreader, "ANSWER_SECONDS", 0.5)
    stuck = rowreader.RowReader(tmp_path)
    stuck._proc.kill()
    stuck._proc.wait()
    stuck._proc = subprocess.Popen(
        [sys.executable, "-c", "import sys, time; sys.stdin.read(); time.sleep(60)"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    notes = [("a.md", "# A\nthe words")]
    batches_made: list[list] = []
    batches = rowreader.Batches(lambda rows, made: batches_made.append(made), lambda p, b: "", stuck)
    started = time.monotonic()
    batches.add([(path, "", "0" * 40, None, 0, 0, text) for path, text in notes])
    batches.finish()
    assert time.monotonic() - started < 10
    assert stuck.broken and batches_made == [rowreader.rows_of(notes)]
    stuck.close()
