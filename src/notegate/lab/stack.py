"""The lab's stack, part by part: the shell its commands run in, the vault it builds, the server process, the
MCP sessions of the phone and of bearer clients, and :class:`Lab`, what the scenario (lab/scenario.py) and the
optional parts (lab/people.py, lab/obsidian.py) hold on to.  lab/run.py starts them in order and plays the
scenario; this module imports none of those, so nothing runs back up from a part to the runner."""

from __future__ import annotations

import asyncio
import contextlib
import json
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from notegate.lab.standins import RedirectCatcher
from notegate.network import LOCALHOST, LOOPBACK_V4

PROJECT = "lab"
#: How old a passkey check may be to approve an elevation, in the lab (default 300 s): long enough for a
#: loaded machine to click approve after a fresh check, short enough to wait out for the stale case.
ASSERTION_SECONDS = 8
#: `notegate sync`'s status when the origin could not be reached (sync/daemon.py; nothing lost).
EXIT_RETRY = 1
MODEL_KEY_ENV = "NOTEGATE_LAB_MODEL_KEY"


@dataclass
class Checks:
    """Named checks, each printed as it is decided, with the seconds the run took to reach it since the last."""

    results: list[tuple[str, bool, str]] = field(default_factory=list)
    out: Callable[[str], None] = print
    clock: Callable[[], float] = time.monotonic
    last: float | None = None

    def check(self, name: str, ok: bool, detail: str = "") -> bool:
        now = self.clock()
        took = now - (self.last if self.last is not None else now)
        self.last = now
        self.results.append((name, bool(ok), detail))
        self.out(f"{'PASS' if ok else 'FAIL'} {name}" + (f": {detail}" if detail else "") + f" (+{took:.1f} s)")
        return bool(ok)

    @property
    def failed(self) -> list[str]:
        return [name for name, ok, _ in self.results if not ok]


def _text(result: Any) -> str:
    return "\n".join(getattr(c, "text", "") for c in result.content)


def refused_rule(result: Any) -> str | None:
    """The rule of a refusal ("Refused [rule]: …"), or None when the call succeeded."""
    if not result.is_error:
        return None
    text = _text(result)
    start = text.find("Refused [")
    return text[start + 9 : text.find("]", start)] if start >= 0 else "unnamed-error"


# ------------------------------------------------------------------------------------------ the stack
@dataclass(frozen=True)
class Shell:
    """How the lab runs git and notegate: with the environment the CLI handed in, minus anything a git pusher
    or git itself would read from whoever runs the lab, plus a fixed lab identity."""

    environ: dict[str, str]

    @classmethod
    def of(cls, environ: dict[str, str]) -> Shell:
        from notegate.policy import PUSHER_VARIABLES  # what the hook reads as the pusher: never inherited

        env = {k: v for k, v in environ.items() if k not in PUSHER_VARIABLES and not k.startswith("GIT_")}
        env.update(
            GIT_AUTHOR_NAME="Lab Owner",
            GIT_AUTHOR_EMAIL="owner@lab.invalid",
            GIT_COMMITTER_NAME="Lab Owner",
            GIT_COMMITTER_EMAIL="owner@lab.invalid",
            PYTHONUNBUFFERED="1",
        )
        return cls(env)

    def git(
        self, *args: str, cwd: Path | None = None, check: bool = True, pusher: str | None = None
    ) -> subprocess.CompletedProcess[str]:
        env = {**self.environ, **({"NOTEGATE_PUSHER": pusher} if pusher else {})}
        return subprocess.run(
            ["git", *args], cwd=cwd, capture_output=True, text=True, env=env, timeout=120, check=check
        )

    def notegate(self, *args: str, **extra_env: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "notegate.cli", *args],
            capture_output=True,
            text=True,
            timeout=180,
            env={**self.environ, **extra_env},
            check=False,
        )

    def origin_file(self, origin: Path, path: str) -> str | None:
        shown = self.git("--git-dir", str(origin), "show", f"main:{path}", check=False)
        return shown.stdout if shown.returncode == 0 else None

    def origin_paths(self, origin: Path) -> set[str]:
        return set(self.git("--git-dir", str(origin), "ls-tree", "-r", "--name-only", "main").stdout.split())


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind((LOOPBACK_V4, 0))
        return s.getsockname()[1]


def _set_keys(text: str, section: str, values: dict[str, object]) -> str:
    """Set keys of one TOML table in the config `notegate init` wrote (values as JSON, which TOML reads)."""
    lines = text.splitlines()
    out, current = [], None
    for line in lines:
        stripped = line.strip()
        if stripped.startswith("["):
            current = stripped.split("]")[0] + "]"
        key = stripped.split("=")[0].strip()
        if current == f"[{section}]" and "=" in stripped and key in values:
            line = f"{key} = {json.dumps(values[key])}"
        out.append(line)
    return "\n".join(out) + "\n"


def build_vault(base: Path, *, port: int, ca: Path, model_url: str, tables: str = "") -> Path:
    """The lab's deployment; ``tables`` are the optional parts' own config tables (a provider, LiveSync)."""
    from notegate.services.vaultinit import init_directory

    config = init_directory(base / "vault")
    household = init_directory(base / "household")  # a second vault: its origin (with the hook) serves env 2
    text = config.read_text()
    text = _set_keys(text, "server", {"port": port, "cimd_ca_file": str(ca), "cimd_private_hosts": [LOCALHOST]})
    # the approval wants a passkey check at most ASSERTION_SECONDS old, so the lab can show a stale one refused
    text = _set_keys(text, "policy", {"elevation_assertion_seconds": ASSERTION_SECONDS, "fetch_interval_seconds": 1.0})
    text = text.replace(
        "[policy]",
        f'[environments.household]\norigin = "{household.parent / "origin.git"}"\nowner = "partner"\n'
        "members = []\n\n[policy]",
        1,
    )
    text += (
        '\n[models]\nchain = ["openai", "none"]\ntimeout_seconds = 10\n'
        f'[models.openai]\nmodel = "lab-model"\nbase_url = "{model_url}"\napi_key_env = "{MODEL_KEY_ENV}"\n'
    )
    config.write_text(text + tables)
    return config


class ServerProcess:
    def __init__(self, config: Path, port: int, environ: dict[str, str]) -> None:
        self.config, self.port, self.environ = config, port, environ
        self.url = f"http://{LOCALHOST}:{port}"
        self.log = config.parent / "serve.log"
        self.proc: subprocess.Popen | None = None

    def spawn(self) -> None:
        with open(self.log, "ab") as handle:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "notegate.cli", "serve", "--config", str(self.config), "--port", str(self.port)],
                stdout=handle,
                stderr=subprocess.STDOUT,
                env=self.environ,
            )

    async def ready(self, timeout: float = 120) -> None:
        """Wait (without blocking the loop: the browser starts meanwhile) until /healthz answers."""
        import httpx2

        deadline = time.monotonic() + timeout
        async with httpx2.AsyncClient(timeout=1) as http:
            while time.monotonic() < deadline:
                if self.proc is None or self.proc.poll() is not None:
                    raise RuntimeError("the server exited; see serve.log")
                with contextlib.suppress(httpx2.HTTPError):
                    if (await http.get(f"http://{LOOPBACK_V4}:{self.port}/healthz")).status_code == 200:
                        return
                await asyncio.sleep(0.05)
        raise RuntimeError(f"the server did not answer /healthz in {timeout} s; see serve.log")

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=20)


# ----------------------------------------------------------------------------------------- the clients
class Session:
    """An MCP client session through session_start: passes its handle (and a grant, when given) to every tool."""

    def __init__(self, client: Any, handle: str | None, started: Any) -> None:
        self.client, self.handle, self.started = client, handle, started
        self.grant: str | None = None
        self.consent_shown: dict[str, str] = {}  # OAuth: what the owner's consent page showed
        self.storage: Any = None  # OAuth: the client's token memory

    async def call(self, name: str, arguments: dict | None = None) -> Any:
        arguments = dict(arguments or {})
        if self.handle:
            arguments.setdefault("handle", self.handle)
        if self.grant:
            arguments.setdefault("grant", self.grant)
        return await self.client.call_tool(name, arguments)

    async def write(self, path: str, content: str, base: str = "absent") -> Any:
        """A write as a hosted client makes it: the preview, then the confirmation."""
        args = {"path": path, "content": content, "base_revision": base}
        preview = await self.call("write_note", args)
        if preview.is_error or (preview.structured_content or {}).get("status") == "committed":
            return preview
        return await self.call("write_note", {**args, "confirmed": True})


@contextlib.asynccontextmanager
async def bearer_session(url: str, token: str, project: str | None = PROJECT):
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60) as http,
        Client(streamable_http_client(f"{url}/mcp", http_client=http)) as client,
    ):
        started = await client.call_tool("session_start", {"project": project} if project else {})
        yield Session(client, (started.structured_content or {}).get("handle"), started)


class PhoneStorage:
    """The phone's OAuth memory (the SDK's TokenStorage protocol): keep it to reconnect as the same login."""

    def __init__(self) -> None:
        self.tokens: Any = None
        self.client_info: Any = None

    async def get_tokens(self) -> Any:
        return self.tokens

    async def set_tokens(self, tokens: Any) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> Any:
        return self.client_info

    async def set_client_info(self, client_info: Any) -> None:
        self.client_info = client_info


@contextlib.asynccontextmanager
async def phone_session(
    url: str, owner: Any, metadata_url: str, redirect: RedirectCatcher, storage: PhoneStorage | None = None
):
    """The phone: the SDK's own OAuth client with a Client ID Metadata Document; the owner consents in Chromium."""
    import httpx2
    from mcp import Client
    from mcp.client.auth import OAuthClientProvider
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared.auth import AuthorizationCodeResult, OAuthClientMetadata
    from pydantic import AnyUrl

    storage = storage or PhoneStorage()
    shown: dict[str, str] = {}

    async def on_redirect(authorize_url: str) -> None:
        shown.update(await owner.consent(authorize_url, redirect.url))

    async def on_callback() -> AuthorizationCodeResult:
        query = parse_qs(urlsplit(redirect.landed[-1]).query)
        return AuthorizationCodeResult(code=query["code"][0], state=query["state"][0], iss=query["iss"][0])

    auth = OAuthClientProvider(
        f"{url}/mcp",
        OAuthClientMetadata(
            client_name="Lab phone",
            redirect_uris=[AnyUrl(redirect.url)],
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            token_endpoint_auth_method="none",  # noqa: S106 - a public client: PKCE, no secret
        ),
        storage,
        redirect_handler=on_redirect,
        callback_handler=on_callback,
        client_metadata_url=metadata_url,
    )
    async with (
        httpx2.AsyncClient(auth=auth, timeout=60) as http,
        Client(streamable_http_client(f"{url}/mcp", http_client=http)) as client,
    ):
        started = await client.call_tool("session_start", {"project": PROJECT})
        session = Session(client, (started.structured_content or {}).get("handle"), started)
        session.consent_shown, session.storage = shown, storage
        yield session


# -------------------------------------------------------------------------------------------- the run
@dataclass
class Lab:
    base: Path
    checks: Checks
    sh: Shell
    config: Path | None = None
    origin: Path | None = None
    server: ServerProcess | None = None
    #: what the model stand-in does next: a function of the quoted items -> verdicts
    script: Callable[[list[tuple[str, str]]], Any] | None = None
    loop: asyncio.AbstractEventLoop | None = None
    #: the phone's first OAuth login (its token memory), to reconnect as that login later
    first_phone: Any = None
    #: Chromium (a second person opens their own context in it)
    browser: Any = None
    #: the optional parts that run (an OpenID Connect provider, the Obsidian phone), by name
    parts: dict[str, Any] = field(default_factory=dict)
    #: the optional parts that cannot run here, with the reason (printed as SKIP lines)
    skipped: dict[str, str] = field(default_factory=dict)

    def skip(self, part: str, why: str) -> None:
        self.skipped[part] = why
        self.checks.out(f"SKIP {part}: {why}")

    def state(self, read: Callable[[Any], Any]) -> Any:
        """``read(db)`` on the deployment's state database (the lab's checks read the audit and tasks)."""
        from notegate.config import load_config
        from notegate.state import StateDB

        assert self.config is not None
        db = StateDB.for_config(load_config(self.config))
        try:
            return read(db)
        finally:
            db.close()

    def audit(self, **where: Any) -> list[Any]:
        """Audit rows, oldest first (``where``: the audit_rows filters: tool, connector, outcome, ...)."""
        return self.state(lambda db: db.audit_rows(limit=1000, **where))

    @property
    def default_environment(self) -> str:
        from notegate.config import load_config

        assert self.config is not None
        return load_config(self.config).default_environment

    def answer(self, items: list[tuple[str, str]]) -> Any:
        assert self.script is not None
        return self.script(items)

    async def review(self) -> subprocess.CompletedProcess[str]:
        """`notegate review` as the cron runs it: its own process, the model stand-in as its provider."""
        env = {**self.sh.environ, MODEL_KEY_ENV: "lab-model-key"}
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "notegate.cli",
            "review",
            "--config",
            str(self.config),
            "--json",
            env=env,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, err = await proc.communicate()
        return subprocess.CompletedProcess([], proc.returncode or 0, out.decode(), err.decode())

    def on_loop(self, coro: Any, timeout: float = 60) -> Any:
        """Run a coroutine on the lab's loop from a stand-in's thread (the model answering mid-review)."""
        assert self.loop is not None
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)
