"""CPU time of ``NotesService.search_notes`` per query kind, in process, on a generated vault (issue 33).

Why CPU time: the machine is shared by several sessions, so wall-clock figures measure the neighbours; the
CPU a call costs this process (``time.process_time``: every thread of it) does not depend on them as much.
Why in process: this is the search itself (index, snippets, parts, meaning), without a door or a client;
``profile_mcp.py --op search --clock cpu`` shows the door around it.

The vault (``genvault``, seed 1) is generated once under ``--work`` and imported once per ``--label`` (run old
code with ``PYTHONPATH=<old>/src`` and another label: its own state, so neither rebuilds the other's index).
Each kind is timed in rounds that alternate between the kinds (a load spike then hits every kind alike);
``--profile KIND`` runs cProfile on that kind's calls with the same CPU clock and prints the top functions.

    python bench/profile_search.py --work var/psearch --label new [--notes 10000] [--calls 60]
                                   [--meaning] [--profile common] [--top 30]
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import re
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_notes  # sibling scripts, not a package
import bench_scale
from notegate.config import load_config
from notegate.services.notes import NotesService
from notegate.services.runtime import Runtime
from notegate.services.vaultinit import init_directory

#: Short names of bench_notes' query kinds (its ``search_queries`` keys, in its order).
KINDS = {"rare": "rare term", "common": "common term (every note)", "mid": "mid term", "nohit": "no-hit term",
         "two": "2-word"}  # fmt: skip


def prepared(work: Path, label: str, notes: int, meaning: bool) -> tuple[Path, object]:
    """The config of an imported copy of the cached vault (imported on first use), meaning set as asked."""
    spec = bench_scale.cached_vault(work, notes, 1)
    vault = work / f"vault-{label}-{notes}"
    cfg = vault / "notegate.toml"
    if not cfg.exists():
        cfg = init_directory(vault)
        bench_notes.import_vault(cfg, Path(spec.out_dir), spec)
    text = cfg.read_text()
    value = "true" if meaning else "false"
    cfg.write_text(re.sub(r"(?m)^search_meaning = .*$", f"search_meaning = {value}", text))
    return cfg, spec


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=Path("var/psearch"))
    parser.add_argument("--label", default="current", help="a name for this code's imported copy")
    parser.add_argument("--notes", type=int, default=10_000)
    parser.add_argument("--calls", type=int, default=60, help="timed calls per kind")
    parser.add_argument("--limit", type=int, default=20)
    parser.add_argument("--meaning", action="store_true", help="search by meaning on (waits for the vectors)")
    parser.add_argument("--profile", choices=tuple(KINDS), action="append", default=[])
    parser.add_argument("--top", type=int, default=30)
    args = parser.parse_args(argv)
    cfg, spec = prepared(args.work, args.label, args.notes, args.meaning)
    runtime = Runtime(load_config(cfg))
    try:
        svc = NotesService(runtime)
        bench_notes.compact_as_the_server_does(runtime)
        env = runtime.environment(None)
        if args.meaning:
            assert env.meaning is not None, "search_meaning did not turn on (the model is not installed?)"
            started = time.perf_counter()
            env.meaning.wake(env.store, env.index)
            env.meaning.wait_idle(1800)
            print(f"vectors ready in {time.perf_counter() - started:.1f} s", file=sys.stderr)
        queries = bench_notes.search_queries(spec)
        caller = bench_notes.CALLER
        samples: dict[str, list[float]] = {k: [] for k in KINDS}
        hits: dict[str, int] = {}
        for kind, name in KINDS.items():  # warm: caches, first statements, the embedder
            for q in queries[name]:
                hits[kind] = len(svc.search_notes(caller, q, limit=args.limit).hits)
        for i in range(args.calls):
            for kind, name in KINDS.items():
                q = queries[name][i % len(queries[name])]
                started = time.process_time()
                svc.search_notes(caller, q, limit=args.limit)
                samples[kind].append((time.process_time() - started) * 1000)
        print(f"search_notes CPU per call, in process, {args.notes} notes, limit {args.limit}, "
              f"meaning {'on' if args.meaning else 'off'}, {args.calls} calls per kind (ms)")  # fmt: skip
        print("| kind | p50 | mean | p90 | hits (first query) |")
        print("| --- | ---: | ---: | ---: | ---: |")
        for kind, values in samples.items():
            ordered = sorted(values)
            p90 = ordered[int(0.9 * (len(ordered) - 1))]
            p50, mean = statistics.median(values), statistics.fmean(values)
            print(f"| {kind} | {p50:.2f} | {mean:.2f} | {p90:.2f} | {hits[kind]} |")
        for kind in args.profile:
            prof = cProfile.Profile(time.process_time)
            name = KINDS[kind]
            prof.enable()
            for i in range(args.calls):
                svc.search_notes(caller, queries[name][i % len(queries[name])], limit=args.limit)
            prof.disable()
            out = io.StringIO()
            stats = pstats.Stats(prof, stream=out)
            print(f"\n## cProfile, {kind} ({args.calls} calls, process CPU clock)")
            stats.sort_stats("tottime").print_stats(args.top)
            stats.sort_stats("cumulative").print_stats(args.top)
            print(out.getvalue())
    finally:
        runtime.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
