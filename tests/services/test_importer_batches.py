"""`notegate import` commits in batches the git door accepts (at most max_files_per_commit new files each),
so the server's own fetch and the pre-receive hook never refuse an import; a batch that fails leaves the
pushed ones, says how far it got, and running the same import again resumes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pygit2
import pytest

from notegate.config import load_config
from notegate.errors import NotegateError
from notegate.services.importer import import_folder, importing_caller
from notegate.services.notes import NotesService
from notegate.services.runtime import Runtime
from notegate.sync.incoming import inspect_update
from support import set_policy

LIMIT = 3


@pytest.fixture
def limited(vault: Path) -> Path:
    set_policy(vault, max_files_per_commit=LIMIT)
    return vault


@pytest.fixture
def src(tmp_path: Path) -> Path:
    folder = tmp_path / "src"
    for i in range(8):
        (folder / f"topic{i % 2}").mkdir(parents=True, exist_ok=True)
        (folder / f"topic{i % 2}" / f"note{i}.md").write_text(f"# Note {i}\n\nbody {i}\n", encoding="utf-8")
    (folder / "rules").mkdir()
    (folder / "rules" / "planted.md").write_text("# Rules\n\nobey\u200b\n", encoding="utf-8")
    return folder


def origin_of(vault: Path) -> pygit2.Repository:
    return pygit2.Repository(str(vault.parent / "origin.git"))


def test_a_big_import_is_batches_the_validator_accepts(limited: Path, src: Path) -> None:
    rt = Runtime(load_config(limited))
    try:
        env = rt.environment(None)
        before = env.store.head()
        seen: list[tuple[int, int]] = []
        report = import_folder(
            NotesService(rt),
            env,
            importing_caller("owner"),
            src,
            message="Import test",
            on_commit=lambda _c, done, total: seen.append((done, total)),
            allow_policy_folders=True,  # the vault's rules/ is meant as the policy's: the floor still holds
        )
        assert len(report.added) == 8 and len(report.commits) == 3 and report.commit == report.commits[-1]
        assert seen == [(3, 8), (6, 8), (8, 8)]
        # the note the floor holds where sessions load it is refused on its own, with the git door's rule
        assert report.refused == [("rules/planted.md", report.refused[0][1])]
        assert report.refused[0][1].startswith("protected-floor-hold: ")
        origin = origin_of(limited)
        messages = [origin[c].message.splitlines()[0] for c in report.commits]
        assert messages == ["Import test (1/3)", "Import test (2/3)", "Import test (3/3)"]
        for old, new in zip((before, *report.commits), report.commits, strict=False):  # each batch is one push
            inspection = inspect_update(origin, old, new, load_config(limited).policy)
            assert inspection.ok and inspection.commits == 1, [f.line() for f in inspection.findings]
        assert str(origin.references["refs/heads/main"].target) == report.commit
    finally:
        rt.close()


def test_a_failed_batch_says_how_far_it_got_and_the_same_import_resumes(limited: Path, src: Path) -> None:
    origin = limited.parent / "origin.git"
    away = limited.parent / "origin-away.git"

    def origin_goes_away(_commit: str, done: int, _total: int) -> None:
        if done == LIMIT:  # after the first batch is pushed, the origin disappears
            origin.rename(away)

    rt = Runtime(load_config(limited))
    try:
        env = rt.environment(None)
        with pytest.raises(NotegateError) as info:
            import_folder(
                NotesService(rt), env, importing_caller("owner"), src, message="Import", on_commit=origin_goes_away
            )
        assert info.value.rule == "origin-unavailable"
        text = info.value.explain()
        assert "the import stopped at its commit 2: 3 of 8 files were imported in 1 commit(s)" in text
        assert "run the same notegate import again" in text
        away.rename(origin)
        assert len(env.store.listing().notes) == 8 + 3  # the default layout and the first batch, pushed
        again = import_folder(NotesService(rt), env, importing_caller("owner"), src, message="Import")
        assert len(again.unchanged) == 3 and len(again.added) == 5 and len(again.commits) == 2
    finally:
        rt.close()


def test_the_cli_reports_every_commit(limited: Path, src: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "notegate.cli", "import", "--config", str(limited), str(src), "--quiet", "--json"],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert done.returncode == 1, done.stderr  # rules/planted.md is refused, the rest imported
    report = json.loads(done.stdout)
    assert [(p, r.split(":", 1)[0]) for p, r in report["refused"]] == [("rules/planted.md", "import-policy-folder")]
    assert len(report["commits"]) == 3 and report["commit"] == report["commits"][-1]
    assert str(origin_of(limited).references["refs/heads/main"].target) == report["commit"]
