"""`notegate sync` commits through the server's recipe: the planner's plan, run by ``run_plan`` on the clone.

Against a real `notegate init` origin (its pre-receive hook judges the push) and a real workstation clone:
the commit sync pushes is the one ``run_plan`` made from a :class:`Plan` (``Intent(op="sync")``, no
bookkeeping on a workstation: it has no state database), a refused change is never made from a plan, and
``run_plan`` refuses anything but a plan before it touches the target."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pygit2
import pytest

from notegate.config import load_config
from notegate.policy.plan import Bookkeeping, Plan, Refusal
from notegate.services import recipe
from notegate.sync import daemon
from notegate.sync.daemon import EXIT_LEFT_OUT, EXIT_OK, Syncer
from notegate.sync.workclone import MAIN
from notegate.vault.store import Author, Change
from support.gitstreams import CLEAN_ENV, Origin

AGO = 120.0


def _clone(door: Origin, where: Path) -> Path:
    subprocess.run(["git", "clone", "-q", str(door.origin), str(where)], check=True, timeout=60, env=CLEAN_ENV)
    return where


def _write(ws: Path, rel: str, text: str) -> None:
    path = ws / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    then = time.time() - AGO
    os.utime(path, (then, then))


@pytest.fixture
def runs(monkeypatch: pytest.MonkeyPatch) -> list[tuple[object, object, str]]:
    """Every ``run_plan`` sync asks for: (target, plan, commit made)."""
    seen: list[tuple[object, object, str]] = []
    real = recipe.run_plan

    def spy(target, planned, *args, **kwargs):
        result = real(target, planned, *args, **kwargs)
        seen.append((target, planned, result.commit))
        return result

    monkeypatch.setattr(daemon, "run_plan", spy)
    return seen


def test_sync_pushes_the_commit_the_recipe_made_from_the_planners_plan(door: Origin, tmp_path: Path, runs) -> None:
    laptop = _clone(door, tmp_path / "laptop")
    _write(laptop, "notes/from-laptop.md", "# from the laptop\n")
    _write(laptop, "notes/CLAUDE.md", "# instructions\n")  # refused: left out, never made from a plan
    syncer = Syncer(laptop, load_config(door.config).policy, owner="owner", device="laptop", git_env=CLEAN_ENV)

    report = syncer.tick()

    assert report.code == EXIT_LEFT_OUT, report.lines()
    assert [(f.path, f.rule) for f in report.left_out] == [("notes/CLAUDE.md", "instruction-file-name")]
    assert len(runs) == 1
    target, planned, made = runs[0]
    assert isinstance(target, recipe.CloneTarget) and isinstance(planned, Plan)
    assert [path for path, _decision in planned.files] == ["notes/from-laptop.md"]
    assert planned.bookkeeping == Bookkeeping()  # a workstation keeps no books: it has no state database
    origin = pygit2.Repository(str(door.origin))
    assert str(origin.references[MAIN].target) == made == report.pushed
    assert origin[made].message.endswith("Synced-From: sync:laptop\n")


def test_an_unchanged_clone_makes_no_commit(door: Origin, tmp_path: Path, runs) -> None:
    laptop = _clone(door, tmp_path / "laptop")
    syncer = Syncer(laptop, load_config(door.config).policy, owner="owner", device="laptop", git_env=CLEAN_ENV)
    assert syncer.tick().code == EXIT_OK
    assert runs == []


class _Target:
    def __init__(self) -> None:
        self.asked = 0

    def commit(self, changes, author, message):
        self.asked += 1
        raise AssertionError("a refusal reached the target")


def test_run_plan_commits_only_a_plan() -> None:
    target = _Target()
    with pytest.raises(TypeError):
        recipe.run_plan(
            target,
            Refusal("instruction-file-name", "refused", "notes/CLAUDE.md"),  # type: ignore[arg-type]
            [Change("notes/CLAUDE.md", b"x")],
            Author("owner", "owner"),
            "m\n",
            books=None,
        )
    assert target.asked == 0
