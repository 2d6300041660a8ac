"""What a connection may cost before it sends a request: real sockets against a real `notegate serve`.

The review held 260 connections that sent half a request head and then nothing: they kept their slots for
as long as the test ran and every other request (MCP for every token, the console, /healthz) got 503.
Now a head must arrive within ``header_timeout_seconds``, one peer holds at most
``max_connections_per_peer`` connections, and when the server is full a connection that never completed
a head gives its slot to a newcomer.  Loopback has a whole /8, so each "peer" below is its own 127.0.0.x
address (the server listens on 127.0.0.1; the caller connects from 127.0.0.1 too).
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import h11
import pytest
import uvicorn
from hypothesis import given, settings
from hypothesis import strategies as st
from uvicorn.server import ServerState

from notegate.doors.listen import BoundedH11Protocol, bounded_protocol, peer_key
from notegate.policy import decide_connection
from support import mint, running
from support.listener import (
    DEADLINE,
    caller_is_served,
    connect,
    get_healthz,
    half_heads,
    read_all,
    set_server,
)


def test_half_heads_from_one_peer_stall_no_caller_and_are_closed_in_time(vault: Path) -> None:
    set_server(vault, max_connections=40, max_connections_per_peer=8, header_timeout_seconds=1)
    set_server(vault, new_connections_per_peer_per_second=10000)  # the cap is pinned here, not the rate
    token = mint(vault, name="caller")
    with running(vault) as server:
        socks = half_heads(server, ["127.0.0.2"], 50)
        try:
            started = time.monotonic()
            caller_is_served(server, token)
            answers = [read_all(sock) for sock in socks]  # every one closed by the server
            elapsed = time.monotonic() - started
        finally:
            for sock in socks:
                sock.close()
    per_peer = [a for a in answers if b"Refused [too-many-connections-per-peer]" in a]
    late = [a for a in answers if b"Refused [request-head-timeout]" in a]
    assert len(per_peer) == 42 and len(late) == 8, [a[:60] for a in answers]
    assert all(a.startswith(b"HTTP/1.1 429 ") for a in per_peer)
    assert all(a.startswith(b"HTTP/1.1 408 ") for a in late)
    assert elapsed < 1 + 10  # the header timeout, not the test's deadline


def test_the_connection_over_the_per_peer_cap_is_refused_before_http(vault: Path) -> None:
    set_server(vault, max_connections_per_peer=4, header_timeout_seconds=60, idle_connection_seconds=60)
    with running(vault) as server:
        held = [connect(server, "127.0.0.2") for _ in range(4)]
        try:
            for sock in held:  # four kept-alive connections that completed a request: the server counts them
                assert get_healthz(sock, server.port) == 200
            fifth = connect(server, "127.0.0.2")  # sends nothing: refused at once, before any HTTP
            answer = read_all(fifth)
            fifth.close()
            assert answer.startswith(b"HTTP/1.1 429 "), answer
            assert b"Refused [too-many-connections-per-peer]: this address already holds 4 connections" in answer
            with connect(server, "127.0.0.3") as other:  # another peer is served
                assert get_healthz(other, server.port) == 200
            held.pop().close()  # one slot comes back once the server sees the close
            deadline = time.monotonic() + DEADLINE
            status = 0
            while status != 200 and time.monotonic() < deadline:
                with connect(server, "127.0.0.2") as again:
                    status = get_healthz(again, server.port)
            assert status == 200
            for sock in held:  # the held ones were never touched
                assert get_healthz(sock, server.port) == 200
        finally:
            for sock in held:
                sock.close()


def test_strangers_waiting_for_a_head_give_way_to_a_caller(vault: Path) -> None:
    """Ten peers under their cap fill the server with half heads: a caller's connection still gets a slot
    (the longest-waiting half head is closed for it), and strangers never hold more than the server has."""
    set_server(vault, max_connections=20, max_connections_per_peer=4, header_timeout_seconds=60)
    token = mint(vault, name="caller")
    with running(vault) as server:
        socks = half_heads(server, [f"127.0.0.{n}" for n in range(10, 20)], 4)
        try:
            caller_is_served(server, token)
            closed = 0
            for sock in socks:
                sock.settimeout(0.1)
                try:
                    closed += sock.recv(1) == b""
                except TimeoutError:
                    pass
                except ConnectionResetError:
                    closed += 1
        finally:
            for sock in socks:
                sock.close()
    assert closed >= 40 - 20 + 1, closed  # room for the caller's /mcp call was made among the strangers


# --- the pieces ------------------------------------------------------------------------------------------


@given(
    from_peer=st.integers(0, 100),
    per_peer=st.integers(1, 100),
    open_total=st.integers(0, 300),
    max_total=st.integers(1, 300),
    waiting=st.integers(0, 300),
)
def test_decide_connection(from_peer: int, per_peer: int, open_total: int, max_total: int, waiting: int) -> None:
    decision = decide_connection(
        from_peer=from_peer, per_peer=per_peer, open_total=open_total, max_total=max_total, waiting=waiting
    )
    if from_peer >= per_peer:
        assert (decision.allowed, decision.rule) == (False, "too-many-connections-per-peer")
    elif open_total < max_total:
        assert (decision.allowed, decision.rule) == (True, "connection")
    elif waiting:
        assert (decision.allowed, decision.rule) == (True, "connection-replaces-waiting")
    else:
        assert (decision.allowed, decision.rule) == (False, "too-many-connections")


@pytest.mark.parametrize(
    ("peername", "key"),
    [
        (("192.0.2.7", 5000), "192.0.2.7"),
        (("::ffff:192.0.2.7", 5000, 0, 0), "192.0.2.7"),
        (("::1", 5000, 0, 0), "::1"),
        (("2001:db8:1:2:3:4:5:6", 5000, 0, 0), "2001:db8:1:2::/64"),
        (("2001:db8:1:2:ffff::9", 5000, 0, 0), "2001:db8:1:2::/64"),  # one host holds the whole /64
        (("fe80::1%eth0", 5000, 0, 2), "fe80::/64"),
        ("", ""),
        (None, ""),
    ],
)
def test_peer_key(peername: object, key: str) -> None:
    assert peer_key(peername) == key


class FakeTransport(asyncio.Transport):
    """Just enough of an asyncio transport for uvicorn's h11 protocol: records what is written; a close
    reports ``connection_lost`` on the next turn of the loop, as a real transport does."""

    def __init__(self, peer: str) -> None:
        super().__init__()
        self.peer = peer
        self.protocol: asyncio.Protocol | None = None
        self.closing = False
        self.written = b""

    def get_extra_info(self, name: str, default: object = None) -> object:
        return {"peername": (self.peer, 40000), "sockname": ("127.0.0.1", 8765)}.get(name, default)

    def write(self, data: bytes) -> None:
        self.written += data

    def close(self) -> None:
        if not self.closing:
            self.closing = True
            assert self.protocol is not None
            asyncio.get_running_loop().call_soon(self.protocol.connection_lost, None)

    def is_closing(self) -> bool:
        return self.closing

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass


async def _ok(scope, receive, send) -> None:  # type: ignore[no-untyped-def]
    if scope["type"] != "http":
        return
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"2")]})
    await send({"type": "http.response.body", "body": b"ok"})


OPS = st.lists(
    st.one_of(
        st.tuples(st.just("connect"), st.integers(0, 3)),  # a new connection from peer n
        st.tuples(st.sampled_from(["half", "head", "late", "drop"]), st.integers(0, 30)),  # on connection n
    ),
    max_size=60,
)


@settings(max_examples=150, deadline=None)
@given(ops=OPS, per_peer=st.integers(1, 4), max_total=st.integers(1, 6))
def test_the_bounds_count_every_connection_once(ops: list[tuple[str, int]], per_peer: int, max_total: int) -> None:
    """Any order of connects, half heads, whole requests, head timeouts and client closes: the counts match
    the connections really open, no peer holds more than its cap, the server no more than max_connections,
    a connection that completed a request is never closed to make room, every connection awaiting a head
    (a new one, or a kept-alive one after its response) has a deadline, and all returns to zero."""

    async def scenario() -> None:
        cls = bounded_protocol(max_connections=max_total, per_peer=per_peer, header_timeout=3600)
        config = uvicorn.Config(_ok, http=cls, ws="none", lifespan="off", log_level="critical")
        state = ServerState()
        conns: list[tuple[BoundedH11Protocol, FakeTransport]] = []
        served: set[int] = set()  # connections that completed a request and were not closed by their client

        async def settle() -> None:
            for _ in range(6):
                await asyncio.sleep(0)

        for op, n in ops:
            if op == "connect":
                protocol = cls(config=config, server_state=state, app_state={})
                transport = FakeTransport(f"192.0.2.{n}")
                transport.protocol = protocol
                open_before = {i for i in served if not conns[i][1].closing}
                protocol.connection_made(transport)
                conns.append((protocol, transport))
                assert all(not conns[i][1].closing for i in open_before), "a served connection made room"
            elif conns:
                i = n % len(conns)
                protocol, transport = conns[i]
                if transport.closing:
                    continue
                if op == "half":
                    protocol.data_received(b"GET / HTTP/1.1\r\nHo")
                elif op == "head":
                    protocol.data_received(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
                    served.add(i)
                elif op == "late" and cls.bounds.deadlines.armed(protocol):
                    cls.bounds.deadlines.cancel(protocol)
                    protocol._head_late()  # the deadline falls due
                elif op == "drop":
                    transport.close()
                    served.discard(i)
            await settle()
            bounds = cls.bounds
            admitted = [p for p, t in conns if p._admitted]
            assert bounds.open == len(admitted) == sum(bounds.peers.values())
            assert bounds.open <= max_total and all(0 < c <= per_peer for c in bounds.peers.values())
            assert set(bounds.waiting) <= set(admitted)
            assert all(not t.closing for p, t in conns if p._admitted)
            idle = [p for p in admitted if p.conn.their_state is h11.IDLE]
            assert all(bounds.deadlines.armed(p) for p in idle), "a connection awaits a head with no deadline"
            assert len(bounds.deadlines) <= len(admitted)
        for _protocol, transport in conns:
            transport.close()
        await settle()
        assert (cls.bounds.open, cls.bounds.peers, cls.bounds.waiting, len(cls.bounds.deadlines)) == (0, {}, {}, 0)
        assert not state.connections

    asyncio.run(scenario())
