"""Strangers at full speed against a real server while an authenticated caller reads and writes (issue 27).

The claim under test: no stranger can stall or fill the server.  For each attacker in turn, then all of them
at once, the caller's read+write pair is timed over MCP (bench_notes' lean wire client, one keep-alive
connection, a trusted workstation token) and compared with its unloaded p50 measured at the start of the
same run.  Printed per attacker: the caller's p50 unloaded and loaded and their ratio (target: at most 2),
how many of the caller's calls were refused or failed (target: none), how much the state database and the
origin grew during the phase, and how many requests the attacker made.

The attackers (each its own process, so its CPU is not the caller's, and its own loopback address: the caller is
127.0.0.1, a stranger is another peer; the machine's cores are shared):

* ``slow-heads``: 300 connections from one peer (127.0.0.2) that send half a request head and then nothing; every one
  the server closes is opened again at once.
* ``slow-heads-spread``: the same from 20 loopback addresses (13 each, under the per-peer cap), the most a
  botnet on one host could do.
* ``cimd-silent``: anonymous ``/authorize`` with a client-metadata URL on a local host that accepts and never
  answers (the server's CIMD fetch waits its deadline; ``cimd_private_hosts`` lets localhost through, as the
  tests do), 64 at a time.
* ``consent-flood``: one registered client, ``POST /authorize`` with an 8 KiB ``state``, 16 at a time
  (each answer is a pending consent request).
* ``registration-flood``: ``POST /register``, 16 at a time.
* ``foreign-host``: ``/metrics``, ``/healthz``, ``/mcp``, ``/authorize`` with ``Host: evil.example``.

It is a measurement, not a test: it reports whatever it sees and exits 0 (the suite holds short versions of
the attackers as regression tests).  Everything runs on 127.0.0.1 in a temporary directory that is removed;
the server and every attacker are stopped in ``finally``.

    python bench/bench_attack.py                  # 8 s per phase
    python bench/bench_attack.py --seconds 3      # quicker
    python bench/bench_attack.py --only slow-heads,foreign-host --json /tmp/attack.json
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import hashlib
import json
import os
import secrets
import select
import selectors
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx2

sys.path.insert(0, str(Path(__file__).resolve().parent))
if TYPE_CHECKING:
    import bench_notes  # a sibling script (imported lazily: an attacker process starts without it)

ATTACKERS = ("slow-heads", "slow-heads-spread", "cimd-silent", "consent-flood", "registration-flood", "foreign-host")
CALLBACK = "http://127.0.0.1:33333/callback"
NOTE = "projects/attack-bench.md"
WARMUP_SECONDS = 1.0
#: How long an attacker may take to get its first answer before the caller is measured anyway.
READY_SECONDS = 30.0
#: A call of the caller that takes longer than this counts as a failure (the server stalled it).
CALL_TIMEOUT_SECONDS = 15.0
#: Set in an attacker process when the parent closes its stdin: the phase is over.
STOP = threading.Event()


def ready() -> None:
    """Tell the parent the attack is under way (it measures only from then on)."""
    print("ready", flush=True)


# ----------------------------------------------------------------------------------------------- attackers


def _pkce() -> dict[str, str]:
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).decode().rstrip("=")
    return {"code_challenge": challenge, "code_challenge_method": "S256"}


def attack_slow_heads(port: int, sources: list[str], per_source: int) -> int:
    """Keep ``per_source`` half-head connections open from each source; reopen each one the server closes."""
    head = f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Ty".encode()
    selector = selectors.DefaultSelector()
    opened = 0

    def open_one(source: str) -> None:
        nonlocal opened
        try:
            sock = socket.create_connection(("127.0.0.1", port), timeout=2, source_address=(source, 0))
            sock.sendall(head)
            sock.setblocking(False)
            selector.register(sock, selectors.EVENT_READ, source)
            opened += 1
        except OSError:
            time.sleep(0.001)

    for source in sources:
        for _ in range(per_source):
            open_one(source)
    ready()
    while not STOP.is_set():
        for key, _ in selector.select(timeout=0.05):
            sock = key.fileobj
            try:
                data = sock.recv(4096)  # type: ignore[union-attr]
            except OSError:
                data = b""
            if not data:  # closed (an answer is read first; the close comes next)
                selector.unregister(sock)
                sock.close()  # type: ignore[union-attr]
                open_one(key.data)
    for key in list(selector.get_map().values()):
        key.fileobj.close()  # type: ignore[union-attr]
    return opened


#: Each flood comes from its own loopback address, never the caller's (127.0.0.1): a stranger is another peer.
FLOOD_SOURCE = {"cimd-silent": "127.0.0.3", "consent-flood": "127.0.0.4", "registration-flood": "127.0.0.5"}
FLOOD_SOURCE["foreign-host"] = "127.0.0.6"


async def _flood(concurrency: int, one: Any, source: str) -> int:
    """Run ``one(http, n)`` from ``concurrency`` tasks until the phase is over; the number of requests made."""
    done = 0
    limits = httpx2.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    transport = httpx2.AsyncHTTPTransport(limits=limits, local_address=source)
    async with httpx2.AsyncClient(timeout=30, transport=transport) as http:

        async def worker(w: int) -> None:
            nonlocal done
            n = 0
            while not STOP.is_set():
                n += 1
                try:
                    await one(http, w * 1_000_000 + n)
                except (httpx2.HTTPError, OSError):
                    await asyncio.sleep(0.001)
                done += 1

        async def started() -> None:
            while done == 0 and not STOP.is_set():
                await asyncio.sleep(0.01)
            ready()

        await asyncio.gather(started(), *(worker(w) for w in range(concurrency)))
    return done


def silent_host() -> tuple[socket.socket, threading.Thread]:
    """A TCP listener on 127.0.0.1 that accepts every connection and never sends a byte (no TLS either)."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(4096)
    held: list[socket.socket] = []

    def accept() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            held.append(conn)

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    return listener, thread


def attack_cimd(url: str, silent_port: int) -> int:
    async def one(http: httpx2.AsyncClient, n: int) -> None:
        params = {
            "response_type": "code",
            "client_id": f"https://localhost:{silent_port}/client-{n}.json",
            "redirect_uri": CALLBACK,
            "state": "s",
            **_pkce(),
        }
        await http.get(f"{url}/authorize", params=params)

    return asyncio.run(_flood(64, one, FLOOD_SOURCE["cimd-silent"]))


def attack_consent(url: str) -> int:
    body = {
        "client_name": "flood",
        "redirect_uris": [CALLBACK],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
    }
    with httpx2.Client(transport=httpx2.HTTPTransport(local_address=FLOOD_SOURCE["consent-flood"])) as http:
        client_id = http.post(f"{url}/register", json=body, timeout=30).json().get("client_id", "none")
    state = "s" * 8192

    async def one(http: httpx2.AsyncClient, n: int) -> None:
        form = {"response_type": "code", "client_id": client_id, "redirect_uri": CALLBACK, "state": state, **_pkce()}
        await http.post(f"{url}/authorize", data=form)

    return asyncio.run(_flood(16, one, FLOOD_SOURCE["consent-flood"]))


def attack_registration(url: str) -> int:
    async def one(http: httpx2.AsyncClient, n: int) -> None:
        body = {
            "client_name": f"flood-{n}",
            "redirect_uris": [CALLBACK],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": "none",
        }
        await http.post(f"{url}/register", json=body)

    return asyncio.run(_flood(16, one, FLOOD_SOURCE["registration-flood"]))


def attack_foreign_host(url: str) -> int:
    paths = ("/metrics", "/healthz", "/mcp", "/authorize")

    async def one(http: httpx2.AsyncClient, n: int) -> None:
        await http.get(f"{url}{paths[n % len(paths)]}", headers={"Host": "evil.example"})

    return asyncio.run(_flood(16, one, FLOOD_SOURCE["foreign-host"]))


def run_attacker(name: str, url: str, silent_port: int) -> int:
    """One attacker until the parent closes this process's stdin; the number of requests it made."""

    def watch_stdin() -> None:
        sys.stdin.read()
        STOP.set()

    threading.Thread(target=watch_stdin, daemon=True).start()
    port = int(url.rsplit(":", 1)[1])
    if name == "slow-heads":
        return attack_slow_heads(port, ["127.0.0.2"], 300)
    if name == "slow-heads-spread":
        return attack_slow_heads(port, [f"127.0.0.{n}" for n in range(20, 40)], 13)
    if name == "cimd-silent":
        return attack_cimd(url, silent_port)
    if name == "consent-flood":
        return attack_consent(url)
    if name == "registration-flood":
        return attack_registration(url)
    if name == "foreign-host":
        return attack_foreign_host(url)
    raise SystemExit(f"unknown attacker {name}")


# ------------------------------------------------------------------------------------------------ the caller


async def caller(url: str, token: str, seconds: float, minimum: int = 20) -> dict[str, Any]:
    """Read then write one note, again and again, for ``seconds`` (at least ``minimum`` pairs): each pair's
    wall time in ms, and every failure (a refusal, an HTTP error, a closed connection) with its text."""
    import bench_notes

    times: list[float] = []
    failures: list[str] = []
    deadline = time.monotonic() + seconds
    hard_deadline = deadline + 4 * CALL_TIMEOUT_SECONDS  # the minimum of pairs is wanted, not waited for forever
    client: bench_notes.LeanMcpClient | None = None
    n = 0
    try:
        while (time.monotonic() < deadline or len(times) < minimum) and time.monotonic() < hard_deadline:
            try:
                if client is None:
                    client = await bench_notes.LeanMcpClient(url, token, timeout=CALL_TIMEOUT_SECONDS).__aenter__()
                started = time.perf_counter()
                note = await client.call("read_note", {"path": NOTE})
                n += 1
                args = {"path": NOTE, "content": f"# attack bench\n\n{n}\n", "base_revision": note["revision"]}
                await client.call("write_note", {**args, "confirmed": True})
                times.append((time.perf_counter() - started) * 1000)
            except (RuntimeError, httpx2.HTTPError, OSError, KeyError) as exc:
                failures.append(f"{type(exc).__name__}: {str(exc)[:160]}")
                if client is not None:
                    await client.__aexit__(None, None, None)
                    client = None
    finally:
        if client is not None:
            await client.__aexit__(None, None, None)
    return {"pairs": len(times), "p50_ms": statistics.median(times) if times else float("nan"), "failures": failures}


async def create_note(url: str, token: str) -> None:
    import bench_notes

    async with bench_notes.LeanMcpClient(url, token, timeout=30) as client:
        args = {"path": NOTE, "content": "# attack bench\n", "base_revision": "absent", "confirmed": True}
        await client.call("write_note", args)


# ------------------------------------------------------------------------------------------------- the run


def size_of(*paths: Path) -> int:
    total = 0
    for path in paths:
        if path.is_file():
            total += path.stat().st_size
        elif path.is_dir():
            total += sum(f.stat().st_size for f in path.rglob("*") if f.is_file())
    return total


def setup(work: Path) -> tuple[Path, str]:
    """A fresh vault whose server may fetch client metadata from localhost (as the tests let it), a trusted
    token, and the note the caller reads and writes."""
    import bench_notes
    from notegate.lab.standins import make_ca
    from notegate.services.vaultinit import init_directory

    config = init_directory(work / "vault")
    ca, _cert, _key = make_ca(work)
    text = config.read_text()
    text = text.replace('cimd_ca_file = ""', f'cimd_ca_file = "{ca}"', 1)
    text = text.replace("cimd_private_hosts = []", 'cimd_private_hosts = ["localhost"]', 1)
    config.write_text(text)
    token = bench_notes.bench_token(config, work / "token")
    return config, token


def phase(name: str, attackers: list[str], server: bench_notes.ServerProcess, token: str, args: argparse.Namespace,
          silent_port: int, state: Path, origin: Path, unloaded: float | None) -> dict[str, Any]:  # fmt: skip
    before = (size_of(state.parent / "state.sqlite", state.parent / "state.sqlite-wal"), size_of(origin))
    procs = []
    for attacker in attackers:
        argv = [sys.executable, __file__, "--attacker", attacker, "--url", server.url]
        argv += ["--silent-port", str(silent_port)]
        pipes = {"stdin": subprocess.PIPE, "stdout": subprocess.PIPE, "stderr": subprocess.PIPE}
        procs.append(subprocess.Popen(argv, text=True, **pipes))  # type: ignore[call-overload]
    notes: list[str] = []
    try:
        deadline = time.monotonic() + READY_SECONDS
        for attacker, proc in zip(attackers, procs, strict=True):  # measure once every attacker is under way
            assert proc.stdout is not None
            readable, _, _ = select.select([proc.stdout], [], [], max(0.0, deadline - time.monotonic()))
            line = proc.stdout.readline().strip() if readable else ""
            if line != "ready":  # it runs, but none of its requests was answered yet: measure anyway
                notes.append(f"{attacker}: no request answered within {READY_SECONDS:g} s")
        if attackers:
            time.sleep(WARMUP_SECONDS)
        measured = asyncio.run(caller(server.url, token, args.seconds))
    finally:
        made = 0
        for proc in procs:
            try:
                out, err = proc.communicate(input="", timeout=120)  # closes its stdin: the phase is over
                made += int(out.strip().splitlines()[-1] if out.strip() else 0)
                if proc.returncode:
                    print(f"  attacker exited {proc.returncode}: {err.strip()[-300:]}", file=sys.stderr)
            except (subprocess.TimeoutExpired, ValueError):
                proc.kill()
                proc.wait()
    after = (size_of(state.parent / "state.sqlite", state.parent / "state.sqlite-wal"), size_of(origin))
    p50 = measured["p50_ms"]
    return {
        "phase": name,
        "caller_pairs": measured["pairs"],
        "caller_p50_ms": round(p50, 2),
        "unloaded_p50_ms": round(unloaded, 2) if unloaded else round(p50, 2),
        "ratio": round(p50 / unloaded, 2) if unloaded else 1.0,
        "caller_failures": len(measured["failures"]),
        "first_failure": measured["failures"][0] if measured["failures"] else "",
        "state_db_growth_kb": round((after[0] - before[0]) / 1024, 1),
        "origin_growth_kb": round((after[1] - before[1]) / 1024, 1),
        "attacker_requests": made,
        "server_alive": server.alive(),
        "notes": notes,
    }


def render(rows: list[dict[str, Any]]) -> str:
    head = f"{'phase':<20} {'p50 ms':>8} {'unloaded':>8} {'ratio':>6} {'pairs':>6} {'refused':>7} {'state KB':>9} "
    head += f"{'origin KB':>9} {'attacks':>8}"
    lines = [head]
    for r in rows:
        lines.append(
            f"{r['phase']:<20} {r['caller_p50_ms']:>8} {r['unloaded_p50_ms']:>8} {r['ratio']:>6} "
            f"{r['caller_pairs']:>6} {r['caller_failures']:>7} {r['state_db_growth_kb']:>9} "
            f"{r['origin_growth_kb']:>9} {r['attacker_requests']:>8}"
        )
    for r in rows:
        if r["first_failure"]:
            lines.append(f"  {r['phase']}: first failure: {r['first_failure']}")
        for note in r.get("notes", []):
            lines.append(f"  {r['phase']}: {note}")
        if not r["server_alive"]:
            lines.append(f"  {r['phase']}: the server died")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=8.0, help="caller measurement per phase")
    parser.add_argument("--quick", action="store_true", help="3 s per phase (run_all.py -- --quick)")
    parser.add_argument("--only", default="", help="comma-separated attackers (default: all, then all at once)")
    parser.add_argument("--json", type=Path, help="write the rows here")
    parser.add_argument("--attacker", help=argparse.SUPPRESS)  # a child: run one attacker, print its count
    parser.add_argument("--url", help=argparse.SUPPRESS)
    parser.add_argument("--silent-port", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.attacker:
        print(run_attacker(args.attacker, args.url, args.silent_port), flush=True)
        return 0
    if args.quick:
        args.seconds = min(args.seconds, 3.0)
    chosen = [a for a in args.only.split(",") if a] or list(ATTACKERS)
    work = Path(tempfile.mkdtemp(prefix="notegate-attack-"))
    listener, _thread = silent_host()
    import bench_notes

    server: bench_notes.ServerProcess | None = None
    try:
        config, token = setup(work)
        from notegate.config import load_config

        loaded = load_config(config)
        state = loaded.state_dir / "state.sqlite"
        origin = Path(loaded.environments[loaded.default_environment].origin_url)
        server = bench_notes.ServerProcess(config, work / "serve.log").spawn()
        deadline = time.monotonic() + bench_notes.START_TIMEOUT
        while time.monotonic() < deadline:
            try:
                if httpx2.get(f"{server.url}/healthz", timeout=2).status_code == 200:
                    break
            except httpx2.HTTPError:
                time.sleep(0.1)
        else:
            raise SystemExit(f"the server did not start: {server.tail()}")
        silent_port = listener.getsockname()[1]
        asyncio.run(create_note(server.url, token))
        asyncio.run(caller(server.url, token, 1.0))  # warm up: the caches are filled
        rows = [phase("unloaded", [], server, token, args, silent_port, state, origin, None)]
        unloaded = rows[0]["caller_p50_ms"]
        print(render(rows), flush=True)
        for attacker in chosen:
            rows.append(phase(attacker, [attacker], server, token, args, silent_port, state, origin, unloaded))
            print(render(rows[-1:]).splitlines()[1], flush=True)
        if len(chosen) > 1:
            rows.append(phase("all-at-once", chosen, server, token, args, silent_port, state, origin, unloaded))
        print("\n" + render(rows))
        print(f"\nserver peak RSS {server.peak_rss_mb():.0f} MB; state DB {size_of(state) // 1024} KB; "
              f"origin {size_of(origin) // 1024} KB")  # fmt: skip
        if args.json:
            args.json.write_text(json.dumps(rows, indent=2))
        return 0
    finally:
        if server is not None:
            server.stop()
        listener.close()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    raise SystemExit(main())
