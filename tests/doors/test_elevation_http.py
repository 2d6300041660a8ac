"""Elevation through the real door: a real `notegate serve`, the official SDK client, restricted workstation
tokens.  The owner's answer goes through the approval page's backend (:class:`Grants`) on the server's own
state DB, as the page does; everything the session does goes over MCP.  Every refusal names its rule."""

from __future__ import annotations

import re
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest

from notegate.auth.grants import Grants, owners_in
from notegate.cli import main
from notegate.config import load_config
from notegate.state import StateDB
from support import assert_refused, mcp_http, mint, running, text_of

pytestmark = pytest.mark.anyio


def _db(vault: Path) -> Path:
    return load_config(vault).state_dir / "state.sqlite"


def _approve(vault: Path, link: str) -> None:
    """What the approval page does once the owner's passkey answered (user verified, just now)."""
    state = StateDB(_db(vault))
    try:
        now = time.time()
        config = load_config(vault)
        Grants(state, config.policy, owner_of=owners_in(lambda: config)).approve(
            link.rsplit("/", 1)[1], person="owner", assertion_at=now, user_verified=True, now=now
        )
    finally:
        state.close()


async def _ask(client, reason: str = "update the design note", meta: dict | None = None) -> dict:
    result = await client.call_tool("request_elevation", {"reason": reason}, meta=meta)
    assert not result.is_error, text_of(result)
    return result.structured_content


async def _write(client, path: str, grant: str | None = None, meta: dict | None = None):
    args = {"path": path, "content": "hello\n", "base_revision": "absent"}
    if grant is not None:
        args["grant"] = grant
    preview = await client.call_tool("write_note", args, meta=meta)
    if preview.is_error:
        return preview
    return await client.call_tool("write_note", {**args, "confirmed": True}, meta=meta)


def _last_commit_message(vault: Path) -> str:
    origin = load_config(vault).environment(None).origin_url
    return subprocess.run(
        ["git", "-C", str(origin), "log", "-1", "--format=%B"], capture_output=True, text=True, check=True
    ).stdout


def _audit(vault: Path) -> list[tuple[str, str, str]]:
    db = sqlite3.connect(_db(vault))
    try:
        rows = db.execute("SELECT outcome, login, path FROM audit WHERE tool = 'elevation' ORDER BY id")
        return [tuple(r) for r in rows]
    finally:
        db.close()


async def test_request_approve_then_the_same_connector_writes_outside_the_inbox(vault: Path):
    token = mint(vault, name="phone", tier="restricted")
    other = mint(vault, name="laptop", tier="restricted")  # another connector login of the same person
    with running(vault) as server:
        async with mcp_http(server.url, token) as client:
            ticket = await _ask(client)
            assert re.fullmatch(re.escape(server.url) + r"/elevate/[A-Za-z0-9_-]{32}", ticket["link"])
            assert re.fullmatch(r"[A-Z]{4}", ticket["code"])
            assert ticket["link"] in ticket["message"] and ticket["code"] in ticket["message"]
            assert_refused("restricted-outside-inbox", await _write(client, "projects/elevated.md"))
            assert_refused("grant-pending", await _write(client, "projects/elevated.md", ticket["grant"]))
            _approve(vault, ticket["link"])
            done = await _write(client, "projects/elevated.md", ticket["grant"])
            assert not done.is_error, text_of(done)
            assert done.structured_content["status"] == "committed", done.structured_content
            message = _last_commit_message(vault)
            assert f"Notegate-Grant: {ticket['grant_id']}" in message and "Notegate-Tier: trusted" in message
            assert ticket["grant"] not in message
            assert_refused("restricted-outside-inbox", await _write(client, "projects/after.md"))  # no grant, no trust
        async with mcp_http(server.url, other) as client:
            assert_refused("grant-other-connector", await _write(client, "projects/stolen.md", ticket["grant"]))
            assert_refused("grant-unknown", await _write(client, "projects/stolen.md", "ngg_" + "A" * 43))
    outcomes = [o for o, _, _ in _audit(vault)]
    assert outcomes[:2] == ["elevation-requested", "elevation-approved by=owner"]
    assert "grant-used" in outcomes and "grant-refused:grant-other-connector" in outcomes
    assert all(login == "owner" and "connector:token:" in path for _, login, path in _audit(vault))


async def test_a_granted_caller_cannot_promote_what_its_own_connector_wrote(vault: Path):
    token = mint(vault, name="phone", tier="restricted")
    with running(vault) as server:
        async with mcp_http(server.url, token) as client:
            wrote = await client.call_tool("inbox_write", {"kind": "log", "text": "did a thing", "project": "demo"})
            assert not wrote.is_error, text_of(wrote)
            ticket = await _ask(client)
            _approve(vault, ticket["link"])
            listed = await client.call_tool("list_inbox", {"grant": ticket["grant"]})
            assert not listed.is_error, text_of(listed)
            item = listed.structured_content["items"][0]
            promoted = await client.call_tool(
                "promote_inbox", {"item": item["path"], "version": item["version"], "grant": ticket["grant"]}
            )
            assert_refused("author-cannot-promote", promoted)


async def test_a_grant_is_bound_to_the_conversation_the_client_named(vault: Path):
    token = mint(vault, name="chatgpt", tier="restricted")
    here, elsewhere = {"openai/session": "v1/conv-a"}, {"openai/session": "v1/conv-b"}
    with running(vault) as server:
        async with mcp_http(server.url, token) as client:
            ticket = await _ask(client, meta=here)
            _approve(vault, ticket["link"])
            assert_refused(
                "grant-other-conversation", await _write(client, "projects/c.md", ticket["grant"], elsewhere)
            )
            assert_refused("grant-other-conversation", await _write(client, "projects/c.md", ticket["grant"]))
            done = await _write(client, "projects/c.md", ticket["grant"], here)
            assert not done.is_error, text_of(done)


async def test_expired_and_revoked_grants_are_refused(vault: Path, capsys):
    token = mint(vault, name="phone", tier="restricted")
    with running(vault) as server:
        async with mcp_http(server.url, token) as client:
            first, second = await _ask(client, "one"), await _ask(client, "two")
            _approve(vault, first["link"])
            _approve(vault, second["link"])
            db = sqlite3.connect(_db(vault))
            with db:
                db.execute("UPDATE elevation_grants SET expires_at = ? WHERE grant_id = ?", (1.0, first["grant_id"]))
            db.close()
            assert_refused("grant-expired", await _write(client, "projects/e.md", first["grant"]))
            assert main(["grant", "list", "--config", str(vault)]) == 0
            listing = capsys.readouterr().out
            assert first["grant_id"] in listing and "expired" in listing and second["grant_id"] in listing
            assert first["grant"] not in listing and second["grant"] not in listing
            assert main(["grant", "revoke", second["grant_id"], "--config", str(vault)]) == 0
            assert_refused("grant-revoked", await _write(client, "projects/r.md", second["grant"]))
            assert main(["grant", "revoke", second["grant_id"], "--config", str(vault)]) == 1
    outcomes = [o for o, _, _ in _audit(vault)]
    assert "grant-expired" in outcomes and "grant-revoked by=owner" in outcomes


async def test_the_sixth_pending_request_is_refused(vault: Path):
    token = mint(vault, name="phone", tier="restricted")
    with running(vault) as server:
        async with mcp_http(server.url, token) as client:
            for i in range(5):
                await _ask(client, f"request {i}")
            sixth = await client.call_tool("request_elevation", {"reason": "request 5"})
            assert_refused("elevation-pending-cap", sixth)
