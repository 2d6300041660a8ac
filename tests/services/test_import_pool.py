"""The import's pool of processes (the reading, decoding, credential scan and links of each note) changes
nothing but the speed: the same report, in the same order, with or without it; a credential found in a
worker is refused with its exact rule; and the search index, caught up once after the last batch instead of
once per batch, ends at the import's last commit holding every imported note."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from notegate.config import load_config
from notegate.services import importer
from notegate.services.importer import _examine_one
from notegate.services.runtime import Environment, Runtime
from support import set_policy
from support.importing import AWS_KEY, obsidian_vault, run


@pytest.fixture
def env(rt: Runtime) -> Environment:
    return rt.environment(None)


FIELDS = ("added", "attachments", "unchanged", "skipped", "refused", "landed", "renamed", "converted", "missing_links")


def test_the_pool_reports_exactly_what_the_inline_path_does(
    rt: Runtime, env: Environment, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    src = obsidian_vault(tmp_path)
    for i in range(40):  # more notes than one chunk holds, a key among them: order across chunks counts
        (src / f"many/n{i:02}.md").parent.mkdir(exist_ok=True)
        (src / f"many/n{i:02}.md").write_text(f"# {i}\n\n[[n{i + 1:02}]]\n" + (f"k = {AWS_KEY}\n" if i == 17 else ""))
    monkeypatch.setattr(importer, "POOL_FROM", 10**9)
    inline = run(rt, env, src, dry_run=True)
    monkeypatch.setattr(importer, "POOL_CHUNK", 7)  # chunked inline: the same report too
    chunked = run(rt, env, src, dry_run=True)
    monkeypatch.setattr(importer, "POOL_FROM", 0)
    pooled = run(rt, env, src, dry_run=True)
    monkeypatch.setattr(importer, "POOL_AHEAD", 1)  # fewer chunks in flight than the import has: taken back in order
    bounded = run(rt, env, src, dry_run=True)
    for name in FIELDS:
        assert getattr(pooled, name) == getattr(inline, name) == getattr(chunked, name), name
        assert getattr(bounded, name) == getattr(inline, name), name
    refused = dict(pooled.refused)
    assert refused["many/n17.md"].split(":", 1)[0] == "credential-warning"
    assert refused["Keys.md"].split(":", 1)[0] == "credential-warning"
    assert ("many/n39.md", "[[n40]]") in pooled.missing_links


texts = st.text(st.characters(blacklist_categories=("Cs",)), max_size=200)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    parts=st.lists(st.one_of(texts, st.just(AWS_KEY), st.just("[[Some note]]")), max_size=6), raw=st.binary(max_size=64)
)
def test_a_chunk_in_a_worker_is_the_same_as_each_file_inline(tmp_path: Path, parts: list[str], raw: bytes) -> None:
    a = tmp_path / "a.md"
    a.write_text("\n".join(parts), encoding="utf-8")
    b = tmp_path / "b.md"
    b.write_bytes(raw)  # often not UTF-8: the refusal line must be the same too
    c = tmp_path / "c.png"
    c.write_bytes(raw)
    work = [(str(a), True, None), (str(b), True, None), (str(b), True, "cp1252"), (str(c), False, None)]
    assert importer._examine(work) == [_examine_one(item) for item in work]


def test_the_index_is_caught_up_once_after_the_last_batch(
    vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    src = tmp_path / "src"
    src.mkdir()
    for i in range(7):
        (src / f"note{i}.md").write_text(f"# Note {i}\n\nzebrafinch{i}\n")
    set_policy(vault, max_files_per_commit=3)
    rt = Runtime(load_config(vault))
    try:
        env = rt.environment(None)
        calls: list[str | None] = []
        real = env.index.catch_up

        def counted(store, progress=None, **kw):
            calls.append(store.head())
            return real(store, progress, **kw)

        monkeypatch.setattr(env.index, "catch_up", counted)
        report = run(rt, env, src)
        assert len(report.commits) == 3
        assert calls == [report.commit]  # once, at the end, at the last commit
        assert env.index.indexed_commit == report.commit
        assert {hit.path for hit in env.index.search("zebrafinch3")} == {"note3.md"}
    finally:
        rt.close()


@pytest.mark.skipif((importer.os.cpu_count() or 1) < 2, reason="one core: the import reads inline, no pool")
def test_the_pool_holds_at_most_a_few_chunks_in_flight(
    rt: Runtime, env: Environment, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Chunks are handed out as the earlier ones come back, not all at once: the results (every file's bytes)
    do not pile up in the pool's queue."""
    src = tmp_path / "src"
    src.mkdir()
    for i in range(60):
        (src / f"n{i:02}.md").write_text(f"# {i}\n")
    in_flight: list[int] = []
    real_submit = importer.ProcessPoolExecutor.submit

    def submit(self, fn, *args, **kwargs):
        future = real_submit(self, fn, *args, **kwargs)
        in_flight.append(sum(1 for f in self._pending_work_items.values() if not f.future.done()))
        return future

    monkeypatch.setattr(importer.ProcessPoolExecutor, "submit", submit)
    monkeypatch.setattr(importer, "POOL_FROM", 0)
    monkeypatch.setattr(importer, "POOL_CHUNK", 4)
    monkeypatch.setattr(importer, "POOL_AHEAD", 1)
    report = run(rt, env, src, dry_run=True)
    assert len(report.added) == 60
    assert len(in_flight) == 15  # every chunk was handed out
    assert max(in_flight) <= (importer.os.cpu_count() or 1) + 1  # ahead per worker, plus the one just given
