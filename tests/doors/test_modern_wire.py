"""The 2026-07-28 wire (the official client 2.3, Claude Code): the Mcp-Param header check notegate lets the SDK
skip, and bench_notes' lean client on that wire.

Why: the SDK's modern entry checks a ``tools/call``'s ``Mcp-Param-*`` headers against the called tool's input
schema, walking the schema on every call.  notegate answers "no schema to check" for a tool that declares no
such header, which must change no answer: an undeclared header is ignored as before, and a tool that does
declare one is still checked in full.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import httpx2
import pytest
from mcp.shared.inbound import validate_mcp_param_headers
from mcp_types import HEADER_MISMATCH
from pydantic import Field

from notegate.doors.mcp.surface import NotegateMCP, declares_param_headers
from support import mint
from support.inprocess import serve_in_process

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from bench_notes import LeanModernMcpClient

pytestmark = pytest.mark.anyio


def _declaring_server() -> NotegateMCP:
    mcp = NotegateMCP(name="t")

    @mcp.tool()
    def routed(region: Annotated[str, Field(json_schema_extra={"x-mcp-header": "Region"})]) -> str:
        return region

    @mcp.tool()
    def plain(path: str) -> str:
        return path

    return mcp


def test_a_tool_that_declares_a_header_is_still_checked_in_full() -> None:
    mcp = _declaring_server()
    schema = mcp._tool_input_schema("routed")
    assert schema is not None and declares_param_headers(schema)
    missing = validate_mcp_param_headers(schema, {"region": "eu"}, {})
    assert missing is not None and missing.code == HEADER_MISMATCH
    wrong = validate_mcp_param_headers(schema, {"region": "eu"}, {"mcp-param-region": "us"})
    assert wrong is not None and wrong.code == HEADER_MISMATCH
    assert validate_mcp_param_headers(schema, {"region": "eu"}, {"mcp-param-region": "eu"}) is None


def test_a_tool_without_one_has_nothing_to_check_and_a_new_schema_is_looked_at_again() -> None:
    mcp = _declaring_server()
    assert mcp._tool_input_schema("plain") is None
    assert mcp._tool_input_schema("no-such-tool") is None
    tool = mcp._tool_manager.get_tool("plain")
    tool.parameters = {**tool.parameters, "properties": {"path": {"type": "string", "x-mcp-header": "Path"}}}
    assert mcp._tool_input_schema("plain") is tool.parameters  # a changed schema object is looked at again


def test_no_notegate_tool_declares_a_header(vault: Path) -> None:
    """What lets the SDK skip the walk for every notegate tool (fails on a build that hands it the schema)."""
    with serve_in_process(vault) as served:
        mcp = served.app.state.mcp
        names = [tool.name for tool in mcp._tool_manager.list_tools()]
        assert "read_note" in names and "write_note" in names
        for name in names:
            assert not declares_param_headers(mcp._tool_manager.get_tool(name).parameters), name
            assert mcp._tool_input_schema(name) is None, name


async def test_the_lean_client_speaks_the_modern_wire_and_an_undeclared_header_is_ignored(vault: Path) -> None:
    token = mint(vault, name="lean-modern", client_class="workstation", tier="trusted")
    with serve_in_process(vault) as served:
        async with LeanModernMcpClient(served.url, token) as client:
            assert client._headers["MCP-Protocol-Version"] == "2026-07-28"
            done = await client.call(
                "write_note",
                {"path": "notes/modern.md", "content": "one\n", "base_revision": "absent", "confirmed": True},
            )
            assert done["new_revision"] not in ("", "absent")
            client._headers["Mcp-Param-Path"] = "elsewhere.md"  # declared by no tool: ignored, as before
            note = await client.call("read_note", {"path": "notes/modern.md"})
            assert note["revision"] == done["new_revision"] and note["text"] == "one\n"
        # The routing headers are still the SDK's to check: a Mcp-Name that is not the body's tool is refused.
        async with httpx2.AsyncClient() as http:
            meta = {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
            }
            body = {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/call",
                "params": {"name": "read_note", "arguments": {"path": "notes/modern.md"}, "_meta": meta},
            }
            headers = {
                "Authorization": f"Bearer {token}",
                "Accept": "application/json, text/event-stream",
                "MCP-Protocol-Version": "2026-07-28",
                "Mcp-Method": "tools/call",
                "Mcp-Name": "write_note",
            }
            refused = await http.post(f"{served.url}/mcp", json=body, headers=headers)
            assert refused.json()["error"]["code"] == HEADER_MISMATCH


async def test_a_bad_token_fails_at_discover(vault: Path) -> None:
    with serve_in_process(vault) as served, pytest.raises(RuntimeError, match="server/discover: HTTP 401"):
        async with LeanModernMcpClient(served.url, "ng_not-a-token"):
            pass
