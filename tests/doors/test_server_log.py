"""What the server tells its operator, from a real `notegate serve --log-format json` on loopback: one line
per event (start, tool call, commit, refused request), never a note's contents or a token; and what it tells a
client it refuses at the door (a foreign Host header, a missing token)."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import httpx2
import pytest
from hypothesis import given
from hypothesis import strategies as st

from notegate.auth.tokens import revoke_token
from notegate.config import load_config
from notegate.services.eventlog import event_line
from notegate.state import StateDB
from support import Server, mcp_http, mint, token_secret

pytestmark = pytest.mark.anyio

NOTE_TEXT = "only this note holds this sentence"


def events(server: Server) -> list[dict]:
    lines = [line for line in server.log.read_text().splitlines() if line.startswith("{")]
    return [json.loads(line) for line in lines]


def wait_for(server: Server, predicate, timeout: float = 30.0) -> list[dict]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = [e for e in events(server) if predicate(e)]
        if found:
            return found
        time.sleep(0.02)
    raise AssertionError(f"no such event in {server.log.read_text()[-3000:]}")


@pytest.fixture
def json_server(vault: Path):
    server = Server(vault, extra_args=("--log-format", "json")).start()
    try:
        yield server
    finally:
        server.stop()


async def test_one_json_line_per_event_and_never_contents_or_tokens(vault: Path, json_server: Server) -> None:
    token = mint(vault, name="laptop", tier="trusted")
    (start,) = wait_for(json_server, lambda e: e.get("event") == "start")
    assert start["url"] == json_server.url and start["environments"] == "personal"
    assert wait_for(json_server, lambda e: e.get("event") == "index")[0]["ms"] >= 0
    async with mcp_http(json_server.url, token, start_session=True) as client:
        wrote = await client.call_tool(
            "write_note",
            {
                "path": "notes/logged.md",
                "content": f"# Logged\n\n{NOTE_TEXT}\n",
                "base_revision": "absent",
                "confirmed": True,
            },
        )
        assert not wrote.is_error
        missing = await client.call_tool("read_note", {"path": "notes/nothing.md"})
        assert missing.is_error
    (write,) = wait_for(json_server, lambda e: e.get("event") == "tool" and e["tool"] == "write_note")
    assert write["outcome"] == "ok" and write["path"] == "notes/logged.md" and write["connector"].startswith("token:")
    assert isinstance(write["ms"], float) and write["environment"] == "personal"
    (read,) = wait_for(json_server, lambda e: e.get("event") == "tool" and e["tool"] == "read_note")
    assert read["outcome"] == "no-such-note"
    (commit,) = wait_for(json_server, lambda e: e.get("event") == "commit")
    assert re.fullmatch(r"[0-9a-f]{12}", commit["commit"]) and commit["paths"] == 1

    async with httpx2.AsyncClient(timeout=30) as http:
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
        none = await http.post(f"{json_server.url}/mcp", json=body)
        assert none.status_code == 401
        wrong = await http.post(f"{json_server.url}/mcp", json=body, headers={"Authorization": "Bearer ngt_x_y"})
        assert wrong.status_code == 401
        db = StateDB(load_config(vault).state_dir / "state.sqlite")
        try:
            revoke_token(db, "laptop", now=time.time())
        finally:
            db.close()
        revoked = await http.post(f"{json_server.url}/mcp", json=body, headers={"Authorization": f"Bearer {token}"})
        assert revoked.status_code == 401
    refused = wait_for(json_server, lambda e: e.get("event") == "refused" and e["reason"] == "revoked")
    reasons = [e["reason"] for e in events(json_server) if e.get("event") == "refused"]
    assert reasons == ["no-token", "unknown", "revoked"] and refused[0]["status"] == 401

    log = json_server.log.read_text()
    assert NOTE_TEXT not in log and token not in log and token_secret(token) not in log
    assert "Terminating session" not in log and "Tool 'read_note' failed" not in log  # said once, by us
    logged = log[log.index('{"time"') :].splitlines()  # the connect hint before it is printed, not logged
    assert all(line.startswith("{") for line in logged), log[-2000:]


def test_a_terminated_server_says_it_stopped_last(vault: Path) -> None:
    """SIGTERM (systemd's stop, Ctrl-C's cousin) ends in one stop line, after everything else the server
    logged: an operator tells a clean stop from a crash by the log's last line."""
    server = Server(vault, extra_args=("--log-format", "json")).start()
    wait_for(server, lambda e: e.get("event") == "start")
    server.stop()
    logged = events(server)
    assert logged[-1]["event"] == "stop" and logged[-1]["url"] == server.url, logged[-3:]


async def test_a_foreign_host_gets_421_naming_allowed_hosts(vault: Path, served: Server) -> None:
    token = mint(vault, name="laptop")  # with or without one (tests/doors/test_wrong_host.py)
    async with httpx2.AsyncClient(timeout=30) as http:
        answer = await http.post(
            f"{served.url}/mcp",
            json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
            headers={"Host": "evil.example", "Authorization": f"Bearer {token}"},
        )
    assert answer.status_code == 421
    error = answer.json()["error"]
    assert error["data"] == {"rule": "host-not-allowed", "setting": "allowed_hosts"}
    assert error["message"] == (
        'Refused [host-not-allowed]: the Host header "evil.example" is not one this server answers to '
        "(DNS-rebinding protection). Connect through localhost or 127.0.0.1, or add that host to [server] "
        "allowed_hosts in notegate.toml (a public address: set [server] public_url)."
    )


async def test_the_401_points_at_metadata_that_answers(served: Server) -> None:
    async with httpx2.AsyncClient(timeout=30) as http:
        refused = await http.post(f"{served.url}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
        assert refused.status_code == 401
        challenge = refused.headers["www-authenticate"]
        (metadata_url,) = re.findall(r'resource_metadata="([^"]+)"', challenge)
        metadata = await http.get(metadata_url)
        assert metadata.status_code == 200, metadata_url
        (issuer,) = metadata.json()["authorization_servers"]
        server_meta = await http.get(issuer.rstrip("/") + "/.well-known/oauth-authorization-server")
        assert server_meta.status_code == 200


@given(st.text(max_size=50), st.text(max_size=50))
def test_an_event_line_is_one_line_whatever_a_caller_sends(path: str, tool: str) -> None:
    line = event_line("tool", {"tool": tool, "path": path, "outcome": "ok"})
    assert "\n" not in line and "\r" not in line
    assert line.startswith("tool ") and line.endswith(" outcome=ok")


async def test_a_token_for_an_environment_this_server_does_not_serve_is_refused_at_the_door(
    vault: Path, json_server: Server
) -> None:
    """A static token whose environment was removed from the config (or is another deployment's) gets the
    401 an unknown token gets, logged as wrong-environment, instead of reaching the tools."""
    from notegate.auth.tokens import create_token

    db = StateDB(load_config(vault).state_dir / "state.sqlite")
    try:
        token, _record = create_token(
            db,
            name="elsewhere",
            client_class="workstation",
            tier="trusted",
            login="owner",
            environment="household",
            now=time.time(),
        )
    finally:
        db.close()
    async with httpx2.AsyncClient(timeout=30) as http:
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
        answer = await http.post(f"{json_server.url}/mcp", json=body, headers={"Authorization": f"Bearer {token}"})
    assert answer.status_code == 401
    assert wait_for(json_server, lambda e: e.get("event") == "refused" and e["reason"] == "wrong-environment")
    assert token not in json_server.log.read_text()
