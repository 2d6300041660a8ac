"""The validator is linear: a commit with 8x the files, or 8x the files ten folders deep, costs ~8x
(tests/support/timing.py's ratio, never an absolute time)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pygit2

from notegate.policy import Policy
from notegate.sync.incoming import inspect_update
from support.gitstreams import FILE, commit
from support.timing import assert_catches_quadratic, assert_linear, fill

POLICY = replace(Policy(), max_files_per_commit=100_000)
CHARS_PER_FILE = 64  # 16 KiB -> 256 files, 128 KiB -> 2,048 files


def _flat(i: int) -> str:
    return f"notes/n{i:05}.md"


def _deep(i: int) -> str:
    return f"a{i % 16}/b/c/d/e/f/g/h/i/j{i}/note.md"  # ten folders deep, a tree per file at the bottom


def _shape(tmp: Path, path_of: Callable[[int], str]):
    repos: dict[int, tuple[pygit2.Repository, str]] = {}

    def build(size: int) -> str:
        repo = pygit2.init_repository(str(tmp / f"r{size}"), bare=True)
        files = {path_of(i): (FILE, f"note {i}\n".encode()) for i in range(size // CHARS_PER_FILE)}
        repos[size] = (repo, commit(repo, [], add=files))
        return fill("x", size)

    def run(text: str) -> None:
        repo, tip = repos[len(text)]
        inspection = inspect_update(repo, None, tip, POLICY)
        assert inspection.ok and inspection.commits == 1, inspection.findings

    return run, build


def test_a_commit_with_many_files_costs_in_proportion(tmp_path: Path) -> None:
    run, build = _shape(tmp_path, _flat)
    print(assert_linear(run, build))


def test_a_deep_tree_costs_in_proportion(tmp_path: Path) -> None:
    run, build = _shape(tmp_path, _deep)
    print(assert_linear(run, build))


def test_the_stick_catches_quadratic_at_these_sizes() -> None:
    assert_catches_quadratic(lambda n: fill("x", n))
