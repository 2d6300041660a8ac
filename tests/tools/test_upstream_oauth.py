"""Upstream OAuth end to end (issue 32): the tools gateway as an OAuth client of a remote MCP server — notegate's
own, a real OAuth-protected one — through a real `notegate tools serve` and a real `notegate serve`.

The owner starts the grant from the console (a real session cookie and CSRF token), the authorization server's
consent is answered as the person (the consent backend over the same state file, as the browser tests' page
does), the browser's return lands on the console's callback and is relayed to the tools process, which does
the exchange (dynamic registration, PKCE S256, the resource indicator) and keeps the grant sealed. Then a
mounted remote tool is called through the one connector with the token the gateway obtained, per upstream
account (two people, two grants, never one token), and again after the access token expired (refreshed).
"""

from __future__ import annotations

import html
import json
import re
import secrets
import signal
import time
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import anyio
import httpx2
import pytest

from notegate.auth.oauth_core import OAuthCore
from notegate.auth.websession import WebSessions
from notegate.config import load_config
from notegate.state import StateDB
from notegate.tools.oauth_names import CLIENT, GRANT
from notegate.tools.sealing import read_key_file
from notegate.tools.tokens import Minter
from support import Server, free_port, mint, notegate, start_cli, text_of
from support import mcp_http as _mcp_http

pytestmark = pytest.mark.anyio

ACCESS_SECONDS = 4  # the remote's access tokens: short, so the gateway must refresh within the test


def cli(config: Path, *args: str) -> str:
    done = notegate("tools", *args, "--config", str(config))
    assert done.returncode == 0, done.stderr
    return done.stdout


class Tools:
    def __init__(self, config: Path, key: Path, port: int, mint_key: str) -> None:
        self.config, self.port = config, port
        self.url = f"http://127.0.0.1:{port}"
        log = config.parent / "tools.log"
        argv = ["tools", "serve", "--config", str(config), "--key-file", str(key), "--port", str(port)]
        self.proc = start_cli([*argv, f"--mint-key={mint_key}"], log)
        self.log = log
        deadline = time.monotonic() + 60
        while True:
            assert self.proc.poll() is None, log.read_text()[-3000:]
            try:
                if httpx2.get(f"{self.url}/healthz", timeout=2).status_code == 200:
                    break
            except httpx2.HTTPError:
                pass
            assert time.monotonic() < deadline, log.read_text()[-3000:]
            time.sleep(0.1)

    def upstreams(self) -> dict:
        config = load_config(self.config)
        state = StateDB.for_config(config)
        try:
            token = Minter(state, config.state_dir).mint_health("")
        finally:
            state.close()
        return httpx2.get(f"{self.url}/healthz", headers={"Authorization": f"Bearer {token}"}, timeout=5).json()[
            "upstreams"
        ]

    def wait(self, mount: str, states: tuple[str, ...], timeout: float = 60) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            found = self.upstreams()[mount]
            if found["state"] in states:
                return found
            assert time.monotonic() < deadline, (found, self.log.read_text()[-3000:])
            time.sleep(0.1)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(timeout=30)


def console_session(state: StateDB, login: str) -> tuple[str, str]:
    """A console session of ``login`` opened now (as a passkey login opens one): (cookie, csrf)."""
    passkey_id = f"pk_{login}_{secrets.token_hex(3)}"
    state.insert_passkey(
        {
            "id": passkey_id,
            "login": login,
            "credential_id": passkey_id.encode(),
            "public_key": b"k",
            "user_handle": login.encode(),
            "sign_count": 0,
            "name": "test",
            "created_at": time.time(),
        }
    )
    session = WebSessions(state).open(login=login, passkey_id=passkey_id, now=time.time())
    return session.secret, session.csrf


def grant(server: Server, config: Path, state: StateDB, mount: str, person: str) -> httpx2.Response:
    """The owner connects ``mount`` in the console; ``person`` (the upstream account) consents at the remote."""
    cookie, csrf = console_session(state, "owner")
    with httpx2.Client(
        base_url=server.url, cookies={"notegate-session": cookie}, headers={"Origin": server.url}, timeout=60
    ) as owner:
        started = owner.post(f"/tools/mounts/{mount}/oauth", data={"csrf": csrf, "env": "personal"})
        assert started.status_code == 200, started.text
        authorize = html.unescape(re.search(r'id="authorize" href="([^"]+)"', started.text).group(1))
        query = parse_qs(urlsplit(authorize).query)
        assert query["code_challenge_method"] == ["S256"] and query["resource"] == [f"{server.url}/mcp"]
        assert query["redirect_uri"] == [f"{server.url}/tools/oauth/callback"]
        consent = httpx2.get(authorize, follow_redirects=False)  # the browser at the remote's /authorize
        assert consent.status_code == 302, consent.text
        request_id = parse_qs(urlsplit(consent.headers["location"]).query)["request"][0]
        core = OAuthCore(state, load_config(config), issuer=server.url)
        back = core.approve(request_id, person=person, now=time.time())  # the person consents
        assert back.startswith(f"{server.url}/tools/oauth/callback?")
        return owner.get(back.removeprefix(server.url))  # the browser returns to the console


@pytest.fixture(scope="module")
def gateway(tmp_path_factory: pytest.TempPathFactory):
    base = tmp_path_factory.mktemp("oauthgw")
    assert notegate("init", str(base / "vault")).returncode == 0
    config = base / "vault" / "notegate.toml"
    port, tools_port = free_port(), free_port()
    text = config.read_text().replace("members = []", 'members = ["kid"]', 1)
    text = re.sub(r"(?m)^port = \d+$", f"port = {port}", text, count=1)  # the URL the CLI names the server by
    text = text.replace(
        "[policy]",
        f'[tools]\nurl = "http://127.0.0.1:{tools_port}"\nrestart_seconds = 0.2\ncall_seconds = 10.0\n\n[policy]',
        1,
    )
    text = re.sub(r"(?m)^oauth_access_token_seconds = .*$", f"oauth_access_token_seconds = {ACCESS_SECONDS}", text)
    config.write_text(text)
    key = base / "tools.key"
    cli(config, "keygen", "--output", str(key))
    remote = f"http://localhost:{port}/mcp"  # notegate's own MCP server, OAuth-protected, as the remote
    cli(config, "catalog", "--name", "notegate", "--kind", "remote", "--package", remote)
    for mount, account in (("mine", "owner"), ("kids", "kid")):
        cli(
            config, "mount", "--name", mount, "--catalog", "notegate", "--account", account, "--environment", "personal"
        )
    tools = Tools(config, key, tools_port, cli(config, "mint-key").strip())
    server = Server(config, port=port).start()
    assert server.port == port, "the server's port was taken: the catalog names another"
    state = StateDB.for_config(load_config(config))
    laptop = mint(config, name="laptop", client_class="workstation", tier="trusted", environment="personal")
    try:
        yield {"config": config, "server": server, "tools": tools, "state": state, "laptop": laptop, "key": key}
    finally:
        tools.stop()
        server.stop()
        state.close()


async def _call(server: Server, token: str, name: str) -> str:
    async with _mcp_http(server.url, token) as laptop:
        result = await laptop.call_tool(name, {"project": "demo"})
    assert not result.is_error, text_of(result)
    return text_of(result)


def _remote_rows(state: StateDB, since: float) -> list[dict]:
    rows = state.query(
        "SELECT login, client, tool, outcome FROM audit WHERE at >= ? AND tool = 'session_start'", (since,)
    )
    return [dict(r) for r in rows]


def test_a_remote_tool_is_called_with_the_grant_the_gateway_obtained_and_refreshed(gateway) -> None:
    config, server, tools, state = gateway["config"], gateway["server"], gateway["tools"], gateway["state"]
    assert tools.upstreams()["mine"]["state"] == "needs-grant"
    doctor = json.loads(notegate("doctor", "--config", str(config), "--json").stdout)
    row = next(r for r in doctor if r["check"] == "tools.upstreams" and r["subject"] == "mine")
    assert row["status"] == "warn" and row["found"].startswith("needs-grant") and "oauth" in row["remedy"], row
    back = grant(server, config, state, "mine", "owner")
    assert back.status_code == 303 and "done=oauth-granted" in back.headers["location"], back.text
    tools.wait("mine", ("held", "running"))
    assert "mine\tsession_start" in cli(config, "approve", "--pending")
    cli(config, "approve", "mine")
    since = time.time()
    first = anyio.run(_call, server, gateway["laptop"], "mine__session_start")
    assert "restricted" in first  # the remote sees a hosted OAuth client, not the laptop's trust
    rows = _remote_rows(state, since)
    assert {(r["login"], r["client"]) for r in rows} == {("owner", "notegate tools gateway (mine)")}, rows
    # the grant is sealed: the refresh token is in no database row or config in clear, and opens with the key only
    sealed = state.sealed_credentials("mine")
    assert set(sealed) >= {GRANT, CLIENT}
    opened = json.loads(read_key_file(gateway["key"]).open("mine", GRANT, sealed[GRANT]))
    refresh = opened["token"]["refresh_token"]
    copy = config.parent / "copy.sqlite"
    state.backup_to(copy)
    assert refresh.encode() not in copy.read_bytes() + config.read_bytes()
    # after the access token's lifetime, the next call still works: the gateway refreshed (and re-sealed)
    stored_at = state.query("SELECT created_at FROM tools_credentials WHERE mount = 'mine' AND variable = ?", (GRANT,))
    time.sleep(ACCESS_SECONDS)  # the gateway refreshes a quarter of the lifetime early: 1 s to spare
    again = anyio.run(_call, server, gateway["laptop"], "mine__session_start")
    assert "restricted" in again
    later = state.query("SELECT created_at FROM tools_credentials WHERE mount = 'mine' AND variable = ?", (GRANT,))
    assert later[0][0] > stored_at[0][0]
    renewed = json.loads(read_key_file(gateway["key"]).open("mine", GRANT, state.sealed_credentials("mine")[GRANT]))
    assert renewed["token"]["refresh_token"] != refresh  # rotated by the remote, stored sealed again
    log = tools.log.read_text() + server.log.read_text()
    assert refresh not in log and renewed["token"]["access_token"] not in log


def test_two_upstream_accounts_hold_two_grants(gateway) -> None:
    config, server, tools, state = gateway["config"], gateway["server"], gateway["tools"], gateway["state"]
    back = grant(server, config, state, "kids", "kid")
    assert back.status_code == 303, back.text
    tools.wait("kids", ("held", "running"))
    cli(config, "approve", "kids")
    if tools.upstreams()["mine"]["state"] == "needs-grant":  # this test alone (xdist split the module)
        assert grant(server, config, state, "mine", "owner").status_code == 303
        tools.wait("mine", ("held", "running"))
        cli(config, "approve", "mine")
    since = time.time()
    anyio.run(_call, server, gateway["laptop"], "kids__session_start")
    anyio.run(_call, server, gateway["laptop"], "mine__session_start")
    rows = _remote_rows(state, since)
    assert {(r["login"], r["client"]) for r in rows} == {
        ("kid", "notegate tools gateway (kids)"),
        ("owner", "notegate tools gateway (mine)"),
    }, rows
    key = read_key_file(gateway["key"])
    tokens = [
        json.loads(key.open(m, GRANT, state.sealed_credentials(m)[GRANT]))["token"]["access_token"]
        for m in ("mine", "kids")
    ]
    assert tokens[0] != tokens[1]


def test_the_callback_needs_the_owner_and_a_grant_under_way(gateway) -> None:
    server, state = gateway["server"], gateway["state"]
    anonymous = httpx2.get(f"{server.url}/tools/oauth/callback?state=x&code=y", follow_redirects=False)
    assert anonymous.status_code == 401 and 'data-rule="login-required"' in anonymous.text
    cookie, _csrf = console_session(state, "owner")
    unknown = httpx2.get(
        f"{server.url}/tools/oauth/callback?state=nothing&code=y", cookies={"notegate-session": cookie}
    )
    assert re.search(r'data-rule="tools-oauth-unknown"', unknown.text), unknown.text


def test_the_cli_prints_the_authorization_url_of_a_new_grant(gateway) -> None:
    """`notegate tools oauth MOUNT` asks the tools process (with the server's key) and prints where to go."""
    config, server = gateway["config"], gateway["server"]
    url = cli(config, "oauth", "kids").strip()
    query = parse_qs(urlsplit(url).query)
    assert url.startswith(f"{server.url}/authorize?")
    assert query["code_challenge_method"] == ["S256"] and query["resource"] == [f"{server.url}/mcp"]
    assert query["redirect_uri"] == [f"{server.url}/tools/oauth/callback"]
    refused = notegate("tools", "oauth", "nosuch", "--config", str(config))
    assert refused.returncode != 0 and "Refused [tools-unknown]" in refused.stderr


def test_a_remote_notegates_knowledge_tools_get_the_session_handle_the_gateway_holds(gateway) -> None:
    """The remote sees a hosted client, so every knowledge tool there needs its session handle. The handle is a
    credential: the result that carries it is redacted, and the knowledge service strips any `handle` a model
    passes (that is its own handle here). Before, the gateway dropped it and every call but `session_start`
    was refused at the remote (`session-handle-missing`); now the tools process holds it for this caller."""
    config, server, tools, state = gateway["config"], gateway["server"], gateway["tools"], gateway["state"]
    if tools.upstreams()["mine"]["state"] == "needs-grant":  # this test alone (xdist split the module)
        assert grant(server, config, state, "mine", "owner").status_code == 303
        tools.wait("mine", ("held", "running"))
        cli(config, "approve", "mine")

    async def run() -> tuple[dict, str, str]:
        async with _mcp_http(server.url, gateway["laptop"]) as laptop:
            listed = {tool.name: tool for tool in (await laptop.list_tools()).tools}
            started = await laptop.call_tool("mine__session_start", {"project": "demo"})
            notes = await laptop.call_tool("mine__list_notes", {"handle": "ngs_" + "x" * 43})
        assert not started.is_error and not notes.is_error, text_of(notes)
        return listed["mine__list_notes"].input_schema, text_of(started), text_of(notes)

    schema, started, notes = anyio.run(run)
    assert "handle" not in schema.get("properties", {})  # the tools process passes it: the model is not asked
    assert "ngs_" not in started and "[redacted:notegate-session-handle]" in started
    assert "ngs_" not in notes
    rows = state.query("SELECT tool, outcome FROM audit WHERE tool = 'list_notes' AND client LIKE 'notegate tools%'")
    assert ("list_notes", "ok") in {(r[0], r[1]) for r in rows}, rows
