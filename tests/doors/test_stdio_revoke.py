"""Revoking a token stops a running `notegate mcp` (stdio) at its next call, not at its next restart.

The official SDK client launches the real command as a subprocess; the token is revoked with the real CLI.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from support import mint, notegate, text_of

pytestmark = pytest.mark.anyio


def params(vault: Path, token_file: Path) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "notegate.cli", "mcp", "--config", str(vault), "--token-file", str(token_file)],
    )


def revoke(vault: Path, name: str) -> None:
    notegate("token", "revoke", "--config", str(vault), name).check_returncode()


async def test_a_revoked_token_stops_a_running_stdio_door(vault: Path, tmp_path: Path) -> None:
    token_file = tmp_path / "token"
    token_file.write_text(mint(vault, name="desktop", tier="trusted") + "\n")
    async with Client(params(vault, token_file)) as client:
        before = await client.call_tool("read_note", {"path": "rules/digest.md"})
        assert not before.is_error
        revoke(vault, "desktop")
        for tool, args in (
            ("read_note", {"path": "rules/digest.md"}),
            ("write_note", {"path": "n.md", "content": "x\n", "base_revision": "absent", "confirmed": True}),
            ("session_start", {}),
        ):
            after = await client.call_tool(tool, args)
            assert after.is_error, tool
            assert "Refused [token-revoked]: " in text_of(after)
            assert "House rules" not in text_of(after)


async def test_another_token_revoked_leaves_the_door_working(vault: Path, tmp_path: Path) -> None:
    token_file = tmp_path / "token"
    token_file.write_text(mint(vault, name="desktop", tier="trusted") + "\n")
    mint(vault, name="other")
    async with Client(params(vault, token_file)) as client:
        revoke(vault, "other")
        read = await client.call_tool("read_note", {"path": "rules/digest.md"})
    assert not read.is_error and "House rules" in read.structured_content["text"]
