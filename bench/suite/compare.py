"""compare.py A_GLOB B_GLOB [N]: per-test median (setup+call+teardown) at A vs B; biggest slowdowns; per module."""

import collections
import glob
import json
import statistics
import sys
from pathlib import Path


def load(pat):
    runs = [json.loads(Path(f).read_text()) for f in sorted(glob.glob(pat))]
    per = collections.defaultdict(list)
    phase = collections.defaultdict(lambda: collections.defaultdict(list))
    for r in runs:
        for tid, ph in r["tests"].items():
            per[tid].append(sum(v for k, v in ph.items() if k in ("setup", "call", "teardown")))
            for k in ("setup", "call", "teardown"):
                phase[tid][k].append(ph.get(k, 0))
    med = {t: statistics.median(v) for t, v in per.items()}
    ph = {t: {k: statistics.median(v) for k, v in d.items()} for t, d in phase.items()}
    return runs, med, ph


ra, a, pa = load(sys.argv[1])
rb, b, pb = load(sys.argv[2])
n = int(sys.argv[3]) if len(sys.argv) > 3 else 25
common = sorted(set(a) & set(b))
print(f"tests: A {len(a)} B {len(b)} common {len(common)}")
print(f"sum of per-test medians: A {sum(a[t] for t in common):.1f} s  B {sum(b[t] for t in common):.1f} s")
for lbl, P in (("A", pa), ("B", pb)):
    print(lbl, "phases:", {k: round(sum(P[t][k] for t in common), 1) for k in ("setup", "call", "teardown")})
d = sorted(common, key=lambda t: b[t] - a[t], reverse=True)
print(f"\n{n} largest slowdowns (ms): A -> B  [B setup/call/teardown]")
for t in d[:n]:
    phases = "/".join(f"{1000 * pb[t][k]:.0f}" for k in ("setup", "call", "teardown"))
    before = "/".join(f"{1000 * pa[t][k]:.0f}" for k in ("setup", "call", "teardown"))
    print(f"{1000 * a[t]:8.0f} -> {1000 * b[t]:8.0f}  +{1000 * (b[t] - a[t]):7.0f}  [{phases}] A[{before}] {t}")
print(f"\n{n // 2} largest speedups (ms)")
for t in d[::-1][: n // 2]:
    print(f"{1000 * a[t]:8.0f} -> {1000 * b[t]:8.0f}  {1000 * (b[t] - a[t]):7.0f}  {t}")
mods = collections.defaultdict(lambda: [0.0, 0.0, 0])
for t in common:
    m = t.split("::")[0]
    mods[m][0] += a[t]
    mods[m][1] += b[t]
    mods[m][2] += 1
print("\nper module (s): A  B  delta  n")
for m, (x, y, k) in sorted(mods.items(), key=lambda kv: kv[1][1] - kv[1][0], reverse=True):
    print(f"{x:7.1f} {y:7.1f} {y - x:+7.1f} {k:5d} {m}")
