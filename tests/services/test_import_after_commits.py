"""``import_folder(after_commits=...)``: the work to do once every batch is pushed (the CLI's final repack)
runs beside the index's catch-up, in a thread, and only then: never after a refused batch, never in a dry
run or when nothing was committed.  The import returns once both are done, and an error of either is raised."""

from __future__ import annotations

import threading
from pathlib import Path

import pygit2
import pytest

from notegate.config import load_config
from notegate.errors import NotegateError
from notegate.services.importer import import_folder, importing_caller
from notegate.services.notes import NotesService
from notegate.services.runtime import Runtime
from support import set_policy


@pytest.fixture
def src(tmp_path: Path) -> Path:
    folder = tmp_path / "src"
    folder.mkdir()
    for i in range(7):
        (folder / f"note{i}.md").write_text(f"# Note {i}\n\nwren{i}\n")
    return folder


def _import(rt: Runtime, env, src: Path, **kw):
    return import_folder(NotesService(rt), env, importing_caller("owner"), src, message="Import", **kw)


def test_after_commits_runs_once_after_the_last_push_beside_the_catch_up(vault: Path, src: Path) -> None:
    set_policy(vault, max_files_per_commit=3)
    rt = Runtime(load_config(vault))
    try:
        env = rt.environment(None)
        origin = pygit2.Repository(str(vault.parent / "origin.git"))
        seen: list[tuple[str, str | None]] = []
        pushed: list[str] = []

        def after() -> None:
            seen.append((threading.current_thread().name, str(origin.references["refs/heads/main"].target)))
            env.store.repack(deltas=False)

        report = _import(rt, env, src, after_commits=after, on_commit=lambda c, _d, _t: pushed.append(c))
        assert len(report.commits) == 3 and pushed == report.commits
        assert len(seen) == 1
        thread, origin_main = seen[0]
        assert thread != threading.current_thread().name  # beside the catch-up, not after it
        assert origin_main == report.commit  # the last batch was pushed before it ran
        assert env.index.indexed_commit == report.commit  # both done when the import returns
        assert {hit.path for hit in env.index.search("wren5")} == {"note5.md"}
        loose = [p for p in (Path(env.store.repo_dir) / "objects").glob("??/*")]
        assert loose == []  # the repack packed what the batches left loose
    finally:
        rt.close()


def test_after_commits_does_not_run_in_a_dry_run_or_when_nothing_is_committed(vault: Path, src: Path) -> None:
    rt = Runtime(load_config(vault))
    calls: list[int] = []
    try:
        env = rt.environment(None)
        _import(rt, env, src, dry_run=True, after_commits=lambda: calls.append(1))
        assert calls == []
        _import(rt, env, src)
        again = _import(rt, env, src, after_commits=lambda: calls.append(1))  # all unchanged: no commit
        assert again.commits == [] and len(again.unchanged) == 7
        assert calls == []
    finally:
        rt.close()


def test_after_commits_does_not_run_after_a_refused_batch(vault: Path, src: Path) -> None:
    set_policy(vault, max_files_per_commit=3)
    origin = vault.parent / "origin.git"
    away = vault.parent / "origin-away.git"

    def origin_goes_away(_commit: str, done: int, _total: int) -> None:
        if done == 3:
            origin.rename(away)

    rt = Runtime(load_config(vault))
    calls: list[int] = []
    try:
        env = rt.environment(None)
        with pytest.raises(NotegateError) as info:
            _import(rt, env, src, on_commit=origin_goes_away, after_commits=lambda: calls.append(1))
        assert info.value.rule == "origin-unavailable"
        assert calls == []
        assert env.index.indexed_commit == env.store.head()  # the pushed batch is still indexed
    finally:
        away.rename(origin)
        rt.close()


def test_an_error_after_the_commits_is_raised_once_the_catch_up_is_done(vault: Path, src: Path) -> None:
    rt = Runtime(load_config(vault))
    try:
        env = rt.environment(None)

        def broken() -> None:
            raise RuntimeError("repack broke")

        with pytest.raises(RuntimeError, match="repack broke"):
            _import(rt, env, src, after_commits=broken)
        assert env.index.indexed_commit == env.store.head()
    finally:
        rt.close()
