"""Per-call cost of the content gates a write runs, old code against new, and proof that findings are unchanged.

Run from the repository root (the corpus is any folder of notes, e.g. a generated vault)::

    git -C . archive <old-ref> src | tar -x -C /tmp/scan-base
    .venv/bin/python bench/bench_gates.py --corpus var/scale/src-10000 --baseline /tmp/scan-base/src --rounds 3

Each round runs one fresh interpreter per code base (old, then new, alternating, so both see the same machine
load) over every ``*.md`` note of the corpus, and times each gate per note: the credential scan
(``scan_credentials``: every write, every imported note), the floor (``check_item`` with the note's path:
every write to a note sessions load, every inbox item), and all six content gates (``scan_content``: model
output).  "write path" is credential scan + floor on the same note, what a confirmed write to a
session-loaded note pays in ``safety`` (other notes pay the credential scan only).  It prints p50 and p99
per call of CPU time (``time.process_time_ns``) and wall time, the total CPU per gate, and a digest of every
finding of every gate per note: the old and new digests must be equal (exit 1 otherwise).  Without
``--baseline``, this checkout only; without ``--corpus``, a generated vault (``genvault.py``, ``--notes``) in a
temporary folder that is removed at the end (``--quick``: 500 notes, one round).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

WORKER = r"""
import hashlib, json, sys, time
from pathlib import Path
from notegate.safety.contentgates import scan_content
from notegate.safety.floor import check_item
from notegate.safety.secrets import scan_credentials

root = Path(sys.argv[1])
notes = sorted(p for p in root.rglob("*.md") if not any(part.startswith(".") for part in p.relative_to(root).parts))
items = [(str(p.relative_to(root)), p.read_text("utf-8", errors="replace")) for p in notes]
gates = {
    "credential": lambda path, text: scan_credentials(text),
    "floor": lambda path, text: check_item(text, path=path),
    "content (6 gates)": lambda path, text: scan_content(text),
}
for fn in gates.values():
    fn("warm.md", "warm up ghp_ \u200b CLAUDE.md ignore previous instructions")
out = {"notes": len(items), "gates": {}}
cpu_clock, wall_clock = time.process_time_ns, time.perf_counter_ns
for name, fn in gates.items():
    cpu, wall, digest = [], [], hashlib.sha256()
    for path, text in items:
        c, w = cpu_clock(), wall_clock()
        found = fn(path, text)
        cpu.append(cpu_clock() - c)
        wall.append(wall_clock() - w)
        digest.update(repr((path, found)).encode())
    out["gates"][name] = {"cpu": cpu, "wall": wall, "digest": digest.hexdigest()}
json.dump(out, sys.stdout)
"""


def run(src: Path, corpus: Path) -> dict:
    env = dict(os.environ, PYTHONPATH=str(src))
    done = subprocess.run(
        [sys.executable, "-c", WORKER, str(corpus)], env=env, check=True, capture_output=True, text=True
    )
    return json.loads(done.stdout)


def pct(values: list[int], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))] / 1e6


def main() -> int:
    here = Path(__file__).resolve().parent.parent
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, help="folder of notes (*.md, read only); default: a generated vault")
    parser.add_argument("--notes", type=int, default=2000, help="notes in the generated vault (no --corpus)")
    parser.add_argument("--quick", action="store_true", help="500 generated notes, one round")
    parser.add_argument("--baseline", type=Path, help="the old code's src folder (e.g. from git archive)")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    if args.quick:
        args.rounds, args.notes = 1, 500
    scratch = None
    if args.corpus is None:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        import genvault  # a sibling script, not a package

        scratch = Path(tempfile.mkdtemp(prefix="bench-gates-"))
        genvault.generate(scratch / "vault", notes=args.notes, seed=1)
        args.corpus = scratch / "vault"
    try:
        return measure(args, here)
    finally:
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)


def measure(args: argparse.Namespace, here: Path) -> int:
    sides = {"new": here / "src"}
    if args.baseline:
        sides = {"old": args.baseline, **sides}
    samples: dict[str, dict[str, dict[str, list[int]]]] = {s: {} for s in sides}
    digests: dict[str, set[str]] = {}
    notes = 0
    for _ in range(args.rounds):
        for side, src in sides.items():
            result = run(src, args.corpus)
            notes = result["notes"]
            for gate, data in result["gates"].items():
                into = samples[side].setdefault(gate, {"cpu": [], "wall": []})
                into["cpu"] += data["cpu"]
                into["wall"] += data["wall"]
                digests.setdefault(gate, set()).add(data["digest"])
    for side in sides:
        gates = samples[side]
        write = {
            k: [a + b for a, b in zip(gates["credential"][k], gates["floor"][k], strict=True)] for k in ("cpu", "wall")
        }
        gates["write path (credential + floor)"] = write
    print(f"{notes} notes x {args.rounds} rounds; ms per call")
    print(f"{'gate':34s} {'side':4s} {'cpu p50':>8s} {'cpu p99':>8s} {'wall p50':>8s} {'cpu total s':>11s}")
    for gate in samples["new"]:
        for side in sides:
            s = samples[side][gate]
            total = sum(s["cpu"]) / 1e9 / args.rounds
            print(
                f"{gate:34s} {side:4s} {pct(s['cpu'], 0.5):8.3f} {pct(s['cpu'], 0.99):8.2f} "
                f"{pct(s['wall'], 0.5):8.3f} {total:11.2f}"
            )
        if len(sides) == 2:
            old, new = samples["old"][gate], samples["new"][gate]
            ratio = pct(old["cpu"], 0.5) / max(pct(new["cpu"], 0.5), 1e-9)
            print(f"{'':34s} old/new cpu p50 x{ratio:.2f}, total x{sum(old['cpu']) / max(sum(new['cpu']), 1):.2f}")
    same = all(len(d) == 1 for d in digests.values())
    print("findings identical old vs new on every note:" if args.baseline else "findings stable:", same)
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
