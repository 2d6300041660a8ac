"""What a durable ref update costs the rest of the server: libgit2's ``set_target`` against vault/refwrite.py.

With durability on, both flush the lock file and the folder.  libgit2 does it holding the GIL (pygit2 does not
release it around the call); ``os.fsync`` releases it.  A counting thread runs beside the updates; "blocked" is the
time it could not run (gaps over 5 ms between its iterations, the GIL's switch interval).  Both on the same disk
(``--work``), ``--updates`` each, interleaved ``--rounds`` times.

    .venv/bin/python bench/probe_ref_gil.py --work var/refbench [--updates 30] [--rounds 3]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pygit2

from notegate.vault import durable, refwrite

MAIN = "refs/heads/main"


def measured(update: Callable[[int], None], updates: int) -> tuple[float, float]:
    """(milliseconds per update, seconds the counting thread was blocked)."""
    stop = threading.Event()
    gaps: list[float] = []

    def count() -> None:
        last = time.perf_counter()
        while not stop.is_set():
            now = time.perf_counter()
            if now - last > 0.005:
                gaps.append(now - last)
            last = now

    spinner = threading.Thread(target=count)
    spinner.start()
    time.sleep(0.02)
    began = time.perf_counter()
    for i in range(updates):
        update(i)
    took = time.perf_counter() - began
    stop.set()
    spinner.join()
    return took / updates * 1000, sum(gaps)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", type=Path, required=True, help="a scratch folder on the disk to measure")
    parser.add_argument("--updates", type=int, default=30)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--switch-interval", type=float, default=None, help="sys.setswitchinterval (seconds; CPython's default 0.005)"
    )
    args = parser.parse_args()
    if args.switch_interval is not None:
        sys.setswitchinterval(args.switch_interval)
    shutil.rmtree(args.work, ignore_errors=True)
    path = args.work / "r.git"
    repo = pygit2.init_repository(str(path), bare=True, initial_head="main")
    tree = repo.TreeBuilder().write()
    sig = pygit2.Signature("bench", "bench@notegate", 0, 0)
    ids: list[str] = []
    for i in range(2 * args.updates * args.rounds + 1):
        ids.append(str(repo.create_commit(None, sig, sig, f"c{i}", tree, [ids[-1]] if ids else [])))
    refwrite.update_ref(path, MAIN, ids[0], None)
    durable.enable(True)
    results: dict[str, list[tuple[float, float]]] = {"libgit2 set_target": [], "refwrite.update_ref": []}
    at = [0]

    def libgit2(_i: int) -> None:
        at[0] += 1
        repo.references[MAIN].set_target(ids[at[0]], "bench")

    def ours(_i: int) -> None:
        at[0] += 1
        assert refwrite.update_ref(path, MAIN, ids[at[0]], ids[at[0] - 1])

    for _round in range(args.rounds):
        results["libgit2 set_target"].append(measured(libgit2, args.updates))
        results["refwrite.update_ref"].append(measured(ours, args.updates))
    for name, runs in results.items():
        per = statistics.median(r[0] for r in runs)
        blocked = statistics.median(r[1] for r in runs)
        total = statistics.median(r[0] * args.updates / 1000 for r in runs)
        print(
            f"{name:<20} {per:6.2f} ms per update (median of {args.rounds}); "
            f"other thread blocked {blocked:.3f} s of {total:.3f} s"
        )


if __name__ == "__main__":
    main()
