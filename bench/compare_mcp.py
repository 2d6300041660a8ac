"""The MCP door of two builds side by side under the same load: calls interleaved A, B, A, B on one vault.

Why: on a shared machine the load moves by 2-10x within minutes, so two bench_notes runs one after the other
compare the load as much as the code.  Here both servers run at once, each on its own copy of one imported
vault, and every measured operation alternates between them call by call, so a burst of load hits both
alike; the 32-writer runs and the restarts alternate A, B, A, B.  Read the ratio column.

    python bench/compare_mcp.py --base-src /path/to/old/src [--notes 2000] [--calls 60] [--json OUT]

``--base-src`` is the ``src`` folder of the old build (e.g. ``git archive main src | tar -x -C /tmp/main``):
build A runs with it first on PYTHONPATH; build B is the code this interpreter imports.
``--call-client lean`` makes the single calls with bench_notes' handshake-era wire client instead of the
official one (which speaks 2026-07-28 and so takes the SDK's modern entry, not notegate's single-exchange path).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pygit2

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_notes  # a sibling script: the same client, server process and vault set-up
import genvault
from notegate.config import load_config


class Build(bench_notes.ServerProcess):
    """``notegate serve`` of one build (``src``: what goes first on PYTHONPATH; None: this interpreter's)."""

    def __init__(self, config: Path, log: Path, src: str | None) -> None:
        super().__init__(config, log)
        self.src = src

    def spawn(self) -> Build:
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        if self.src:
            env["PYTHONPATH"] = self.src
        handle = open(self.log, "ab")  # noqa: SIM115 - the child owns it
        try:
            self.spawned_at = time.perf_counter()
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "notegate.cli", "serve", "--config", str(self.config), "--port", str(self.port)],
                stdout=handle,
                stderr=subprocess.STDOUT,
                env=env,
            )
        finally:
            handle.close()
        return self


def loop_cpu_s(pid: int) -> float:
    """User + system CPU seconds of the server's main thread, where uvicorn runs the event loop (the door's
    HTTP, the SDK's kernel, the hops to worker threads), apart from the worker threads (the tools' services
    and the group commit): which side of the server a change moved."""
    fields = Path(f"/proc/{pid}/task/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def copy_vault(template: Path, target: Path) -> Path:
    """A copy of an imported vault directory, its server clone pointed at the copy's own origin."""
    shutil.copytree(template, target, symlinks=True)
    cfg = target / "notegate.toml"
    config = load_config(cfg)
    for name, env in config.environments.items():
        clone = config.state_dir / "envs" / name / "vault.git"
        pygit2.Repository(str(clone)).remotes.set_url("origin", env.origin_url)
    return cfg


def strip_unknown_settings(cfg: Path, src: str) -> None:
    """Drop the settings the older build does not know, one at a time, so a comparison can cross a commit
    that added a setting (each build refuses an unknown key at start-up, as it should)."""
    probe = "import sys; from notegate.config import load_config; load_config(sys.argv[1])"
    for _ in range(50):
        env = {**os.environ, "PYTHONPATH": src}
        done = subprocess.run([sys.executable, "-c", probe, str(cfg)], env=env, capture_output=True, text=True)
        found = re.search(r"unknown key '([A-Za-z0-9_]+)'", done.stderr)
        if done.returncode == 0 or not found:
            return
        lines = cfg.read_text(encoding="utf-8").splitlines(keepends=True)
        cfg.write_text("".join(ln for ln in lines if not ln.startswith(f"{found.group(1)} =")), encoding="utf-8")


def p50(samples: list[float]) -> float:
    return statistics.median(samples) if samples else float("nan")


async def interleaved(
    clients: list[bench_notes.McpClient], calls: int, make, pids: list[int] | None = None
) -> tuple[list[list[float]], list[list[float]]]:
    """``calls`` rounds; each round calls A then B (B then A on odd rounds), with the same arguments.
    Returns each build's wall ms per call and (with ``pids``) its server's CPU ms per call (user + system
    from /proc, read around the call: the server is otherwise idle, so the delta is the call's own cost)."""
    samples: list[list[float]] = [[] for _ in clients]
    cpu: list[list[float]] = [[] for _ in clients]
    for i in range(calls):
        order = range(len(clients)) if i % 2 == 0 else reversed(range(len(clients)))
        for k in order:
            tool, args = await make(clients[k], i, k)
            before = bench_notes.process_cpu_s(pids[k]) if pids else 0.0
            started = time.perf_counter()
            await clients[k].call(tool, args)
            samples[k].append((time.perf_counter() - started) * 1000)
            if pids:
                cpu[k].append((bench_notes.process_cpu_s(pids[k]) - before) * 1000)
    return samples, cpu


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    workdir = Path(tempfile.mkdtemp(prefix="notegate-compare-"))
    builds: list[Build] = []
    rng = random.Random(1)
    try:
        spec = genvault.generate(workdir / "src", args.notes, 1)
        template = bench_notes.init_directory(workdir / "template").parent
        bench_notes.import_vault(template / "notegate.toml", workdir / "src", spec)
        token = bench_notes.bench_token(template / "notegate.toml", workdir / "bench.token")
        srcs = [str(Path(args.base_src).resolve()), None]
        cfgs = [copy_vault(template, workdir / f"vault-{name}") for name in "ab"]
        strip_unknown_settings(cfgs[0], srcs[0])
        probe = next(iter(spec.rare_terms))
        rows: dict[str, list[float]] = {}

        # Restarts, alternating: spawn → first read answered.
        for round_ in range(args.restarts):
            for k in (0, 1) if round_ % 2 == 0 else (1, 0):
                build = Build(cfgs[k], workdir / f"serve-{k}.log", srcs[k]).spawn()
                try:
                    first, _searchable = await bench_notes.wait_until_answering(build, token, spec.paths[0], probe)
                finally:
                    build.stop()
                rows.setdefault(f"restart → first read (s) [{k}]", []).append(first)
                print(f"restart, build {k}: first read {first:.2f} s", file=sys.stderr, flush=True)

        builds = [Build(cfgs[k], workdir / f"serve-{k}.log", srcs[k]).spawn() for k in (0, 1)]
        for build in builds:
            await bench_notes.wait_until_answering(build, token, spec.paths[0], probe)
        async with contextlib.AsyncExitStack() as stack:  # the clients close in reverse order, as anyio needs
            kind = bench_notes.CLIENTS[args.call_client]
            clients = [await stack.enter_async_context(kind(b.url, token)) for b in builds]
            reads = rng.sample(spec.paths, min(args.calls, len(spec.paths)))
            writes = bench_notes.pick_notes(spec, rng, args.calls, set())
            revisions: list[dict[str, tuple[str, str]]] = [{}, {}]

            async def read(_c, i, _k):
                return "read_note", {"path": reads[i % len(reads)]}

            async def list_(_c, _i, _k):
                return "list_notes", {"folder": spec.list_folder, "limit": 200}

            async def search(_c, i, _k):
                queries = [spec.common_terms[0], *spec.two_word_queries]
                return "search_notes", {"query": queries[i % len(queries)]}

            async def write(client, i, k):
                path = writes[i % len(writes)]
                if path not in revisions[k]:
                    note = await client.call("read_note", {"path": path})
                    revisions[k][path] = (note["text"], note["revision"])
                text, revision = revisions[k][path]
                text += f"\ncompared write {i}\n"
                revisions[k].pop(path)  # the next write of it reads it again
                return "write_note", {"path": path, "content": text, "base_revision": revision, "confirmed": True}

            for name, make in (
                ("read_note", read),
                ("list_notes (folder, ≤200)", list_),
                ("search_notes (common, 2-word)", search),
                ("write_note (confirmed)", write),
            ):
                pids = [b.proc.pid for b in builds if b.proc is not None]
                (a, b), (ca, cb) = await interleaved(clients, args.calls, make, pids)
                rows[f"{name} p50 ms [0]"], rows[f"{name} p50 ms [1]"] = a, b
                rows[f"{name} server CPU mean ms [0]"], rows[f"{name} server CPU mean ms [1]"] = ca, cb
                print(f"{name}: p50 {p50(a):.2f} ms (A) vs {p50(b):.2f} ms (B)", file=sys.stderr, flush=True)

        plan = bench_notes.make_plan(args.notes, quick=True)
        for round_ in range(args.writer_rounds):
            for client in args.writer_clients:
                for k in (0, 1) if round_ % 2 == 0 else (1, 0):
                    pid = builds[k].proc.pid  # type: ignore[union-attr]
                    loop_before = loop_cpu_s(pid)
                    run = await bench_notes._mcp_writers(builds[k], token, spec, plan, rng, client=client)
                    loop_s = loop_cpu_s(pid) - loop_before
                    done = max(1, len(run.samples))
                    rows.setdefault(f"32 MCP writers, {client} (commits/s) [{k}]", []).append(run.rate)
                    rows.setdefault(f"32 MCP writers, {client}: server CPU ms/commit [{k}]", []).append(
                        run.server_cpu_s / done * 1000
                    )
                    loop_row = f"32 MCP writers, {client}: server event-loop thread CPU ms/commit [{k}]"
                    rows.setdefault(loop_row, []).append(loop_s / done * 1000)
                    rows.setdefault(f"32 MCP writers, {client}: client CPU ms/commit [{k}]", []).append(
                        run.client_cpu_s / done * 1000
                    )
                    print(
                        f"32 writers ({client}), build {k}: {run.rate:.1f} commits/s; {run.cpu_note()}",
                        file=sys.stderr,
                        flush=True,
                    )
                    if run.errors:
                        print(f"build {k}: {run.errors} writer errors", file=sys.stderr)
        rss = [b.peak_rss_mb() for b in builds]
        return {"rows": rows, "rss": rss, "notes": args.notes, "calls": args.calls}
    finally:
        for build in builds:
            build.stop()
        shutil.rmtree(workdir, ignore_errors=True)


def render(result: dict[str, Any]) -> str:
    rows = result["rows"]
    names = list(dict.fromkeys(key.rsplit(" [", 1)[0] for key in rows))  # in the order measured
    lines = ["| figure | A (base) | B (this build) | B / A |", "| --- | ---: | ---: | ---: |"]
    for name in names:
        a, b = rows[f"{name} [0]"], rows[f"{name} [1]"]
        if "p50" in name:
            fa, fb = p50(a), p50(b)
        elif "mean" in name:  # CPU per call comes in clock ticks (10 ms): only its mean is meaningful
            fa, fb = statistics.fmean(a), statistics.fmean(b)
        else:
            fa, fb = statistics.median(a), statistics.median(b)
        lines.append(f"| {name} | {fa:.2f} | {fb:.2f} | {fb / fa:.2f} |")
    ra, rb = result["rss"]
    lines.append(f"| server peak RSS (MB) | {ra:.0f} | {rb:.0f} | {rb / ra:.2f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-src", required=True, help="the old build's src folder (goes first on PYTHONPATH)")
    parser.add_argument("--notes", type=int, default=2000)
    parser.add_argument("--calls", type=int, default=60, help="interleaved rounds per operation")
    parser.add_argument("--restarts", type=int, default=2, help="restarts of each build, alternating")
    parser.add_argument("--writer-rounds", type=int, default=2, help="32-writer runs of each build, alternating")
    parser.add_argument(
        "--writer-clients",
        nargs="+",
        choices=tuple(bench_notes.CLIENTS),
        default=["lean", "sdk"],
        help="which clients drive the 32-writer runs (lean: the server's capacity; sdk: the official client; "
        "lean-modern: the lean client on the 2026-07-28 wire)",
    )
    parser.add_argument(
        "--call-client",
        choices=tuple(bench_notes.CLIENTS),
        default="sdk",
        help="which client makes the single interleaved calls (sdk: the official client, protocol 2026-07-28, "
        "served by the SDK's modern entry; lean: a handshake-era client, served by notegate's single-exchange path; "
        "lean-modern: the lean client on 2026-07-28)",
    )
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    result = asyncio.run(main_async(args))
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(
        f"notegate compare_mcp: {args.notes} notes, {args.calls} interleaved calls per operation "
        f"({args.call_client} client), load {load}"
    )
    print(render(result))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
