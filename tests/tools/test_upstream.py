"""A crashing upstream is restarted with backoff (the wait doubles per crash in a row), never in a loop, and a
call while it is down is refused at once by its rule."""

from __future__ import annotations

import shutil
from pathlib import Path

import anyio
import pytest

from notegate.errors import NotegateError
from notegate.tools.install import Launch
from notegate.tools.upstream import Upstream

pytestmark = pytest.mark.anyio


async def _nothing(_upstream: Upstream) -> None:
    return None


async def test_a_crashing_upstream_restarts_with_doubling_waits(tmp_path: Path) -> None:
    false = shutil.which("false")
    assert false is not None
    upstream = Upstream(
        mount="broken",
        launch=Launch((false,), tmp_path),
        environment=dict,
        on_listing=_nothing,
        restart_seconds=0.05,
    )
    with anyio.move_on_after(1.6):
        await upstream.run()
    # waits 0.05, 0.1, 0.2, 0.4, 0.8: at most six starts in 1.6 s (a loop would make hundreds)
    assert 3 <= upstream.restarts <= 6, upstream.restarts
    assert upstream.crashes == upstream.restarts and upstream.status == "down"
    with pytest.raises(NotegateError) as refused:
        await upstream.call("anything", {}, 1.0)
    assert refused.value.rule == "tools-upstream-down"


#: A hostile upstream, stdlib only: a correct handshake and tool list, then, asked to call its tool, one line
#: that never ends (64 KiB blocks, forever). Unbounded, the SDK would buffer it until memory runs out.
HOSTILE = r"""
import json, sys

def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()

TOOL = {"name": "flood", "description": "floods", "inputSchema": {"type": "object"}}
for line in sys.stdin:
    request = json.loads(line)
    method, ident = request.get("method"), request.get("id")
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": ident, "result": {"protocolVersion": request["params"]["protocolVersion"],
              "capabilities": {"tools": {}}, "serverInfo": {"name": "hostile", "version": "1"}}})
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": ident, "result": {"tools": [TOOL]}})
    elif method == "ping":
        send({"jsonrpc": "2.0", "id": ident, "result": {}})
    elif method == "tools/call":
        block = b'{"jsonrpc": "2.0", "id": ' + str(ident).encode() + b', "result": {"x": "' + b"x" * 65536
        sys.stdout.buffer.write(block)
        while True:
            sys.stdout.buffer.write(b"x" * 65536)
"""


async def test_an_endless_line_is_refused_by_rule_and_the_upstream_restarted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A call whose answer is a line past max_line_bytes is refused [tools-upstream-line-too-long] at once (the
    line is never read whole: it never ends), and the upstream starts again; before the bound, the call hung
    until its time limit while the tools process buffered the line."""
    import sys

    import mcp.client.stdio as sdk_stdio

    from notegate.tools import linebound

    # what the tools process does at its start (isolate_child_environment), undone after this test
    monkeypatch.setattr(sdk_stdio, "get_default_environment", dict)
    monkeypatch.setattr(sdk_stdio, "TextReceiveStream", linebound._text_stream)
    script = tmp_path / "hostile.py"
    script.write_text(HOSTILE)
    listings: list[int] = []

    async def seen(upstream: Upstream) -> None:
        listings.append(len(upstream.tools))

    upstream = Upstream(
        mount="hostile",
        launch=Launch((sys.executable, str(script)), tmp_path),
        environment=dict,
        on_listing=seen,
        restart_seconds=0.05,
        max_line_bytes=1 << 20,
    )
    async with anyio.create_task_group() as tg:
        tg.start_soon(upstream.run)
        with anyio.fail_after(30):
            while upstream.state() != "running":
                await anyio.sleep(0.02)
        with pytest.raises(NotegateError) as refused:
            await upstream.call("flood", {}, 20.0)
        assert refused.value.rule == "tools-upstream-line-too-long"
        with anyio.fail_after(30):
            while upstream.restarts < 1 or upstream.state() != "running":
                await anyio.sleep(0.02)
        assert upstream.health()["last_refusal"] == "tools-upstream-line-too-long"
        assert listings == [1, 1]  # started, cut off, started again
        tg.cancel_scope.cancel()


def test_the_line_bound_counts_bytes_across_chunks() -> None:
    """Property: whatever the chunking, a stream is refused exactly when one of its lines passes the bound."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from notegate.tools.linebound import BoundedLines, LineBound

    class Chunks:
        def __init__(self, chunks: list[bytes]) -> None:
            self.chunks = list(chunks)

        async def receive(self, max_bytes: int = 65536) -> bytes:
            if not self.chunks:
                raise anyio.EndOfStream
            return self.chunks.pop(0)

        async def aclose(self) -> None:
            return None

    @settings(max_examples=100, deadline=None)
    @given(
        st.lists(st.binary(max_size=40).map(lambda b: b.replace(b"\n", b"\n\n")[:40]), max_size=12), st.integers(1, 30)
    )
    def check(chunks: list[bytes], limit: int) -> None:
        whole = b"".join(chunks)
        complete = whole.split(b"\n")
        # the bound applies to complete lines and to the one in progress alike
        expect = any(len(line) > limit for line in complete)
        hits: list[int] = []
        stream = BoundedLines(Chunks(chunks), LineBound(limit, lambda: hits.append(1)))  # type: ignore[arg-type]

        def drain() -> bool:  # the fake stream never suspends: step each receive by hand, no event loop
            while True:
                step = stream.receive()
                try:
                    step.send(None)
                except StopIteration:
                    continue
                except anyio.EndOfStream:
                    return False
                except ConnectionError:
                    return True
                raise AssertionError("the stream suspended")

        assert drain() is expect
        assert bool(hits) is expect

    check()


async def test_a_remote_answer_is_cut_at_its_bound_as_it_arrives() -> None:
    """The remote client's transport stops reading a body at max bytes (a hostile remote's endless answer)."""
    import httpx2

    from notegate.tools.remote import BoundedTransport

    class Endless(httpx2.AsyncByteStream):
        async def __aiter__(self):
            while True:
                yield b"x" * 65536

    transport = BoundedTransport(1 << 20)
    transport.inner = httpx2.MockTransport(lambda request: httpx2.Response(200, stream=Endless()))
    async with httpx2.AsyncClient(transport=transport) as client:
        with pytest.raises(httpx2.ReadError):
            await client.get("https://remote.example/mcp")
