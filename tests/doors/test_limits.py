"""The transport's body limit: derived from max_note_bytes, answered as a JSON-RPC error a model can read.

The review sent a 4 MiB write_note: the SDK's own limit answered a bare plain-text 413 (the official client
showed only "Server returned an error response"). Now every note the policy accepts fits through the
transport (six bytes of JSON per byte of note, plus the envelope), and a body over the limit gets HTTP 413
with a JSON-RPC error naming the rule, the limit and max_note_bytes, after the body was drained.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx2
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mcp.shared.exceptions import MCPError

from notegate.auth.tokens import TokenRecord
from notegate.doors.guard import (
    BODY_ESCAPE_FACTOR,
    BODY_HEADROOM_BYTES,
    BodyTooLarge,
    DoorGuard,
    body_limit,
    discard,
    read_body,
)
from notegate.policy import Policy
from support import Server, mcp_http, mint, running, text_of

pytestmark = pytest.mark.anyio

MAX_NOTE_BYTES = Policy().max_note_bytes
LIMIT = body_limit(MAX_NOTE_BYTES)
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def write_call(content: str) -> bytes:
    arguments = {"path": "big.md", "content": content, "base_revision": "absent"}
    message = {
        "jsonrpc": "2.0",
        "id": 3,
        "method": "tools/call",
        "params": {"name": "write_note", "arguments": arguments},
    }
    return json.dumps(message).encode()


def assert_too_large(response: httpx2.Response) -> None:
    assert response.status_code == 413
    assert response.headers["content-type"] == "application/json"
    error = response.json()["error"]
    assert error["message"].startswith("Refused [request-too-large]: ")
    assert f"max_note_bytes = {MAX_NOTE_BYTES}" in error["message"] and str(LIMIT) in error["message"]
    assert error["data"] == {"rule": "request-too-large", "limit_bytes": LIMIT, "max_note_bytes": MAX_NOTE_BYTES}


@pytest.fixture
def server(vault: Path) -> Iterator[Server]:
    with running(vault) as served:
        yield served


# --- against the real server -----------------------------------------------------------------------------


async def test_an_oversized_body_is_a_jsonrpc_error_for_the_official_client(server: Server, vault: Path) -> None:
    async with mcp_http(server.url, mint(vault, tier="trusted")) as client:
        with pytest.raises(MCPError) as caught:
            await client.call_tool("write_note", {"path": "big.md", "content": "x" * LIMIT, "base_revision": "absent"})
        assert str(caught.value).startswith("Refused [request-too-large]: ")
        assert f"max_note_bytes = {MAX_NOTE_BYTES}" in str(caught.value)
        # the connection pool is still usable: the next call goes through
        assert not (await client.call_tool("read_note", {"path": "rules/digest.md"})).is_error


async def test_an_oversized_body_is_drained_then_answered(server: Server, vault: Path) -> None:
    """A plain client sees the whole answer, not a reset while it was still sending (declared length)."""
    headers = {**HEADERS, "Authorization": f"Bearer {mint(vault)}"}
    body = write_call("y" * (LIMIT + 1))
    async with httpx2.AsyncClient(timeout=60) as http:
        assert_too_large(await http.post(f"{server.url}/mcp", content=body, headers=headers))


async def test_a_chunked_oversized_body_is_answered_the_same(server: Server, vault: Path) -> None:
    """No Content-Length: the guard counts the chunks as they arrive."""
    headers = {**HEADERS, "Authorization": f"Bearer {mint(vault)}"}
    body = write_call("z" * (LIMIT + 1))

    async def chunks():
        for start in range(0, len(body), 1 << 16):
            yield body[start : start + (1 << 16)]

    async with httpx2.AsyncClient(timeout=60) as http:
        response = await http.post(f"{server.url}/mcp", content=chunks(), headers=headers)
    assert "content-length" not in response.request.headers
    assert_too_large(response)


async def test_a_note_the_transport_carries_gets_the_note_rule(server: Server, vault: Path) -> None:
    """The review's 4 MiB write now reaches the service, whose refusal names the note limit; and a note of
    max_note_bytes that escapes to six bytes a character still fits through the transport."""
    async with mcp_http(server.url, mint(vault, tier="trusted")) as client:
        big = await client.call_tool(
            "write_note", {"path": "big.md", "content": "x" * (4 << 20), "base_revision": "absent"}
        )
        assert big.is_error and "Refused [note-too-large]: " in text_of(big)
        worst = await client.call_tool(
            "write_note", {"path": "worst.md", "content": "\x01" * MAX_NOTE_BYTES, "base_revision": "absent"}
        )
        # the call returned a tool result (a preview, or a content gate's answer): the transport let it through
        assert "request-too-large" not in text_of(worst)


# --- the pieces, in process ------------------------------------------------------------------------------


def test_the_limit_is_derived_from_max_note_bytes() -> None:
    assert body_limit(MAX_NOTE_BYTES) == 6 * MAX_NOTE_BYTES + 64 * 1024
    assert body_limit(2 * MAX_NOTE_BYTES) > body_limit(MAX_NOTE_BYTES)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=2000))
def test_any_note_fits_the_limit_once_escaped(text: str) -> None:
    """JSON never spells a byte of UTF-8 in more than six bytes, in either escaping mode."""
    size = len(text.encode("utf-8", errors="surrogatepass"))
    for ensure_ascii in (True, False):
        quoted = json.dumps(text, ensure_ascii=ensure_ascii).encode("utf-8", errors="surrogatepass")
        assert len(quoted) - 2 <= BODY_ESCAPE_FACTOR * size
    assert BODY_HEADROOM_BYTES >= 4096  # the envelope and the short arguments of a write


def receiver(chunks: list[bytes]):
    messages = [{"type": "http.request", "body": c, "more_body": i < len(chunks) - 1} for i, c in enumerate(chunks)]
    messages.append({"type": "http.disconnect"})
    it = iter(messages)

    async def receive():
        return next(it)

    return receive


@settings(max_examples=200, deadline=None)
@given(st.lists(st.binary(max_size=64), min_size=1, max_size=20), st.integers(min_value=0, max_value=1500))
def test_read_body_returns_the_body_or_refuses_over_the_limit(chunks: list[bytes], limit: int) -> None:
    whole = b"".join(chunks)

    async def run() -> bytes | None:
        return await read_body({"headers": []}, receiver(chunks), limit)

    if len(whole) <= limit:
        assert anyio.run(run) == whole
    else:
        with pytest.raises(BodyTooLarge):
            anyio.run(run)


def test_a_declared_length_over_the_limit_is_refused_before_reading() -> None:
    async def never():
        raise AssertionError("read a body it had already refused")

    async def run() -> None:
        await read_body({"headers": [(b"content-length", str(LIMIT + 1).encode())]}, never, LIMIT)

    with pytest.raises(BodyTooLarge) as caught:
        anyio.run(run)
    assert caught.value.size == LIMIT + 1 and caught.value.more


def test_discard_is_bounded() -> None:
    """A client that never stops sending is read only up to the bound."""
    sent = 0

    async def endless():
        nonlocal sent
        sent += 1 << 16
        return {"type": "http.request", "body": b"\0" * (1 << 16), "more_body": True}

    anyio.run(discard, endless, 1 << 20)
    assert (1 << 20) <= sent <= (1 << 20) + (1 << 16)


def _timed(chunks: list[bytes]) -> float:
    started = time.thread_time()
    anyio.run(read_body, {"headers": []}, receiver(chunks), LIMIT)
    return time.thread_time() - started


def test_read_body_is_linear() -> None:
    """4x the chunks takes well under 16x (quadratic) the time: chunks are joined once, not re-copied.
    CPU time of this thread (other processes on a busy machine do not count), sizes alternating, best of 5 each."""
    small = [b"a" * 256] * 2000
    large = small * 4
    _timed(small), _timed(large)  # warm-up
    smalls, larges = [], []
    for _ in range(5):
        smalls.append(_timed(small))
        larges.append(_timed(large))
    ratio = min(larges) / min(smalls)
    assert ratio < 8, ratio


RECORD = TokenRecord(
    id="t1",
    name="n",
    login="owner",
    display_name="owner",
    client_class="workstation",
    tier="trusted",
    environment=None,
    created_at=0.0,
    revoked_at=None,
    last_used_at=None,
)


async def test_a_body_that_never_arrives_is_answered_408_and_frees_its_slot() -> None:
    """The deadline is the guard's own (injected small here); nothing in the test sleeps."""
    sent: list[dict] = []
    reached = []

    async def app(scope, receive, send):
        reached.append(scope)

    async def stalled():
        await anyio.Event().wait()  # a client that sent its head and then nothing

    async def send(message):
        sent.append(message)

    guard = DoorGuard(app, verify=lambda token: RECORD, max_note_bytes=MAX_NOTE_BYTES, body_timeout=0.05)
    scope = {"type": "http", "path": "/mcp", "method": "POST", "headers": [(b"authorization", b"Bearer x")]}
    await guard(scope, stalled, send)
    assert sent[0]["status"] == 408 and not reached
    body = json.loads(sent[1]["body"])
    assert body["error"]["message"].startswith("Refused [request-body-timeout]: ")
    assert guard.open_total == 0 and guard.open == {}
