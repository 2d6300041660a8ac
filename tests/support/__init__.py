"""Shared test helpers: a real vault directory, a real server subprocess, the real SDK client."""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import signal
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from notegate.auth.tokens import create_token
from notegate.config import load_config
from notegate.state import StateDB
from notegate.vault import filepool

if TYPE_CHECKING:
    from support.zygote import Forked


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def mint(
    config_path: Path,
    *,
    name: str = "t",
    client_class: str = "workstation",
    tier: str | None = None,
    login: str = "owner",
    environment: str | None = None,
) -> str:
    """A real token in the vault's state database (the server sees it at once: same SQLite file, or the
    same PostgreSQL database when the config sets [state] url)."""
    config = load_config(config_path)
    db = StateDB.for_config(config)
    try:
        token, _ = create_token(
            db, name=name, client_class=client_class, tier=tier, login=login, environment=environment, now=time.time()
        )
    finally:
        db.close()
    return token


def mint_oauth(config_path: Path, *, login: str = "owner") -> str:
    """A live OAuth access token for ``login`` (a hosted client's grant family), minted through the OAuth core's
    own steps (request, consent, code, exchange) in the vault's state database, without a browser."""
    from urllib.parse import parse_qs, urlsplit

    from notegate.auth.oauth_core import OAuthCore
    from notegate.network import DEFAULT_LOCAL_URL, LOOPBACK_V4

    config = load_config(config_path)
    db = StateDB.for_config(config)
    try:
        core, now, callback = (
            OAuthCore(db, config, issuer=DEFAULT_LOCAL_URL),
            time.time(),
            f"http://{LOOPBACK_V4}:4000/cb",
        )
        consent = core.start(
            client_id="probe",
            client_name="Probe",
            redirect_uri=callback,
            redirect_uri_provided_explicitly=True,
            registered=(callback,),
            state="s",
            code_challenge="c" * 43,
            scopes=None,
            resource=None,
            now=now,
        )
        request_id = parse_qs(urlsplit(consent).query)["request"][0]
        code = parse_qs(urlsplit(core.approve(request_id, person=login, now=now)).query)["code"][0]
        issued = core.exchange_code(core.load_code("probe", code, now=now), now=now)
    finally:
        db.close()
    return issued.access_token


def token_secret(token: str) -> str:
    """The secret part of ``ngt_<id>_<secret>`` (it may itself hold "_"): what must never be stored or logged.
    Checking only the last "_" piece would check a fragment as short as one letter."""
    secret = token.removeprefix("ngt_").split("_", 1)[1]
    assert len(secret) >= 40, "not a notegate token"
    return secret


def set_policy(config_path: Path, **values: object) -> None:
    """Rewrite [policy] keys in a config file (tests only)."""
    text = config_path.read_text()
    for key, value in values.items():
        lines = text.splitlines()
        rendered = repr(value).replace("'", '"') if not isinstance(value, bool) else str(value).lower()
        lines = [f"{key} = {rendered}" if ln.split("=")[0].strip() == key else ln for ln in lines]
        text = "\n".join(lines) + "\n"
    config_path.write_text(text)


def notegate(
    *args: str,
    input: str | None = None,
    env: Mapping[str, str] | None = None,
    cwd: str | Path | None = None,
    timeout: float = 120,
    real: bool = False,
) -> subprocess.CompletedProcess[str]:
    """`notegate ARGS` in its own process, as ``subprocess.run(..., capture_output=True, text=True)`` answers:
    a fork of the worker's warm fork server (tests/support/zygote.py), or, with ``real=True`` (the tests that show
    the user's path: interpreter start, entry point, imports) or NOTEGATE_TEST_FRESH_SERVER=1, a fresh
    ``python -m notegate.cli``."""
    if real or FRESH_INTERPRETER:
        return subprocess.run(
            [sys.executable, "-m", "notegate.cli", *args],
            input=input,
            capture_output=True,
            text=True,
            env=None if env is None else dict(env),
            cwd=cwd,
            timeout=timeout,
        )
    from support.zygote import run_cli

    return run_cli(list(args), input=input, env=env, cwd=cwd, timeout=timeout)


class PortTaken(RuntimeError):
    pass


#: Set NOTEGATE_TEST_FRESH_SERVER=1 to start every server and every `notegate` command as a fresh
#: interpreter (slow; the old way), to tell a fork-server artefact from a real failure.
FRESH_INTERPRETER = os.environ.get("NOTEGATE_TEST_FRESH_SERVER") == "1"
#: How often a starting server is polled: a connect() to a closed port costs microseconds.
POLL_SECONDS = 0.01


def _listening(port: int) -> bool:
    """Whether something accepts on the port yet (cheaper than an HTTP request per poll)."""
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


class Server:
    """`notegate serve` as a real separate process on a free loopback port: a fork of the worker's warm fork
    server (tests/support/zygote.py), or a fresh interpreter with NOTEGATE_TEST_FRESH_SERVER=1."""

    def __init__(self, config_path: Path, port: int | None = None, extra_args: tuple[str, ...] = ()) -> None:
        self.config_path = config_path
        self.extra_args = extra_args
        self.port = port or free_port()
        self.url = f"http://localhost:{self.port}"  # what `notegate serve` prints
        self.proc: subprocess.Popen | Forked | None = None
        self.log = config_path.parent / f"serve-{self.port}.log"

    @property
    def issuer(self) -> str:
        """The URL the server names itself by on loopback (doors/http.base_url): localhost, for passkeys."""
        return self.url

    def start(self, timeout: float = 60.0) -> Server:
        """Start, retrying on another port if the chosen one was taken meanwhile (tests run in parallel)."""
        for _attempt in range(3):
            try:
                return self._start(timeout)
            except PortTaken:
                self.port = free_port()
                self.url = f"http://localhost:{self.port}"  # what `notegate serve` prints
                self.log = self.config_path.parent / f"serve-{self.port}.log"
        return self._start(timeout)

    def _start(self, timeout: float) -> Server:
        argv = ["serve", "--config", str(self.config_path), "--port", str(self.port), *self.extra_args]
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        if FRESH_INTERPRETER:
            with open(self.log, "ab") as handle:
                self.proc = subprocess.Popen(
                    [sys.executable, "-m", "notegate.cli", *argv], stdout=handle, stderr=subprocess.STDOUT, env=env
                )
        else:
            from support.zygote import fork_cli  # imports the server stack: only tests that start a server pay it

            self.proc = fork_cli(argv, self.log, env)
        deadline = time.monotonic() + timeout
        with httpx2.Client(timeout=1) as http:
            while time.monotonic() < deadline:
                if self.proc.poll() is not None:
                    tail = self.log.read_text()[-2000:]
                    if "address already in use" in tail.lower():
                        raise PortTaken(tail)
                    raise RuntimeError(f"server exited: {tail}")
                if _listening(self.port):
                    try:
                        if http.get(f"{self.url}/healthz").status_code == 200:
                            return self
                    except httpx2.HTTPError:
                        pass
                time.sleep(POLL_SECONDS)
        self.kill()
        raise RuntimeError(f"server did not answer /healthz in {timeout} s: {self.log.read_text()[-2000:]}")

    def kill(self, sig: int = signal.SIGKILL) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(sig)
            self.proc.wait(timeout=20)

    def stop(self) -> None:
        self.kill(signal.SIGTERM)


def start_cli(argv: list[str], log: Path, env: Mapping[str, str] | None = None) -> subprocess.Popen | Forked:
    """A long-running `notegate ARGV` (a gate, a bridge, the tools process) with stdout and stderr appended to
    ``log``: a fork of the worker's warm fork server, as :class:`Server` starts (a fresh interpreter pays ~1-2 s
    of imports at each start and restart), or a fresh ``python -m notegate.cli`` with NOTEGATE_TEST_FRESH_SERVER=1.
    The answer has the part of :class:`subprocess.Popen` the tests use: pid, poll, wait, send_signal, kill."""
    env = {**(os.environ if env is None else env), "PYTHONUNBUFFERED": "1"}
    if FRESH_INTERPRETER:
        with open(log, "ab") as handle:
            return subprocess.Popen(
                [sys.executable, "-m", "notegate.cli", *argv], stdout=handle, stderr=subprocess.STDOUT, env=env
            )
    from support.zygote import fork_cli

    return fork_cli(argv, log, env)


@contextlib.contextmanager
def running(config_path: Path) -> Iterator[Server]:
    server = Server(config_path).start()
    try:
        yield server
    finally:
        server.stop()


class GatedClient:
    """An SDK client that called session_start and passes its handle to every other tool (as models must)."""

    def __init__(self, client: Client, handle: str) -> None:
        self._client = client
        self.handle = handle

    def __getattr__(self, name: str):
        return getattr(self._client, name)

    async def call_tool(self, name: str, arguments: dict | None = None, **kwargs):
        arguments = dict(arguments or {})
        if name != "session_start":
            arguments.setdefault("handle", self.handle)
        return await self._client.call_tool(name, arguments, **kwargs)


@contextlib.asynccontextmanager
async def mcp_http(
    url: str,
    token: str | None,
    headers: dict[str, str] | None = None,
    *,
    start_session: bool = False,
    project: str | None = None,
) -> AsyncIterator[Client]:
    """The official SDK client over Streamable HTTP with a bearer token (optionally through session_start)."""
    all_headers = dict(headers or {})
    if token is not None:
        all_headers["Authorization"] = f"Bearer {token}"
    async with (
        httpx2.AsyncClient(headers=all_headers, timeout=60) as http,
        Client(streamable_http_client(f"{url}/mcp", http_client=http)) as client,
    ):
        if start_session:
            started = await client.call_tool("session_start", {"project": project} if project else {})
            assert not started.is_error, text_of(started)
            yield GatedClient(client, started.structured_content["handle"])
        else:
            yield client


#: Every tool the MCP door serves (session_start apart).
TOOLS = [
    "list_notes",
    "read_note",
    "search_notes",
    "write_note",
    "append_note",
    "move_note",
    "delete_note",
    "note_history",
    "restore_note",
    "read_attachment",
    "write_attachment",
    "inbox_write",
    "list_inbox",
    "promote_inbox",
    "hold_inbox",
]

KEY = "sk-ant-test-key"


def configure_models(
    vault: Path,
    *,
    anthropic_url: str | None = None,
    openai_url: str | None = None,
    chain: tuple[str, ...] = ("anthropic", "none"),
) -> None:
    text = vault.read_text().split("\n[models]\n")[0]
    text += "\n[models]\n" + f"chain = {json.dumps(list(chain))}\ntimeout_seconds = 2\n"
    if anthropic_url:
        text += (
            f'[models.anthropic]\nmodel = "claude-test"\nbase_url = "{anthropic_url}"\n'
            'api_key_env = "TEST_ANTHROPIC_KEY"\n'
        )
    if openai_url:
        text += f'[models.openai]\nmodel = "local-model"\nbase_url = "{openai_url}"\napi_key_env = "TEST_OPENAI_KEY"\n'
    vault.write_text(text)


def text_of(result) -> str:
    return "\n".join(getattr(c, "text", "") for c in result.content)


class RawResponse:
    """An HTTP/1.1 response read off a raw socket: status, lower-cased headers, body, and whether the server
    closed the connection after it."""

    def __init__(self, status: int, headers: dict[str, str], body: bytes, closed: bool) -> None:
        self.status = status
        self.headers = headers
        self.body = body
        self.closed = closed

    def json(self):
        return json.loads(self.body)


def raw_open(url: str, method: str, headers: dict[str, str], body: bytes = b"", *, path: str = "/mcp") -> socket.socket:
    """Send a request's head and ``body`` on a fresh socket and leave it open (a slow or idle client)."""
    host, port = url.removeprefix("http://").rsplit(":", 1)
    sock = socket.create_connection((host, int(port)), timeout=30)
    lines = [f"{method} {path} HTTP/1.1", f"Host: {host}:{port}"] + [f"{k}: {v}" for k, v in headers.items()]
    sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body)
    return sock


def raw_read(sock: socket.socket) -> RawResponse:
    """Read one response (by Content-Length), then check whether the server closed its side."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError(f"closed before a response: {data!r}")
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, _, v in (ln.partition(":") for ln in header_lines)}
    length = int(headers.get("content-length", "0"))
    while len(rest) < length:
        chunk = sock.recv(65536)
        if not chunk:
            break
        rest += chunk
    closed = False
    if headers.get("connection", "").lower() == "close":
        sock.settimeout(10)
        closed = sock.recv(1) == b""
    return RawResponse(int(status_line.split()[1]), headers, rest[:length], closed)


def the_one_refused(socks: list[socket.socket], seconds: float = 30.0) -> tuple[RawResponse, list[socket.socket]]:
    """Of more slow requests than there are slots, exactly one is answered (whichever came last): read it,
    and check every other one is still waiting for its body. Returns the answer and the waiting sockets."""
    with selectors.DefaultSelector() as selector:
        for sock in socks:
            selector.register(sock, selectors.EVENT_READ)
        ready = selector.select(timeout=seconds)
        assert ready, "no request was refused"
        first = ready[0][0].fileobj
        answer = raw_read(first)  # type: ignore[arg-type]
        selector.unregister(first)
        assert selector.select(timeout=0) == [], "more than one request was answered"
    return answer, [s for s in socks if s is not first]


def open_fds(pid: int) -> int:
    """How many file descriptors a process holds (Linux)."""
    return len(os.listdir(f"/proc/{pid}/fd"))


def clone_and_push(origin: Path, workdir: Path, path: str, text: str) -> str:
    """Somebody else (a workstation clone) pushes to the origin with the git CLI."""
    if not workdir.exists():
        subprocess.run(["git", "clone", "-q", str(origin), str(workdir)], check=True)
    subprocess.run(["git", "-C", str(workdir), "pull", "-q"], check=True)
    target = workdir / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text)
    subprocess.run(["git", "-C", str(workdir), "add", "-A"], check=True)
    subprocess.run(
        ["git", "-C", str(workdir), "-c", "user.name=W", "-c", "user.email=w@x", "commit", "-qm", "w"], check=True
    )
    subprocess.run(["git", "-C", str(workdir), "push", "-q", "origin", "HEAD:main"], check=True)
    return subprocess.run(
        ["git", "-C", str(workdir), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()


def warm_pool(folder: Path) -> filepool.FilePool:
    """The file pool of ``folder`` (vault/filepool.py), started and filled to at least half."""
    pool = filepool.pool(folder)
    if pool.ready() < filepool.SIZE // 2:
        pool.take()  # starts the refill
    for _ in range(400):
        if pool.ready() >= filepool.SIZE // 2 and not pool._filling:
            return pool
        time.sleep(0.01)
    raise AssertionError("the pool never filled")


from support.refusals import assert_refused as assert_refused  # noqa: E402 - the one refusal assertion
