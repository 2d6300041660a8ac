"""Properties of judging a range whole: splitting a change across commits never changes the verdict; the git
door's twins are the store's collisions; reading what a push stored is linear in what it stored."""

from __future__ import annotations

import subprocess
from dataclasses import replace
from pathlib import Path

import pygit2
import pytest
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from notegate.policy import Policy
from notegate.sync.incoming import inspect_update
from notegate.sync.quarantine import read_quarantine, unreferenced
from notegate.vault.paths import case_twin
from notegate.vault.store import Listing
from support.gitstreams import FILE, commit
from support.timing import assert_catches_quadratic, assert_linear, fill

POLICY = replace(Policy(), max_deletions_per_commit=2, max_files_per_commit=3)
PATHS = ("a/n0.md", "a/n1.md", "a/n2.md", "a/N0.md", "b/m0.md", "b/m1.md", "B/m2.md", "c/d/x.md", "c/d/y.md", "e.md")
TEXTS = (b"# one\nlorem ipsum dolor\n", b"# two\nsit amet\n", b"# one\nlorem ipsum dolor sit\n", b"", b"  \n\n")
SLOW = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

trees = st.dictionaries(st.sampled_from(PATHS), st.sampled_from(TEXTS), max_size=len(PATHS))


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> pygit2.Repository:
    return pygit2.init_repository(str(tmp_path_factory.mktemp("range") / "r.git"), bare=True)


def _step(repo: pygit2.Repository, parent: str, changes: dict[str, bytes | None]) -> str:
    return commit(
        repo,
        [parent],
        add={p: (FILE, t) for p, t in changes.items() if t is not None},
        delete=tuple(p for p, t in changes.items() if t is None),
    )


_ONE = b"# one\nlorem ipsum dolor\n"


@SLOW
@given(base=trees, target=trees, buckets=st.lists(st.integers(0, 4), min_size=len(PATHS), max_size=len(PATHS)))
@example(  # too many files while emptying notes: was named too-many-deletions in one order, too-many-files in the other
    base={"a/n0.md": _ONE, "a/n1.md": _ONE, "a/N0.md": _ONE, "b/m0.md": _ONE},
    target={
        "a/n0.md": _ONE,
        "a/n1.md": b"",
        "a/n2.md": _ONE,
        "a/N0.md": b"",
        "b/m0.md": b"",
        "b/m1.md": _ONE,
        "B/m2.md": _ONE,
        "c/d/x.md": _ONE,
    },
    buckets=[0, 0, 0, 0, 0, 0, 0, 1, 0, 0],
)
def test_splitting_a_change_across_commits_never_changes_the_verdict(
    repo: pygit2.Repository, base: dict[str, bytes], target: dict[str, bytes], buckets: list[int]
) -> None:
    start = commit(repo, [], add={p: (FILE, t) for p, t in base.items()})
    changes = {p: target.get(p) for p in PATHS if base.get(p) != target.get(p)}
    whole = inspect_update(repo, start, _step(repo, start, changes), POLICY)
    tip = start
    for k in range(5):
        part = {p: t for p, t in changes.items() if buckets[PATHS.index(p)] == k}
        if part:
            tip = _step(repo, tip, part)
    split = inspect_update(repo, start, tip, POLICY)
    assert split.rules() == whole.rules(), (split.findings, whole.findings)
    assert split.ok == whole.ok  # the range never accepts what the single commit refuses, nor the reverse


SEGMENTS = ("a", "A", "ß", "ss", "SS", "é", "É", "x")
paths = st.lists(st.sampled_from(SEGMENTS), min_size=1, max_size=3).map(lambda parts: "/".join(parts) + ".md")


@SLOW
@given(first=paths, second=paths)
def test_the_git_doors_twins_are_the_stores_collisions(repo: pygit2.Repository, first: str, second: str) -> None:
    assume(first != second and not first.startswith(second[:-3] + "/") and not second.startswith(first[:-3] + "/"))
    assume(not first.startswith(second + "/") and not second.startswith(first + "/"))
    start = commit(repo, [], add={first: (FILE, b"# first\n")})
    tip = commit(repo, [start], add={second: (FILE, b"# second\n")})
    refused = "path-case-collision" in inspect_update(repo, start, tip, POLICY).rules()
    assert refused == (case_twin(second, first) is not None)
    listing = Listing(commit=None)
    listing.add(first, "0" * 40)
    store_says = listing.collision(second) is not None
    if first.count("/") == second.count("/"):
        assert store_says == refused
    else:  # the store also keeps a note and a folder apart; the git door refuses those twins too
        assert not store_says or refused


# ---------------------------------------------------------------- reading git's quarantine is linear

CHARS_PER_OBJECT = 64  # 16 KiB -> 256 blobs, 128 KiB -> 2,048 blobs


def test_reading_what_a_push_stored_costs_in_proportion(tmp_path: Path) -> None:
    cases: dict[int, tuple[pygit2.Repository, pygit2.Repository, Path, str]] = {}
    origin = pygit2.init_repository(str(tmp_path / "origin.git"), bare=True)

    def build(size: int) -> str:
        repo = pygit2.init_repository(str(tmp_path / f"r{size}.git"), bare=True)
        files = {f"n/{i % 32}/x{i}.md": (FILE, f"note {i}\n".encode()) for i in range(size // CHARS_PER_OBJECT)}
        tip = commit(repo, [], add=files)
        quarantine = tmp_path / f"q{size}"
        (quarantine / "pack").mkdir(parents=True)
        listed = subprocess.run(
            ["git", "--git-dir", repo.path, "rev-list", "--objects", tip], capture_output=True, check=True
        ).stdout
        subprocess.run(
            ["git", "--git-dir", repo.path, "pack-objects", "-q", str(quarantine / "pack" / "pack")],
            input=b"\n".join(line.split(b" ", 1)[0] for line in listed.splitlines()) + b"\n",
            capture_output=True,
            check=True,
        )
        cases[size] = (repo, origin, quarantine, tip)
        return fill("x", size)

    def run(text: str) -> None:
        repo, origin, quarantine, tip = cases[len(text)]
        stored = read_quarantine(quarantine)
        assert len(stored.objects) > len(text) // CHARS_PER_OBJECT
        assert unreferenced(repo, origin, [tip], stored.objects) == 0

    print(assert_linear(run, build))


def test_the_stick_catches_quadratic_at_these_sizes() -> None:
    assert_catches_quadratic(lambda n: fill("x", n))
