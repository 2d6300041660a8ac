"""What ``notegate serve``'s resident memory is made of, phase by phase: after start, after reads, after
searches, after bench_notes' 32 concurrent writers.

Why a script of its own: bench_notes.py reports one figure, the peak (VmHWM), against issue 33's ≤ 200 MB at
10,000 notes; this one says which part of the process holds it.  The server runs in a wrapper that answers
SIGUSR1 by writing, as JSON, the kernel's counts (VmRSS, VmHWM, RssAnon, RssFile, threads), SQLite's own
allocator (``sqlite3_memory_used`` and its high-water mark: page caches and statements of every connection),
glibc's heap (``mallinfo2``: in use, free inside the heap, mapped chunks) and CPython's object allocator
(blocks allocated).  Nothing is changed in the server: the wrapper only reads.

    python bench/probe_memory.py [--notes 10000] [--meaning false|'"auto"'] [--writer-rounds 1]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_notes  # sibling scripts: the same client, server process and vault set-up
import profile_mcp

SERVE = """
import ctypes, ctypes.util, json, signal, sys, threading

out = sys.argv[1]

class MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in
                ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks",
                 "keepcost")]

def facts():
    status = {}
    for line in open("/proc/self/status"):
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM", "RssAnon", "RssFile", "RssShmem"):
            status[key] = int(value.split()[0]) / 1024
        elif key == "Threads":
            status[key] = int(value)
    libc = ctypes.CDLL(None)
    libc.mallinfo2.restype = MallInfo2
    info = libc.mallinfo2()
    status["malloc in use"] = (info.uordblks + info.hblkhd) / 2**20
    status["malloc free in heap"] = info.fordblks / 2**20
    try:
        sqlite = ctypes.CDLL(ctypes.util.find_library("sqlite3"))
        sqlite.sqlite3_memory_used.restype = ctypes.c_int64
        sqlite.sqlite3_memory_highwater.restype = ctypes.c_int64
        status["sqlite used"] = sqlite.sqlite3_memory_used() / 2**20
        status["sqlite highwater"] = sqlite.sqlite3_memory_highwater(0) / 2**20
    except (OSError, AttributeError):
        pass
    status["python blocks"] = sys.getallocatedblocks()
    names = {}
    for thread in threading.enumerate():
        name = thread.name.split(" ")[0].split("-")[0]
        names[name] = names.get(name, 0) + 1
    status["threads by name"] = names
    status["mappings"] = mappings()
    return status

def mappings():
    # resident KiB by what is mapped (a file's name, or [heap], [anon], [stack]), the largest first
    by, name = {}, "[anon]"
    for line in open("/proc/self/smaps"):
        head = line.split()
        if "-" in head[0] and ":" not in head[0]:
            name = head[5] if len(head) > 5 else "[anon]"
            name = name.rsplit("/", 1)[-1] if name.startswith("/") else name
        elif head[0] == "Rss:":
            by[name] = by.get(name, 0) + int(head[1])
    return dict(sorted(by.items(), key=lambda kv: -kv[1])[:12])

def dump(_sig, _frame):
    def write():
        with open(out, "a") as handle:
            handle.write(json.dumps(facts()) + "\\n")
    threading.Thread(target=write).start()

signal.signal(signal.SIGUSR1, dump)
from notegate import cli
cli.main(sys.argv[2:])
"""


async def snapshot(proc: subprocess.Popen, out: Path, phase: str, rows: list[tuple[str, dict]]) -> None:
    before = out.read_text().count("\n") if out.exists() else 0
    proc.send_signal(signal.SIGUSR1)
    for _ in range(100):
        await asyncio.sleep(0.05)
        if out.exists() and out.read_text().count("\n") > before:
            break
    rows.append((phase, json.loads(out.read_text().splitlines()[-1])))


async def meaning_caught_up(workdir: Path, timeout: float = 600.0) -> None:
    """Wait until the background embedder has stopped growing its vectors file (search by meaning on)."""
    files = list(workdir.rglob("meaning.sqlite*"))
    last, still = -1, 0
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and still < 6:
        await asyncio.sleep(0.5)
        size = sum(p.stat().st_size for p in files if p.exists()) if files else 0
        files = files or list(workdir.rglob("meaning.sqlite*"))
        still = still + 1 if size == last else 0
        last = size


async def main_async(args: argparse.Namespace) -> int:
    started = profile_mcp.wrapped_vault_server(
        "notegate-memory-", args.notes, args.meaning, SERVE, lambda folder: [str(folder / "memory.jsonl")]
    )
    with started as (workdir, spec, token, server):
        out, proc = workdir / "memory.jsonl", server.proc
        await bench_notes.wait_until_answering(server, token, spec.paths[0], next(iter(spec.rare_terms)))
        rows: list[tuple[str, dict]] = []
        await snapshot(proc, out, "answering", rows)
        if "auto" in args.meaning or args.meaning == "true":
            await meaning_caught_up(workdir / "vault")
            await snapshot(proc, out, "meaning caught up", rows)
        async with bench_notes.CLIENTS["sdk"](server.url, token) as client:
            for i in range(200):
                await client.call("read_note", {"path": spec.paths[i % len(spec.paths)]})
            await snapshot(proc, out, "200 reads", rows)
            for queries in bench_notes.search_queries(spec).values():
                for i in range(60):
                    await client.call("search_notes", {"query": queries[i % len(queries)]})
            await snapshot(proc, out, "searches", rows)
        plan = bench_notes.make_plan(len(spec.paths), quick=False)
        for round_ in range(args.writer_rounds):
            for kind in ("sdk", "lean"):
                await bench_notes._mcp_writers(server, token, spec, plan, random.Random(round_), kind)
                await snapshot(proc, out, f"32 {kind} writers", rows)
        keys = [key for key in rows[0][1] if key not in ("threads by name", "mappings")]
        print(f"{args.notes} notes, search_meaning = {args.meaning}")
        print("| phase | " + " | ".join(keys) + " |")
        print("| --- |" + " ---: |" * len(keys))
        for phase, facts in rows:
            cells = [f"{facts.get(k, 0):.1f}" if isinstance(facts.get(k), float) else str(facts.get(k)) for k in keys]
            print(f"| {phase} | " + " | ".join(cells) + " |")
        for phase, facts in rows:
            print(f"{phase}: Python threads {facts['threads by name']}")
        for phase, facts in rows[-1:]:
            print(f"{phase}: resident KiB by mapping {facts['mappings']}")
        return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notes", type=int, default=10_000)
    parser.add_argument("--meaning", default="false", help="the config's search_meaning: false or '\"auto\"'")
    parser.add_argument("--writer-rounds", type=int, default=1)
    return asyncio.run(main_async(parser.parse_args(argv)))


if __name__ == "__main__":
    raise SystemExit(main(argv=None))
