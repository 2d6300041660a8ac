"""One hostile inbox item cannot stall the server (issue 8, finding 3), against a real `notegate serve`.

The review's item: `<!--` repeated to 128 KiB made list_inbox take 17.7 s and held the interpreter lock,
so /healthz and every other caller waited too. Measured as ratios, never as absolute times: the hostile
item costs list_inbox about what an ordinary item of the same size costs, and a caller polling /healthz
meanwhile is never held for the whole call.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import httpx2
import pytest

from support import mcp_http, mint, running, set_policy, text_of

pytestmark = pytest.mark.anyio

SIZE = 256 * 1024
SHAPES = {"comment-flood": "<!--", "tag-flood": "<b", "entity-flood": "&#", "link-flood": "]("}


async def _list_seconds(url: str, reviewer: str) -> float:
    async with mcp_http(url, reviewer) as client:
        started = time.perf_counter()
        listed = await client.call_tool("list_inbox", {})
        elapsed = time.perf_counter() - started
        assert not listed.is_error, text_of(listed)
        return elapsed


@pytest.mark.parametrize("shape", sorted(SHAPES))
async def test_a_hostile_item_costs_what_an_ordinary_one_does_and_stalls_nobody(vault: Path, shape: str) -> None:
    set_policy(vault, restricted_bytes_per_hour=0)  # the flood itself is not what this test is about
    phone = mint(vault, name="phone", client_class="hosted", login="owner")
    reviewer = mint(vault, name="laptop", tier="trusted", login="owner")
    ordinary = ("All good here, nothing to see. " * (SIZE // 31 + 1))[:SIZE]
    hostile = (SHAPES[shape] * (SIZE // len(SHAPES[shape]) + 1))[:SIZE]
    with running(vault) as server:
        async with mcp_http(server.url, phone, start_session=True) as client:
            done = await client.call_tool("inbox_write", {"kind": "capture", "text": ordinary, "title": "plain"})
            assert not done.is_error, text_of(done)
        await _list_seconds(server.url, reviewer)  # warm: connections, imports, the plain item's verdict
        async with mcp_http(server.url, phone, start_session=True) as client:
            done = await client.call_tool("inbox_write", {"kind": "capture", "text": ordinary + "!", "title": "b"})
            assert not done.is_error, text_of(done)
        baseline = await _list_seconds(server.url, reviewer)  # one new ordinary version to judge

        async with mcp_http(server.url, phone, start_session=True) as client:
            done = await client.call_tool("inbox_write", {"kind": "capture", "text": hostile, "title": shape})
            assert not done.is_error, text_of(done)
        waits: list[float] = []
        stop = threading.Event()

        def poll() -> None:
            while not stop.is_set():
                started = time.perf_counter()
                assert httpx2.get(f"{server.url}/healthz", timeout=120).status_code == 200
                waits.append(time.perf_counter() - started)

        poller = threading.Thread(target=poll, daemon=True)
        poller.start()
        try:
            hostile_seconds = await _list_seconds(server.url, reviewer)
        finally:
            stop.set()
            poller.join(timeout=120)
    assert hostile_seconds < 8 * baseline + 0.5, (hostile_seconds, baseline)
    assert waits, "the health check never answered"
    assert max(waits) < max(0.5 * hostile_seconds, 0.5), (max(waits), hostile_seconds)
