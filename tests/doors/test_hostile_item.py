"""One hostile inbox item cannot stall the server (issue 8, finding 3), against a real `notegate serve`.

The review's item: `<!--` repeated to 128 KiB made list_inbox take 17.7 s and held the interpreter lock,
so /healthz and every other caller waited too. Measured as ratios, never as absolute times: the hostile
item costs list_inbox about what an ordinary item of the same size costs, and a caller polling /healthz
meanwhile is never held for the whole call, nor much longer than while an ordinary item is judged (on a
loaded machine a health check can wait a second for a core; a held interpreter lock holds it for the
whole call). 128 KiB, the review's size: the old comment regex took 17.7 s on it.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import anyio
import httpx2
import pytest

from support import mcp_http, mint, running, set_policy, text_of

pytestmark = pytest.mark.anyio

SIZE = 128 * 1024
SHAPES = {"comment-flood": "<!--", "tag-flood": "<b", "entity-flood": "&#", "link-flood": "]("}


async def _list_seconds(url: str, reviewer: str) -> float:
    async with mcp_http(url, reviewer) as client:
        started = time.perf_counter()
        listed = await client.call_tool("list_inbox", {})
        elapsed = time.perf_counter() - started
        assert not listed.is_error, text_of(listed)
        return elapsed


async def _list_while_polling(url: str, reviewer: str) -> tuple[float, list[float]]:
    """list_inbox's time, and how long each /healthz asked meanwhile (one keep-alive client) waited."""
    waits: list[float] = []
    stop, polling = threading.Event(), threading.Event()

    def poll() -> None:
        with httpx2.Client(timeout=120) as http:
            assert http.get(f"{url}/healthz").status_code == 200  # connected before the call starts
            polling.set()
            while True:  # at least one timed request, asked while (or just after) the call runs
                started = time.perf_counter()
                assert http.get(f"{url}/healthz").status_code == 200
                waits.append(time.perf_counter() - started)
                if stop.is_set():
                    break

    poller = threading.Thread(target=poll, daemon=True)
    poller.start()
    try:
        # A list_inbox faster than the poller's start would otherwise leave no wait measured at all.
        assert await anyio.to_thread.run_sync(polling.wait, 60), "the health check never answered"
        seconds = await _list_seconds(url, reviewer)
    finally:
        stop.set()
        poller.join(timeout=120)
    assert waits, "the health check never answered"
    return seconds, waits


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
        baseline, ordinary_waits = await _list_while_polling(server.url, reviewer)  # one new ordinary version

        async with mcp_http(server.url, phone, start_session=True) as client:
            done = await client.call_tool("inbox_write", {"kind": "capture", "text": hostile, "title": shape})
            assert not done.is_error, text_of(done)
        hostile_seconds, waits = await _list_while_polling(server.url, reviewer)
    assert hostile_seconds < 8 * baseline + 0.5, (hostile_seconds, baseline)
    # A held interpreter lock holds a health check for the whole call (17.7 s in the review); a call under
    # 2 s cannot show that apart from a loaded machine's wait for a core (0.52 s seen at load 10).
    allowed = max(0.5 * hostile_seconds, 1.0, 2 * max(ordinary_waits))
    assert max(waits) < allowed, (max(waits), hostile_seconds, max(ordinary_waits))
