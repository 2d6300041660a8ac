"""The search index in process on an existing vault clone (issue 15): the full build, searches, a write's update.

Why: ``bench_scale.py`` measures these over MCP on a freshly imported 100,000-note vault (10+ minutes); this
measures the index alone on a clone that is already there, so old and new code can be run alternately in the
same time window (``PYTHONPATH=/tmp/base/src python bench/profile_index.py …`` for the old code).

    python bench/profile_index.py build  --repo VAULT.git [--profile]          # one full build, then exit
    python bench/profile_index.py search --repo VAULT.git --index FILE --spec SPEC.json [--repeat 30]
    python bench/profile_index.py write  --repo VAULT.git --index FILE [--writes 40]

``build`` prints wall and CPU seconds, when another thread's search stopped waiting (the build committed), the
listing's CPU before the build (timed apart: the server builds it before its first read), this process's peak
RSS (``VmHWM``: the process only builds) and leaves the index at ``--index`` (default: a temporary file,
removed).  ``search`` times
``SearchIndex.search`` (a trusted caller: private notes included, as bench_scale's owner token) for the
spec's rare words, its word in every note and its two-word queries.  ``write`` commits one changed note at a
time into a scratch copy of the clone's refs (the objects are shared, nothing is pushed) and times the
index's catch-up with each new tip, as a write's commit does on the write path.  Read-only on ``--repo``
except ``write``, which moves ``refs/heads/main`` and restores it at the end.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import pygit2

from notegate.vault.index import SearchIndex
from notegate.vault.store import MAIN_REF, Change, VaultStore, build_tree


def classify(path: str) -> tuple[bool, bool]:
    """The default policy's classes (``private/`` and ``inbox/``), without loading a config."""
    return path.startswith("private/"), path.startswith("inbox/")


def store_of(repo: Path) -> VaultStore:
    url = pygit2.Repository(str(repo)).remotes["origin"].url  # unchanged: _ensure_remote must not rewrite it
    return VaultStore("bench", repo, url)


def peak_rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def build(args: argparse.Namespace) -> None:
    store = store_of(args.repo)
    index_path = args.index or Path(tempfile.mkdtemp(prefix="notegate-index-")) / "index.sqlite"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{index_path}{suffix}").unlink(missing_ok=True)
    index = SearchIndex(index_path, classify, "bench")
    # The server builds the listing when it opens the environment, before its first read and before the
    # background build starts (``Runtime._open``): timed apart, so "build" is what the server's build costs.
    listing_cpu = time.process_time()
    store.listing()
    listing_cpu = time.process_time() - listing_cpu
    profiler = cProfile.Profile(time.process_time) if args.profile else None  # CPU: the machine is shared
    wall, cpu = time.perf_counter(), time.process_time()
    if profiler:
        profiler.enable()
    head, started, seen = store.head(), wall, []

    def poll() -> None:  # searchable: when another thread's search no longer waits (the build committed)
        while index.indexed_commit != head:
            time.sleep(0.05)
        seen.append(time.perf_counter() - started)
        index.search("bench", include_private=True)

    poller = threading.Thread(target=poll, daemon=True)
    poller.start()
    count = index.catch_up(store)
    if profiler:
        profiler.disable()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    poller.join()
    searchable = seen[0]
    size = sum(p.stat().st_size for p in index_path.parent.glob(index_path.name + "*"))
    print(
        f"build: {count} notes, {wall:.2f} s wall, {cpu:.2f} s CPU, searchable after {searchable:.2f} s, "
        f"peak RSS {peak_rss_mb():.0f} MB, index {size / 1e6:.0f} MB (listing before it: {listing_cpu:.2f} s CPU)"
    )
    index.close()
    if profiler:
        pstats.Stats(profiler).sort_stats(args.sort).print_stats(args.top)
    if args.index is None:
        for p in index_path.parent.iterdir():
            p.unlink()
        index_path.parent.rmdir()


def search(args: argparse.Namespace) -> None:
    spec = json.loads(args.spec.read_text())
    index = SearchIndex(args.index, classify, "bench")
    shapes = {
        "rare": list(spec["rare_terms"]),
        "every note": [spec["common_terms"][0]],
        "two words": list(spec["two_word_queries"]),
    }
    for shape, queries in shapes.items():
        for q in queries:
            index.search(q, include_private=True)  # warm the page cache and the remembered verdicts
        walls, cpus = [], []
        per_query: dict[str, list[float]] = {q: [] for q in queries}
        for i in range(args.repeat * len(queries)):
            q = queries[i % len(queries)]
            wall, cpu = time.perf_counter(), time.process_time()
            index.search(q, include_private=True)
            cpus.append((time.process_time() - cpu) * 1000)
            walls.append((time.perf_counter() - wall) * 1000)
            per_query[q].append(cpus[-1])
        detail = ", ".join(f"{q} {statistics.median(v):.2f}" for q, v in per_query.items()) if len(queries) < 5 else ""
        print(
            f"search {shape}: p50 {statistics.median(walls):.2f} ms wall, p50 {statistics.median(cpus):.2f} ms CPU"
            + (f" (per query CPU p50: {detail})" if detail else "")
        )
    index.close()


def write(args: argparse.Namespace) -> None:
    store = store_of(args.repo)
    index = SearchIndex(args.index, classify, "bench")
    index.catch_up(store)
    repo = store.repo
    start = repo.references[MAIN_REF].target
    notes = sorted(p for p in store.listing().notes if not p.startswith(("private/", "inbox/")))
    samples, cpu_total = [], 0.0
    try:
        for i in range(args.writes):
            path = notes[(i * 7919) % len(notes)]
            tip = repo.references[MAIN_REF].target
            tree = repo[tip].peel(pygit2.Tree)
            tree_id = build_tree(repo, tree, [Change(path, f"# bench {i}\n\nprofilewrite{i} text\n".encode())])
            sig = pygit2.Signature("bench", "bench@notegate")
            commit = repo.create_commit(None, sig, sig, f"w{i}", tree_id, [tip])
            repo.references.create(MAIN_REF, commit, force=True)
            wall, cpu = time.perf_counter(), time.process_time()
            index.catch_up(store)
            samples.append((time.perf_counter() - wall) * 1000)
            cpu_total += time.process_time() - cpu
            assert [h.path for h in index.search(f"profilewrite{i}")] == [path]
    finally:
        repo.references.create(MAIN_REF, start, force=True)
        index.catch_up(store)
        index.close()
    print(
        f"write catch-up: p50 {statistics.median(samples):.2f} ms wall, "
        f"mean {cpu_total * 1000 / len(samples):.2f} ms CPU ({len(samples)} writes)"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=("build", "search", "write"))
    parser.add_argument("--repo", type=Path, required=True, help="a bare clone (e.g. state/envs/personal/vault.git)")
    parser.add_argument("--index", type=Path, help="the index file (build: where to leave it)")
    parser.add_argument("--spec", type=Path, help="search: a genvault spec (.spec.json)")
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--writes", type=int, default=40)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--sort", default="tottime", help="build --profile: the pstats sort key")
    parser.add_argument("--top", type=int, default=18, help="build --profile: rows printed")
    args = parser.parse_args(argv)
    {"build": build, "search": search, "write": write}[args.mode](args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
