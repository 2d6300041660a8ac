"""The stdio door: the official SDK client launches `notegate mcp` as a subprocess."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from support import mint, text_of

pytestmark = pytest.mark.anyio


def params(vault: Path, token_file: Path) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "notegate.cli", "mcp", "--config", str(vault), "--token-file", str(token_file)],
    )


async def test_stdio_reads_and_two_step_writes(vault: Path, tmp_path: Path) -> None:
    token_file = tmp_path / "token"
    token_file.write_text(mint(vault, name="desktop", tier="trusted") + "\n")
    async with Client(params(vault, token_file)) as client:
        read = await client.call_tool("read_note", {"path": "rules/digest.md"})
        assert not read.is_error and "House rules" in read.structured_content["text"]
        args = {"path": "stdio/n.md", "content": "via stdio\n", "base_revision": "absent"}
        preview = await client.call_tool("write_note", args)
        assert preview.structured_content["status"] == "preview"
        done = await client.call_tool("write_note", {**args, "confirmed": True})
        assert done.structured_content["status"] == "committed"
        history = await client.call_tool("note_history", {"path": "stdio/n.md"})
        assert history.structured_content["changes"][0]["client"] == "desktop"


async def test_stdio_caller_is_the_token_file_and_restricted_by_default(vault: Path, tmp_path: Path) -> None:
    token_file = tmp_path / "token"
    token_file.write_text(mint(vault, name="desktop") + "\n")
    async with Client(params(vault, token_file)) as client:
        write = await client.call_tool("write_note", {"path": "x.md", "content": "x", "base_revision": "absent"})
        assert write.is_error and "restricted-outside-inbox" in text_of(write)
        private = await client.call_tool("read_note", {"path": "private/README.md"})
        assert private.is_error and "no such note" in text_of(private)
