"""Search by meaning follows a write by the paths it changed: a catch-up after a one-note write embeds that note
and reads no other row; deletes and renames drop their old rows; wakes that pile up are one catch-up; a query
ranks the snapshot it took while writes go on; and whatever the writes, the vectors equal the index's rows and
rank as a fresh full build does.  A stand-in embedder (a vector per text from its digest) keeps these fast and
free of the model's files; the store and the index are the real ones."""

from __future__ import annotations

import hashlib
import itertools
import tempfile
import threading
from pathlib import Path

import pygit2
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

np = pytest.importorskip("numpy")

from notegate.vault import meaning_rows  # noqa: E402
from notegate.vault.index import SearchIndex  # noqa: E402
from notegate.vault.meaning import MeaningIndex, note_text  # noqa: E402
from notegate.vault.meaning_rows import Rows  # noqa: E402
from notegate.vault.store import Author, Change, VaultStore  # noqa: E402

AUTHOR = Author("Tester", "tester")
WIDTH = 16


class FakeEmbedder:
    """A unit vector per text, from its digest; records every text it was given (and can be held)."""

    def __init__(self) -> None:
        self.calls: list[list[str]] = []
        self.hold: threading.Event | None = None
        self.entered = threading.Event()

    def embed(self, texts: list[str]):
        self.calls.append(list(texts))
        self.entered.set()
        if self.hold is not None:
            assert self.hold.wait(30)
        out = np.zeros((len(texts), WIDTH), dtype=np.float32)
        for i, text in enumerate(texts):
            seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")
            vec = np.random.default_rng(seed).standard_normal(WIDTH).astype(np.float32)
            out[i] = vec / np.linalg.norm(vec)
        return out

    def inputs(self) -> list[str]:
        return [text for call in self.calls for text in call]


class Vault:
    """A real store (pushing to a bare origin), its index and its vectors, in ``root``."""

    def __init__(self, root: Path) -> None:
        origin = root / "origin.git"
        pygit2.init_repository(str(origin), bare=True, initial_head="main")
        self.store = VaultStore.create("personal", root / "srv" / "vault.git", str(origin))
        self.index = SearchIndex(root / "index.sqlite", lambda _path: (False, False), "test")
        self.embedder = FakeEmbedder()
        self.root = root
        self.meaning = MeaningIndex(root / "meaning.sqlite", embedder=lambda: self.embedder)

    def commit(self, changes: dict[str, bytes | None]) -> None:
        self.store.commit([Change(p, d) for p, d in changes.items()], {}, AUTHOR, "test")
        self.index.catch_up(self.store)

    def text(self, path: str) -> str:
        read = self.store.read(path)
        assert read is not None
        return note_text(path, read[0])

    def close(self) -> None:
        self.meaning.close()
        self.index.close()


@pytest.fixture
def vault(tmp_path: Path):
    v = Vault(tmp_path)
    v.commit({f"notes/n{i}.md": f"# Note {i}\n\nabout thing {i}\n".encode() for i in range(40)})
    v.meaning.catch_up(v.store, v.index)  # the first catch-up of a process: every row compared
    v.embedder.calls.clear()
    v.embedder.entered.clear()
    yield v
    v.close()


def test_a_one_note_write_embeds_that_note_and_reads_no_other_row(vault: Vault, monkeypatch) -> None:
    """Before: each catch-up read every index row (``index.paths``) and every vector, and rebuilt the whole
    matrix for the one row that changed."""
    monkeypatch.setattr(vault.index, "paths", lambda: pytest.fail("a one-note catch-up read every index row"))
    before = vault.meaning.vectors._snapshot
    vault.commit({"notes/n7.md": b"# Note 7\n\nchanged\n"})
    assert vault.meaning.catch_up(vault.store, vault.index) == 1
    assert vault.embedder.inputs() == [vault.text("notes/n7.md")]
    after = vault.meaning.vectors._snapshot
    assert after.matrix is before.matrix  # appended in place: no copy of the other rows
    assert after.used == before.used + 1 and after.live == before.live == 40
    assert vault.meaning.vectors.blobs() == vault.index.rows_at()[1]
    assert vault.meaning.catch_up(vault.store, vault.index) == 0 and vault.embedder.inputs() == [
        vault.text("notes/n7.md")
    ]


def test_deletes_and_renames_drop_the_old_rows(vault: Vault) -> None:
    moved = vault.store.read("notes/n2.md")
    assert moved is not None
    vault.commit({"notes/n1.md": None, "notes/n2.md": None, "moved/n2.md": moved[0]})
    assert vault.meaning.catch_up(vault.store, vault.index) == 1
    assert vault.embedder.inputs() == [vault.text("moved/n2.md")]
    have = vault.meaning.vectors.blobs()
    assert "notes/n1.md" not in have and "notes/n2.md" not in have and have["moved/n2.md"] == moved[1]
    assert have == vault.index.rows_at()[1]
    ranked = [path for path, _score in vault.meaning.vectors.ranked(vault.embedder.embed(["query"])[0])]
    assert sorted(ranked) == sorted(have)  # the dead rows are never ranked


def test_wakes_that_pile_up_are_one_catch_up(vault: Vault) -> None:
    """Five writes while the thread embeds the first: one more catch-up, each changed note embedded once."""
    vault.embedder.hold = threading.Event()
    vault.commit({"notes/n0.md": b"# first\n"})
    vault.meaning.wake(vault.store, vault.index)
    assert vault.embedder.entered.wait(30)
    for i in range(1, 6):
        vault.commit({f"notes/n{i}.md": f"# later {i}\n".encode()})
        vault.meaning.wake(vault.store, vault.index)
    vault.commit({"notes/n3.md": b"# later 3 again\n"})  # changed twice: embedded once, as it is now
    vault.meaning.wake(vault.store, vault.index)
    vault.embedder.hold.set()
    assert vault.meaning.wait_idle(30)
    assert len(vault.embedder.calls) == 2, vault.embedder.calls
    assert vault.embedder.calls[0] == [vault.text("notes/n0.md")]
    assert sorted(vault.embedder.calls[1]) == sorted(vault.text(f"notes/n{i}.md") for i in range(1, 6))
    assert vault.meaning.vectors.blobs() == vault.index.rows_at()[1]


def _rows(n: int, tag: str, rng) -> list[tuple[str, str, float, bytes]]:
    vecs = rng.integers(-127, 128, size=(n, WIDTH), dtype=np.int8)
    return [(f"p{i}.md", f"{tag}{i}", float(rng.uniform(0.001, 0.01)), vecs[i].tobytes()) for i in range(n)]


def test_a_query_ranks_the_snapshot_it_took_while_rows_are_replaced_grown_and_compacted() -> None:
    rng = np.random.default_rng(7)
    rows = Rows()
    rows.put(_rows(600, "a", rng))
    snapshot = rows.snapshot()
    query = rng.standard_normal(WIDTH).astype(np.float32)
    expected = list(snapshot.ranked(query))
    lazily = snapshot.ranked(query)
    first = [next(lazily) for _ in range(10)]
    for tag in "bcdefg":  # replaced six times over: grown past its capacity, compacted on the way
        rows.put(_rows(600, tag, rng))
        rows.drop([f"p{i}.md" for i in range(0, 600, 7)])
        rows.put([(f"p{i}.md", f"{tag}x{i}", 0.005, bytes(WIDTH)) for i in range(0, 600, 7)])
        rows.snapshot()
    assert first + list(lazily) == expected
    assert list(snapshot.ranked(query)) == expected
    latest = rows.snapshot()
    assert latest.used == latest.live == 600  # compacted: the dead rows are gone


def test_a_query_during_publications_sees_every_note_once() -> None:
    """One thread replaces every row, again and again, publishing each time; queries at once each see every
    path exactly once, with a score of one of its two vectors."""
    rng = np.random.default_rng(3)
    versions = [_rows(300, tag, rng) for tag in "ab"]
    rows, lock = Rows(), threading.Lock()
    rows.put(versions[0])
    published = [rows.snapshot()]
    query = rng.standard_normal(WIDTH).astype(np.float32)
    scores: dict[str, list[float]] = {}
    for version in versions:
        for path, _b, scale, vec in version:
            score = float(np.frombuffer(vec, dtype=np.int8).astype(np.float32) @ query) * scale
            scores.setdefault(path, []).append(score)
    stop = threading.Event()

    def write() -> None:
        turn = 0
        while not stop.is_set():
            turn += 1
            for start in range(0, 300, 37):
                with lock:
                    rows.put(versions[turn % 2][start : start + 37])
                    published[0] = rows.snapshot()

    writer = threading.Thread(target=write)
    writer.start()
    try:
        for _ in range(200):
            got = list(published[0].ranked(query))
            assert sorted(p for p, _s in got) == sorted(scores)
            for path, score in got:
                assert any(abs(score - s) < 1e-3 for s in scores[path]), (path, score)
    finally:
        stop.set()
        writer.join()


PATHS = [f"{folder}n{i}.md" for folder in ("", "a/", "a/b/") for i in range(4)]
STEPS = st.lists(
    st.one_of(
        st.tuples(st.just("write"), st.sampled_from(PATHS), st.sampled_from(["x", "y", "z", "x y"])),
        st.tuples(st.just("delete"), st.sampled_from(PATHS), st.just("")),
        st.tuples(st.just("rename"), st.sampled_from(PATHS), st.sampled_from(PATHS)),
        st.tuples(st.just("catch-up"), st.just(""), st.just("")),
    ),
    max_size=14,
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=STEPS)
def test_incremental_vectors_equal_the_index_and_rank_as_a_full_build(steps) -> None:
    small = meaning_rows.COMPACT_MIN_DEAD
    meaning_rows.COMPACT_MIN_DEAD = 2  # compaction within a few writes
    with tempfile.TemporaryDirectory() as tmp:
        v = Vault(Path(tmp))
        fresh = None
        try:
            files: dict[str, bytes] = {}
            v.commit({"seed.md": b"# seed\n"})
            for op, path, arg in steps:
                change: dict[str, bytes | None] = {}
                if op == "write":
                    change[path] = f"# {path}\n\n{arg}\n".encode()
                elif op == "delete" and path in files:
                    change[path] = None
                elif op == "rename" and path in files and arg != path:
                    change.update({path: None, arg: files[path]})
                elif op == "catch-up":
                    v.meaning.catch_up(v.store, v.index)
                if change:
                    v.commit(change)
                    for p, data in change.items():
                        if data is None:
                            files.pop(p, None)
                        else:
                            files[p] = data
            v.meaning.catch_up(v.store, v.index)
            assert v.meaning.vectors.blobs() == v.index.rows_at()[1]
            fresh = MeaningIndex(Path(tmp) / "fresh.sqlite", embedder=lambda: v.embedder)
            fresh.catch_up(v.store, v.index)
            query = v.embedder.embed(["x y"])[0]
            mine, theirs = list(v.meaning.vectors.ranked(query)), list(fresh.vectors.ranked(query))
            assert sorted(p for p, _ in mine) == sorted(p for p, _ in theirs)
            by_path = dict(theirs)
            for path, score in mine:  # the same score per note, so the same order up to ties
                assert abs(score - by_path[path]) < 1e-5
            for ranking in (mine, theirs):
                assert all(a[1] >= b[1] - 1e-6 for a, b in itertools.pairwise(ranking))
        finally:
            meaning_rows.COMPACT_MIN_DEAD = small
            if fresh is not None:
                fresh.close()
            v.close()
