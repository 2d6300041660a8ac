"""`notegate lab`: the whole stack on one machine, then the seeds' promises as named PASS/FAIL checks.

What runs, each a real process or a real protocol on loopback:
* the notegate server (`notegate serve`, its own process) with two environments (personal, household);
* the bare origins `notegate init` makes, with the pre-receive hook;
* a model stand-in (OpenAI chat completions, answering from a script) for `notegate review`, run as the cron
  runs it (its own process);
* the phone: the official MCP SDK client doing OAuth with a Client ID Metadata Document (HTTPS stand-in,
  lab CA), session_start, restricted writes and an elevation request;
* the owner: Chromium (Debian's) with a CDP virtual authenticator, enrolling a passkey, approving the
  phone's consent and its elevation in the console;
* a workstation: a git clone under `notegate sync --once`, and a plain git clone pushing to the origin;
* a second person (lab/people.py): invited by the owner, logging in through an OpenID Connect provider run
  on loopback (oidc-provider-mock, the dev extra), connecting an AI client, removed;
* the phone as an Obsidian device (lab/obsidian.py): pouchdb-server, `notegate livesync gate` and `bridge`,
  and PouchDB under Node replicating through the gate with the phone's own key.

The last two are optional parts: where their tools are missing, each prints "SKIP part: why" and the rest runs.

Every check prints one line, "PASS name: detail" or "FAIL name: detail"; the exit status is 1 if any failed.
Details are produced by code (rules, counts, yes/no), never a note's text or a token.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from notegate.lab.standins import MetadataHost, ModelStandIn, RedirectCatcher
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


def _free_port() -> int:
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


async def run_lab(base: Path, sh: Shell) -> int:
    from playwright.async_api import async_playwright

    from notegate.lab.browser import CHROMIUM, CHROMIUM_ARGS, Owner

    checks = Checks()
    lab = Lab(base, checks, sh, loop=asyncio.get_running_loop())
    port = _free_port()
    started = checks.last = time.monotonic()
    try:
        with (
            ModelStandIn(lab.answer, api_key="lab-model-key") as model,
            MetadataHost(base / "tls") as metadata,
            RedirectCatcher() as redirect,
            contextlib.ExitStack() as optional,
        ):
            tables = _optional_parts(lab, optional)
            lab.config = build_vault(base, port=port, ca=metadata.ca, model_url=model.base_url, tables=tables)
            lab.origin = lab.config.parent / "origin.git"
            _optional_stacks(lab)
            metadata_url = metadata.serve(
                "/oauth/client.json",
                {
                    "client_id": metadata.url("/oauth/client.json"),
                    "client_name": "Lab phone",
                    "redirect_uris": [redirect.url],
                },
            )
            lab.server = ServerProcess(lab.config, port, sh.environ)
            lab.server.spawn()
            try:
                async with async_playwright() as playwright:
                    # the server, Chromium and the enrol link come up side by side
                    browser, link, _ = await asyncio.gather(
                        playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True),
                        asyncio.to_thread(sh.notegate, "owner", "enroll", "--config", str(lab.config)),
                        lab.server.ready(),
                    )
                    lab.browser = browser
                    try:
                        owner = await Owner.open(browser)
                        await owner.enrol(link.stdout.strip())
                        print(
                            f"lab: stack up in {time.monotonic() - started:.1f} s (server, Chromium, passkey enrolled)"
                        )
                        await _scenario(lab, owner, metadata, metadata_url, redirect)
                    finally:
                        await browser.close()
            finally:
                phone = lab.parts.get("obsidian-phone")
                if hasattr(phone, "stop"):  # its processes, whatever stopped the run before its phase did
                    phone.stop()
                lab.server.stop()
    except Exception as exc:  # the stack did not come up (or a stand-in broke): one FAIL line, by type only
        checks.check("lab-stack-ran", False, f"{type(exc).__name__}; see the lab's serve.log (--keep)")
    elapsed = time.monotonic() - started
    failed = checks.failed
    print(
        f"lab: {len(checks.results) - len(failed)} passed, {len(failed)} failed"
        + (f", {len(lab.skipped)} part(s) skipped" if lab.skipped else "")
        + f" in {elapsed:.1f} s"
        + (f" (failed: {', '.join(failed)})" if failed else "")
    )
    return 1 if failed else 0


def _optional_parts(lab: Lab, optional: contextlib.ExitStack) -> str:
    """Start what the optional parts need before the config is written (the provider's issuer is in it);
    each part that cannot run here is printed as SKIP with the reason. Returns their config tables."""
    from notegate.lab import obsidian, people

    tables = ""
    why = people.missing()
    if why:
        lab.skip("second-person", why)
    else:
        lab.parts["second-person"] = issuer = optional.enter_context(people.provider())
        tables += people.config_table(issuer)
    why = obsidian.missing()
    if why:
        lab.skip("obsidian-phone", why)
    else:
        lab.parts["obsidian-phone"] = ports = (_free_port(), _free_port())
        tables += obsidian.config_table(*ports)
    return tables


def _optional_stacks(lab: Lab) -> None:
    """After the config exists: the provider's client secret beside it, the phone's stack (started later)."""
    from notegate.lab import obsidian, people

    assert lab.config is not None
    if "second-person" in lab.parts:
        (lab.config.parent / people.SECRET_FILE).write_text("a-lab-client-secret\n")
    if "obsidian-phone" in lab.parts:
        couch_port, gate_port = lab.parts["obsidian-phone"]
        lab.parts["obsidian-phone"] = obsidian.Stack(lab.base, lab.config, couch_port, gate_port, lab.sh.environ)


async def _scenario(lab: Lab, owner: Any, metadata: MetadataHost, metadata_url: str, redirect) -> None:
    from notegate.lab import scenario

    await scenario.play(lab, owner, metadata, metadata_url, redirect)


def main(directory: str | None, keep: bool, environ: dict[str, str]) -> int:
    """`notegate lab`: ``environ`` is the environment the CLI read (the lab's children inherit it, cleaned)."""
    from notegate.lab.browser import BrowserMissing, require_browser

    # The arguments first, then the machine: a mistake the user can fix in the command line is named even
    # where no browser is installed (and no temporary directory is made for a lab that cannot run).
    if directory and Path(directory).exists() and any(Path(directory).iterdir()):
        print(f"notegate lab: {directory} is not empty; give an empty or new directory", file=sys.stderr)
        return 2
    try:
        require_browser()
    except BrowserMissing as exc:
        print(f"notegate lab: {exc.explain()}", file=sys.stderr)
        return 2
    base = Path(directory) if directory else Path(tempfile.mkdtemp(prefix="notegate-lab-"))
    base.mkdir(parents=True, exist_ok=True)
    try:
        return asyncio.run(run_lab(base, Shell.of(environ)))
    finally:
        if keep:
            print(f"lab: kept {base}")
        else:
            shutil.rmtree(base, ignore_errors=True)
