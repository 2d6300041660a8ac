"""The long power-loss run: many cuts at random instants, each under a real server on tests/support/powerfs.py.

Each cut is one :func:`powerloss.run_once` (tests/support/powerloss.py says what it checks) with its own seed, cycling
through the workloads.  With durability on (the default) every acknowledged write must survive every cut;
``--durability off`` is the control: it shows what the flushes protect against (lost writes, refs naming
nothing, a server that does not start), and exits 0 whatever it finds.

    python bench/power_loss.py [--cuts 200] [--seed 1] [--durability on|off] [--workload NAME ...]
           [--writers] [--alone]

Workloads: the MCP write path's ``single``, ``group``, ``append`` (tests/support/powerloss.py) and the other writers'
``promote``, ``contract``, ``import``, ``backup``, ``restore``, ``sync``, ``quarantine`` (tests/support/powerwork.py);
``--writers`` cycles through the latter only.  The summary counts each workload apart.

Needs /dev/fuse, Debian's fuse3 and the dev extras (mfusepy); runs as root.  A failure prints its seed:
``--cuts 1 --seed SEED --workload NAME`` replays it.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1] / "tests"
sys.path.insert(0, str(TESTS))

from notegate.services.vaultinit import init_directory  # noqa: E402
from support.powerloss import WORKLOADS, Outcome, fuse_missing, run_series  # noqa: E402 - after the path
from support.powerwork import ALONE  # noqa: E402
from support.powerwork import WORKLOADS as WRITERS  # noqa: E402

#: ``--workload`` names: the MCP write path's (tests/support/powerloss.py) and the other writers'
#: (tests/support/powerwork.py).
EVERY = (*WORKLOADS, *WRITERS)

#: Cuts made on one vault (a fresh one after): each restart also serves the next cut's writers.
SERIES = 25


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cuts", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1, help="the first cut's seed; cut n uses seed + n")
    parser.add_argument("--durability", choices=("on", "off"), default="on")
    parser.add_argument(
        "--workload", choices=EVERY, action="append", default=None, help="a workload (repeatable; default: all)"
    )
    parser.add_argument("--writers", action="store_true", help="the other writers' workloads only (powerwork.py)")
    parser.add_argument(
        "--alone", action="store_true", help="the other writers without MCP writers beside them (for the control)"
    )
    args = parser.parse_args(argv)
    ALONE["on"] = args.alone
    missing = fuse_missing()
    if missing:
        print(f"power_loss: cannot run: {missing}", file=sys.stderr)
        return 2
    durable = args.durability == "on"
    work = Path(tempfile.mkdtemp(prefix="notegate-power-"))
    started = time.monotonic()
    done: list[Outcome] = []

    def report(outcome: Outcome) -> None:
        done.append(outcome)
        print(f"[{len(done)}/{args.cuts}] {outcome}", flush=True)

    try:
        template = init_directory(work / "template" / "vault").parent
        workloads = args.workload or list(WRITERS if args.writers else EVERY)
        for first in range(0, args.cuts, SERIES):
            seeds = [args.seed + n for n in range(first, min(args.cuts, first + SERIES))]
            turn = workloads[first % len(workloads) :] + workloads[: first % len(workloads)]
            root = work / f"series-{first}"
            run_series(template, root, seeds=seeds, workloads=turn, durable=durable, report=report)
            shutil.rmtree(root, ignore_errors=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for name in dict.fromkeys(o.workload for o in done):
        mine = [o for o in done if o.workload == name]
        print(
            f"  {name}: {len(mine)} cuts, {sum(o.acknowledged for o in mine)} acknowledged, "
            f"{sum(len(o.lost) for o in mine)} lost, {sum(not o.ok for o in mine)} with a problem"
        )
    acknowledged = sum(o.acknowledged for o in done)
    lost = sum(len(o.lost) for o in done)
    failed = sum(not o.ok for o in done)
    minutes = (time.monotonic() - started) / 60
    print(
        f"power_loss: durability {args.durability}: {len(done)} cuts, {acknowledged} acknowledged writes, "
        f"{lost} lost, {failed} cuts with a problem ({minutes:.1f} min)"
    )
    return 0 if (failed == 0 or not durable) else 1


if __name__ == "__main__":
    sys.exit(main())
