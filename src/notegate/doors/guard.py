"""The MCP door's own limits in front of the SDK (:class:`DoorGuard`): event streams, body size and time, open
requests per credential and for the whole door, each refusal a JSON-RPC error a model can act on.

Why its own module: the guard is the door's transport policy, read on its own; :mod:`notegate.doors.http`
assembles the app around it.  The invariants are listed in that module's docstring.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Awaitable, Callable, Collection, Iterator
from contextvars import ContextVar
from typing import Any

import anyio
import anyio.to_thread

from notegate.asgibody import replayed
from notegate.auth.oauth_core import TokenGrant
from notegate.auth.tokens import TokenRecord
from notegate.config import server_default
from notegate.doors.admission import credit_peer
from notegate.errors import NotegateError, http_status
from notegate.policy import decide_host
from notegate.services.eventlog import event

#: JSON can spell one byte of a note as six (a control character becomes ``\u0001``).
BODY_ESCAPE_FACTOR = 6
#: Room for the JSON-RPC envelope and the other arguments of a write.
BODY_HEADROOM_BYTES = 64 << 10
#: The most of an oversized body read (and thrown away) so the client sees the 413 instead of a reset.
DRAIN_LIMIT_BYTES = 32 << 20
#: How long the body of a request refused for too many open requests is read (and thrown away) before the
#: answer, so a client that sent it whole reads the answer instead of a reset; then the connection closes.
DRAIN_SECONDS = 2.0
MCP_PATHS = ("/mcp", "/mcp/")
#: What the door knows of a verified credential: a static token's record or an OAuth grant (both have ``id``,
#: the credential open requests are counted against, and ``environment``).
Credential = TokenRecord | TokenGrant
Scope = dict[str, Any]
#: The credential :class:`DoorGuard` verified for the request being served, with its token: the SDK's bearer
#: check that follows in the same request takes it instead of looking the token up a second time in a worker
#: thread.  A context variable, so it never outlives or leaves its request.
VERIFIED: ContextVar[tuple[str, Credential] | None] = ContextVar("notegate_verified", default=None)
Message = dict[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]


def body_limit(max_note_bytes: int) -> int:
    """The transport's body limit: the largest note the policy accepts, fully escaped, plus the envelope."""
    return BODY_ESCAPE_FACTOR * max_note_bytes + BODY_HEADROOM_BYTES


class Refusal(NotegateError):
    """A refusal of the door itself, answered before any tool runs; carries its HTTP status."""

    def __init__(self, message: str, *, rule: str, remedy: str, **data: object) -> None:
        super().__init__(message, rule=rule, remedy=remedy)
        self.status = http_status(rule)  # the registry's, like every door's
        self.data = data


def jsonrpc_error(refusal: Refusal) -> bytes:
    """The JSON-RPC error object the SDK client surfaces to the model (``id`` null: the body was never parsed)."""
    code = -32600 if refusal.status in (405, 408, 413) else -32000
    error = {"code": code, "message": refusal.explain(), "data": {"rule": refusal.rule, **refusal.data}}
    return json.dumps({"jsonrpc": "2.0", "id": None, "error": error}).encode("utf-8")


async def answer(send: Send, refusal: Refusal, extra_headers: tuple[tuple[bytes, bytes], ...] = ()) -> None:
    body = jsonrpc_error(refusal)
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode("ascii")),
        (b"connection", b"close"),
        *extra_headers,
    ]
    await send({"type": "http.response.start", "status": refusal.status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def discard(receive: Receive, bound: int) -> None:
    """Read and throw away the rest of a request body, at most ``bound`` bytes (then the server closes)."""
    seen = 0
    while seen <= bound:
        message = await receive()
        if message["type"] != "http.request":
            return
        seen += len(message.get("body", b""))
        if not message.get("more_body", False):
            return


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", ()):
        if key == name:
            return value.decode("latin-1")
    return None


def bearer(scope_or_header: Scope | str | None) -> str | None:
    """The bearer token of a request (scope) or of an Authorization header value, or None."""
    value = _header(scope_or_header, b"authorization") if isinstance(scope_or_header, dict) else scope_or_header
    if not value:
        return None
    scheme, _, token = value.partition(" ")
    return (token.strip() or None) if scheme.lower() == "bearer" else None


class BodyTooLarge(NotegateError):
    """A request body over the door's limit (the guard answers it with a JSON-RPC error)."""

    rule = "request-too-large"

    def __init__(self, size: int, more: bool) -> None:
        super().__init__(f"the request body is over the limit ({size} bytes read)")
        self.size = size
        self.more = more


async def read_body(scope: Scope, receive: Receive, limit: int) -> bytes | None:
    """The whole body, or None if the client went away; raises :class:`BodyTooLarge` over ``limit``
    (``more``: whether the client still has body to send, to be drained before the answer).

    Linear in the body: chunks are kept in a list and joined once."""
    declared = _header(scope, b"content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise BodyTooLarge(int(declared), more=True)
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return None
        chunk = message.get("body", b"")
        size += len(chunk)
        more = message.get("more_body", False)
        if size > limit:
            raise BodyTooLarge(size, more=more)
        chunks.append(chunk)
        if not more:
            return b"".join(chunks)


class DoorGuard:
    """ASGI middleware in front of the SDK's /mcp: event streams, body size, open requests per credential.

    The counters live on the event loop (no thread touches them), so plain integers need no lock."""

    def __init__(
        self,
        app: Callable[[Scope, Receive, Send], Awaitable[None]],
        *,
        verify: Callable[[str], Credential | None],
        max_note_bytes: int,
        per_credential: int = server_default("max_open_requests_per_credential"),
        total: int = server_default("max_open_requests"),
        body_timeout: float = server_default("body_timeout_seconds"),
        drain: int = DRAIN_LIMIT_BYTES,
        drain_seconds: float = DRAIN_SECONDS,
        failure: Callable[[str | None], str] | None = None,
        allowed_hosts: Collection[str] | None = None,
        verify_on_loop: bool = False,
    ) -> None:
        """``verify_on_loop``: look the token up on the event loop instead of in a worker thread.  Why: the
        lookup is one read by primary key (a local SQLite file in WAL mode: no lock to wait on, no network),
        about a twentieth of what the hop to a worker and back costs the event loop, which is the server's
        busiest thread under many writers (the hop was ~5 % of the interpreter's time per MCP write).  Only
        for a local state database: a PostgreSQL round trip stays off the loop.  The lookup itself is the
        same, fresh on every request, so a revoked token is still refused at its next request."""
        self.app = app
        self.allowed_hosts = allowed_hosts
        self.verify = verify
        self.verify_on_loop = verify_on_loop
        self.failure = failure
        self.max_note_bytes = max_note_bytes
        self.limit = body_limit(max_note_bytes)
        self.per_credential = per_credential
        self.total = total
        self.body_timeout = body_timeout
        self.drain = drain
        self.drain_seconds = drain_seconds
        self.open: dict[str, int] = {}
        self.open_total = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("path") not in MCP_PATHS:
            await self.app(scope, receive, send)
            return
        if self.allowed_hosts is not None:  # before the bearer check: a foreign Host is 421, token or none
            host = _header(scope, b"host")
            if not decide_host(host, self.allowed_hosts).allowed:
                event("refused", status=http_status("host-not-allowed"), reason="host-not-allowed")
                await answer(send, wrong_host((host or "")[:100]))
                return
        send = self._explain_wrong_host(scope, send)  # the SDK's own check stays behind, in the same words
        if scope["method"] == "GET":
            await answer(send, self._no_stream(), ((b"allow", b"POST"),))
            return
        token = bearer(scope)
        record = await self._verified(token) if token else None
        if scope["method"] != "POST" or record is None:
            if scope["method"] == "POST" and self.failure is not None:  # the SDK answers 401: say why in the log
                event(
                    "refused",
                    status=http_status("unauthenticated"),
                    reason=await anyio.to_thread.run_sync(self.failure, token),
                )
            await self.app(scope, receive, send)  # the SDK answers: 401 with its challenge, 405, CORS
            return
        refusal = self._take(record.id)
        if refusal is not None:
            await self._drain(receive, self.drain_seconds)
            await answer(send, refusal, ((b"retry-after", b"1"),))
            return
        credit_peer(scope)  # the listener remembers this peer as a caller (doors/admission.py)
        verified = VERIFIED.set((token, record))
        try:
            await self._serve(scope, receive, send)
        finally:
            VERIFIED.reset(verified)
            self._release(record.id)

    async def _verified(self, token: str) -> Credential | None:
        if self.verify_on_loop:
            return self.verify(token)
        return await anyio.to_thread.run_sync(self.verify, token)

    async def _serve(self, scope: Scope, receive: Receive, send: Send) -> None:
        body = None
        try:
            with anyio.fail_after(self.body_timeout):
                body = await read_body(scope, receive, self.limit)
        except BodyTooLarge as exc:
            if exc.more:  # an upload the client means to finish: give it the time a body may take
                await self._drain(receive, self.body_timeout)
            await answer(send, self._too_large(exc.size))
            return
        except TimeoutError:
            await answer(send, self._too_slow())
            return
        if body is None:
            return  # the client went away before sending its body
        await self.app(scope, replayed(body, receive), send)

    @staticmethod
    def _explain_wrong_host(scope: Scope, send: Send) -> Send:
        """The SDK's DNS-rebinding check answers a foreign Host with a bare ``421 Invalid Host header``; this
        answers it instead with the refusal naming the setting that admits a host (the check stays the SDK's)."""
        replaced = False

        async def wrapped(message: Message) -> None:
            nonlocal replaced
            if message["type"] == "http.response.start" and message.get("status") == 421:
                replaced = True
                host = (_header(scope, b"host") or "")[:100]
                await answer(send, wrong_host(host))
                return
            if replaced:
                return  # the SDK's own body: already answered
            await send(message)

        return wrapped

    async def _drain(self, receive: Receive, seconds: float) -> None:
        """Bounded in bytes and in time: a refused client cannot keep the server reading."""
        with anyio.move_on_after(seconds):
            await discard(receive, self.drain)

    @contextlib.contextmanager
    def holding(self, credential: str) -> Iterator[None]:
        """One open request of ``credential`` for the block, counted with the MCP door's: the contract door
        shares these limits, so no credential stalls the others through either door.  Raises the refusal.
        Call it on the event loop (like the guard itself), never from a worker thread."""
        refusal = self._take(credential)
        if refusal is not None:
            raise refusal
        try:
            yield
        finally:
            self._release(credential)

    def _take(self, credential: str) -> Refusal | None:
        mine = self.open.get(credential, 0)
        if mine >= self.per_credential:
            return Refusal(
                f"this credential already has {mine} requests open, the most one credential may hold "
                f"(the server allows {self.per_credential} per credential and {self.total} in all)",
                rule="too-many-open-requests",
                remedy="Wait for your open requests to finish (close idle connections), then retry.",
                per_credential=self.per_credential,
                total=self.total,
            )
        if self.open_total >= self.total:
            return Refusal(
                f"the server already has {self.open_total} requests open, the most it serves at once",
                rule="server-busy",
                remedy="Retry in a moment.",
                per_credential=self.per_credential,
                total=self.total,
            )
        self.open[credential] = mine + 1
        self.open_total += 1
        return None

    def _release(self, credential: str) -> None:
        self.open_total -= 1
        left = self.open[credential] - 1
        if left:
            self.open[credential] = left
        else:
            del self.open[credential]

    def _too_large(self, size: int) -> Refusal:
        return Refusal(
            f"the request body is {size} bytes, over this server's limit of {self.limit} bytes "
            f"(notes may be at most max_note_bytes = {self.max_note_bytes} bytes)",
            rule="request-too-large",
            remedy=f"Send a note of at most {self.max_note_bytes} bytes; split a longer text into several notes "
            "(or append_note in parts).",
            limit_bytes=self.limit,
            max_note_bytes=self.max_note_bytes,
        )

    def _too_slow(self) -> Refusal:
        return Refusal(
            f"the request body did not arrive within {self.body_timeout:g} seconds",
            rule="request-body-timeout",
            remedy="Send the whole request at once, then retry.",
        )

    @staticmethod
    def _no_stream() -> Refusal:
        return Refusal(
            "this server sends nothing on a standalone event stream (it is stateless), so GET /mcp is not served",
            rule="event-stream-not-served",
            remedy="Send each request as POST /mcp; the answer comes in the response.",
        )


async def refuse_host(host: str, path: str, send: Send) -> None:
    """The 421 of a foreign Host, on every route (:class:`notegate.doors.hostfirst.HostFirst`), in the shape
    of the door the path belongs to: a JSON-RPC error on /mcp, the contracts' JSON (``rule``, ``error``) on
    /contracts, plain text elsewhere (the console, the OAuth routes, /metrics, /healthz)."""
    refusal = wrong_host(host)
    if path in MCP_PATHS:
        await answer(send, refusal)
        return
    if path == "/contracts" or path.startswith("/contracts/"):  # contracts_http._refused's shape
        body = json.dumps({"status": "refused", "rule": refusal.rule, "error": refusal.explain()}).encode()
        kind = b"application/json"
    else:
        body = (refusal.explain() + "\n").encode("utf-8")
        kind = b"text/plain; charset=utf-8"
    headers = [
        (b"content-type", kind),
        (b"content-length", str(len(body)).encode("ascii")),
        (b"connection", b"close"),
        (b"x-content-type-options", b"nosniff"),
        (b"cache-control", b"no-store"),
        (b"content-security-policy", b"default-src 'none'"),
    ]
    await send({"type": "http.response.start", "status": refusal.status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def wrong_host(host: str) -> Refusal:
    return Refusal(
        f"the Host header {json.dumps(host)} is not one this server answers to (DNS-rebinding protection)",
        rule="host-not-allowed",
        remedy="Connect through localhost or 127.0.0.1, or add that host to [server] allowed_hosts in "
        "notegate.toml (a public address: set [server] public_url).",
        setting="allowed_hosts",
    )
