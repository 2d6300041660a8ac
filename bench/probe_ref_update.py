"""Does the origin's compare-and-swap ref update grow with the vault?  (issue 15: ``profile_write`` saw it
0.35 → 0.88 ms from 10k to 100k notes.)

For each size, a bare repository holding one pack of that many objects is made with ``git fast-import``, then
``--updates`` commits are chained onto its main the store's way: the commit's blob, tree and commit as one new
pack (``notegate.vault.bulk.write_records``, so libgit2 must rescan ``objects/pack`` to find the target), then
``Reference.set_target``.  Prints the update's p50/p95 per size, and per 50 updates as the packs pile up
(as they do between two of the server's roll-ups), against a loose target for comparison.

    .venv/bin/python bench/probe_ref_update.py --work /tmp/refprobe [--sizes 10000 100000] [--updates 300]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import time
from pathlib import Path

import pygit2

from notegate.vault import bulk, objects

SIGNATURE = pygit2.Signature("probe", "probe@notegate", 0, 0)


def fast_imported(path: Path, count: int) -> pygit2.Repository:
    """A bare repository whose main holds ``count`` one-line notes in 200 folders, all in one pack."""
    shutil.rmtree(path, ignore_errors=True)
    subprocess.run(["git", "init", "-q", "--bare", str(path)], check=True)
    stream = []
    for i in range(count):
        data = b"note %d %s\n" % (i, os.urandom(8).hex().encode())
        stream.append(b"blob\nmark :%d\ndata %d\n%s\n" % (i + 1, len(data), data))
    stream.append(b"commit refs/heads/main\ncommitter probe <probe@notegate> 0 +0000\ndata 1\nm\n")
    stream.extend(b"M 100644 :%d f/%d/%d.md\n" % (i + 1, i % 200, i) for i in range(count))
    stream.append(b"\n")
    subprocess.run(["git", "-C", str(path), "fast-import", "--quiet"], input=b"".join(stream), check=True)
    return pygit2.Repository(str(path))


def packed_commit(path: Path, parent: pygit2.Oid, n: int) -> pygit2.Oid:
    """One commit (a new blob in a one-entry tree) written as its own pack, as a group of one writes it."""
    data = os.urandom(50).hex().encode()
    blob = objects.object_id(objects.OBJ_BLOB, data)
    tree = b"100644 x\0" + blob
    tree_id = objects.object_id(objects.OBJ_TREE, tree)
    commit = objects.commit_bytes(tree_id, [parent.raw], SIGNATURE, SIGNATURE, f"probe {n}")
    commit_id = objects.object_id(objects.OBJ_COMMIT, commit)
    records = [
        objects.pack_record(objects.OBJ_BLOB, data, blob),
        objects.pack_record(objects.OBJ_TREE, tree, tree_id),
        objects.pack_record(objects.OBJ_COMMIT, commit, commit_id),
    ]
    bulk.write_records([path], records, strict=True)
    return pygit2.Oid(raw=commit_id)


def loose_commit(repo: pygit2.Repository, parent: pygit2.Oid, n: int) -> pygit2.Oid:
    builder = repo.TreeBuilder()
    builder.insert("x", repo.create_blob(os.urandom(50)), pygit2.GIT_FILEMODE_BLOB)
    return repo.create_commit(None, SIGNATURE, SIGNATURE, f"probe {n}", builder.write(), [parent])


def timed_updates(repo: pygit2.Repository, path: Path, updates: int, *, packed: bool) -> list[float]:
    tip = repo.references["refs/heads/main"].target
    times = []
    for n in range(updates):
        tip = packed_commit(path, tip, n) if packed else loose_commit(repo, tip, n)
        start = time.perf_counter()
        repo.references["refs/heads/main"].set_target(tip, "probe")
        times.append((time.perf_counter() - start) * 1000)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", type=Path, required=True, help="a scratch folder (its repositories are remade)")
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--updates", type=int, default=300)
    args = parser.parse_args()
    for size in args.sizes:
        for packed in (False, True):
            path = args.work / f"objects-{size}-{'packed' if packed else 'loose'}"
            repo = fast_imported(path, size)
            times = timed_updates(repo, path, args.updates, packed=packed)
            ordered = sorted(times)
            p95 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))]
            runs = " ".join(
                f"{statistics.median(times[k : k + 50]):.2f}" for k in range(0, len(times), 50) if times[k : k + 50]
            )
            kind = "new pack per commit" if packed else "loose commit"
            print(
                f"{size:>7} objects, {kind:<19}: set_target p50 {statistics.median(times):.3f} ms, "
                f"p95 {p95:.3f} ms; p50 per 50 updates: {runs}",
                flush=True,
            )


if __name__ == "__main__":
    main()
