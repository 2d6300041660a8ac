"""Run every benchmark script in bench/ (``bench_*.py``) one after another and print their output.

Why a runner and not a list: other benchmarks are added by other people; any ``bench/bench_*.py`` found is
run, in name order, each in its own Python process (so one benchmark's memory or threads cannot skew the
next).  Arguments after ``--`` are passed to every script (e.g. ``-- --quick``).  The exit status is the
number of scripts that failed (capped at 100), so ``make bench`` fails if any benchmark does.

    python bench/run_all.py [--only NAME] [--timeout SECONDS] [-- ARGS...]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent


def discover(only: list[str] | None = None) -> list[Path]:
    """``bench_*.py`` in this folder, sorted; ``only`` filters by name (with or without ``.py``)."""
    scripts = sorted(BENCH_DIR.glob("bench_*.py"))
    if only:
        wanted = {name.removesuffix(".py") for name in only}
        scripts = [s for s in scripts if s.stem in wanted]
    return scripts


def run_one(script: Path, args: list[str], timeout: float) -> tuple[int, float]:
    """Run one script with output streamed through; returns (exit status, seconds)."""
    print(f"\n=== {script.name} {' '.join(args)}".rstrip(), flush=True)
    started = time.perf_counter()
    try:
        status = subprocess.run([sys.executable, str(script), *args], timeout=timeout, check=False).returncode
    except subprocess.TimeoutExpired:
        print(f"!!! {script.name} timed out after {timeout:.0f} s", flush=True)
        status = 124
    return status, time.perf_counter() - started


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    passthrough: list[str] = []
    if "--" in argv:
        cut = argv.index("--")
        argv, passthrough = argv[:cut], argv[cut + 1 :]
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", action="append", help="run only this script (repeatable)")
    parser.add_argument("--timeout", type=float, default=900, help="seconds allowed per script (default 900)")
    args = parser.parse_args(argv)
    scripts = discover(args.only)
    if not scripts:
        print("no bench/bench_*.py scripts found", file=sys.stderr)
        return 1
    results = [(script.name, *run_one(script, passthrough, args.timeout)) for script in scripts]
    print("\n=== summary")
    for name, status, seconds in results:
        print(f"{name:<28} {'ok' if status == 0 else f'FAILED ({status})':<12} {seconds:7.1f} s")
    return min(100, sum(1 for _, status, _ in results if status != 0))


if __name__ == "__main__":
    sys.exit(main())
