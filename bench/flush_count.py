"""How many flushes (``fsync`` family) acknowledged writes cost: one write at a time, and 32 writers at once.

Why: "acknowledged means durable" (notegate.vault.durable) costs system calls; this counts them on a real
``notegate serve`` (fresh ``notegate init`` vault: local bare origin, SQLite state) with ``strace -c``
attached to every thread of the server for the measured phase only.  Group commit should make the cost per
group, not per write: the 32-writer phase reports the group packs it made beside the flushes.

    python bench/flush_count.py [--durability on|off] [--writes 10]

Needs Debian's ``strace``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_notes import bench_token, free_port, set_durability  # a sibling script
from notegate.services.vaultinit import init_directory

CALLS = "fsync,fdatasync,sync_file_range,syncfs,msync"


def _packs(repo: Path) -> int:
    return len(list((repo / "objects" / "pack").glob("*.pack")))


async def _write(url: str, token: str, path: str) -> None:
    headers = {"Authorization": f"Bearer {token}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=60) as http,
        Client(streamable_http_client(f"{url}/mcp", http_client=http)) as client,
    ):
        result = await client.call_tool(
            "write_note", {"path": path, "content": f"{path}\n", "base_revision": "absent", "confirmed": True}
        )
        assert not result.is_error, result


class Traced:
    """``strace -c`` on every thread of ``pid`` while the block runs; :attr:`counts` is call -> number."""

    def __init__(self, pid: int, out: Path) -> None:
        self.pid, self.out, self.counts = pid, out, {}

    def __enter__(self) -> Traced:
        tids = [arg for tid in os.listdir(f"/proc/{self.pid}/task") for arg in ("-p", tid)]
        self.proc = subprocess.Popen(
            ["strace", "-f", "-c", "-e", f"trace={CALLS}", "-o", str(self.out), *tids], stderr=subprocess.DEVNULL
        )
        time.sleep(1.0)  # attached
        return self

    def __exit__(self, *exc: object) -> None:
        self.proc.send_signal(signal.SIGINT)
        self.proc.wait(timeout=30)
        for line in self.out.read_text().splitlines():
            fields = line.split()
            if len(fields) >= 5 and fields[-1] in CALLS.split(","):
                self.counts[fields[-1]] = int(fields[3])


async def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--durability", choices=("on", "off"), default="on")
    parser.add_argument("--writes", type=int, default=10)
    args = parser.parse_args(argv)
    if shutil.which("strace") is None:
        print("strace is not installed (apt-get install strace)", file=sys.stderr)
        return 2
    work = Path(tempfile.mkdtemp(prefix="notegate-flush-"))
    server = None
    try:
        cfg = init_directory(work / "vault")
        set_durability(cfg, args.durability == "on")
        token = bench_token(cfg, work / "token")
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        with open(work / "serve.log", "wb") as log:
            server = subprocess.Popen(
                [sys.executable, "-m", "notegate.cli", "serve", "--config", str(cfg), "--port", str(port)],
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        async with httpx2.AsyncClient() as http:
            for _ in range(600):
                try:
                    if (await http.get(f"{url}/healthz")).status_code == 200:
                        break
                except httpx2.HTTPError:
                    pass
                await asyncio.sleep(0.1)
        await _write(url, token, "warm/0.md")  # first-write costs (pools, caches) outside the count
        origin = work / "vault" / "origin.git"
        with Traced(server.pid, work / "one.trace") as one:
            for i in range(args.writes):
                await _write(url, token, f"one/{i}.md")
        packs = _packs(origin)
        with Traced(server.pid, work / "group.trace") as group:
            await asyncio.gather(*(_write(url, token, f"group/{i}.md") for i in range(32)))
        groups = _packs(origin) - packs
        total_one, total_group = sum(one.counts.values()), sum(group.counts.values())
        print(f"durability {args.durability}: {args.writes} sequential writes: {one.counts or 'no flushes'}")
        print(f"  per write: {total_one / args.writes:.1f} flushes")
        print(f"32 concurrent writers: {group.counts or 'no flushes'}; {groups} group packs (a roll-up may merge)")
        print(f"  per write: {total_group / 32:.1f} flushes")
        return 0
    finally:
        if server is not None:
            server.kill()
            server.wait()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
