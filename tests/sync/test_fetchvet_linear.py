"""The fetch vet is linear: judging a reverted mass commit (too many files, then a git revert on top --
itself too many deletions, of files the server never had) costs in proportion to the commit's size
(tests/support/timing.py's ratio, never an absolute time)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pygit2

from notegate.policy import Policy
from notegate.sync.fetchvet import vet_fetch
from support.gitstreams import FILE, commit
from support.timing import assert_catches_quadratic, assert_linear, fill

POLICY = replace(Policy(), max_files_per_commit=10)
CHARS_PER_FILE = 64  # 16 KiB -> 256 files, 128 KiB -> 2,048 files


def test_a_reverted_mass_commit_costs_in_proportion(tmp_path: Path) -> None:
    repos: dict[int, tuple[pygit2.Repository, str, str]] = {}

    def build(size: int) -> str:
        repo = pygit2.init_repository(str(tmp_path / f"r{size}"), bare=True)
        good = commit(repo, [], add={"notes/base.md": (FILE, b"# base\n")})
        files = {f"a{i % 16}/b/c/n{i}.md": (FILE, f"note {i}\n".encode()) for i in range(size // CHARS_PER_FILE)}
        mass = commit(repo, [good], add=files)
        reverted = commit(repo, [mass], base=good)
        repos[size] = (repo, good, reverted)
        return fill("x", size)

    def run(text: str) -> None:
        repo, good, tip = repos[len(text)]
        verdict = vet_fetch(repo, good, tip, POLICY)
        assert verdict.ok and verdict.inspection.rules() == ["too-many-deletions", "too-many-files"], verdict.counted

    print(assert_linear(run, build))


def test_the_stick_catches_quadratic_at_these_sizes() -> None:
    assert_catches_quadratic(lambda n: fill("x", n))
