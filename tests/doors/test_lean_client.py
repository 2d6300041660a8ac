"""bench_notes' lean wire-level MCP client against the real app: it must judge answers as strictly as the SDK.

Why a test for a benchmark's client: the ≥ 200 commits/s target is judged on it, so a client that counted a
refusal, another request's answer or a write without a new revision as a commit would make that figure lie.
"""

from __future__ import annotations

import sys
from pathlib import Path

import httpx2
import pytest

from support import mint
from support.inprocess import serve_in_process

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from bench_notes import LeanMcpClient, _jsonrpc_answer

pytestmark = pytest.mark.anyio


async def test_the_lean_client_writes_and_reads_back_over_the_wire(vault: Path) -> None:
    token = mint(vault, name="lean", client_class="workstation", tier="trusted")
    with serve_in_process(vault) as served:
        async with LeanMcpClient(served.url, token) as client:
            assert client._headers["MCP-Protocol-Version"]  # negotiated from initialize's answer
            done = await client.call(
                "write_note",
                {"path": "notes/lean.md", "content": "one\n", "base_revision": "absent", "confirmed": True},
            )
            assert done["new_revision"] not in ("", "absent")
            note = await client.call("read_note", {"path": "notes/lean.md"})
            assert note["revision"] == done["new_revision"] and note["text"] == "one\n"


async def test_a_stale_write_is_a_refusal_naming_its_rule(vault: Path) -> None:
    token = mint(vault, name="lean-stale", client_class="workstation", tier="trusted")
    with serve_in_process(vault) as served:
        async with LeanMcpClient(served.url, token) as client:
            args = {"path": "notes/stale.md", "content": "one\n", "base_revision": "absent", "confirmed": True}
            await client.call("write_note", args)
            with pytest.raises(RuntimeError, match=r"write_note refused: .*\[stale-revision\]"):
                await client.call("write_note", args | {"content": "two\n"})


async def test_a_bad_token_fails_at_initialize(vault: Path) -> None:
    with serve_in_process(vault) as served, pytest.raises(RuntimeError, match="initialize: HTTP 401"):
        async with LeanMcpClient(served.url, "ng_not-a-token"):
            pass


def _answer(body: str, kind: str) -> httpx2.Response:
    return httpx2.Response(200, headers={"content-type": kind}, content=body.encode())


def test_an_event_stream_answer_is_read_and_a_second_answer_refused() -> None:
    one = 'event: message\ndata: {"jsonrpc":"2.0","id":3,"result":{}}\n\n'
    assert _jsonrpc_answer(_answer(one, "text/event-stream"))["id"] == 3
    with pytest.raises(RuntimeError, match="2 answers"):
        _jsonrpc_answer(_answer(one + one, "text/event-stream"))
    with pytest.raises(RuntimeError, match="unexpected content type"):
        _jsonrpc_answer(_answer("{}", "text/html"))
