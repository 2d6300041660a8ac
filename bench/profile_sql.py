"""Where a confirmed write's SQLite time goes: every statement timed, and each database's COMMITs as a
distribution (p50 / p90 / p99 / slowest / the sum of those over 5 ms).

Why a script of its own: cProfile shows one ``execute`` row for every statement; a commit's time hides in a
few slow ones (FTS5 merging segments inside a COMMIT took 0.1-3.6 s once every ~25 writes at 100,000 notes
before the index was merged after a big catch-up; ``SearchIndex.compact``).  Every ``sqlite3`` connection
the process opens is made with a subclass that times ``execute``/``executemany``; the writes go through
:class:`NotesService` in process, as ``profile_write.py`` makes them.

    python bench/profile_sql.py --vault COPY --spec SRC.spec.json [--writes 300] [--merge]

``--vault``: an imported vault (a copy: it is written to), ``--spec`` its generator's spec json.  ``--merge``
first runs the merge ``notegate serve`` runs at start (``Runtime.maintain``), as a server would have.
"""

from __future__ import annotations

import argparse
import collections
import json
import random
import re
import sqlite3
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import genvault  # a sibling script, not a package

TOTAL: collections.defaultdict[str, float] = collections.defaultdict(float)
COUNT: collections.Counter[str] = collections.Counter()
COMMITS: dict[str, list[float]] = {}
_on = [False]


def _key(sql: str) -> str:
    return re.sub(r"\s+", " ", sql.strip())[:90]


class TimedConnection(sqlite3.Connection):
    """A connection that times its statements while ``_on`` (only the timed writes, not the set-up)."""

    name = "?"

    def execute(self, sql, *args):  # type: ignore[override]
        if not _on[0]:
            return super().execute(sql, *args)
        started = time.perf_counter()
        try:
            return super().execute(sql, *args)
        finally:
            took = time.perf_counter() - started
            TOTAL[_key(sql)] += took
            COUNT[_key(sql)] += 1
            if sql.strip().upper() == "COMMIT":
                COMMITS.setdefault(self.name, []).append(took * 1000)

    def executemany(self, sql, *args):  # type: ignore[override]
        if not _on[0]:
            return super().executemany(sql, *args)
        started = time.perf_counter()
        try:
            return super().executemany(sql, *args)
        finally:
            TOTAL[_key(sql)] += time.perf_counter() - started
            COUNT[_key(sql)] += 1


def _connect(original):
    def connect(database, *args, **kwargs):
        conn = original(database, *args, factory=TimedConnection, **kwargs)
        conn.name = str(database).rsplit("/", 1)[-1]
        return conn

    return connect


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vault", type=Path, required=True, help="an imported vault directory (a copy)")
    parser.add_argument("--spec", type=Path, required=True, help="its generator's spec json")
    parser.add_argument("--writes", type=int, default=300)
    parser.add_argument("--warm", type=int, default=20, help="writes before the timed ones")
    parser.add_argument("--merge", action="store_true", help="first merge the index as notegate serve does")
    parser.add_argument("--top", type=int, default=15)
    args = parser.parse_args(argv)
    sqlite3.connect = _connect(sqlite3.connect)  # before notegate opens any database

    from notegate.config import load_config
    from notegate.services.notes import NotesService
    from notegate.services.runtime import Runtime
    from profile_write import CALLER

    spec = genvault.VaultSpec(**json.loads(args.spec.read_text()))
    runtime = Runtime(load_config(args.vault / "notegate.toml"))
    try:
        svc = NotesService(runtime)
        runtime.open_all()
        if args.merge:
            started = time.perf_counter()
            runtime.maintain()
            print(f"index merge (Runtime.maintain): {time.perf_counter() - started:.2f} s")
        served = runtime.environment(None).store.listing().notes
        paths = random.Random(1).sample([p for p in spec.paths if p in served], args.warm + args.writes)
        latencies = []
        for i, path in enumerate(paths):
            note = svc.read_note(CALLER, path)
            _on[0] = i >= args.warm
            started = time.perf_counter()
            svc.write_note(CALLER, path, note.text + f"\nprofile_sql pass {i}\n", note.revision, confirmed=True)
            if _on[0]:
                latencies.append((time.perf_counter() - started) * 1000)
            _on[0] = False
    finally:
        runtime.close()
    n = len(latencies)
    per_write = sum(TOTAL.values()) / n * 1000
    print(f"{n} writes: p50 {statistics.median(latencies):.2f} ms; SQLite per write {per_write:.3f} ms")
    for key, seconds in sorted(TOTAL.items(), key=lambda kv: -kv[1])[: args.top]:
        print(f"{seconds / n * 1000:8.3f} ms/write {COUNT[key] / n:5.2f}/write  {key}")
    for name, times in sorted(COMMITS.items()):
        times.sort()
        slow = [t for t in times if t > 5]
        print(
            f"{name}: {len(times)} COMMITs, p50 {times[len(times) // 2]:.2f} p90 {times[int(len(times) * 0.9)]:.2f} "
            f"p99 {times[int(len(times) * 0.99)]:.2f} slowest {times[-1]:.1f} ms; "
            f"{len(slow)} over 5 ms ({sum(slow):.0f} ms of {sum(times):.0f})"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
