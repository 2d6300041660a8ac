"""Search by meaning: the cost of one background catch-up after a one-note write, at 10,000 and 100,000 vectors
(issue 33: each write's catch-up compared every note and copied every vector before it became incremental).

A vault of ``--notes`` short notes in 100 folders is committed and indexed once into ``--dir`` (kept: a later
run reuses it); the vectors file is filled with random vectors for every indexed note (the model would take
minutes to embed 100,000 notes, and what is measured here is the bookkeeping around the one note embedded);
then ``--writes`` times: one note rewritten (commit and index catch-up, not timed), and the meaning catch-up
timed, in this thread's CPU time (``time.thread_time``: the machine is shared, wall clock is noise) and wall
clock.  The first catch-up after opening (every row compared, once per process) is reported on its own.

    python bench/bench_meaning_catchup.py --notes 10000 --dir /tmp/meaning-10k [--writes 30]

Run against another checkout's code with ``PYTHONPATH=that/src`` (the script uses only what both have).
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import statistics
import time
from pathlib import Path

import numpy as np
import pygit2

from notegate.vault.index import SearchIndex
from notegate.vault.meaning import MODEL_FINGERPRINT, MeaningIndex
from notegate.vault.store import Author, Change, VaultStore

AUTHOR = Author("Bench", "bench")
WIDTH = 256


def _note(i: int, turn: int = 0) -> bytes:
    return f"# Note {i}\n\nabout topic {i % 997} and thing {i}, version {turn}\n".encode()


def _vault(root: Path, notes: int) -> tuple[VaultStore, SearchIndex]:
    origin = root / "origin.git"
    fresh = not origin.exists()
    if fresh:
        pygit2.init_repository(str(origin), bare=True, initial_head="main")
    store = VaultStore.create("personal", root / "srv" / "vault.git", str(origin))
    index = SearchIndex(root / "index.sqlite", lambda _p: (False, False), "bench")
    if fresh:
        for start in range(0, notes, 5000):
            batch = [Change(f"f{i % 100}/n{i}.md", _note(i)) for i in range(start, min(notes, start + 5000))]
            store.commit(batch, {}, AUTHOR, "bench: notes")
        started = time.perf_counter()
        index.catch_up(store)
        print(f"built {notes} notes, indexed in {time.perf_counter() - started:.1f} s")
    return store, index


def _fill_vectors(path: Path, rows: dict[str, str]) -> None:
    for stale in path.parent.glob(path.name + "*"):
        stale.unlink()
    rng = np.random.default_rng(1)
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)")
        db.execute("CREATE TABLE vectors (path TEXT PRIMARY KEY, blob TEXT NOT NULL, scale REAL NOT NULL, vec BLOB)")
        db.execute("INSERT INTO meta VALUES ('model', ?)", (MODEL_FINGERPRINT,))
        vecs = rng.integers(-127, 128, size=(len(rows), WIDTH), dtype=np.int8)
        db.executemany(
            "INSERT INTO vectors VALUES (?, ?, ?, ?)",
            ((p, b, 0.004, vecs[i].tobytes()) for i, (p, b) in enumerate(rows.items())),
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--notes", type=int, default=10_000)
    parser.add_argument("--dir", type=Path, required=True, help="the vault's place (kept, reused when there)")
    parser.add_argument("--writes", type=int, default=30)
    args = parser.parse_args(argv)
    args.dir.mkdir(parents=True, exist_ok=True)
    store, index = _vault(args.dir, args.notes)
    _fill_vectors(args.dir / "meaning.sqlite", index.paths())
    started = time.perf_counter()
    meaning = MeaningIndex(args.dir / "meaning.sqlite")
    print(f"opened {len(meaning.vectors)} vectors in {time.perf_counter() - started:.2f} s")
    cpu, wall = time.thread_time(), time.perf_counter()
    meaning.catch_up(store, index)
    print(f"first catch-up after opening: {1000 * (time.thread_time() - cpu):.1f} ms CPU")
    meaning.embedder().embed(["warm up"])
    cpus, walls = [], []
    turn = int(time.time())
    for k in range(args.writes):
        i = (k * 7919) % args.notes
        store.commit([Change(f"f{i % 100}/n{i}.md", _note(i, turn + k))], {}, AUTHOR, "bench: one note")
        index.catch_up(store)
        cpu, wall = time.thread_time(), time.perf_counter()
        embedded = meaning.catch_up(store, index)
        cpus.append(1000 * (time.thread_time() - cpu))
        walls.append(1000 * (time.perf_counter() - wall))
        assert embedded == 1, embedded
    assert meaning.vectors.blobs() == index.paths()
    print(
        f"{args.notes} vectors, one-note catch-up over {args.writes} writes: "
        f"CPU p50 {statistics.median(cpus):.2f} ms (max {max(cpus):.2f}), "
        f"wall p50 {statistics.median(walls):.2f} ms (max {max(walls):.2f})  [pid {os.getpid()}]"
    )
    meaning.close()
    index.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
