"""Where one MCP call spends its time inside ``notegate serve``: cProfile over the event loop and the workers.

Why a script of its own: bench_notes.py measures what a client waits for; this one says which part of the
server that time is.  It generates a vault, imports it, starts ``notegate serve`` with cProfile ready (the
event loop in the main thread, and every ``anyio.to_thread.run_sync`` call profiled in its worker thread and
merged in), drives one operation a few times to warm it, then many times with the profiler on (SIGUSR1
starts it, SIGUSR2 writes the stats, so start-up stays out: use ``python -X importtime`` for that), and
prints the top functions by cumulative and by own time, with the client's p50 per call.  The profiler slows
everything down: read the shares and the calls per call, not the absolute milliseconds.  cProfile counts
every resumption of a coroutine as a call, so ``ncalls`` of async functions overstates requests.

    python bench/profile_mcp.py [--notes 2000] [--op read|list|search|write|writers] [--calls 200] [--top 40]
                                [--clock wall|cpu] [--search rare|common|mid|nohit|two] [--client sdk|lean|lean-modern]
                                [--meaning false|'"auto"']

``--op writers``: 32 lean wire clients writing at once (bench_notes' load); for write and writers it also
prints the server's own time per commit by area (notegate module, library, C function).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import io
import pstats
import random
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_notes  # a sibling script: the same client, server process and vault set-up
import genvault

SERVE = """
import cProfile, functools, pstats, signal, sys, threading, time
import anyio.to_thread

out = sys.argv[1]
timer = time.thread_time if sys.argv[2] == "cpu" else time.perf_counter  # cpu: each thread's own CPU time
merged = []
lock = threading.Lock()
state = {"on": False}
original = anyio.to_thread.run_sync
main = cProfile.Profile(timer)

def profiled(func):
    @functools.wraps(func)
    def run(*args):
        if not state["on"]:
            return func(*args)
        prof = cProfile.Profile(timer)
        prof.enable()
        try:
            return func(*args)
        finally:
            prof.disable()
            with lock:
                merged.append(prof)
    return run

async def run_sync(func, *args, **kwargs):
    return await original(profiled(func), *args, **kwargs)

def start(_sig, _frame):  # SIGUSR1: the client is about to drive the measured calls
    state["on"] = True
    main.enable()

def stop(_sig, _frame):  # SIGUSR2: done; write the stats before the server is stopped
    state["on"] = False
    main.disable()
    stats = pstats.Stats(main)
    with lock:
        for prof in merged:
            stats.add(prof)
    stats.dump_stats(out)

anyio.to_thread.run_sync = run_sync
signal.signal(signal.SIGUSR1, start)
signal.signal(signal.SIGUSR2, stop)
from notegate import cli
cli.main(sys.argv[3:])
"""


async def drive(
    url: str,
    token: str,
    op: str,
    calls: int,
    spec: genvault.VaultSpec,
    client_kind: str | None = None,
    search_kind: str = "common",
) -> list[float]:
    if op == "writers":
        return await drive_writers(url, token, calls, spec, client_kind or "lean")
    samples: list[float] = []
    async with bench_notes.CLIENTS[client_kind or "sdk"](url, token) as client:
        paths = spec.paths
        for i in range(calls):
            if op == "read":
                args = ("read_note", {"path": paths[i % len(paths)]})
            elif op == "list":
                args = ("list_notes", {"folder": spec.list_folder, "limit": 200})
            elif op == "search":
                queries = bench_notes.search_queries(spec)[SEARCH_KINDS[search_kind]]
                args = ("search_notes", {"query": queries[i % len(queries)]})
            else:
                note = await client.call("read_note", {"path": paths[i % len(paths)]})
                content = note["text"] + f"\nprofiled write {i}\n"
                args = (
                    "write_note",
                    {"path": note["path"], "content": content, "base_revision": note["revision"], "confirmed": True},
                )
            started = time.perf_counter()
            await client.call(*args)
            samples.append((time.perf_counter() - started) * 1000)
    return samples


async def drive_writers(url: str, token: str, calls: int, spec: genvault.VaultSpec, kind: str) -> list[float]:
    """bench_notes' 32 concurrent writers with the lean wire client (the load the ≥ 200 commits/s target is
    judged on), ``calls`` writes in all; each round takes fresh notes.  ``kind`` ``lean-modern``: the same
    writers on the 2026-07-28 wire (the SDK's modern entry serves them)."""
    server = bench_notes.ServerProcess.__new__(bench_notes.ServerProcess)
    server.url, server.proc = url, _SERVER_PROC[0]
    plan = bench_notes.make_plan(len(spec.paths), quick=True)
    plan = dataclasses.replace(plan, per_writer=max(1, calls // bench_notes.WRITERS))
    run = await bench_notes._mcp_writers(server, token, spec, plan, random.Random(len(bench_notes._taken)), kind)
    print(f"32 {kind} writers: {run.rate:.1f} commits/s; {run.cpu_note()}", file=sys.stderr)
    return run.samples


_SERVER_PROC: list[subprocess.Popen | None] = [None]
#: ``--search``: bench_notes' query kinds by a short name (its ``search_queries`` keys)
SEARCH_KINDS = {"rare": "rare term", "common": "common term (every note)", "mid": "mid term", "nohit": "no-hit term",
                "two": "2-word"}  # fmt: skip


def own_time_by_area(stats: pstats.Stats, commits: int) -> str:
    """Own (not cumulative) profiled time grouped by where the function lives, per commit: the areas sum to
    the whole, so the shares say what a write costs the server, part by part.  C functions (pygit2, SQLite,
    sockets, zlib, epoll's wait) have no file: they are one row, and the idle wait in ``poll`` is left out."""
    areas: dict[str, float] = {}
    for (filename, _line, name), (_cc, _nc, tottime, _ct, _callers) in stats.stats.items():  # type: ignore[attr-defined]
        if "poll' of 'select.epoll" in name:
            continue
        if "/notegate/" in filename:
            area = "notegate." + filename.split("/notegate/", 1)[1].removesuffix(".py").replace("/", ".")
            area = ".".join(area.split(".")[:3])
        elif "site-packages/" in filename:
            area = filename.split("site-packages/", 1)[1].split("/", 1)[0]
        elif filename == "~":
            area = "C functions: " + (name.split("'")[1] if "'" in name else name)
        else:
            area = "python stdlib"
        areas[area] = areas.get(area, 0.0) + tottime
    total = sum(areas.values())
    lines = [f"own time by area, per commit ({commits} commits, under the profiler)", "| area | ms/commit | share |"]
    lines.append("| --- | ---: | ---: |")
    for area, seconds in sorted(areas.items(), key=lambda kv: -kv[1])[:30]:
        lines.append(f"| {area} | {seconds / commits * 1000:.2f} | {seconds / total * 100:.1f} % |")
    return "\n".join(lines)


@contextlib.contextmanager
def wrapped_vault_server(
    prefix: str, notes: int, meaning: str, wrapper: str, wrapper_args: Callable[[Path], list[str]]
) -> Iterator[tuple[Path, genvault.VaultSpec, str, bench_notes.ServerProcess]]:
    """A temporary folder holding a generated vault of ``notes``, imported, with ``search_meaning = meaning``,
    a token for it, and ``notegate serve`` on a free port run by ``wrapper`` (``python -c`` code: its
    ``sys.argv[1:]`` are ``wrapper_args(folder)``, then the CLI's arguments); the server killed and the folder
    removed on the way out, whatever happened.  Also what bench/probe_memory.py starts."""
    workdir = Path(tempfile.mkdtemp(prefix=prefix))
    proc = None
    try:
        spec = genvault.generate(workdir / "src", notes, 1)
        cfg = bench_notes.init_directory(workdir / "vault")
        bench_notes.import_vault(cfg, workdir / "src", spec)
        text = cfg.read_text()
        cfg.write_text(re.sub(r"(?m)^search_meaning = .*$", f"search_meaning = {meaning}", text))
        token = bench_notes.bench_token(cfg, workdir / "bench.token")
        port = bench_notes.free_port()
        command = [sys.executable, "-c", wrapper, *wrapper_args(workdir), "serve", "--config", str(cfg)]
        with open(workdir / "serve.log", "wb") as log:  # the child keeps its own copy of the handle
            proc = subprocess.Popen([*command, "--port", str(port)], stdout=log, stderr=subprocess.STDOUT)
        server = bench_notes.ServerProcess(cfg, workdir / "serve.log")
        server.port, server.url, server.proc = port, f"http://127.0.0.1:{port}", proc
        server.spawned_at = time.perf_counter()
        yield workdir, spec, token, server
    finally:
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait()
        shutil.rmtree(workdir, ignore_errors=True)


async def main_async(args: argparse.Namespace) -> int:
    # Search by meaning as asked: "auto" (the default) embeds every note in the background while the calls
    # run, so the profile of the door and the keyword path keeps it off unless asked for.
    started = wrapped_vault_server(
        "notegate-profile-", args.notes, args.meaning, SERVE, lambda folder: [str(folder / "serve.prof"), args.clock]
    )
    with started as (workdir, spec, token, server):
        stats_file = workdir / "serve.prof"
        proc = _SERVER_PROC[0] = server.proc
        await bench_notes.wait_until_answering(server, token, spec.paths[0], next(iter(spec.rare_terms)))
        warm = 5 if args.op != "writers" else 32  # warm: first-call imports and caches stay out
        await drive(server.url, token, args.op, warm, spec, args.client, args.search)
        proc.send_signal(signal.SIGUSR1)
        await asyncio.sleep(0.2)
        samples = await drive(server.url, token, args.op, args.calls, spec, args.client, args.search)
        proc.send_signal(signal.SIGUSR2)
        for _ in range(600):
            if stats_file.exists():
                break
            await asyncio.sleep(0.1)
        await asyncio.sleep(0.5)
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=60)
        op = f"{args.op} {args.search}" if args.op == "search" else args.op
        print(
            f"{op}: {len(samples)} calls over MCP HTTP, client p50 {statistics.median(samples):.2f} ms "
            f"(under the profiler), {args.notes} notes, {args.clock} clock, {args.client or 'default'} client"
        )
        text = io.StringIO()
        stats = pstats.Stats(str(stats_file), stream=text)
        stats.sort_stats("cumulative").print_stats(args.top)
        stats.sort_stats("tottime").print_stats(args.top)
        print(text.getvalue())
        if args.op in ("write", "writers"):
            print(own_time_by_area(stats, len(samples)))
        if args.save is not None:  # for pstats' callers/callees views after the run
            shutil.copyfile(stats_file, args.save)
        return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notes", type=int, default=2000)
    parser.add_argument("--op", choices=("read", "list", "search", "write", "writers"), default="read")
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--top", type=int, default=40)
    parser.add_argument(
        "--client",
        choices=tuple(bench_notes.CLIENTS),
        default=None,
        help="who drives the calls (default: sdk for single calls, lean for writers); sdk and lean-modern speak "
        "2026-07-28 (the SDK's modern entry), lean the handshake-era wire (notegate's single-exchange path)",
    )
    parser.add_argument(
        "--search", choices=tuple(SEARCH_KINDS), default="common", help="--op search: the query kind (cycled)"
    )
    parser.add_argument(
        "--meaning",
        choices=("false", '"auto"'),
        default="false",
        help='[server] search_meaning (default false; "auto": on where installed, embedding in the background)',
    )
    parser.add_argument("--save", type=Path, default=None, help="keep the merged stats file here")
    parser.add_argument(
        "--clock",
        choices=("wall", "cpu"),
        default="wall",
        help="cpu: time each thread's own CPU (time.thread_time), so waiting for the write lock or a socket "
        "costs nothing and the areas say where the server's CPU per commit goes",
    )
    return asyncio.run(main_async(parser.parse_args(argv)))


if __name__ == "__main__":
    sys.exit(main())
