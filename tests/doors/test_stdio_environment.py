"""The stdio door (`notegate mcp`) makes the HTTP door's decision about a token's environment
(`policy.decide_token_environment`): a token bound to an environment this server does not serve is refused
when the process starts, with the exact rule, instead of being admitted to fail on every tool."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from support import mint, text_of

pytestmark = pytest.mark.anyio


def stdio(vault: Path, token_file: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "notegate.cli", "mcp", "--config", str(vault), "--token-file", str(token_file)],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )


def test_a_token_for_an_environment_not_served_is_refused_at_start(vault: Path, tmp_path: Path) -> None:
    token = mint(vault, name="elsewhere", tier="trusted", environment="household")
    token_file = tmp_path / "token"
    token_file.write_text(token + "\n")
    done = stdio(vault, token_file)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr == (
        "notegate mcp: Refused [wrong-environment]: the token in the token file is refused: the credential is for "
        "an environment this server does not serve. Mint a token for an environment this server serves "
        "(token create --environment NAME).\n"
    )
    assert token not in done.stderr


async def test_a_token_bound_to_the_served_environment_is_admitted(vault: Path, tmp_path: Path) -> None:
    token_file = tmp_path / "token"
    token_file.write_text(mint(vault, name="here", tier="trusted", environment="personal") + "\n")
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "notegate.cli", "mcp", "--config", str(vault), "--token-file", str(token_file)],
    )
    async with Client(params) as client:
        read = await client.call_tool("read_note", {"path": "rules/digest.md"})
        assert not read.is_error, text_of(read)
