"""Where one confirmed write spends its time: a split of the store's commit, and the files it creates.

Builds a generated vault (``genvault.py``), imports it, then makes ``--writes`` sequential confirmed writes
through :class:`NotesService` (in process, like ``bench_notes.py``), timing each and counting the files
that appeared under the server clone and the local origin.  The read before each write is timed too: a
cost a change moves out of the write (e.g. a listing catching up) shows up there, so compare the cycle.
With ``--profile`` it prints the top of a cProfile of the writes.  With ``--writers N`` (N > 0) it then runs
N threads writing their own notes (``bench_notes.py``'s in-process concurrent phase: commits/s and lost
updates).  For system calls run it under ``strace -c -f -e trace=%file,fsync,fdatasync``.

Before/after under one load: run it on a clean copy of main and on the branch back to back (or at once):

    PYTHONPATH=<clean copy of main>/src python bench/profile_write.py --notes 10000 --writes 100
    python bench/profile_write.py [--notes 10000] [--writes 200] [--profile] [--writers 32]
"""

from __future__ import annotations

import argparse
import cProfile
import dataclasses
import io
import json
import os
import pstats
import random
import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import genvault  # a sibling script, not a package
from notegate.config import load_config
from notegate.policy import Caller
from notegate.services.notes import NotesService
from notegate.services.runtime import Runtime
from notegate.services.vaultinit import init_directory

CALLER = Caller(login="owner", display_name="Owner", client="bench", client_class="workstation", tier="trusted")


def count_files(root: Path) -> int:
    return sum(len(files) for _, _, files in os.walk(root))


def concurrent(svc: NotesService, spec: genvault.VaultSpec, cfg: Path, writers: int, per_writer: int) -> None:
    """bench_notes.py's in-process concurrent phase (its threads, its lost-update count), printed."""
    import bench_notes

    bench_notes.WRITERS = writers
    plan = dataclasses.replace(bench_notes.make_plan(len(spec.paths), quick=False), per_writer=per_writer)
    origin = cfg.parent / "origin.git"
    before = bench_notes.origin_tip(origin)
    rate, samples, finals = bench_notes._threaded_writers(svc, spec, plan, random.Random(2))
    report = bench_notes.Report(meta={})
    bench_notes.add_lost_updates(report, "in-process", origin, before, finals, len(samples))
    lost = report.scalars[-1]
    samples.sort()
    print(
        f"{writers} concurrent writers x {per_writer}: {rate:.1f} commits/s, latency p50 "
        f"{statistics.median(samples):.1f} ms; lost updates {lost.value:g} ({lost.note})"
    )


def roll_up(store) -> None:
    """The server's periodic repack: ``roll_up`` (a geometric repack of the group commits' packs), or on code
    from before it (a clean copy of an older main, for a before/after) the incremental repack it replaced."""
    if hasattr(store, "roll_up"):
        store.roll_up()
    else:
        store.repack(incremental=True)


def during_repack(svc: NotesService, store, pool: list[str], rng: random.Random) -> None:
    """Writes one after another while ``maintain``'s periodic repack packs what the timed writes left (loose
    objects, or one pack per group): the slowest of them is how long the repack held writers up."""
    loose = f"{store.loose_object_count()} loose objects, {store.pack_count()} packs"
    done = threading.Event()
    took: list[float] = []

    def repack() -> None:
        started = time.perf_counter()
        roll_up(store)
        took.append(time.perf_counter() - started)
        done.set()

    thread = threading.Thread(target=repack)
    samples: list[float] = []
    thread.start()
    for path in rng.sample(pool, min(2000, len(pool))):
        if done.is_set():
            break
        note = svc.read_note(CALLER, path)
        started = time.perf_counter()
        svc.write_note(CALLER, path, note.text + "\nEdited during a repack.\n", note.revision, confirmed=True)
        samples.append((time.perf_counter() - started) * 1000)
    thread.join()
    samples.sort()
    print(
        f"during a periodic repack of {loose} ({took[0] * 1000:.0f} ms): {len(samples)} writes, "
        f"p50 {statistics.median(samples):.1f} ms, slowest {samples[-1]:.1f} ms"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--notes", type=int, default=10_000)
    parser.add_argument("--writes", type=int, default=200)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--writers", type=int, default=0, help="then N concurrent writer threads (0: none)")
    parser.add_argument("--per-writer", type=int, default=20, help="writes per concurrent writer")
    parser.add_argument(
        "--vault",
        type=Path,
        help="an imported vault to write into instead of generating one (a copy: it is written to); "
        "with --spec, the generator's spec json of its source",
    )
    parser.add_argument("--spec", type=Path, help="the spec json of --vault's generated source")
    parser.add_argument("--seed", type=int, default=1, help="which notes are written (random.Random(seed))")
    parser.add_argument(
        "--during-repack",
        action="store_true",
        help="then write on while the periodic repack runs in another thread: how long writers wait",
    )
    args = parser.parse_args(argv)
    workdir = Path(tempfile.mkdtemp(prefix="notegate-profile-"))
    try:
        if args.vault is not None:
            data = json.loads(args.spec.read_text())
            spec = genvault.VaultSpec(**data)
            cfg = args.vault / "notegate.toml"
        else:
            spec = genvault.generate(workdir / "src", args.notes, 1)
            cfg = init_directory(workdir / "vault")
            import bench_notes  # a sibling script: the same import (and the same refused names left out)

            bench_notes.import_vault(cfg, workdir / "src", spec)
        runtime = Runtime(load_config(cfg))
        svc = NotesService(runtime)
        svc.list_notes(CALLER, limit=1)
        import bench_notes  # a sibling script: the merge notegate serve runs at start, before the timed writes

        bench_notes.compact_as_the_server_does(runtime)
        rng = random.Random(args.seed)
        store = runtime.environment(None).store
        served = store.listing().notes
        paths = rng.sample([p for p in spec.paths if p in served], min(args.writes, len(spec.paths)))
        if args.vault is None:
            store.repack()  # the import's loose objects are not the write's cost
        elif store.needs_repack(0):
            roll_up(store)  # an earlier run's, packed as the server's maintain would
        state = cfg.parent / "state"
        origin = cfg.parent / "origin.git"
        files_before = count_files(state) + count_files(origin)
        # CPU time, not wall time: on a shared machine the wall clock also counts other processes' turns.
        profiler = cProfile.Profile(time.process_time) if args.profile else None
        samples: list[float] = []
        cpus: list[float] = []
        reads: list[float] = []
        for i, path in enumerate(paths):
            started = time.perf_counter()
            note = svc.read_note(CALLER, path)
            reads.append((time.perf_counter() - started) * 1000)
            text = note.text + f"\nEdited by the profile, pass {i}.\n"
            if profiler:
                profiler.enable()
            started = time.perf_counter()
            cpu = time.process_time()
            svc.write_note(CALLER, path, text, note.revision, confirmed=True)
            cpus.append((time.process_time() - cpu) * 1000)
            samples.append((time.perf_counter() - started) * 1000)
            if profiler:
                profiler.disable()
        files_after = count_files(state) + count_files(origin)
        cycles = sorted(r + w for r, w in zip(reads, samples, strict=True))
        samples.sort()
        reads.sort()
        print(
            f"{len(samples)} writes: p50 {statistics.median(samples):.2f} ms, "
            f"p95 {samples[int(len(samples) * 0.95) - 1]:.2f} ms; "
            f"files created per write: {(files_after - files_before) / len(samples):.1f} "
            f"(clone + origin + state); CPU p50 {statistics.median(cpus):.2f} ms"
        )
        print(
            f"the read before each write: p50 {statistics.median(reads):.2f} ms; "
            f"read + write: p50 {statistics.median(cycles):.2f} ms, p95 {cycles[int(len(cycles) * 0.95) - 1]:.2f} ms"
        )
        if profiler:
            out = io.StringIO()
            pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(30)
            pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(25)
            print(out.getvalue())
            from profile_mcp import own_time_by_area  # a sibling script (bench/ is on sys.path)

            print(own_time_by_area(pstats.Stats(profiler), len(samples)))
        if args.during_repack:
            during_repack(svc, store, [p for p in served if p not in set(paths)], rng)
        if args.writers > 0:
            concurrent(svc, spec, cfg, args.writers, args.per_writer)
        runtime.close()
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
