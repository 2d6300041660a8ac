"""What one MCP call costs the door itself (issue 15's per-call regression), on a real server on loopback.

The server runs in this process (uvicorn in a thread, the whole app as `notegate serve` builds it) so the
test can count what the door asks of the state database per request; the client is the official SDK
client over real HTTP.  The invariants: one token lookup per /mcp request (the guard's; the SDK's bearer
check reuses it), and that reuse never outlives its request (a token revoked between two calls is refused
on the second).
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import anyio
import httpx2
import pytest

from notegate.auth.tokens import revoke_token
from notegate.doors.http import VERIFIED, DoorOAuthProvider
from notegate.services.runtime import Runtime
from support import mcp_http, mint
from support.inprocess import serve_in_process

pytestmark = pytest.mark.anyio


async def test_one_token_lookup_per_call(vault: Path) -> None:
    token = mint(vault, name="counted", client_class="workstation", tier="trusted")
    with serve_in_process(vault) as served:
        async with mcp_http(served.url, token) as client:
            await client.call_tool("read_note", {"path": "rules/digest.md"})  # lists the tools first
            before = served.lookups
            for _ in range(5):
                result = await client.call_tool("read_note", {"path": "rules/digest.md"})
                assert not result.is_error
            # One lookup per request: the guard's. The SDK's bearer check used to look the token up again.
            assert served.lookups - before == 5


async def test_a_token_revoked_between_calls_is_refused_on_the_next(vault: Path) -> None:
    token = mint(vault, name="revoked-midway", client_class="workstation", tier="trusted")
    with serve_in_process(vault) as served:
        async with mcp_http(served.url, token) as client:
            assert not (await client.call_tool("read_note", {"path": "rules/digest.md"})).is_error
            assert revoke_token(served.runtime.state, "revoked-midway", now=time.time()) == 1
            async with httpx2.AsyncClient() as http:
                response = await http.post(
                    f"{served.url}/mcp",
                    json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                    headers={"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream"},
                )
            assert response.status_code == 401
            assert served.app.state.oauth.failure(token) == "revoked"


async def test_the_guard_looks_the_token_up_on_the_event_loop_with_sqlite(vault: Path) -> None:
    """No worker-thread hop for the guard's lookup on a local state database (the hop cost the event loop
    ~20 times the lookup); the tool itself still runs in a worker thread."""
    token = mint(vault, name="on-the-loop", client_class="workstation", tier="trusted")
    with serve_in_process(vault) as served:
        assert served.runtime.state.dialect == "sqlite"
        lookup = served.runtime.state.token
        threads: list[str] = []

        def where(token_id: str):
            threads.append(threading.current_thread().name)
            return lookup(token_id)

        served.runtime.state.token = where
        async with mcp_http(served.url, token) as client:
            for _ in range(3):
                assert not (await client.call_tool("read_note", {"path": "rules/digest.md"})).is_error
        assert threads and set(threads) == {"door-cost-server"}  # the thread uvicorn's event loop runs in


async def test_an_empty_inbox_costs_a_call_no_holds_query(vault: Path) -> None:
    """Every tool call counts the inbox items for its notice; with none waiting, their holds are not read."""
    token = mint(vault, name="no-holds", client_class="workstation", tier="trusted")
    with serve_in_process(vault) as served:
        holds = served.runtime.state.holds
        asked: list[str] = []

        def counted(environment: str):
            asked.append(environment)
            return holds(environment)

        served.runtime.state.holds = counted
        async with mcp_http(served.url, token) as client:
            for _ in range(3):
                result = await client.call_tool("read_note", {"path": "rules/digest.md"})
                assert not result.is_error and result.structured_content.get("notice") is None
        assert asked == []


async def test_the_provider_reuses_only_the_token_the_guard_verified(vault: Path) -> None:
    token = mint(vault, name="mine", client_class="workstation", tier="trusted")
    with serve_in_process(vault) as served:
        provider: DoorOAuthProvider = served.app.state.oauth
        record = provider.credential(token)
        assert record is not None
        other = token[:-4] + ("aaaa" if not token.endswith("aaaa") else "bbbb")  # same id, wrong secret
        marker = VERIFIED.set((token, record))
        try:
            assert (await provider.load_access_token(token)).client_id == record.name
            before = served.lookups
            assert await provider.load_access_token(other) is None  # looked up, and refused
            assert served.lookups == before + 1
        finally:
            VERIFIED.reset(marker)
        before = served.lookups
        assert await provider.load_access_token(token) is not None  # outside a request: a lookup
        assert served.lookups == before + 1
    await anyio.sleep(0)


# ----------------------------------------------------------------------------- tool threads
class _Waited:
    notice = None


async def _calls_in_flight(runtime: Runtime, threads: int, at_once: int) -> None:
    """``at_once`` tool calls that each wait (in their worker thread) until all of them are in flight, as
    concurrent writes wait together at the write lock for one group commit; the door's default limiter is
    8 threads, as ``notegate serve`` sets it."""
    from notegate.doors.mcp.caller import CallerResolver
    from notegate.doors.mcp.calls import ToolCall
    from notegate.doors.mcp.results import ToolResult
    from notegate.services.container import Services
    from support.callers import make_caller

    anyio.to_thread.current_default_thread_limiter().total_tokens = 8
    call = ToolCall(Services.of(runtime), CallerResolver(fixed=make_caller()), threads=threads)
    together = threading.Barrier(at_once, timeout=5)

    def service(caller, environment=None):
        together.wait()
        return _Waited()

    async with anyio.create_task_group() as tasks:
        for _ in range(at_once):
            tasks.start_soon(call, None, service, ToolResult)


async def test_tool_calls_are_in_flight_together_past_the_default_thread_limit(runtime: Runtime) -> None:
    from notegate.doors.mcp.calls import TOOL_THREADS

    assert TOOL_THREADS >= 32  # the bench's 32 writers can all wait at the write lock together
    await _calls_in_flight(runtime, TOOL_THREADS, 16)


async def test_eight_tool_threads_would_cap_them(runtime: Runtime) -> None:
    """The check above has teeth: with 8 threads, 16 calls that wait for each other never all get in."""
    with pytest.raises(BaseExceptionGroup) as caught:
        await _calls_in_flight(runtime, 8, 16)
    assert caught.group_contains(threading.BrokenBarrierError)
