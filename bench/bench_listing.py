"""The store's listing at scale: its build at start, and what one write's tip move costs it.

Runs on an existing bare repository read-only (e.g. a 100k vault's ``origin.git`` made by
``bench_scale.py``): a throwaway bare repository borrows its objects (``objects/info/alternates``) and
points ``main`` at the same commit, so nothing is written to the source.  Measures CPU time
(``time.process_time``: on a loaded machine, waiting is not counted):

1. the listing's full build (the start-up listing: walk + classify every path + the case index);
2. ``--writes`` one-note commits made straight in the throwaway repository (``build_tree``, no push), each
   followed by the listing catching up with the new tip (the cost a write or the first read after it pays)
   and a read of that note through the listing (``blob_id`` + ``read``): p50 and p95 of each.  Alternate
   commits are remembered as the store's own group commit remembers its range (what a write through the
   server pays: no tree diff) or left to the tree diff (what a fetched commit pays); reported apart.

Without ``--repo`` it generates a vault (``genvault.py``, ``--notes``; ``--quick``: 1,000) and commits it
into a bare repository first, so ``run_all.py`` can run it unattended.

Compare main and a branch back to back under the same load (``PYTHONPATH=<a copy of main's src>``), and
report ratios.  ``--profile`` prints the top of a cProfile of the build.

    .venv/bin/python bench/bench_listing.py --repo var/scale/direct-100000/vault/origin.git
    .venv/bin/python bench/bench_listing.py --notes 10000
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pygit2

sys.path.insert(0, str(Path(__file__).resolve().parent))
import genvault  # a sibling script, not a package
from notegate.vault.store import MAIN_REF, Change, VaultStore, _Range, build_tree


def borrowed(source: Path, into: Path) -> Path:
    """A bare repository at ``into`` with ``source``'s objects (never written) and its main."""
    src = pygit2.Repository(str(source))
    tip = src.references[MAIN_REF].target
    repo = pygit2.init_repository(str(into), bare=True, initial_head="main")
    (into / "objects" / "info" / "alternates").write_text(f"{(source / 'objects').resolve()}\n")
    repo = pygit2.Repository(str(into))
    repo.references.create(MAIN_REF, tip, force=True)
    return into


def generated(notes: int, work: Path) -> Path:
    """A bare repository holding one commit of a generated vault."""
    genvault.generate(work / "src", notes, 1)
    bare = work / "source.git"
    git = ["git", "-c", "user.name=bench", "-c", "user.email=bench@notegate", f"--git-dir={bare}"]
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(bare)], check=True)
    subprocess.run([*git, f"--work-tree={work / 'src'}", "add", "-A"], check=True)
    subprocess.run([*git, f"--work-tree={work / 'src'}", "commit", "-q", "-m", "generated"], check=True)
    return bare


def pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repo", type=Path, help="a bare repository (read only); default: a generated vault")
    parser.add_argument("--notes", type=int, default=10_000, help="without --repo: the generated vault's size")
    parser.add_argument("--quick", action="store_true", help="smoke run: 1,000 notes, 40 writes")
    parser.add_argument("--writes", type=int, default=200)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args(argv)
    if args.quick:
        args.notes, args.writes = min(args.notes, 1000), min(args.writes, 40)
    work = Path(tempfile.mkdtemp(prefix="notegate-listing-"))
    try:
        source = args.repo if args.repo is not None else generated(args.notes, work)
        repo_dir = borrowed(source, work / "vault.git")
        store = VaultStore("bench", repo_dir, str(work / "no-origin.git"))
        profiler = cProfile.Profile(time.process_time) if args.profile else None
        started = time.process_time()
        if profiler:
            profiler.enable()
        listing = store.listing()
        if profiler:
            profiler.disable()
        build = time.process_time() - started
        notes = sorted(listing.notes)
        print(f"listing build: {build:.2f} s CPU for {len(listing.notes)} notes, {len(listing.attachments)} files")
        rng = random.Random(1)
        advances: dict[bool, list[float]] = {True: [], False: []}  # remembered range or not -> ms
        reads: list[float] = []
        repo = store.repo
        for i in range(args.writes):
            path = rng.choice(notes) if i % 4 else f"bench-new/n{i}.md"  # one write in four creates a note
            tip = repo.references[MAIN_REF].target
            tree = repo[tip].peel(pygit2.Tree)
            tree_id = build_tree(repo, tree, [Change(path, f"pass {i}\n".encode())])
            sig = pygit2.Signature("bench", "bench@notegate")
            commit = repo.create_commit(None, sig, sig, f"w{i}", tree_id, [tip])
            repo.references.create(MAIN_REF, commit, force=True)
            remembered = i % 2 == 0
            if remembered:  # as VaultStore._commit_group does for its own chain
                blob = str(repo[tree_id].peel(pygit2.Tree)[path].id)
                store._remember_range(str(tip), str(commit), _Range(((path, blob),), {path: str(commit)}))
            started = time.process_time()
            store.listing()
            advances[remembered].append((time.process_time() - started) * 1000)
            started = time.process_time()
            found = store.read(path)
            assert found is not None and store.blob_id(path) == found[1]
            reads.append((time.process_time() - started) * 1000)
        for remembered, label in ((True, "a write's own range"), (False, "tree diff (a fetch)")):
            got = advances[remembered]
            print(
                f"{len(got)} one-note commits, {label}: listing catch-up p50 {statistics.median(got):.3f} ms, "
                f"p95 {pct(got, 0.95):.3f} ms, max {max(got):.3f} ms CPU"
            )
        print(f"read after each commit: p50 {statistics.median(reads):.3f} ms CPU")
        if profiler:
            pstats.Stats(profiler).sort_stats("tottime").print_stats(14)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
