"""The tools gateway end to end (issue 32): real upstreams installed from their pins (mcp-server-time from
PyPI, @modelcontextprotocol/server-everything from npm, and our own credential-checking upstream), a real
`notegate tools serve`, a real `notegate serve`, and the official SDK client as a phone and a workstation.

One gateway per module and worker (installing three upstreams costs tens of seconds); each test stands alone
(xdist may split the module): the fixture records what callers saw before the owner approved anything, and the
rug pull happens on a mount of its own."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import TYPE_CHECKING

import anyio
import httpx2
import pygit2
import pytest

from notegate.config import load_config
from notegate.state import StateDB
from support import free_port, mint, notegate, running, start_cli, text_of
from support import mcp_http as _mcp_http
from support.upstreams import CACHE, EVERYTHING, LEAKED, TIME, node_or_skip, upstream_cache

if TYPE_CHECKING:
    from support.zygote import Forked

pytestmark = pytest.mark.anyio

CHECK_TOKEN = "upstream-credential-of-the-owner-1234"


def cli(config: Path, *args: str, input: str | None = None) -> subprocess.CompletedProcess[str]:
    done = notegate("tools", *args, "--config", str(config), input=input)
    assert done.returncode == 0, done.stderr
    return done


class ToolsProcess:
    def __init__(self, config: Path, key: Path, port: int, mint_key: str) -> None:
        self.config, self.key, self.port, self.mint_key = config, key, port, mint_key
        self.url = f"http://127.0.0.1:{port}"
        self.log = config.parent / "tools.log"
        self.proc: subprocess.Popen | Forked | None = None

    def start(self) -> ToolsProcess:
        argv = ["tools", "serve", "--config", str(self.config), "--key-file", str(self.key), "--port", str(self.port)]
        env = {**os.environ, "SECRET_OF_THE_HOST": "never-inherited"}
        self.proc = start_cli([*argv, f"--mint-key={self.mint_key}"], self.log, env)  # an id may begin with "-"
        self.wait_up()
        return self

    def health(self) -> dict:
        """Each mount's health, asked as the knowledge service and the doctor ask: with a tools:health token."""
        from notegate.tools.tokens import Minter

        state = StateDB.for_config(load_config(self.config))
        try:
            token = Minter(state, load_config(self.config).state_dir).mint_health("")
        finally:
            state.close()
        return httpx2.get(f"{self.url}/healthz", headers={"Authorization": f"Bearer {token}"}, timeout=5).json()

    def anonymous_health(self) -> dict:
        return httpx2.get(f"{self.url}/healthz", timeout=5).json()

    def wait_up(self, timeout: float = 240.0) -> dict:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.proc is not None and self.proc.poll() is None, self.log.read_text()[-3000:]
            try:
                health = self.anonymous_health()
                if health["status"] == "ok":
                    return health
            except httpx2.HTTPError:
                pass
            time.sleep(0.2)
        raise AssertionError(f"tools process not up: {self.log.read_text()[-3000:]}")

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(timeout=30)


@pytest.fixture(scope="module")
def gateway(tmp_path_factory: pytest.TempPathFactory):
    cache, checker_pin = upstream_cache(tmp_path_factory.mktemp("cache"))
    node = node_or_skip()
    base = tmp_path_factory.mktemp("gw")
    done = notegate("init", str(base / "vault"))
    assert done.returncode == 0, done.stderr
    config = base / "vault" / "notegate.toml"
    pygit2.init_repository(str(config.parent / "household.git"), bare=True, initial_head="main")
    tools_port = free_port()
    text = config.read_text().replace(
        "[policy]",
        '[environments.household]\norigin = "household.git"\nowner = "partner"\n\n'
        f'[tools]\nurl = "http://127.0.0.1:{tools_port}"\ncache = "{cache}"\n'
        f'installs = "{CACHE / "test-installs"}"\nrestart_seconds = 0.2\ncall_seconds = 4.0\n\n[policy]',
        1,
    )
    config.write_text(text)
    key = base / "tools.key"
    recipient = cli(config, "keygen", "--output", str(key)).stdout.strip()
    assert recipient.startswith("age1")
    for name, pin in (("time", TIME), ("everything", EVERYTHING), ("checker", checker_pin)):
        cli(config, "catalog", "--name", name, *(f"--{k}={v}" for k, v in pin.items()))
    cli(config, "mount", "--name", "clock", "--catalog", "time", "--account", "system", "--environment", "personal")
    cli(config, "mount", "--name", "demo", "--catalog", "everything", "--account", "demo", "--environment", "personal")
    cli(
        config,
        "mount",
        "--name",
        "check",
        "--catalog",
        "checker",
        "--account",
        "owner@example.org",
        "--environment",
        "personal",
        "--variable",
        "CHECK_TOKEN",
        "--variable",
        "CHECK_VARIANT",
        "--write-tool",
        "write_thing",
        "--write-tool",
        "crash",
    )
    cli(
        config,
        "mount",
        "--name",
        "rug",
        "--catalog",
        "checker",
        "--account",
        "other@example.org",
        "--environment",
        "personal",
        "--variable",
        "CHECK_VARIANT",
        "--write-tool",
        "crash",
    )
    cli(
        config,
        "mount",
        "--name",
        "slow",
        "--catalog",
        "checker",
        "--account",
        "slow@example.org",
        "--environment",
        "personal",
    )
    cli(config, "credential", "check", "CHECK_TOKEN", input=CHECK_TOKEN + "\n")
    mint_key = cli(config, "mint-key").stdout.strip()  # the knowledge service's key id, pinned at the start
    tools = ToolsProcess(config, key, tools_port, mint_key).start()
    state = StateDB.for_config(load_config(config))
    tokens = {
        "phone": mint(config, name="phone", client_class="hosted", environment="personal"),
        "laptop": mint(config, name="laptop", client_class="workstation", tier="trusted", environment="personal"),
        "kid": mint(
            config, name="kid", login="partner", client_class="workstation", tier="trusted", environment="household"
        ),
    }
    try:
        with running(config) as server:
            before = anyio.run(names, server, tokens["laptop"])
            pending = cli(config, "approve", "--pending").stdout
            for mount in ("clock", "demo", "check", "rug", "slow"):
                cli(config, "approve", mount)
            yield {
                "before": before,
                "pending": pending,
                "config": config,
                "server": server,
                "tools": tools,
                "state": state,
                "tokens": tokens,
                "key": key,
                "node": node,
            }
    finally:
        tools.stop()
        state.close()


async def names(server, token: str) -> set[str]:
    async with _mcp_http(server.url, token) as client:
        return {t.name for t in (await client.list_tools()).tools}


async def test_a_new_listing_is_held_until_the_owner_approves(gateway) -> None:
    """Before any approval, no caller saw a mounted tool (the fixture asked); after it, they are there."""
    server, tokens = gateway["server"], gateway["tokens"]
    assert not any("__" in n for n in gateway["before"]) and "read_note" in gateway["before"]
    assert "check\tcheck" in gateway["pending"] and "clock\tget_current_time" in gateway["pending"]
    listed = await names(server, tokens["laptop"])
    assert {"clock__get_current_time", "check__check", "check__write_thing", "demo__echo"} <= listed


async def test_a_phone_sees_and_calls_a_mounted_tool_through_the_one_connector(gateway) -> None:
    async with _mcp_http(gateway["server"].url, gateway["tokens"]["phone"]) as phone:
        listed = {t.name: t for t in (await phone.list_tools()).tools}
        assert "clock__get_current_time" in listed and "session_start" in listed
        result = await phone.call_tool("clock__get_current_time", {"timezone": "Europe/Paris"})
        assert not result.is_error, text_of(result)
        assert "Europe/Paris" in text_of(result)
        echoed = await phone.call_tool("demo__echo", {"message": "hello from the phone"})
        assert not echoed.is_error and "hello from the phone" in text_of(echoed)
    rows = gateway["state"].tool_calls("clock")
    assert rows[-1]["login"] == "owner" and rows[-1]["connector"].startswith("token:")
    assert rows[-1]["client"] == "phone" and rows[-1]["outcome"] == "ok" and rows[-1]["tool"] == "get_current_time"


async def test_the_checker_received_exactly_its_mounts_credential_and_nothing_else(gateway) -> None:
    async with _mcp_http(gateway["server"].url, gateway["tokens"]["laptop"]) as laptop:
        digest = hashlib.sha256(CHECK_TOKEN.encode()).hexdigest()
        assert text_of(await laptop.call_tool("check__check", {"expected_sha256": digest})) == "match"
        assert text_of(await laptop.call_tool("check__check", {"expected_sha256": "0" * 64})) == "mismatch"
        # only the declared variable that holds a credential: nothing of the host (no PATH, HOME, the test's
        # SECRET_OF_THE_HOST); Python itself may add LC_CTYPE under a C locale.
        assert set(text_of(await laptop.call_tool("check__env_names", {})).split()) - {"LC_CTYPE"} == {"CHECK_TOKEN"}


async def test_a_caller_of_another_environment_sees_nothing_and_is_refused_as_unknown(gateway) -> None:
    async with _mcp_http(gateway["server"].url, gateway["tokens"]["kid"]) as kid:
        listed = {t.name for t in (await kid.list_tools()).tools}
        assert not any("__" in n for n in listed)
        hidden = await kid.call_tool("clock__get_current_time", {"timezone": "UTC"})
        unknown = await kid.call_tool("nosuch__tool", {})
    assert hidden.is_error and text_of(hidden) == "Unknown tool: clock__get_current_time"
    assert text_of(unknown) == "Unknown tool: nosuch__tool"


async def test_a_restricted_caller_needs_a_grant_for_a_write_tool(gateway) -> None:
    async with _mcp_http(gateway["server"].url, gateway["tokens"]["phone"]) as phone:
        listed = {t.name: t for t in (await phone.list_tools()).tools}
        assert "grant" in listed["check__write_thing"].input_schema["properties"]
        refused = await phone.call_tool("check__write_thing", {"text": "x"})
    assert refused.is_error and text_of(refused).startswith("Refused [tools-write-restricted]")
    async with _mcp_http(gateway["server"].url, gateway["tokens"]["laptop"]) as laptop:
        assert text_of(await laptop.call_tool("check__write_thing", {"text": "x"})) == "written"


async def test_a_secret_in_a_result_is_redacted_and_named_in_the_audit(gateway) -> None:
    async with _mcp_http(gateway["server"].url, gateway["tokens"]["laptop"]) as laptop:
        result = await laptop.call_tool("check__leak", {})
        refused = await laptop.call_tool("check__check", {"expected_sha256": LEAKED})
    assert LEAKED not in text_of(result) and "[redacted:github-token]" in text_of(result)
    assert text_of(refused).startswith("Refused [tools-secret-argument]")
    rows = gateway["state"].tool_calls("check")
    leak = [r for r in rows if r["tool"] == "leak"][-1]
    assert leak["redacted"] == "github-token" and leak["outcome"] == "ok"
    assert LEAKED not in json.dumps([dict(r) for r in rows])


def test_the_tools_process_accepts_only_its_own_minted_tokens(gateway) -> None:
    """The client's own token is refused at the tools process; a token minted for the tools process is
    refused at /mcp (and spent once at the tools process)."""
    from notegate.policy import Caller
    from notegate.tools.tokens import Minter

    tools, server = gateway["tools"], gateway["server"]
    phone = gateway["tokens"]["phone"]
    body = {"mount": "clock", "tool": "get_current_time", "arguments": {"timezone": "UTC"}}
    own = httpx2.post(f"{tools.url}/v1/call", json=body, headers={"Authorization": f"Bearer {phone}"})
    assert own.status_code == 401 and own.json()["rule"] == "tools-token-invalid"
    state, config = gateway["state"], load_config(gateway["config"])
    caller = Caller(
        login="owner",
        display_name="owner",
        client="phone",
        client_class="hosted",
        tier="restricted",
        environment="personal",
        connector="token:x",
    )
    minted = Minter(state, config.state_dir).mint(
        caller, "personal", "tools:call", mount="clock", tool="get_current_time"
    )
    at_mcp = httpx2.post(
        f"{server.url}/mcp",
        headers={"Authorization": f"Bearer {minted}"},
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
    )
    assert at_mcp.status_code == 401
    first = httpx2.post(f"{tools.url}/v1/call", json=body, headers={"Authorization": f"Bearer {minted}"})
    again = httpx2.post(f"{tools.url}/v1/call", json=body, headers={"Authorization": f"Bearer {minted}"})
    assert first.status_code == 200, first.text
    assert again.status_code == 401 and again.json()["rule"] == "tools-token-invalid"


def test_a_mint_key_recorded_in_the_database_alone_is_refused(gateway, tmp_path: Path) -> None:
    """Whoever can write the state database can record a mint key of their own, but the tools process trusts
    only the key id it was started with: their token is refused, and so is their key put under the pinned id."""
    from notegate.policy import Caller
    from notegate.tools.tokens import MINT_PURPOSE_PREFIX, Minter

    tools, state = gateway["tools"], gateway["state"]
    caller = Caller(
        login="owner",
        display_name="owner",
        client="phone",
        client_class="hosted",
        tier="trusted",
        environment="personal",
        connector="token:x",
    )
    body = {"mount": "clock", "tool": "get_current_time", "arguments": {"timezone": "UTC"}}
    intruder = Minter(state, tmp_path)  # records its public key in tools_keys, as the real one does
    assert state.tools_key(MINT_PURPOSE_PREFIX + intruder.kid) is not None
    token = intruder.mint(caller, "personal", "tools:call", mount="clock", tool="get_current_time")
    refused = httpx2.post(f"{tools.url}/v1/call", json=body, headers={"Authorization": f"Bearer {token}"})
    assert refused.status_code == 401 and refused.json()["rule"] == "tools-token-invalid", refused.text
    pinned = tools.mint_key
    real = state.tools_key(MINT_PURPOSE_PREFIX + pinned)
    with state.tx() as db:  # the intruder's public key under the pinned id
        db.execute(
            "UPDATE tools_keys SET public_key = ? WHERE purpose = ?",
            (json.dumps(intruder._key.as_dict(private=False)), MINT_PURPOSE_PREFIX + pinned),
        )
    try:
        intruder.kid = pinned
        forged = intruder.mint(caller, "personal", "tools:call", mount="clock", tool="get_current_time")
        refused = httpx2.post(f"{tools.url}/v1/call", json=body, headers={"Authorization": f"Bearer {forged}"})
        assert refused.status_code == 401 and refused.json()["rule"] == "tools-token-invalid", refused.text
    finally:
        with state.tx() as db:
            db.execute("UPDATE tools_keys SET public_key = ? WHERE purpose = ?", (real, MINT_PURPOSE_PREFIX + pinned))


def test_the_key_file_is_the_only_way_to_open_a_credential(gateway) -> None:
    """A copy of the database plus the config reveal no credential; the tools process's key opens it."""
    from notegate.tools.sealing import read_key_file

    config = gateway["config"]
    copy = config.parent / "copy.sqlite"
    gateway["state"].backup_to(copy)
    everything = copy.read_bytes() + config.read_bytes()
    assert CHECK_TOKEN.encode() not in everything
    sealed = gateway["state"].sealed_credentials("check")["CHECK_TOKEN"]
    assert read_key_file(gateway["key"]).open("check", "CHECK_TOKEN", sealed) == CHECK_TOKEN


async def test_a_crashed_upstream_restarts_and_a_changed_tool_list_is_held(gateway) -> None:
    """The rug pull: the checker comes back with a changed description and a new tool. Neither is shown
    until the owner approves; the unchanged tools stay."""
    config, tools, server, state = gateway["config"], gateway["tools"], gateway["server"], gateway["state"]
    cli(config, "credential", "rug", "CHECK_VARIANT", input="2\n")
    restarts = tools.health()["upstreams"]["rug"]["restarts"]
    async with _mcp_http(server.url, gateway["tokens"]["laptop"]) as laptop:
        await laptop.call_tool("rug__crash", {})
    deadline = time.monotonic() + 60
    while tools.health()["upstreams"]["rug"]["restarts"] == restarts or tools.health()["status"] != "ok":
        assert time.monotonic() < deadline, tools.health()
        await anyio.sleep(0.1)
    listed = await names(server, gateway["tokens"]["laptop"])
    assert "rug__leak" in listed  # unchanged: still approved
    assert "rug__check" not in listed and "rug__extra" not in listed  # changed and new: held
    async with _mcp_http(server.url, gateway["tokens"]["laptop"]) as laptop:
        held = await laptop.call_tool("rug__extra", {})
    assert text_of(held) == "Unknown tool: rug__extra"
    assert {r["tool"] for r in state.pending_tools("rug")} == {"check", "extra"}
    held = tools.health()["upstreams"]["rug"]
    assert (held["state"], held["held_tools"]) == ("held", 2), held
    cli(config, "approve", "rug")
    assert {"rug__check", "rug__extra"} <= await names(server, gateway["tokens"]["laptop"])
    assert tools.health()["upstreams"]["rug"]["state"] == "running"


async def test_a_slow_upstream_is_cut_off_and_holds_no_notes_call(gateway) -> None:
    """A call past [tools] call_seconds (4 s here) is refused by its rule; meanwhile the notes tools answer."""
    server, laptop_token = gateway["server"], gateway["tokens"]["laptop"]
    outcome: dict[str, object] = {}

    async def slow_call() -> None:
        async with _mcp_http(server.url, laptop_token) as laptop:
            outcome["result"] = await laptop.call_tool("slow__slow", {"seconds": 30})

    async with anyio.create_task_group() as tg:
        tg.start_soon(slow_call)
        await anyio.sleep(0.5)
        started = time.monotonic()
        async with _mcp_http(server.url, laptop_token) as laptop:
            listed = await laptop.call_tool("list_notes", {"folder": ""})
        assert not listed.is_error and time.monotonic() - started < 3.0
    result = outcome["result"]
    assert result.is_error and text_of(result).startswith("Refused [tools-upstream-timeout]")


async def test_a_result_over_the_size_bound_is_refused(gateway) -> None:
    async with _mcp_http(gateway["server"].url, gateway["tokens"]["laptop"]) as laptop:
        result = await laptop.call_tool("slow__big", {})
    assert result.is_error and text_of(result).startswith("Refused [tools-result-too-large]")
    row = gateway["state"].tool_calls("slow")[-1]
    assert row["tool"] == "big" and row["outcome"] == "refused:tools-result-too-large"


def test_the_doctor_reports_each_upstream(gateway) -> None:
    done = notegate("doctor", "--config", str(gateway["config"]), "--json")
    rows = [r for r in json.loads(done.stdout) if r["check"] == "tools.upstreams"]
    assert {r["subject"] for r in rows} == {"clock", "demo", "check", "rug", "slow"}
    assert all(r["status"] == "ok" and r["found"].startswith("running") for r in rows if r["subject"] != "rug"), rows


def test_upstream_status_is_shown_to_whom_it_belongs(gateway) -> None:
    """The tools process tells an anonymous loopback caller counts only; the server's /healthz tells an
    anonymous caller nothing of the tools, an environment's token its own mounts' states, another
    environment's token none of them."""
    tools, server, tokens = gateway["tools"], gateway["server"], gateway["tokens"]
    names = ("clock", "demo", "check", "rug", "slow")
    anonymous = tools.anonymous_health()
    assert "upstreams" not in anonymous and sum(anonymous["mounts"].values()) == 5, anonymous
    assert not any(name in json.dumps(anonymous) for name in names)
    bare = httpx2.get(f"{server.url}/healthz", timeout=10).json()
    assert "tools" not in json.dumps(bare) and not any(name in json.dumps(bare) for name in names), bare
    own = httpx2.get(f"{server.url}/healthz", headers={"Authorization": f"Bearer {tokens['laptop']}"}, timeout=10)
    seen = own.json()["environments"]["personal"]["tools"]
    assert set(seen["upstreams"]) == set(names), seen
    assert seen["upstreams"]["clock"]["state"] == "running" and seen["upstreams"]["clock"]["restarts"] == 0
    other = httpx2.get(f"{server.url}/healthz", headers={"Authorization": f"Bearer {tokens['kid']}"}, timeout=10)
    assert other.json()["environments"]["household"]["tools"]["upstreams"] == {}, other.json()


async def test_a_restricted_phone_with_an_approved_grant_calls_a_write_tool(gateway) -> None:
    from notegate.auth.grants import Grants, owners_in

    config = load_config(gateway["config"])
    async with _mcp_http(gateway["server"].url, gateway["tokens"]["phone"], start_session=True) as phone:
        asked = await phone.call_tool("request_elevation", {"reason": "file an issue upstream"})
        ticket = asked.structured_content
        pending = await phone.call_tool("check__write_thing", {"text": "x", "grant": ticket["grant"]})
        assert text_of(pending).startswith("Refused [grant-pending]")
        now = time.time()
        Grants(gateway["state"], config.policy, owner_of=owners_in(lambda: config)).approve(
            ticket["link"].rsplit("/", 1)[1], person="owner", assertion_at=now, user_verified=True, now=now
        )
        done = await phone.call_tool("check__write_thing", {"text": "x", "grant": ticket["grant"]})
        assert not done.is_error and text_of(done) == "written"
    row = gateway["state"].tool_calls("check")[-1]
    assert (row["tool"], row["tier"], row["client"], row["outcome"]) == ("write_thing", "trusted", "phone", "ok")


async def test_a_removed_members_mounted_tools_end_at_their_next_call(gateway) -> None:
    """The mounts a member sees follow the state database's membership (an invited member the config file does
    not list sees them); once removed, their running session's next call to a mounted tool is refused by name,
    as a notes call is, and the listing shows no mounted tool."""
    from notegate.auth.members import Membership

    config_path, server, state = gateway["config"], gateway["server"], gateway["state"]
    config = load_config(config_path)
    members = Membership(state, lambda: config)
    members.accept(
        members.invite("personal", "dana", by="owner", now=time.time()).token, how="passkey", now=time.time()
    )
    assert "dana" not in config.environments["personal"].members
    token = mint(config_path, name="dana-phone", login="dana", client_class="hosted", environment="personal")
    digest = hashlib.sha256(CHECK_TOKEN.encode()).hexdigest()
    async with _mcp_http(server.url, token, start_session=True) as phone:
        assert "check__check" in {t.name for t in (await phone.list_tools()).tools}
        assert text_of(await phone.call_tool("check__check", {"expected_sha256": digest})) == "match"
        with state.tx() as db:  # the membership ends while the token lives on (a restore, another replica)
            db.execute("UPDATE members SET removed_at = ?, removed_by = 'owner' WHERE login = 'dana'", (time.time(),))
        refused = await phone.call_tool("check__check", {"expected_sha256": digest})
        assert refused.is_error and text_of(refused).startswith("Refused [member-removed]"), text_of(refused)
        assert not any("__" in t.name for t in (await phone.list_tools()).tools)
    assert all(r["login"] != "dana" or r["outcome"] == "ok" for r in state.tool_calls("check"))
    assert len([r for r in state.tool_calls("check") if r["login"] == "dana"]) == 1  # the refused call never left
