"""Where one confirmed write spends its time: a split of the store's commit, and the files it creates.

Builds a generated vault (``genvault.py``), imports it, then makes ``--writes`` sequential confirmed writes
through :class:`NotesService` (in process, like ``bench_notes.py``), timing each and counting the files
that appeared under the server clone and the local origin.  With ``--profile`` it prints the top of a
cProfile of the writes.  For system calls run it under ``strace -c -f -e trace=%file,fsync,fdatasync``.

    python bench/profile_write.py [--notes 10000] [--writes 200] [--profile]
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import random
import shutil
import statistics
import sys
import tempfile
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--notes", type=int, default=10_000)
    parser.add_argument("--writes", type=int, default=200)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args(argv)
    workdir = Path(tempfile.mkdtemp(prefix="notegate-profile-"))
    try:
        spec = genvault.generate(workdir / "src", args.notes, 1)
        cfg = init_directory(workdir / "vault")
        import bench_notes  # a sibling script: the same import (and the same refused names left out)

        bench_notes.import_vault(cfg, workdir / "src", spec)
        runtime = Runtime(load_config(cfg))
        svc = NotesService(runtime)
        svc.list_notes(CALLER, limit=1)
        rng = random.Random(1)
        paths = rng.sample(spec.paths, min(args.writes, len(spec.paths)))
        runtime.environment(None).store.repack()  # the import's loose objects are not the write's cost
        state = cfg.parent / "state"
        origin = cfg.parent / "origin.git"
        files_before = count_files(state) + count_files(origin)
        profiler = cProfile.Profile() if args.profile else None
        samples: list[float] = []
        for i, path in enumerate(paths):
            note = svc.read_note(CALLER, path)
            text = note.text + f"\nEdited by the profile, pass {i}.\n"
            if profiler:
                profiler.enable()
            started = time.perf_counter()
            svc.write_note(CALLER, path, text, note.revision, confirmed=True)
            samples.append((time.perf_counter() - started) * 1000)
            if profiler:
                profiler.disable()
        files_after = count_files(state) + count_files(origin)
        samples.sort()
        print(
            f"{len(samples)} writes: p50 {statistics.median(samples):.2f} ms, "
            f"p95 {samples[int(len(samples) * 0.95) - 1]:.2f} ms; "
            f"files created per write: {(files_after - files_before) / len(samples):.1f} "
            f"(clone + origin + state)"
        )
        if profiler:
            out = io.StringIO()
            pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(30)
            print(out.getvalue())
        runtime.close()
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
