"""Strangers at full speed against a real server while an authenticated caller reads and writes (issue 27).

The claim under test: no stranger can stall or fill the server.  For each attacker in turn, then all of them
at once, the caller's read+write pair is timed over MCP (bench_notes' lean wire client, one keep-alive
connection, a trusted workstation token): first unloaded, then under the attacker, back to back in the same
phase (helpers' test runs come and go on a shared machine: a ratio against an unloaded p50 taken minutes
before measures them, not the attacker).  Printed per phase: the caller's p50 unloaded and loaded and their
ratio (target: at most 2), how many of the caller's calls were refused or failed (target: none), how much the
state database and the origin grew, how many requests or connections the attacker made, and the CPU that the
server, the attackers and the caller (this process) used during the loaded window, in % of one core.

The attackers (each its own process, so its CPU is not the caller's, and its own loopback address: the caller is
127.0.0.1, a stranger is another peer).  They are as cheap as a client can be in Python -- raw sockets, raw
HTTP/1.1 bytes on asyncio streams, no HTTP library -- so that what they cost the shared cores is mostly the
kernel's share of each connection, and what they cost the server is what the server makes of them:

* ``slow-heads``: 300 connections from one peer (127.0.0.2) that send half a request head and then nothing; every one
  the server closes is opened again at once (so it is also one peer reconnecting at full speed).
* ``slow-heads-spread``: the same from 20 loopback addresses (13 each, under the per-peer cap), the most a
  botnet on one host could do.
* ``cimd-silent``: anonymous ``/authorize`` with a client-metadata URL on a local host that accepts and never
  answers (the server's CIMD fetch waits its deadline; ``cimd_private_hosts`` lets localhost through, as the
  tests do), 64 at a time.
* ``consent-flood``: one registered client, ``POST /authorize`` with an 8 KiB ``state``, 16 at a time
  (each answer is a pending consent request).
* ``registration-flood``: ``POST /register``, 16 at a time.
* ``foreign-host``: ``/metrics``, ``/healthz``, ``/mcp``, ``/authorize`` with ``Host: evil.example``.
* ``reconnect``: one peer (127.0.0.7) sending a whole request without a credential on a new connection each time,
  16 at a time, at full speed (``/healthz``; ``/notes`` at the LiveSync gate).

``--door livesync`` measures the LiveSync gate instead (bench/attack_livesync.py): the caller is a device's sync
round through the gate (diff, push, pull, checkpoint), the CPU is the gate's, and the attackers are the ones that
apply to any HTTP port: ``slow-heads``, ``slow-heads-spread``, ``reconnect``.

``--pin`` puts the attackers on one core and the server and the caller on the other (``sched_setaffinity``):
on a 2-core machine the attackers' own CPU otherwise competes with the server's and the caller's, so "all at
once" measures the machine as much as the server; pinned, it measures what the server does with them.

It is a measurement, not a test: it reports whatever it sees and exits 0 (the suite holds short versions of
the attackers as regression tests).  Everything runs on 127.0.0.1 in a temporary directory that is removed;
the server and every attacker are stopped in ``finally``.

    python bench/bench_attack.py                  # 8 s per measurement
    python bench/bench_attack.py --seconds 5 --pin
    python bench/bench_attack.py --only slow-heads,foreign-host --json /tmp/attack.json
    python bench/bench_attack.py --door livesync --seconds 5
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
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx2

sys.path.insert(0, str(Path(__file__).resolve().parent))
if TYPE_CHECKING:
    import bench_notes  # a sibling script (imported lazily: an attacker process starts without it)

ATTACKERS = ("slow-heads", "slow-heads-spread", "cimd-silent", "consent-flood", "registration-flood", "foreign-host")
#: The attackers each door is measured under by default (the others are the MCP server's own routes).
DOOR_ATTACKERS = {"mcp": ATTACKERS, "livesync": ("slow-heads", "slow-heads-spread", "reconnect")}
#: What ``reconnect`` asks, per door: an anonymous request the door answers itself.
RECONNECT_PATH = {"mcp": "/healthz", "livesync": "/notes"}
CALLBACK = "http://127.0.0.1:33333/callback"
NOTE = "projects/attack-bench.md"
WARMUP_SECONDS = 1.0
#: How long an attacker may take to get its first answer before the caller is measured anyway.
READY_SECONDS = 30.0
#: A call of the caller that takes longer than this counts as a failure (the server stalled it).
CALL_TIMEOUT_SECONDS = 15.0
#: Set in an attacker process when the parent closes its stdin: the phase is over.
STOP = threading.Event()
#: Connections opened or requests made so far by this attacker process (told to the parent on "mark").
MADE = [0]


def ready() -> None:
    """Tell the parent the attack is under way (it measures only from then on)."""
    print("ready", flush=True)


# ----------------------------------------------------------------------------------------------- attackers


def _pkce() -> dict[str, str]:
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).decode().rstrip("=")
    return {"code_challenge": challenge, "code_challenge_method": "S256"}


def attack_slow_heads(port: int, sources: list[str], per_source: int) -> int:
    """Keep ``per_source`` half-head connections open from each source; reopen each one the server closes,
    at once.  Raw sockets and one selector: no name lookup, no HTTP library."""
    head = f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Ty".encode()
    selector = selectors.DefaultSelector()
    opened = 0

    def open_one(source: str) -> None:
        nonlocal opened
        sock = socket.socket()
        try:
            sock.settimeout(2)
            sock.bind((source, 0))
            sock.connect(("127.0.0.1", port))
            sock.sendall(head)
            sock.setblocking(False)
            selector.register(sock, selectors.EVENT_READ, source)
            opened += 1
            MADE[0] += 1
        except OSError:
            sock.close()
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
FLOOD_SOURCE["reconnect"] = "127.0.0.7"


def raw_request(method: str, port: int, target: str, *, host: str = "", form: dict[str, str] | None = None,
                json_body: object = None) -> bytes:  # fmt: skip
    """The bytes of one HTTP/1.1 request (keep-alive), built by hand: the cheapest client there is."""
    headers = [f"{method} {target} HTTP/1.1", f"Host: {host or f'127.0.0.1:{port}'}"]
    body = b""
    if form is not None:
        body = urllib.parse.urlencode(form).encode()
        headers.append("Content-Type: application/x-www-form-urlencoded")
    elif json_body is not None:
        body = json.dumps(json_body).encode()
        headers.append("Content-Type: application/json")
    if body or method == "POST":
        headers.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(headers) + "\r\n\r\n").encode() + body


async def exchange(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, request: bytes) -> tuple[int, bytes]:
    """Send one request and read its answer (a Content-Length or chunked body); its status and body.  Raises
    ConnectionError when the server closes (or says it will)."""
    writer.write(request)
    head = await reader.readuntil(b"\r\n\r\n")
    status = int(head[9:12])
    lowered = head.lower()
    body = b""
    if b"transfer-encoding: chunked" in lowered:
        body = await reader.readuntil(b"0\r\n\r\n")
    else:
        for line in lowered.split(b"\r\n"):
            if line.startswith(b"content-length:"):
                body = await reader.readexactly(int(line[15:]))
    if b"connection: close" in lowered:
        raise ConnectionError("closed by the server")
    return status, body


async def _flood(concurrency: int, port: int, request: Any, source: str) -> int:
    """Send ``request(n)`` from ``concurrency`` keep-alive connections until the phase is over (a connection
    the server closes is opened again); the number of requests made."""
    done = 0

    async def worker(w: int) -> None:
        nonlocal done
        n = 0
        writer: asyncio.StreamWriter | None = None
        while not STOP.is_set():
            try:
                if writer is None:
                    reader, writer = await asyncio.open_connection("127.0.0.1", port, local_addr=(source, 0))
                n += 1
                await exchange(reader, writer, request(w * 1_000_000 + n))
            except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError):
                if writer is not None:
                    writer.close()
                    writer = None
                await asyncio.sleep(0.001)
            done += 1
            MADE[0] += 1
        if writer is not None:
            writer.close()

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


def attack_cimd(port: int, silent_port: int) -> int:
    def request(n: int) -> bytes:
        params = {
            "response_type": "code",
            "client_id": f"https://localhost:{silent_port}/client-{n}.json",
            "redirect_uri": CALLBACK,
            "state": "s",
            **_pkce(),
        }
        return raw_request("GET", port, f"/authorize?{urllib.parse.urlencode(params)}")

    return asyncio.run(_flood(64, port, request, FLOOD_SOURCE["cimd-silent"]))


REGISTRATION = {
    "redirect_uris": [CALLBACK],
    "grant_types": ["authorization_code", "refresh_token"],
    "response_types": ["code"],
    "token_endpoint_auth_method": "none",
}


async def _register(port: int, source: str) -> str:
    """One registration (retried: this address may still be over its connection budget from a phase before)."""
    body = {"client_name": "flood", **REGISTRATION}
    while True:
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port, local_addr=(source, 0))
            try:
                _status, answer = await exchange(reader, writer, raw_request("POST", port, "/register", json_body=body))
                found = json.loads(answer).get("client_id")
                if found:
                    return str(found)
            finally:
                writer.close()
        except (OSError, asyncio.IncompleteReadError, ValueError):
            pass
        if STOP.is_set():
            return "none"
        await asyncio.sleep(0.5)


def attack_consent(port: int) -> int:
    source = FLOOD_SOURCE["consent-flood"]
    client_id = asyncio.run(_register(port, source))
    state = "s" * 8192

    def request(n: int) -> bytes:
        form = {"response_type": "code", "client_id": client_id, "redirect_uri": CALLBACK, "state": state, **_pkce()}
        return raw_request("POST", port, "/authorize", form=form)

    return asyncio.run(_flood(16, port, request, source))


def attack_registration(port: int) -> int:
    def request(n: int) -> bytes:
        return raw_request("POST", port, "/register", json_body={"client_name": f"flood-{n}", **REGISTRATION})

    return asyncio.run(_flood(16, port, request, FLOOD_SOURCE["registration-flood"]))


def attack_foreign_host(port: int) -> int:
    paths = ("/metrics", "/healthz", "/mcp", "/authorize")
    requests = [raw_request("GET", port, path, host="evil.example") for path in paths]

    def request(n: int) -> bytes:
        return requests[n % len(requests)]

    return asyncio.run(_flood(16, port, request, FLOOD_SOURCE["foreign-host"]))


def attack_reconnect(port: int, path: str) -> int:
    """A whole request without a credential, each on a new connection (``Connection: close``)."""
    request = raw_request("GET", port, path).replace(b"\r\n\r\n", b"\r\nConnection: close\r\n\r\n", 1)
    return asyncio.run(_flood(16, port, lambda n: request, FLOOD_SOURCE["reconnect"]))


def run_attacker(name: str, url: str, silent_port: int, door: str = "mcp") -> int:
    """One attacker until the parent closes this process's stdin; the number of requests it made."""

    def watch_stdin() -> None:
        for line in sys.stdin:  # "mark": say how many so far (the parent's window starts or ends)
            if line.strip() == "mark":
                print(f"made {MADE[0]}", flush=True)
        STOP.set()

    threading.Thread(target=watch_stdin, daemon=True).start()
    port = int(url.rsplit(":", 1)[1])
    if name == "slow-heads":
        return attack_slow_heads(port, ["127.0.0.2"], 300)
    if name == "slow-heads-spread":
        return attack_slow_heads(port, [f"127.0.0.{n}" for n in range(20, 40)], 13)
    if name == "cimd-silent":
        return attack_cimd(port, silent_port)
    if name == "consent-flood":
        return attack_consent(port)
    if name == "registration-flood":
        return attack_registration(port)
    if name == "foreign-host":
        return attack_foreign_host(port)
    if name == "reconnect":
        return attack_reconnect(port, RECONNECT_PATH[door])
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


def cpu_seconds(pid: int) -> float:
    """User + system CPU a process (every thread of it) has used so far; 0 once it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


#: --pin: the server and the caller (this process) on the first core, the attackers on the second.
SERVER_CORE, ATTACKER_CORE = 0, 1


def mark(procs: list[subprocess.Popen[str]]) -> int:
    """Ask every attacker how many connections or requests it has made so far; their sum."""
    total = 0
    asked = []
    for proc in procs:
        assert proc.stdin is not None and proc.stdout is not None
        try:
            proc.stdin.write("mark\n")
            proc.stdin.flush()
            asked.append(proc)
        except (BrokenPipeError, ValueError):  # it exited: its count is read at the end
            pass
    for proc in asked:
        assert proc.stdout is not None
        readable, _, _ = select.select([proc.stdout], [], [], 10.0)
        line = proc.stdout.readline() if readable else ""
        if line.startswith("made "):
            total += int(line.split()[1])
    return total


@dataclass
class Door:
    """What a phase measures: the process that serves the door (its URL, its pid for CPU), and the caller's
    timed rounds for some seconds (``{"pairs", "p50_ms", "failures"}``)."""

    name: str
    url: str
    pid: int
    alive: Callable[[], bool]
    measure: Callable[[float], dict[str, Any]]


def phase(name: str, attackers: list[str], door: Door, args: argparse.Namespace, silent_port: int, state: Path,
          origin: Path) -> dict[str, Any]:  # fmt: skip
    """The caller unloaded, then under ``attackers``, back to back: one row."""
    unloaded = unloaded_cpu = None
    if attackers:
        cpu_before = cpu_seconds(door.pid)
        quiet = door.measure(args.seconds)
        unloaded = quiet["p50_ms"]
        unloaded_cpu = (cpu_seconds(door.pid) - cpu_before) / max(1, quiet["pairs"])  # server CPU a pair
    before = (size_of(state.parent / "state.sqlite", state.parent / "state.sqlite-wal"), size_of(origin))
    procs = []
    for attacker in attackers:
        argv = [sys.executable, __file__, "--attacker", attacker, "--url", door.url]
        argv += ["--silent-port", str(silent_port), "--door", door.name]
        pipes = {"stdin": subprocess.PIPE, "stdout": subprocess.PIPE, "stderr": subprocess.PIPE}
        pin = (lambda: os.sched_setaffinity(0, {ATTACKER_CORE})) if args.pin else None
        procs.append(subprocess.Popen(argv, text=True, preexec_fn=pin, **pipes))  # type: ignore[call-overload]
    notes: list[str] = []
    cpu: dict[str, float] = {}
    in_window = 0
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
        made_before = mark(procs)
        started = (time.monotonic(), cpu_seconds(door.pid), [cpu_seconds(p.pid) for p in procs])
        own = time.process_time()
        measured = door.measure(args.seconds)
        wall = time.monotonic() - started[0]
        server_used = cpu_seconds(door.pid) - started[1]
        used = sum(cpu_seconds(p.pid) - c for p, c in zip(procs, started[2], strict=True))
        in_window = mark(procs) - made_before
        cpu = {
            "server_cpu_pct": 100 * server_used / wall,
            "attackers_cpu_pct": 100 * used / wall,
            "caller_cpu_pct": 100 * (time.process_time() - own) / wall,
        }
        if unloaded_cpu is not None and in_window:  # the server's CPU beyond what the caller's pairs cost it
            beyond = server_used - measured["pairs"] * unloaded_cpu
            cpu["server_us_per_attack"] = 1e6 * beyond / in_window
    finally:
        made = 0
        for proc in procs:
            try:
                if proc.stdin is not None and proc.poll() is not None:
                    proc.stdin = None  # already gone: nothing to close
                out, err = proc.communicate(input="", timeout=120)  # closes its stdin: the phase is over
                made += int(out.strip().splitlines()[-1] if out.strip() else 0)
                if proc.returncode:
                    print(f"  attacker exited {proc.returncode}: {err.strip()[-300:]}", file=sys.stderr)
            except (subprocess.TimeoutExpired, ValueError):
                proc.kill()
                proc.wait()
    after = (size_of(state.parent / "state.sqlite", state.parent / "state.sqlite-wal"), size_of(origin))
    p50 = measured["p50_ms"]
    base = unloaded if unloaded else p50
    return {
        "phase": name,
        "caller_pairs": measured["pairs"],
        "caller_p50_ms": round(p50, 2),
        "unloaded_p50_ms": round(base, 2),
        "ratio": round(p50 / base, 2),
        "caller_failures": len(measured["failures"]),
        "first_failure": measured["failures"][0] if measured["failures"] else "",
        "state_db_growth_kb": round((after[0] - before[0]) / 1024, 1),
        "origin_growth_kb": round((after[1] - before[1]) / 1024, 1),
        "attacker_requests": made,
        **{key: round(value) for key, value in cpu.items()},
        "attacks_in_window": in_window if attackers else 0,
        "server_alive": door.alive(),
        "notes": notes,
    }


def render(rows: list[dict[str, Any]]) -> str:
    head = f"{'phase':<19} {'unloaded':>8} {'p50 ms':>8} {'ratio':>6} {'pairs':>5} {'refused':>7} {'state KB':>8} "
    head += f"{'origin KB':>9} {'attacks':>8} {'cpu% srv':>8} {'atk':>4} {'caller':>6} {'srv us/atk':>10}"
    lines = [head]
    for r in rows:
        lines.append(
            f"{r['phase']:<19} {r['unloaded_p50_ms']:>8} {r['caller_p50_ms']:>8} {r['ratio']:>6} "
            f"{r['caller_pairs']:>5} {r['caller_failures']:>7} {r['state_db_growth_kb']:>8} "
            f"{r['origin_growth_kb']:>9} {r['attacker_requests']:>8} {r.get('server_cpu_pct', ''):>8} "
            f"{r.get('attackers_cpu_pct', ''):>4} {r.get('caller_cpu_pct', ''):>6} "
            f"{r.get('server_us_per_attack', ''):>10}"
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
    parser.add_argument("--seconds", type=float, default=8.0, help="each caller measurement (unloaded, loaded)")
    parser.add_argument("--pin", action="store_true", help="attackers on one core, server and caller on the other")
    parser.add_argument("--quick", action="store_true", help="3 s per phase (run_all.py -- --quick)")
    parser.add_argument("--only", default="", help="comma-separated attackers (default: all, then all at once)")
    parser.add_argument("--door", choices=sorted(DOOR_ATTACKERS), default="mcp", help="the door attacked and measured")
    parser.add_argument("--json", type=Path, help="write the rows here")
    parser.add_argument("--attacker", help=argparse.SUPPRESS)  # a child: run one attacker, print its count
    parser.add_argument("--url", help=argparse.SUPPRESS)
    parser.add_argument("--silent-port", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.attacker:
        print(run_attacker(args.attacker, args.url, args.silent_port, args.door), flush=True)
        return 0
    if args.quick:
        args.seconds = min(args.seconds, 3.0)
    chosen = [a for a in args.only.split(",") if a] or list(DOOR_ATTACKERS[args.door])
    if args.pin:  # the server inherits this process's core; each attacker is moved to the other one
        os.sched_setaffinity(0, {SERVER_CORE})
    work = Path(tempfile.mkdtemp(prefix="notegate-attack-"))
    listener, _thread = silent_host()
    import bench_notes

    server: bench_notes.ServerProcess | None = None
    lab = None
    try:
        from notegate.config import load_config

        if args.door == "livesync":
            import attack_livesync

            lab = attack_livesync.start_lab(work)
            config = lab.config
            phone = attack_livesync.Phone(lab)
            door = Door(
                "livesync",
                lab.gate,
                lab.gate_proc.pid,
                lambda: lab.gate_proc.poll() is None,
                lambda s: asyncio.run(attack_livesync.device_sync(phone, s, timeout=CALL_TIMEOUT_SECONDS)),
            )
        else:
            config, token = setup(work)
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
            assert server.proc is not None
            asyncio.run(create_note(server.url, token))
            url = server.url
            door = Door("mcp", url, server.proc.pid, server.alive, lambda s: asyncio.run(caller(url, token, s)))
        loaded = load_config(config)
        state = loaded.state_dir / "state.sqlite"
        origin = Path(loaded.environments[loaded.default_environment].origin_url)
        silent_port = listener.getsockname()[1]
        door.measure(1.0)  # warm up: the caches are filled
        print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; pinned: {args.pin}; "
              f"door: {door.name}", flush=True)  # fmt: skip
        rows = [phase("unloaded", [], door, args, silent_port, state, origin)]
        print(render(rows), flush=True)
        for attacker in chosen:
            rows.append(phase(attacker, [attacker], door, args, silent_port, state, origin))
            print(render(rows[-1:]).splitlines()[1], flush=True)
        if len(chosen) > 1:
            rows.append(phase("all-at-once", chosen, door, args, silent_port, state, origin))
        print("\n" + render(rows))
        if server is not None:
            print(f"\nserver peak RSS {server.peak_rss_mb():.0f} MB; state DB {size_of(state) // 1024} KB; "
                  f"origin {size_of(origin) // 1024} KB")  # fmt: skip
        if args.json:
            args.json.write_text(json.dumps(rows, indent=2))
        return 0
    finally:
        if server is not None:
            server.stop()
        if lab is not None:
            lab.stop()
        listener.close()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    raise SystemExit(main())
