"""One caller cannot starve the rest: real sockets against a real `notegate serve`.

The review held 400 idle `GET /mcp` event streams open with one token (file descriptors 26 → 437). In
stateless mode those streams carry nothing, so GET is answered 405 and the connection closed; every
other request holds a slot, capped per credential and overall.
"""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from notegate.config import server_default
from support import RawResponse, Server, mint, open_fds, raw_open, raw_read, running, the_one_refused

IDLE_CONNECTION_SECONDS = server_default("idle_connection_seconds")
MAX_OPEN_REQUESTS = server_default("max_open_requests")
MAX_OPEN_REQUESTS_PER_CREDENTIAL = server_default("max_open_requests_per_credential")

LIST = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}).encode()
DEADLINE = 30.0


def post_headers(token: str, length: int) -> dict[str, str]:
    return {
        "Authorization": f"Bearer {token}",
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
        "Content-Length": str(length),
    }


def post(server: Server, token: str, body: bytes = LIST) -> RawResponse:
    sock = raw_open(server.url, "POST", {**post_headers(token, len(body)), "Connection": "close"}, body)
    try:
        return raw_read(sock)
    finally:
        sock.close()


def slow_posts(server: Server, token: str, count: int) -> list[socket.socket]:
    """Requests that sent their head and 10 of 1000 body bytes: each holds its slot while the body is awaited."""
    return [raw_open(server.url, "POST", post_headers(token, 1000), b'{"jsonrpc"') for _ in range(count)]


def until(check: Callable[[], RawResponse | None]) -> RawResponse:
    """Poll (no sleep) until ``check`` returns a response: slots come back as the server sees the closes."""
    deadline = time.monotonic() + DEADLINE
    while time.monotonic() < deadline:
        found = check()
        if found is not None:
            return found
    raise AssertionError("the server never reached the expected state")


def until_fds(pid: int, at_most: int) -> int:
    deadline = time.monotonic() + DEADLINE
    while time.monotonic() < deadline:
        if (count := open_fds(pid)) <= at_most:
            return count
    return open_fds(pid)


@pytest.fixture
def server(vault: Path) -> Iterator[Server]:
    # These tests are about request slots, and every socket of theirs comes from one address: the per-peer
    # connection cap (tests/doors/test_listener_bounds.py) is lifted to the server's whole count here.
    text = vault.read_text()
    vault.write_text(text.replace("max_connections_per_peer = 64", "max_connections_per_peer = 256", 1))
    with running(vault) as served:
        yield served


def test_get_streams_are_refused_and_hold_no_descriptor(server: Server, vault: Path) -> None:
    token = mint(vault, name="streamer", client_class="hosted")
    assert server.proc is not None
    baseline = open_fds(server.proc.pid)
    headers = {"Authorization": f"Bearer {token}", "Accept": "text/event-stream"}
    socks = [raw_open(server.url, "GET", headers) for _ in range(150)]
    try:
        answers = [raw_read(s) for s in socks]
        during = open_fds(server.proc.pid)  # our 150 sockets are still open on this side
    finally:
        for s in socks:
            s.close()
    for answer in answers:
        assert answer.status == 405 and answer.headers["allow"] == "POST"
        assert answer.headers["content-type"] == "application/json"
        assert answer.json()["error"]["data"]["rule"] == "event-stream-not-served"
        assert answer.json()["error"]["message"].startswith("Refused [event-stream-not-served]: ")
        assert answer.closed
    assert during <= baseline + 10, (baseline, during)


def hog_until_refused(server: Server, hog: str, other: str) -> RawResponse:
    """Hold one credential's every slot with slow requests plus one more (refused), check another credential
    still passes, then close them all and wait until the slots come back."""
    socks = slow_posts(server, hog, MAX_OPEN_REQUESTS_PER_CREDENTIAL + 1)
    try:
        refused, _waiting = the_one_refused(socks)
        assert post(server, other).status == 200  # another credential is not starved
    finally:
        for s in socks:
            s.close()
    until(lambda: r if (r := post(server, hog)).status == 200 else None)
    return refused


def test_open_requests_are_capped_per_credential(server: Server, vault: Path) -> None:
    hog = mint(vault, name="hog")
    other = mint(vault, name="other")
    assert server.proc is not None
    hog_until_refused(server, hog, other)  # warm-up: worker threads open their SQLite connections once
    baseline = open_fds(server.proc.pid)
    refused = hog_until_refused(server, hog, other)
    body = refused.json()
    assert refused.status == 429 and refused.headers["retry-after"] == "1"
    assert refused.headers["content-type"] == "application/json" and refused.closed
    assert body["error"]["data"]["rule"] == "too-many-open-requests"
    assert body["error"]["message"].startswith("Refused [too-many-open-requests]: ")
    assert f"{MAX_OPEN_REQUESTS_PER_CREDENTIAL} per credential" in body["error"]["message"]
    # 33 held and released requests later, the server holds no more descriptors than before them
    assert until_fds(server.proc.pid, baseline + 3) <= baseline + 3


def test_open_requests_are_capped_overall(server: Server, vault: Path) -> None:
    per = MAX_OPEN_REQUESTS_PER_CREDENTIAL
    tokens = [mint(vault, name=f"hog-{i}") for i in range(-(-MAX_OPEN_REQUESTS // per))]
    late = mint(vault, name="late")
    socks: list[socket.socket] = []
    try:
        for i, token in enumerate(tokens):
            socks += slow_posts(server, token, min(per, MAX_OPEN_REQUESTS - i * per))
        socks += slow_posts(server, late, 1)
        refused, _waiting = the_one_refused(socks)
        assert refused.status == 429
        assert refused.json()["error"]["data"]["rule"] == "server-busy"
        assert refused.json()["error"]["message"].startswith("Refused [server-busy]: ")
    finally:
        for s in socks:
            s.close()
    assert until(lambda: r if (r := post(server, late)).status == 200 else None).json()["result"]["tools"]


def test_subscription_streams_are_not_served(server: Server, vault: Path) -> None:
    """The 2026-07-28 stream (subscriptions/listen) would be the same idle descriptor: it is not offered."""
    token = mint(vault, name="listener")
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
    }
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 7,
            "method": "subscriptions/listen",
            "params": {"_meta": meta, "notifications": {}},
        }
    ).encode()
    headers = {
        **post_headers(token, len(body)),
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": "subscriptions/listen",
        "Connection": "close",
    }
    sock = raw_open(server.url, "POST", headers, body)
    try:
        answer = raw_read(sock)
    finally:
        sock.close()
    assert answer.headers["content-type"] == "application/json"
    assert answer.json()["error"]["code"] == -32601  # method not found: no stream opened


def test_idle_connections_are_closed(server: Server, vault: Path) -> None:
    """A keep-alive connection with nothing in flight is closed by the server on its own timer."""
    token = mint(vault, name="idler")
    socks = [raw_open(server.url, "POST", post_headers(token, len(LIST)), LIST) for _ in range(20)]
    try:
        for sock in socks:
            answer = raw_read(sock)
            assert answer.status == 200 and not answer.closed  # kept alive, then left idle
        started = time.monotonic()
        for sock in socks:
            sock.settimeout(IDLE_CONNECTION_SECONDS + DEADLINE)
            assert sock.recv(1) == b""  # the server closed it (blocks on the server's timer, not a sleep)
        assert time.monotonic() - started < IDLE_CONNECTION_SECONDS + DEADLINE
    finally:
        for sock in socks:
            sock.close()
