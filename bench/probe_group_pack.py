"""What "one pack per group commit" would save (issue 15's next lever), measured before anyone builds it.

For groups of G one-note writes into a copy of an imported vault (``--vault``, its spec ``--spec``), the same
objects (one blob, the trees on the note's path, one commit per write, chained) are made two ways:

* **loose**, as the commit recipe does today: libgit2's ``create_blob``, ``TreeBuilder`` and ``create_commit``,
  each object a loose file in the clone, then hard-linked into the origin's object folder;
* **pack**: the raw trees spliced in Python (the entry's id replaced in the parent tree's bytes), each object made
  into a pack record (zlib, SHA-1) and the group written as one pack and its index, hard-linked into the origin
  (``notegate.vault.bulk``).

Prints the CPU and wall time per write of each, alternating, and checks both made the same commit ids.  Nothing
moves a ref: the objects are left unreachable (a later ``git gc`` drops them).

    .venv/bin/python bench/probe_group_pack.py --vault COPY --spec src-N.spec.json --group 8 --groups 40
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import re
import statistics
import time
import zlib
from pathlib import Path

import pygit2
from pygit2.enums import FileMode

from notegate.config import load_config
from notegate.vault import bulk

_ENTRY = re.compile(rb"([0-7]+) ([^\0]*)\0(.{20})", re.DOTALL)
KINDS = {"commit": 1, "tree": 2, "blob": 3}


def record(kind: str, data: bytes) -> tuple[bytes, bytes, int]:
    oid = hashlib.sha1(b"%s %d\x00" % (kind.encode(), len(data)) + data, usedforsecurity=False).digest()
    rec = bulk._object_header(KINDS[kind], len(data)) + zlib.compress(data, 1)
    return oid, rec, zlib.crc32(rec)


def splice(data: bytes, name: bytes, oid: bytes) -> bytes:
    """The tree ``data`` with the entry ``name`` pointing at ``oid`` (an existing entry: order unchanged)."""
    out = []
    for m, n, o in _ENTRY.findall(data):
        out.append(m + b" " + n + b"\0" + (oid if n == name else o))
    return b"".join(out)


def commit_bytes(tree: bytes, parent: bytes, message: str) -> bytes:
    sig = "notegate <notegate@localhost> 1764633600 +0000"
    return f"tree {tree.hex()}\nparent {parent.hex()}\nauthor {sig}\ncommitter {sig}\n\n{message}".encode()


def loose_group(repo: pygit2.Repository, origin_objects: Path, head: pygit2.Oid, writes) -> pygit2.Oid:
    parent = head
    for path, text in writes:
        created = []
        blob = repo.create_blob(text)
        created.append(blob)
        parts = path.split("/")
        trees = [repo[parent].peel(pygit2.Tree)]
        for part in parts[:-1]:
            trees.append(repo[trees[-1][part].id].peel(pygit2.Tree))
        child, mode = blob, FileMode.BLOB
        for depth in range(len(parts) - 1, -1, -1):
            builder = repo.TreeBuilder(trees[depth])
            builder.insert(parts[depth], child, mode)
            child, mode = builder.write(), FileMode.TREE
            created.append(child)
        sig = pygit2.Signature("notegate", "notegate@localhost", 1764633600, 0)
        parent = repo.create_commit(None, sig, sig, f"write {path}\n", child, [parent])
        created.append(parent)
        for oid in created:
            hexid = str(oid)
            target = origin_objects / hexid[:2] / hexid[2:]
            if not target.exists():
                target.parent.mkdir(exist_ok=True)
                os.link(Path(repo.path) / "objects" / hexid[:2] / hexid[2:], target)
    return parent


def pack_group(repo: pygit2.Repository, dirs: list[Path], head: pygit2.Oid, writes) -> bytes:
    parent = head.raw
    tree_of_commit = repo[head].peel(pygit2.Tree).id.raw
    records = []
    made: dict[bytes, bytes] = {}  # trees made in this group, by id (the next write's parent tree)

    def read_tree(oid: bytes) -> bytes:
        return made.get(oid) or repo.odb.read(pygit2.Oid(raw=oid))[1]

    for path, text in writes:
        oid, rec, crc = record("blob", text)
        records.append((oid, rec, crc))
        parts = path.encode().split(b"/")
        chain = [read_tree(tree_of_commit)]
        for part in parts[:-1]:
            entry = next(o for m, n, o in _ENTRY.findall(chain[-1]) if n == part)
            chain.append(read_tree(entry))
        child = oid
        for depth in range(len(parts) - 1, -1, -1):
            data = splice(chain[depth], parts[depth], child)
            child, rec, crc = record("tree", data)
            made[child] = data
            records.append((child, rec, crc))
        tree_of_commit = child
        oid, rec, crc = record("commit", commit_bytes(child, parent, f"write {path}\n"))
        records.append((oid, rec, crc))
        parent = oid
    bulk.write_records(dirs, records)
    return parent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--vault", type=Path, required=True, help="a copy of an imported vault (written to)")
    parser.add_argument("--spec", type=Path, required=True)
    parser.add_argument("--group", type=int, default=8)
    parser.add_argument("--groups", type=int, default=40)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    name = next(iter(load_config(args.vault / "notegate.toml").environments))
    repo_dir = args.vault / "state" / "envs" / name / "vault.git"
    origin_dir = args.vault / "origin.git"
    repo = pygit2.Repository(str(repo_dir))
    head = repo.references["refs/heads/main"].target
    paths = json.loads(args.spec.read_text())["paths"]
    tree = repo[head].peel(pygit2.Tree)
    paths = [p for p in paths if p in tree]
    rng = random.Random(args.seed)
    times: dict[str, list[tuple[float, float]]] = {"loose": [], "pack": []}
    same = [(p, f"probe check {p}\n".encode()) for p in rng.sample(paths, args.group)]
    if loose_group(repo, origin_dir / "objects", head, same).raw != pack_group(
        repo, [repo_dir, origin_dir], head, same
    ):
        raise SystemExit("the two ways made different commits")  # same objects, byte for byte
    for g in range(args.groups):
        chosen = rng.sample(paths, args.group)
        for way in ("loose", "pack") if g % 2 == 0 else ("pack", "loose"):
            writes = [(p, f"probe {way} {g} {i} {p}\n".encode()) for i, p in enumerate(chosen)]  # new objects each
            wall, cpu = time.perf_counter(), time.process_time()
            if way == "loose":
                loose_group(repo, origin_dir / "objects", head, writes)
            else:
                pack_group(repo, [repo_dir, origin_dir], head, writes)
            times[way].append(((time.perf_counter() - wall) / args.group, (time.process_time() - cpu) / args.group))
    for way, samples in times.items():
        wall = statistics.median(s[0] for s in samples) * 1e3
        cpu = statistics.median(s[1] for s in samples) * 1e3
        print(
            f"{way:5s}: per write ({len(samples)} groups of {args.group}, median): wall {wall:.2f} ms, CPU {cpu:.2f} ms"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
