"""Latency and throughput of the notes tools, in process and over MCP HTTP, on a generated vault.

Why both doors: the in-process figures (``NotesService``) show what the store, the index and the policy
cost; the MCP figures add what a real client pays (the official SDK client, Streamable HTTP, bearer
auth, a real ``notegate serve`` subprocess on 127.0.0.1).  The difference between the two is the door.

What it does, in a temporary directory that is always removed (and every server killed):

1. generate an N-note vault (``genvault.py``), ``notegate init`` + ``notegate import`` it (timed);
2. in process: read, search (rare, common, mid, no-hit, two words), list a folder, confirmed write of an
   existing note (commit + push), append, and 32 threads writing distinct notes;
3. cold start (a): ``notegate serve`` on the existing vault, timed from spawn to the first answered
   ``read_note`` and to the first search with a hit;
4. the same operations over MCP HTTP, 32 concurrent clients writing distinct notes, the server's peak RSS;
5. cold start (b): a fresh vault right after ``notegate import`` with its index removed (the server
   indexes N notes before it answers), and (c) a new server clone (fetch the origin, then index).

    python bench/bench_notes.py [--notes 10000] [--quick] [--only mcp] [--durability on|off] [--meaning off|auto]
        [--json OUT]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import re
import shutil
import signal
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx2
import pygit2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import LATEST_PROTOCOL_VERSION
from mcp_types import CLIENT_CAPABILITIES_META_KEY, CLIENT_INFO_META_KEY, PROTOCOL_VERSION_META_KEY

sys.path.insert(0, str(Path(__file__).resolve().parent))
import genvault  # a sibling script, not a package
from notegate.config import load_config
from notegate.policy import Caller
from notegate.services.notes import NotesService
from notegate.services.runtime import Runtime
from notegate.services.vaultinit import init_directory

CALLER = Caller(login="owner", display_name="Owner", client="bench", client_class="workstation", tier="trusted")
WRITERS = 32
START_TIMEOUT = 180.0  # seconds a server may take to answer before the run is declared failed


# ------------------------------------------------------------------ figures
@dataclass
class Row:
    """One measured operation: latency samples in milliseconds (or a single scalar figure)."""

    door: str  # "in-process", "mcp-http" or "-"
    op: str
    samples: list[float] = field(default_factory=list)
    note: str = ""

    @property
    def count(self) -> int:
        return len(self.samples)

    def pct(self, q: float) -> float:
        data = sorted(self.samples)
        if not data:
            return float("nan")
        return data[min(len(data) - 1, max(0, round(q * (len(data) - 1))))]

    def summary(self) -> dict[str, Any]:
        return {
            "door": self.door,
            "op": self.op,
            "count": self.count,
            "p50_ms": round(self.pct(0.5), 3),
            "p95_ms": round(self.pct(0.95), 3),
            "mean_ms": round(statistics.fmean(self.samples), 3) if self.samples else None,
            "note": self.note,
        }


@dataclass
class Scalar:
    name: str
    value: float
    unit: str
    note: str = ""


@dataclass
class Target:
    name: str
    limit: str
    measured: str
    met: bool


@dataclass
class Report:
    meta: dict[str, Any]
    rows: list[Row] = field(default_factory=list)
    scalars: list[Scalar] = field(default_factory=list)
    targets: list[Target] = field(default_factory=list)

    def row(self, door: str, op: str) -> Row | None:
        return next((r for r in self.rows if r.door == door and r.op == op), None)

    def scalar(self, name: str) -> Scalar | None:
        return next((s for s in self.scalars if s.name == name), None)

    def to_json(self) -> dict[str, Any]:
        return {
            "meta": self.meta,
            "rows": [r.summary() | {"samples_ms": [round(s, 3) for s in r.samples]} for r in self.rows],
            "scalars": [asdict(s) for s in self.scalars],
            "targets": [asdict(t) for t in self.targets],
        }

    def render(self) -> str:
        lines = [
            "| door | operation | count | p50 ms | p95 ms | mean ms | note |",
            "| --- | --- | ---: | ---: | ---: | ---: | --- |",
        ]
        for r in self.rows:
            s = r.summary()
            lines.append(
                f"| {r.door} | {r.op} | {s['count']} | {s['p50_ms']:.2f} | {s['p95_ms']:.2f} | {s['mean_ms']:.2f} "
                f"| {r.note} |"
            )
        lines += ["", "| figure | value | note |", "| --- | ---: | --- |"]
        for sc in self.scalars:
            shown = f"{sc.value:,.0f}" if float(sc.value).is_integer() and not sc.unit else f"{sc.value:,.2f}"
            lines.append(f"| {sc.name} | {shown} {sc.unit} | {sc.note} |".replace("  |", " |"))
        if self.targets:  # none with --only mcp
            lines += ["", "| target | limit | measured | met |", "| --- | --- | --- | --- |"]
        for t in self.targets:
            lines.append(f"| {t.name} | {t.limit} | {t.measured} | {'met' if t.met else '**not met**'} |")
        return "\n".join(lines)


def drift(samples: list[float], k: int = 20) -> str:
    """Median of the first and the last ``k`` samples: shows latency that grows as writes accumulate."""
    if len(samples) < 2 * k:
        return ""
    first, last = statistics.median(samples[:k]), statistics.median(samples[-k:])
    return f"first {k} p50 {first:.1f} ms → last {k} p50 {last:.1f} ms"


def measure(fn: Callable[[int], object], iterations: int, budget_s: float) -> list[float]:
    """Time ``fn(i)`` up to ``iterations`` times, stopping early once ``budget_s`` is spent (min 3 runs)."""
    samples: list[float] = []
    deadline = time.perf_counter() + budget_s
    for i in range(iterations):
        started = time.perf_counter()
        fn(i)
        samples.append((time.perf_counter() - started) * 1000)
        if i >= 2 and time.perf_counter() > deadline:
            break
    return samples


async def ameasure(fn: Callable[[int], Awaitable[object]], iterations: int, budget_s: float) -> list[float]:
    samples: list[float] = []
    deadline = time.perf_counter() + budget_s
    for i in range(iterations):
        started = time.perf_counter()
        await fn(i)
        samples.append((time.perf_counter() - started) * 1000)
        if i >= 2 and time.perf_counter() > deadline:
            break
    return samples


# ------------------------------------------------------------------ plan
@dataclass(frozen=True)
class Plan:
    notes: int
    reads: int
    searches: int
    lists: int
    writes: int
    appends: int
    per_writer: int
    budget_s: float  # per measured operation


def make_plan(notes: int, quick: bool) -> Plan:
    if quick:
        return Plan(notes=notes, reads=40, searches=20, lists=20, writes=20, appends=20, per_writer=4, budget_s=4)
    return Plan(notes=notes, reads=200, searches=100, lists=100, writes=100, appends=100, per_writer=20, budget_s=12)


def search_queries(spec: genvault.VaultSpec) -> dict[str, list[str]]:
    """Query kinds with known answers (see genvault): each kind cycles through its queries."""
    return {
        "rare term": list(spec.rare_terms),
        "common term (every note)": [spec.common_terms[0]],
        "mid term": spec.mid_terms,
        "no-hit term": spec.no_hit_terms,
        "2-word": spec.two_word_queries,
    }


def import_vault(cfg: Path, src: Path, spec: genvault.VaultSpec) -> subprocess.CompletedProcess[str]:
    """``notegate import``; the floor refuses a few generated names (``…Agent.md`` reads as an instruction
    file), which exits 1 with everything else pushed: those notes leave the benchmark's pool."""
    out = run_cli("import", "--config", str(cfg), str(src), "--quiet", ok=(0, 1))
    refused = {
        line.split("  ", 1)[1].split(": ", 1)[0].strip()
        for line in (out.stdout + out.stderr).splitlines()
        if line.startswith("refused  ")
    }
    if out.returncode and (not refused or "pushed" not in out.stdout + out.stderr):
        raise subprocess.CalledProcessError(out.returncode, out.args, out.stdout, out.stderr)
    spec.paths[:] = [p for p in spec.paths if p not in refused]
    return out


def pick_notes(spec: genvault.VaultSpec, rng: random.Random, count: int, taken: set[str]) -> list[str]:
    """Distinct notes nobody else in this run writes (writes must not collide unless we want them to)."""
    pool = [p for p in spec.paths if p not in taken]
    chosen = rng.sample(pool, min(count, len(pool)))
    taken.update(chosen)
    return chosen


# ------------------------------------------------------------------ processes
def run_cli(*args: str, timeout: float = 600, ok: tuple[int, ...] = (0,)) -> subprocess.CompletedProcess[str]:
    try:
        done = subprocess.run(
            [sys.executable, "-m", "notegate.cli", *args], check=False, capture_output=True, text=True, timeout=timeout
        )
        if done.returncode not in ok:
            raise subprocess.CalledProcessError(done.returncode, done.args, done.stdout, done.stderr)
        return done
    except subprocess.CalledProcessError as exc:
        print(f"notegate {args[0]} failed: {(exc.stderr or exc.stdout or '').strip()[-2000:]}", file=sys.stderr)
        raise


def bench_token(cfg: Path, token_file: Path) -> str:
    """A trusted workstation token for the benchmarks, created through the real CLI; its secret."""
    run_cli(
        "token", "create", "--config", str(cfg), "--name", "bench", "--class", "workstation",
        "--tier", "trusted", "--output", str(token_file),
    )  # fmt: skip
    return token_file.read_text().strip()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ServerProcess:
    """``notegate serve`` on a free loopback port; always killed by :meth:`stop`."""

    def __init__(self, config: Path, log: Path) -> None:
        self.config = config
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = log
        self.proc: subprocess.Popen[bytes] | None = None
        self.spawned_at = 0.0

    def spawn(self) -> ServerProcess:
        handle = open(self.log, "ab")  # noqa: SIM115 - the child owns it; closed below
        try:
            self.spawned_at = time.perf_counter()
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "notegate.cli", "serve", "--config", str(self.config), "--port", str(self.port)],
                stdout=handle,
                stderr=subprocess.STDOUT,
                env={**os.environ, "PYTHONUNBUFFERED": "1"},
            )
        finally:
            handle.close()
        return self

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def peak_rss_mb(self) -> float:
        """VmHWM: the most resident memory the server process ever had."""
        if self.proc is None:
            return float("nan")
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
        return float("nan")

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=15)

    def tail(self) -> str:
        try:
            return self.log.read_text(errors="replace")[-3000:]
        except OSError:
            return ""


class McpClient:
    """The official SDK client over Streamable HTTP with a bearer token (one per simulated session)."""

    def __init__(self, url: str, token: str, timeout: float = 120) -> None:
        self.url = url
        self.token = token
        self.timeout = timeout
        self._http: httpx2.AsyncClient | None = None
        self._client: Client | None = None

    async def __aenter__(self) -> McpClient:
        self._http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {self.token}"}, timeout=self.timeout)
        await self._http.__aenter__()
        try:
            self._client = Client(streamable_http_client(f"{self.url}/mcp", http_client=self._http))
            await self._client.__aenter__()
        except BaseException:
            await self._http.__aexit__(None, None, None)
            raise
        return self

    async def __aexit__(self, *exc: object) -> None:
        try:
            if self._client is not None:
                await self._client.__aexit__(None, None, None)
        finally:
            if self._http is not None:
                await self._http.__aexit__(None, None, None)

    async def call(self, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        assert self._client is not None
        result = await self._client.call_tool(tool, args)
        if result.is_error:
            text = " ".join(getattr(c, "text", "") for c in result.content)
            raise RuntimeError(f"{tool} refused: {text[:300]}")
        return result.structured_content or {}


class LeanMcpClient:
    """A wire-level MCP client: the Streamable HTTP JSON-RPC a client must send, and nothing else.

    Why: bench_notes runs all 32 writers in one Python process, and the SDK client spends more CPU per call
    (pydantic models, output-schema validation, anyio streams) than the server does per commit, so on a
    2-core machine the 32-writer figure measured the client.  This one speaks the same protocol over one
    keep-alive HTTP connection: ``initialize`` (protocol version negotiated from the server's answer),
    ``notifications/initialized``, then ``tools/call`` with the bearer token, ``MCP-Protocol-Version`` and,
    when the server hands one out, ``Mcp-Session-Id``.  It is not a toy: every answer is checked (HTTP
    status, JSON-RPC version and id, no ``error``, no ``isError``, a structured result) and a refusal raises
    RuntimeError like :class:`McpClient`.  A JSON body and a ``text/event-stream`` body are both accepted.
    """

    ACCEPT = "application/json, text/event-stream"
    #: None: the handshake-era wire (``initialize``, then the negotiated version).  A modern revision
    #: (:class:`LeanModernMcpClient`): no handshake, every request self-contained, as the SDK client 2.3 sends it.
    WIRE: str | None = None

    def __init__(self, url: str, token: str, timeout: float = 120) -> None:
        self.url = f"{url}/mcp"
        self.token = token
        self.timeout = timeout
        self._http: httpx2.AsyncClient | None = None
        self._headers: dict[str, str] = {}
        self._next_id = 0
        self._meta: dict[str, Any] | None = None

    async def __aenter__(self) -> LeanMcpClient:
        limits = httpx2.Limits(max_connections=1, max_keepalive_connections=1)
        self._http = httpx2.AsyncClient(timeout=self.timeout, limits=limits)
        self._headers = {
            "Authorization": f"Bearer {self.token}",
            "Accept": self.ACCEPT,
            "Content-Type": "application/json",
        }
        if self.WIRE is not None:
            return await self._discover()
        try:
            hello = await self._rpc(
                "initialize",
                {
                    "protocolVersion": LEAN_PROTOCOL_VERSION,
                    "capabilities": {},
                    "clientInfo": {"name": "bench-lean", "version": "1"},
                },
            )
            version = hello.get("protocolVersion")
            if not isinstance(version, str) or not version:
                raise RuntimeError(f"initialize answered without a protocol version: {hello!r:.300}")
            self._headers["MCP-Protocol-Version"] = version
            await self._notify("notifications/initialized")
        except BaseException:
            await self._http.aclose()
            raise
        return self

    async def _discover(self) -> LeanMcpClient:
        """The modern wire's opening, as the SDK client 2.3 sends it (captured): one ``server/discover``; then
        every request carries the envelope in ``params._meta`` and the ``MCP-Protocol-Version``,
        ``Mcp-Method`` and ``Mcp-Name`` headers the server checks against the body."""
        assert self.WIRE is not None
        self._headers["MCP-Protocol-Version"] = self.WIRE
        self._meta = {
            PROTOCOL_VERSION_META_KEY: self.WIRE,
            CLIENT_INFO_META_KEY: {"name": "bench-lean", "version": "1"},
            CLIENT_CAPABILITIES_META_KEY: {},
        }
        try:
            await self._rpc("server/discover", {})
        except BaseException:
            assert self._http is not None
            await self._http.aclose()
            raise
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._http is not None:
            await self._http.aclose()

    async def _post(self, body: dict[str, Any]) -> httpx2.Response:
        assert self._http is not None
        headers = self._headers
        if self._meta is not None:  # the modern wire: the routing headers of this very request
            headers = {**headers, "Mcp-Method": body["method"]}
            name = body.get("params", {}).get("name")
            if isinstance(name, str):
                headers["Mcp-Name"] = name
        response = await self._http.post(self.url, content=json.dumps(body), headers=headers)
        session = response.headers.get("mcp-session-id")
        if session:
            self._headers["Mcp-Session-Id"] = session
        return response

    async def _notify(self, method: str) -> None:
        response = await self._post({"jsonrpc": "2.0", "method": method})
        if response.status_code not in (200, 202, 204):
            raise RuntimeError(f"{method}: HTTP {response.status_code}")

    async def _rpc(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self._next_id += 1
        request_id = self._next_id
        if self._meta is not None:
            params = {**params, "_meta": self._meta}
        response = await self._post({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        if response.status_code != 200:
            raise RuntimeError(f"{method}: HTTP {response.status_code}: {response.text[:300]}")
        message = _jsonrpc_answer(response)
        if message.get("jsonrpc") != "2.0" or message.get("id") != request_id:
            raise RuntimeError(f"{method}: answer for another request: {message!r:.300}")
        if "error" in message:
            raise RuntimeError(f"{method}: JSON-RPC error {message['error']!r:.300}")
        result = message.get("result")
        if not isinstance(result, dict):
            raise RuntimeError(f"{method}: no result: {message!r:.300}")
        return result

    async def call(self, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        result = await self._rpc("tools/call", {"name": tool, "arguments": args})
        if result.get("isError"):
            text = " ".join(c.get("text", "") for c in result.get("content", []) if isinstance(c, dict))
            raise RuntimeError(f"{tool} refused: {text[:300]}")
        structured = result.get("structuredContent")
        if not isinstance(structured, dict):
            raise RuntimeError(f"{tool}: no structured content: {result!r:.300}")
        return structured


#: What the lean client offers in ``initialize``: the SDK's newest; the server answers the one it speaks.
LEAN_PROTOCOL_VERSION = LATEST_PROTOCOL_VERSION


class LeanModernMcpClient(LeanMcpClient):
    """The lean client on the 2026-07-28 wire: what the official client 2.3 and Claude Code send, so the server
    serves it with the SDK's modern single-exchange entry, not notegate's single-exchange path."""

    WIRE = "2026-07-28"


def _jsonrpc_answer(response: httpx2.Response) -> dict[str, Any]:
    """The one JSON-RPC message of an answer: the body itself, or the data of an SSE stream's message."""
    kind = response.headers.get("content-type", "")
    if kind.startswith("application/json"):
        message = response.json()
    elif kind.startswith("text/event-stream"):
        datas = [line[5:].strip() for line in response.text.splitlines() if line.startswith("data:")]
        messages = [json.loads(d) for d in datas if d]
        answers = [m for m in messages if isinstance(m, dict) and ("result" in m or "error" in m)]
        if len(answers) != 1:
            raise RuntimeError(f"event stream with {len(answers)} answers")
        message = answers[0]
    else:
        raise RuntimeError(f"unexpected content type {kind!r}")
    if not isinstance(message, dict):
        raise RuntimeError(f"not a JSON-RPC message: {message!r:.300}")
    return message


def process_cpu_s(pid: int | None = None) -> float:
    """User + system CPU seconds of a process so far (``/proc/<pid>/stat``; this process when None)."""
    if pid is None:
        t = os.times()
        return t.user + t.system
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def mcp_write_samples(client: McpClient, paths, plan: Plan, by: str) -> tuple[list[float], int]:
    """Confirmed write_note latencies (ms) over MCP, each on a note just read, within the plan's budget;
    and how many picked paths were no note (a generated folder differing from another only by case is
    imported under the vault's first spelling, seen at 100k notes)."""
    samples: list[float] = []
    skipped = 0
    deadline = time.perf_counter() + plan.budget_s
    for i, path in enumerate(paths):
        try:
            note = await client.call("read_note", {"path": path})
        except RuntimeError as exc:
            if "[no-such-note]" not in str(exc):
                raise
            skipped += 1
            continue
        args = {
            "path": path,
            "content": note["text"] + f"\nEdited over MCP{by}, pass {i}.\n",
            "base_revision": note["revision"],
            "confirmed": True,
        }
        started = time.perf_counter()
        await client.call("write_note", args)
        samples.append((time.perf_counter() - started) * 1000)
        if i >= 2 and time.perf_counter() > deadline:
            break
    return samples, skipped


async def wait_until_answering(
    server: ServerProcess, token: str, read_path: str, search_term: str
) -> tuple[float, float]:
    """Seconds from spawn to the first successful read_note and to the first search with a hit.

    The port is polled with a bare TCP connect first (cheap, so the poller does not steal the CPU the
    starting server needs on a 2-core machine); then real MCP calls are retried until they succeed.
    """
    deadline = time.perf_counter() + START_TIMEOUT
    first_read = searchable = float("nan")
    while time.perf_counter() < deadline and not _port_open(server.port):
        if not server.alive():
            raise RuntimeError(f"server exited during start:\n{server.tail()}")
        await asyncio.sleep(0.005)
    _log(f"port open {time.perf_counter() - server.spawned_at:.2f} s after spawn")
    while time.perf_counter() < deadline:
        if not server.alive():
            raise RuntimeError(f"server exited during start:\n{server.tail()}")
        try:
            async with McpClient(server.url, token, timeout=30) as client:
                if first_read != first_read:  # NaN: not answered yet
                    await client.call("read_note", {"path": read_path})
                    first_read = time.perf_counter() - server.spawned_at
                found = await client.call("search_notes", {"query": search_term})
                if found.get("hits"):
                    searchable = time.perf_counter() - server.spawned_at
                    return first_read, searchable
        except Exception:  # not up yet (refused, reset, 5xx, not indexed): try again
            pass
        await asyncio.sleep(0.01)
    raise RuntimeError(f"server did not answer within {START_TIMEOUT:.0f} s:\n{server.tail()}")


async def meaning_caught_up(server: ServerProcess, token: str, most: float = 1800) -> float | None:
    """Seconds from spawn until search by meaning has every vector (/healthz, with the token, says it is no
    longer catching up); None when meaning is off.  The timings after it are the steady state: while the
    vectors catch up, the embedder's thread shares the server's one interpreter with the requests."""
    deadline = time.perf_counter() + most
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30) as http:
        while time.perf_counter() < deadline:
            details = (await http.get(f"{server.url}/healthz")).json()
            meaning = next(iter((details.get("environments") or {}).values()), {}).get("meaning") or {}
            if meaning.get("status") != "on":
                return None
            if not meaning.get("catching_up"):
                return time.perf_counter() - server.spawned_at
            await asyncio.sleep(0.5)
    raise RuntimeError(f"search by meaning did not catch up within {most:.0f} s")


def _port_open(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.2)
        return s.connect_ex(("127.0.0.1", port)) == 0


def origin_packs(cfg: Path) -> int:
    """Packs in the bare origin: every libgit2 push to a local origin adds one, and nothing merges them."""
    return len(list((cfg.parent / "origin.git" / "objects" / "pack").glob("*.pack")))


# ------------------------------------------------------------------ in process
def compact_as_the_server_does(runtime: Runtime) -> float:
    """The import leaves the search index owing a merge of its segments, which ``notegate serve`` does in the
    background after its start-up catch-up (``Runtime.maintain`` does the same); an in-process run would
    otherwise time writes that do it in their commits.  Returns how long it took, in ms (the environments
    are opened, and their indexes caught up, first: ``maintain`` looks at the open ones)."""
    runtime.open_all()
    started = time.perf_counter()
    runtime.maintain()
    return (time.perf_counter() - started) * 1000


def bench_in_process(report: Report, cfg: Path, spec: genvault.VaultSpec, plan: Plan, rng: random.Random) -> None:
    """NotesService directly: what the store, the index and the policy cost without any door."""
    door = "in-process"
    started = time.perf_counter()
    runtime = Runtime(load_config(cfg))
    svc = NotesService(runtime)
    svc.list_notes(CALLER, limit=1)
    report.scalars.append(
        Scalar("in-process open (runtime + first listing)", (time.perf_counter() - started) * 1000, "ms")
    )
    report.scalars.append(
        Scalar("index merge after the import", compact_as_the_server_does(runtime), "ms", "serve does it at start")
    )
    env = runtime.environment(None)
    if env.meaning is not None:  # on where installed: time the steady state, every vector there (own figure)
        started = time.perf_counter()
        env.meaning.wake(env.store, env.index)
        env.meaning.wait_idle(1800)
        report.scalars.append(
            Scalar("in process: search by meaning caught up", time.perf_counter() - started, "s", "every vector")
        )
    try:
        reads = rng.sample(spec.paths, min(plan.reads, len(spec.paths)))
        report.rows.append(
            Row(door, "read_note", measure(lambda i: svc.read_note(CALLER, reads[i]), len(reads), plan.budget_s))
        )
        for kind, queries in search_queries(spec).items():
            samples = measure(
                lambda i, q=queries: svc.search_notes(CALLER, q[i % len(q)]), plan.searches, plan.budget_s
            )
            hits = len(svc.search_notes(CALLER, queries[0]).hits)
            report.rows.append(Row(door, f"search_notes: {kind}", samples, note=f"'{queries[0]}' → {hits} hits"))
        folder = spec.list_folder
        report.rows.append(
            Row(
                door,
                "list_notes (folder)",
                measure(lambda i: svc.list_notes(CALLER, folder=folder, limit=200), plan.lists, plan.budget_s),
                note=f"{folder}: {spec.list_folder_notes} notes, limit 200",
            )
        )
        samples = _write_samples(svc, spec, plan, rng)
        report.rows.append(Row(door, "write_note (confirmed, existing)", samples, note=drift(samples)))
        samples = _append_samples(svc, spec, plan, rng)
        report.rows.append(Row(door, "append_note (confirmed)", samples, note=drift(samples)))
        origin = cfg.parent / "origin.git"
        before = origin_tip(origin)
        rate, samples, finals = _threaded_writers(svc, spec, plan, rng)
        report.rows.append(Row(door, f"write_note, {WRITERS} threads", samples, note=f"{rate:.1f} commits/s"))
        report.scalars.append(Scalar(f"in-process {WRITERS} concurrent writers", rate, "commits/s"))
        add_lost_updates(report, "in-process", origin, before, finals, len(samples))
    finally:
        runtime.close()


_taken: set[str] = set()


def _write_samples(svc: NotesService, spec: genvault.VaultSpec, plan: Plan, rng: random.Random) -> list[float]:
    paths = pick_notes(spec, rng, plan.writes, _taken)
    samples: list[float] = []
    deadline = time.perf_counter() + plan.budget_s
    for i, path in enumerate(paths):
        note = svc.read_note(CALLER, path)
        text = note.text + f"\nEdited by the benchmark, pass {i}.\n"
        started = time.perf_counter()
        svc.write_note(CALLER, path, text, note.revision, confirmed=True)
        samples.append((time.perf_counter() - started) * 1000)
        if i >= 2 and time.perf_counter() > deadline:
            break
    return samples


def _append_samples(svc: NotesService, spec: genvault.VaultSpec, plan: Plan, rng: random.Random) -> list[float]:
    paths = pick_notes(spec, rng, plan.appends, _taken)
    samples: list[float] = []
    deadline = time.perf_counter() + plan.budget_s
    for i, path in enumerate(paths):
        revision = svc.read_note(CALLER, path).revision
        started = time.perf_counter()
        svc.append_note(CALLER, path, f"- appended by the benchmark ({i})", revision, confirmed=True)
        samples.append((time.perf_counter() - started) * 1000)
        if i >= 2 and time.perf_counter() > deadline:
            break
    return samples


def origin_tip(origin: Path) -> str:
    return str(pygit2.Repository(str(origin)).references["refs/heads/main"].target)


def add_lost_updates(report: Report, door: str, origin: Path, before: str, finals: dict[str, str], acked: int) -> None:
    """Lost updates: notes whose last acknowledged text is not what the origin holds now, and acknowledged
    writes without a commit of their own at the origin (one commit per write)."""
    repo = pygit2.Repository(str(origin))
    tip = repo.references["refs/heads/main"].target
    tree = repo[tip].peel(pygit2.Tree)
    lost = sum(1 for path, text in finals.items() if repo[tree[path].id].data.decode() != text)
    walker = repo.walk(tip, pygit2.enums.SortMode.TOPOLOGICAL)
    walker.hide(before)
    commits = sum(1 for _ in walker)
    report.scalars.append(
        Scalar(
            f"{door} {WRITERS} writers: lost updates",
            lost + max(0, acked - commits),
            "",
            f"{acked} acknowledged, {commits} new commits at the origin",
        )
    )


def _threaded_writers(
    svc: NotesService, spec: genvault.VaultSpec, plan: Plan, rng: random.Random
) -> tuple[float, list[float], dict[str, str]]:
    """32 threads, each writing its own note ``per_writer`` times: commits per second through one store."""
    paths = pick_notes(spec, rng, WRITERS, _taken)
    heads = {p: svc.read_note(CALLER, p) for p in paths}
    samples: list[float] = []
    lock = threading.Lock()
    barrier = threading.Barrier(WRITERS)
    finals: dict[str, str] = {}

    def writer(path: str) -> int:
        note = heads[path]
        text, revision = note.text, note.revision
        barrier.wait(timeout=60)
        done = 0
        for k in range(plan.per_writer):
            text += f"\nconcurrent pass {k}\n"
            started = time.perf_counter()
            revision = svc.write_note(CALLER, path, text, revision, confirmed=True).new_revision or ""
            with lock:
                samples.append((time.perf_counter() - started) * 1000)
                finals[path] = text
            done += 1
        return done

    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=WRITERS) as pool:
        done = sum(pool.map(writer, paths))
    return done / (time.perf_counter() - started), samples, finals


# ------------------------------------------------------------------ over MCP
async def bench_mcp(
    report: Report, server: ServerProcess, token: str, spec: genvault.VaultSpec, plan: Plan, rng: random.Random
) -> None:
    """The same operations through the official SDK client against the real server."""
    door = "mcp-http"
    async with McpClient(server.url, token) as client:
        reads = rng.sample(spec.paths, min(plan.reads, len(spec.paths)))
        samples = await ameasure(lambda i: client.call("read_note", {"path": reads[i]}), len(reads), plan.budget_s)
        report.rows.append(Row(door, "read_note", samples))
        for kind, queries in search_queries(spec).items():
            samples = await ameasure(
                lambda i, q=queries: client.call("search_notes", {"query": q[i % len(q)]}),
                plan.searches,
                plan.budget_s,
            )
            report.rows.append(Row(door, f"search_notes: {kind}", samples))
        folder = spec.list_folder
        samples = await ameasure(
            lambda i: client.call("list_notes", {"folder": folder, "limit": 200}), plan.lists, plan.budget_s
        )
        report.rows.append(Row(door, "list_notes (folder)", samples))

        samples, _skipped = await mcp_write_samples(client, pick_notes(spec, rng, plan.writes, _taken), plan, "")
        report.rows.append(Row(door, "write_note (confirmed, existing)", samples, note=drift(samples)))

        samples = []
        deadline = time.perf_counter() + plan.budget_s
        for i, path in enumerate(pick_notes(spec, rng, plan.appends, _taken)):
            note = await client.call("read_note", {"path": path})
            args = {"path": path, "text": f"- appended over MCP ({i})", "base_revision": note["revision"]}
            started = time.perf_counter()
            await client.call("append_note", args | {"confirmed": True})
            samples.append((time.perf_counter() - started) * 1000)
            if i >= 2 and time.perf_counter() > deadline:
                break
        report.rows.append(Row(door, "append_note (confirmed)", samples, note=drift(samples)))

        # A write must be searchable the moment it is acknowledged.
        marker = f"benchmarker{rng.randrange(10**9):09d}"
        path = pick_notes(spec, rng, 1, _taken)[0]
        note = await client.call("read_note", {"path": path})
        await client.call(
            "write_note",
            {
                "path": path,
                "content": note["text"] + f"\n{marker}\n",
                "base_revision": note["revision"],
                "confirmed": True,
            },
        )
        found = await client.call("search_notes", {"query": marker})
        visible = any(h["path"] == path for h in found.get("hits", []))
        report.scalars.append(
            Scalar("write searchable by the next call", 1.0 if visible else 0.0, "(1 = yes)", f"marker {marker}")
        )

    # Both clients, SDK first: the lean one judges the target (the server's capacity), the SDK one is what
    # 32 real sessions in one process would see.  Lost updates are counted per run at the origin.
    origin = server.config.parent / "origin.git"
    for kind, label in (("sdk", "SDK clients"), ("lean", "lean wire clients")):
        before = origin_tip(origin)
        run = await _mcp_writers(server, token, spec, plan, rng, client=kind)
        add_lost_updates(report, f"mcp ({kind})", origin, before, run.finals, len(run.samples))
        note = f"{run.rate:.1f} commits/s" + (f", {run.errors} errors" if run.errors else "") + f"; {run.cpu_note()}"
        report.rows.append(Row(door, f"write_note, {WRITERS} {label}", run.samples, note=note))
        report.scalars.append(Scalar(f"mcp {WRITERS} concurrent writers ({kind})", run.rate, "commits/s", note))
        report.scalars.append(
            Scalar(
                f"mcp {WRITERS} writers ({kind}): server CPU per commit",
                run.server_cpu_s / max(1, len(run.samples)) * 1000,
                "ms",
            )
        )
        report.scalars.append(
            Scalar(
                f"mcp {WRITERS} writers ({kind}): client CPU per commit",
                run.client_cpu_s / max(1, len(run.samples)) * 1000,
                "ms",
            )
        )


@dataclass
class WritersRun:
    """One run of 32 concurrent MCP writers: throughput, latencies, and the CPU each side spent on it."""

    client: str  # "sdk" or "lean"
    rate: float  # acknowledged commits per second
    samples: list[float]
    errors: int
    finals: dict[str, str]
    wall_s: float
    client_cpu_s: float  # this process (all 32 clients): user + system
    server_cpu_s: float  # the notegate serve process: user + system

    def cpu_note(self) -> str:
        done = max(1, len(self.samples))
        server, client = self.server_cpu_s / done * 1000, self.client_cpu_s / done * 1000
        busy_server, busy_client = self.server_cpu_s / self.wall_s * 100, self.client_cpu_s / self.wall_s * 100
        return (
            f"CPU per commit: server {server:.1f} ms, client {client:.1f} ms "
            f"(server {busy_server:.0f} % / client {busy_client:.0f} % of one core)"
        )


CLIENTS: dict[str, type[McpClient] | type[LeanMcpClient]] = {
    "sdk": McpClient,
    "lean": LeanMcpClient,
    "lean-modern": LeanModernMcpClient,
}


async def _mcp_writers(
    server: ServerProcess, token: str, spec: genvault.VaultSpec, plan: Plan, rng: random.Random, client: str = "sdk"
) -> WritersRun:
    """32 clients (each its own HTTP connection), each writing its own note ``per_writer`` times.

    ``client`` is ``sdk`` (the official SDK client: what a real session pays, but 32 of them in this one
    process cost more CPU per call than the server) or ``lean`` (:class:`LeanMcpClient`: the server's own
    capacity).  The CPU of this process and of the server is read around the timed part."""
    paths = pick_notes(spec, rng, WRITERS, _taken)
    samples: list[float] = []
    errors = 0
    finals: dict[str, str] = {}
    ready = asyncio.Event()
    arrived = 0
    factory = CLIENTS[client]

    async def writer(path: str) -> int:
        nonlocal arrived, errors
        async with factory(server.url, token) as conn:
            note = await conn.call("read_note", {"path": path})
            text, revision = note["text"], note["revision"]
            arrived += 1
            if arrived == WRITERS:
                ready.set()
            await ready.wait()
            done = 0
            for k in range(plan.per_writer):
                text += f"\nconcurrent MCP pass {k}\n"
                started = time.perf_counter()
                try:
                    result = await conn.call(
                        "write_note", {"path": path, "content": text, "base_revision": revision, "confirmed": True}
                    )
                except RuntimeError:
                    errors += 1
                    break
                new_revision = result.get("new_revision")
                if not isinstance(new_revision, str) or not new_revision or new_revision == revision:
                    errors += 1  # acknowledged without a new revision: not a confirmed write
                    break
                samples.append((time.perf_counter() - started) * 1000)
                revision = new_revision
                finals[path] = text
                done += 1
            return done

    tasks = [asyncio.create_task(writer(p)) for p in paths]
    await ready.wait()
    assert server.proc is not None
    cpu_client, cpu_server = process_cpu_s(), process_cpu_s(server.proc.pid)
    started = time.perf_counter()
    done = sum(await asyncio.gather(*tasks))
    wall = time.perf_counter() - started
    return WritersRun(
        client=client,
        rate=done / wall,
        samples=samples,
        errors=errors,
        finals=finals,
        wall_s=wall,
        client_cpu_s=process_cpu_s() - cpu_client,
        server_cpu_s=process_cpu_s(server.proc.pid) - cpu_server,
    )


# ------------------------------------------------------------------ scenario
def machine_meta(args: argparse.Namespace, folder: Path | None = None) -> dict[str, Any]:
    """The machine, the code and (``calibration``) this machine's speed now, measured in ``folder`` (where the
    benchmark writes: the temporary folder by default)."""
    git = subprocess.run(["git", "--version"], capture_output=True, text=True, check=False).stdout.strip()
    repo = Path(__file__).resolve().parent.parent
    head = subprocess.run(
        ["git", "-C", str(repo), "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False
    )
    dirty = subprocess.run(
        ["git", "-C", str(repo), "status", "--porcelain", "src"], capture_output=True, text=True, check=False
    )
    return {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "repo_head": head.stdout.strip() or "unknown",
        "src_changed_files": len(dirty.stdout.splitlines()),
        "nproc": os.cpu_count(),
        "cpu": _cpu_model(),
        "python": platform.python_version(),
        "git": git,
        "sqlite": sqlite3.sqlite_version,
        "pygit2": pygit2.__version__,
        "libgit2": pygit2.LIBGIT2_VERSION,
        "command": " ".join([Path(sys.executable).name, *sys.argv]),
        "notes": args.notes,
        "quick": args.quick,
        "calibration": calibrate(folder or Path(tempfile.gettempdir())),
    }


def calibrate(folder: Path) -> dict[str, float]:
    """Two figures of this machine at this moment, so that runs on different days can be compared: the same
    VM moved 2-3x between sessions on code nobody changed (searches, imports).  ``python_loop_s``: 10 million
    additions in a Python loop (one core's speed for the interpreter); ``file_create_ms``: the median cost of
    making one empty file in ``folder`` (what a write's new files cost there: on this VM's ext4 disk 0.02-0.09
    ms in one folder and 0.85-1.5 ms in /tmp at the same minute, where ext4 allocates inodes near a much-used
    parent; a rename costs ~20 us anywhere)."""
    started = time.perf_counter()
    total = 0
    for i in range(10_000_000):
        total += i
    loop = time.perf_counter() - started
    samples = []
    with tempfile.TemporaryDirectory(dir=folder) as scratch:
        for i in range(200):
            path = os.path.join(scratch, f"f{i}")
            began = time.perf_counter()
            os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))
            samples.append(time.perf_counter() - began)
    return {"python_loop_s": round(loop, 2), "file_create_ms": round(statistics.median(samples) * 1e3, 3)}


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


async def run(args: argparse.Namespace) -> Report:
    notes = 1000 if args.quick and args.notes == 10_000 else args.notes
    plan = make_plan(notes, args.quick)
    report = Report(meta=machine_meta(args) | {"notes": notes})
    rng = random.Random(args.seed)
    workdir = Path(tempfile.mkdtemp(prefix="notegate-bench-"))
    servers: list[ServerProcess] = []
    try:
        spec = genvault.generate(workdir / "src", notes, args.seed)
        report.scalars.append(
            Scalar("genvault", spec.seconds, "s", f"{spec.notes} notes, {spec.total_bytes / 1e6:.1f} MB")
        )
        probe = next(iter(spec.rare_terms))  # in 1 note: a hit means the whole vault is indexed

        cfg = init_directory(workdir / "vault")
        set_durability(cfg, args.durability == "on")
        if args.meaning != "default":  # init writes the default (off today)
            text = re.sub(r"(?m)^search_meaning = .*$", f"search_meaning = {MEANING[args.meaning]}", cfg.read_text())
            cfg.write_text(text)
        started = time.perf_counter()
        out = import_vault(cfg, workdir / "src", spec)
        read_path = spec.paths[0]
        report.scalars.append(
            Scalar("notegate import (wall)", time.perf_counter() - started, "s", out.stdout.strip().splitlines()[-1])
        )
        token = bench_token(cfg, workdir / "bench.token")

        if args.only != "mcp":
            _log("in process…")
            report.scalars.append(Scalar("origin packs before the in-process run", origin_packs(cfg), ""))
            bench_in_process(report, cfg, spec, plan, rng)

        _log("cold start (a): restart on the existing vault…")
        server = ServerProcess(cfg, workdir / "serve-a.log").spawn()
        servers.append(server)
        first, searchable = await wait_until_answering(server, token, read_path, probe)
        report.scalars.append(Scalar("cold start (a) restart: first read", first, "s", "spawn → read_note answered"))
        report.scalars.append(Scalar("cold start (a) restart: searchable", searchable, "s", "spawn → search hit"))

        caught_up = await meaning_caught_up(server, token)
        if caught_up is not None:
            report.scalars.append(
                Scalar("server: search by meaning caught up", caught_up, "s", "spawn → /healthz catching_up false")
            )
        _log("over MCP HTTP…")
        report.scalars.append(Scalar("origin packs before the MCP run", origin_packs(cfg), ""))
        await bench_mcp(report, server, token, spec, plan, rng)
        report.scalars.append(Scalar("origin packs after the MCP run", origin_packs(cfg), ""))
        rss = server.peak_rss_mb()
        report.scalars.append(Scalar("server peak RSS (after the MCP run)", rss, "MB", "VmHWM of notegate serve"))
        server.stop()
        if args.only == "mcp":
            return report

        _log("cold start (b): first start after import, empty index…")
        cfg_b = init_directory(workdir / "vault-b")
        import_vault(cfg_b, workdir / "src", spec)
        index = cfg_b.parent / "state" / "envs" / "personal" / "index.sqlite"
        for suffix in ("", "-wal", "-shm"):
            Path(f"{index}{suffix}").unlink(missing_ok=True)
        token_b = workdir / "bench-b.token"
        bench_token(cfg_b, token_b)
        server_b = ServerProcess(cfg_b, workdir / "serve-b.log").spawn()
        servers.append(server_b)
        first, searchable = await wait_until_answering(server_b, token_b.read_text().strip(), read_path, probe)
        report.scalars.append(Scalar("cold start (b) empty index: first read", first, "s", f"indexes {notes} notes"))
        report.scalars.append(Scalar("cold start (b) empty index: searchable", searchable, "s"))
        rss_b = server_b.peak_rss_mb()
        report.scalars.append(Scalar("server peak RSS (b, after indexing at start)", rss_b, "MB"))
        server_b.stop()

        _log("cold start (c): new server clone (fetch + index)…")
        shutil.rmtree(cfg_b.parent / "state" / "envs")
        server_c = ServerProcess(cfg_b, workdir / "serve-c.log").spawn()
        servers.append(server_c)
        first, searchable = await wait_until_answering(server_c, token_b.read_text().strip(), read_path, probe)
        report.scalars.append(Scalar("cold start (c) new clone: first read", first, "s", "fetch origin + index"))
        report.scalars.append(Scalar("cold start (c) new clone: searchable", searchable, "s"))
        server_c.stop()

        evaluate(report, rss, rss_b)
        return report
    finally:
        for s in servers:
            s.stop()
        shutil.rmtree(workdir, ignore_errors=True)


def evaluate(report: Report, rss: float, rss_b: float) -> None:
    """The targets: each one met or not, with the figure it was judged on."""

    def p50(door: str, op: str) -> float:
        row = report.row(door, op)
        return row.pct(0.5) if row else float("nan")

    def add(name: str, limit: str, measured: str, met: bool) -> None:
        report.targets.append(Target(name, limit, measured, met))

    w_in = p50("in-process", "write_note (confirmed, existing)")
    add("confirmed write p50, in process", "≤ 10 ms", f"{w_in:.2f} ms", w_in <= 10)
    w_mcp = p50("mcp-http", "write_note (confirmed, existing)")
    add("confirmed write p50, MCP HTTP", "≤ 15 ms", f"{w_mcp:.2f} ms", w_mcp <= 15)
    for row in report.rows:
        if row.door == "mcp-http" and row.op.startswith("search_notes"):
            kind = row.op.split(": ", 1)[1]
            add(f"search p50 over MCP ({kind})", "≤ 10 ms", f"{row.pct(0.5):.2f} ms", row.pct(0.5) <= 10)
    rate = report.scalar(f"mcp {WRITERS} concurrent writers (lean)")
    if rate:  # judged on the server's capacity: the lean client (the SDK client's figure is in the rows)
        add(
            f"{WRITERS} writers over MCP (lean wire clients)",
            "≥ 200 commits/s",
            f"{rate.value:.1f} commits/s",
            rate.value >= 200,
        )
    for door in ("in-process", "mcp (sdk)", "mcp (lean)"):
        lost = report.scalar(f"{door} {WRITERS} writers: lost updates")
        if lost:
            add(f"{WRITERS} writers ({door}): lost updates", "0", f"{lost.value:.0f}", lost.value == 0)
    for key in (
        "cold start (a) restart: first read",
        "cold start (a) restart: searchable",
        "cold start (b) empty index: first read",
        "cold start (b) empty index: searchable",
    ):
        sc = report.scalar(key)
        if sc:
            add(key, "≤ 2 s", f"{sc.value:.2f} s", sc.value <= 2)
    add("server peak RSS (MCP run)", "≤ 150 MB", f"{rss:.0f} MB", rss <= 150)
    add("server peak RSS (start with empty index)", "≤ 150 MB", f"{rss_b:.0f} MB", rss_b <= 150)


MEANING = {"off": "false", "auto": '"auto"'}


def set_durability(cfg: Path, on: bool) -> None:
    """Write ``[server] durability`` into the vault's config (``notegate init`` writes the default, on)."""
    text = cfg.read_text()
    assert "\ndurability = true\n" in text, "notegate init no longer writes [server] durability"
    cfg.write_text(text.replace("\ndurability = true\n", f"\ndurability = {'true' if on else 'false'}\n"))


def _log(message: str) -> None:
    print(f"[bench_notes {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notes", type=int, default=10_000)
    parser.add_argument("--quick", action="store_true", help="1,000 notes and fewer iterations (a smoke run)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", type=Path, default=None, help="also write the raw figures here")
    parser.add_argument(
        "--only",
        choices=("all", "mcp"),
        default="all",
        help="mcp: only the restart, the MCP HTTP operations and the 32 MCP writers (no in-process run, no cold "
        "starts b and c, no targets table): the door's own before/after, back to back",
    )
    parser.add_argument(
        "--durability",
        choices=("on", "off"),
        default="on",
        help="[server] durability of the measured vault: off shows what flushing each group costs",
    )
    parser.add_argument(
        "--meaning",
        choices=("default", "off", "auto"),
        default="default",
        help="[server] search_meaning of the measured vault (default: as init writes it, off today); auto: on where "
        "installed, timed once every vector is there (its catch-up is a figure of its own)",
    )
    args = parser.parse_args(argv)
    started = time.perf_counter()
    report = asyncio.run(run(args))
    report.meta["wall_seconds"] = round(time.perf_counter() - started, 1)
    meta = report.meta
    print(
        f"notegate bench_notes: {meta['notes']} notes, {meta['nproc']} cores ({meta['cpu']}), "
        f"Python {meta['python']}, {meta['git']}, SQLite {meta['sqlite']}, pygit2 {meta['pygit2']} "
        f"(libgit2 {meta['libgit2']}), repo {meta['repo_head']} + {meta['src_changed_files']} changed src files, "
        f"{meta['date']}, {meta['wall_seconds']} s, durability {args.durability}, meaning {args.meaning}; "
        f"calibration {meta['calibration']}\n"
    )
    print(report.render())
    if args.json:
        args.json.write_text(json.dumps(report.to_json(), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
