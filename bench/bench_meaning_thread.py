"""bench_notes.py, also reading the CPU of the server's search-by-meaning thread around each 32-writer MCP run.

Why: the server's CPU per commit (bench_notes) mixes the writes and the background catch-up, and on a shared
machine it moves by milliseconds from run to run.  The meaning thread is the server's only thread at a lower
priority (``notegate.vault.meaning.NICE``), so its own CPU is read from ``/proc/<pid>/task/*/stat`` (Linux)
and printed per writers run; divide by the run's commits (32 x per_writer, 640 in a full run).

    python bench/bench_meaning_thread.py --notes 10000 --meaning auto --only mcp

Takes bench_notes.py's arguments.  Run against another checkout's code with ``PYTHONPATH=that/src``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_notes  # a sibling script, not a package

NICE = 10  # notegate.vault.meaning.NICE (not imported: the server's code may be another checkout's)
_TICK = os.sysconf("SC_CLK_TCK")
_real_cpu = bench_notes.process_cpu_s
_marks: list[float] = []


def nice_threads_cpu(pid: int) -> float:
    """CPU seconds (user + system) of ``pid``'s threads running at :data:`NICE`."""
    total = 0.0
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:  # the thread ended meanwhile
            continue
        if int(fields[16]) == NICE:  # field 19 of stat: nice; 14 and 15: utime, stime
            total += (int(fields[11]) + int(fields[12])) / _TICK
    return total


def _process_cpu_s(pid: int | None = None) -> float:
    """bench_notes reads the server's CPU just before and just after each writers run: so does this."""
    if pid is not None:
        _marks.append(nice_threads_cpu(pid))
        if len(_marks) % 2 == 0:
            print(f"meaning thread CPU over a writers run: {_marks[-1] - _marks[-2]:.2f} s", flush=True)
    return _real_cpu(pid)


if __name__ == "__main__":
    bench_notes.process_cpu_s = _process_cpu_s
    raise SystemExit(bench_notes.main(sys.argv[1:]))
