"""The MCP door asks, on every call, whether the caller's person is still a member of its environment: a removed
member's running session is refused at its next call by name, even by a credential that outlived the removal
(the console's removal also revokes every credential at once: tests/web/test_members_browser.py)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from notegate.auth.members import Membership
from notegate.config import load_config
from notegate.state import StateDB
from support import mcp_http, mint, running, text_of

pytestmark = pytest.mark.anyio


def _invited(vault: Path, login: str) -> None:
    config = load_config(vault)
    state = StateDB.for_config(config)
    try:
        members = Membership(state, lambda: config)
        members.accept(
            members.invite("personal", login, by="owner", now=time.time()).token, how="passkey", now=time.time()
        )
    finally:
        state.close()


async def test_a_removed_members_running_session_is_refused_at_its_next_call(vault: Path) -> None:
    _invited(vault, "bob")
    token = mint(vault, name="bob-laptop", login="bob", environment="personal")
    machine = mint(vault, name="cron", client_class="machine", environment="personal")
    with running(vault) as server:
        async with mcp_http(server.url, token, start_session=True) as client:
            first = await client.call_tool("list_notes", {"folder": ""})
            assert not first.is_error, text_of(first)
            state = StateDB.for_config(load_config(vault))
            try:  # the membership ends while the token lives on (another replica, a restore, a hand edit)
                with state.tx() as db:
                    db.execute(
                        "UPDATE members SET removed_at = ?, removed_by = 'owner' WHERE login = 'bob'", (time.time(),)
                    )
            finally:
                state.close()
            second = await client.call_tool("list_notes", {"folder": ""})
            assert second.is_error and "Refused [member-removed]" in text_of(second), text_of(second)
        async with mcp_http(server.url, machine) as cron:  # machines are bound to their token, not to a person
            listed = await cron.list_tools()
            assert listed is not None
