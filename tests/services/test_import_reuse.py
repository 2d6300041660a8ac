"""The import reuses what it already holds instead of asking the disk or git again: the size ``scan_source``'s
``lstat`` found (no second ``stat`` of every file) and, for the search index's one catch-up after the last
batch, the bytes it has just committed (no read of every new note back from git).  Nothing else changes: the
size limit still refuses with its rule, and the index holds exactly what git holds."""

from __future__ import annotations

from pathlib import Path

import pytest

from notegate.config import load_config
from notegate.services import importer
from notegate.services.importer import scan_source
from notegate.services.runtime import Environment, Runtime
from notegate.vault.store import VaultStore
from support import set_policy
from support.importing import rules, run


@pytest.fixture
def env(rt: Runtime) -> Environment:
    return rt.environment(None)


def test_scan_source_gives_each_candidates_size_from_its_lstat(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_bytes(b"12345")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.png").write_bytes(b"x" * 300)
    candidates, _skipped, _refused = scan_source(tmp_path)
    assert [(rel, size) for rel, _full, size in candidates] == [("a.md", 5), ("sub/b.png", 300)]


def test_the_size_limit_uses_the_scanned_size_and_still_names_its_rule(
    vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "big.md").write_bytes(b"# big\n" + b"x" * 200)
    (src / "small.md").write_bytes(b"# small\n")
    set_policy(vault, max_note_bytes=100)
    rt = Runtime(load_config(vault))
    try:
        env = rt.environment(None)

        def no_stat(self, *args, **kwargs):
            raise AssertionError(f"a second stat of {self}")

        with monkeypatch.context() as patched:
            patched.setattr(Path, "stat", no_stat)  # the size comes from the scan's lstat alone
            report = run(rt, env, src, dry_run=True)
    finally:
        rt.close()
    assert rules(report) == {"big.md": "note-too-large"}
    assert report.added == ["small.md"]


def test_a_note_that_grows_after_the_scan_is_still_refused(
    vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The scanned size only spares the read of a file known to be too big: the bytes actually read are
    decided again (``decide_content``), so a note that grew past the limit meanwhile is refused too."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "grows.md").write_bytes(b"# small\n")
    set_policy(vault, max_note_bytes=100)
    real_scan = importer.scan_source

    def scan_then_grow(where: Path):
        found = real_scan(where)
        (where / "grows.md").write_bytes(b"# big now\n" + b"x" * 200)
        return found

    monkeypatch.setattr(importer, "scan_source", scan_then_grow)
    rt = Runtime(load_config(vault))
    try:
        report = run(rt, rt.environment(None), src, dry_run=True)
    finally:
        rt.close()
    assert rules(report) == {"grows.md": "note-too-large"}
    assert report.added == []


def test_the_catch_up_indexes_the_committed_bytes_without_reading_them_back(
    env: Environment, rt: Runtime, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    src = tmp_path / "src"
    src.mkdir()
    for i in range(5):
        (src / f"note{i}.md").write_text(f"# Note {i}\n\nkestrel{i}\n")
    reads: list[str] = []
    real = VaultStore.read_unverified_blob_fast

    def counted(self, blob_id: str) -> bytes:
        reads.append(blob_id)
        return real(self, blob_id)

    monkeypatch.setattr(VaultStore, "read_unverified_blob_fast", counted)
    report = run(rt, env, src)
    assert len(report.added) == 5
    assert reads == []  # every new note was in hand
    assert env.index.indexed_commit == report.commit
    assert {hit.path for hit in env.index.search("kestrel3")} == {"note3.md"}
    # and what was indexed is what git holds: a rebuild from git alone gives the same rows
    indexed = env.index.paths()
    env.index.rebuild(env.store)
    assert env.index.paths() == indexed
    assert {hit.path for hit in env.index.search("kestrel3")} == {"note3.md"}


def test_a_catch_up_reads_from_git_any_blob_it_was_not_given(env: Environment, rt: Runtime, tmp_path: Path) -> None:
    """``known`` only spares reads: a blob missing from it, or a catch-up without it, reads git as before."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "a.md").write_text("# A\n\nheron\n")
    (src / "b.md").write_text("# B\n\nplover\n")
    store = env.store
    index = env.index
    run_report = run(rt, env, src)
    index._reclassify()  # start over (as a policy change does), then catch up with one of the two blobs in hand
    listing = store.listing().notes
    blob_a = listing["a.md"]
    assert index.catch_up(store, known={blob_a: b"# A\n\nheron\n"}) == len(listing)
    assert index.indexed_commit == run_report.commit
    assert {hit.path for hit in index.search("heron")} == {"a.md"}
    assert {hit.path for hit in index.search("plover")} == {"b.md"}
