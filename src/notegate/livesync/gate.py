"""The LiveSync gate: an ASGI app in front of CouchDB that lets each enrolled device replicate the one notes
database and nothing else.

Before any request, the listener (doors/listen.py, the one ``notegate serve`` has) admits each connection at
``accept()`` from its address alone: a stranger over its budget of new connections is refused
``[too-many-new-connections]`` and then dropped in the kernel. An address from which a device's request passed
step 2 below is credited as a caller's: exempt from those budgets, its waiting connection never closed for a
stranger's.

Per request, in this order (each step's refusal names its rule, ``notegate.policy.livesync`` decides):

1. the bounds: open requests per device and in all, a body's size and the time it takes to arrive;
2. the device's token (``Authorization: Bearer``): the key is the one enrolled under the header's ``kid``,
   looked up at every request (a revocation counts at once), verified with that device's pinned algorithm
   only; then ``exp``/``iat``/``sub``; then its person must still belong to the environment, asked of the
   membership the MCP door asks (removing a member revokes their devices; this holds even for a row that
   a restore or a hand edit left live);
3. the request line (every segment decoded once, strictly) against the replication allow-list;
4. a JSON body's ids (no design document, reserved id or attachment, also inside bulk bodies);
5. forwarded to CouchDB with the gate's own member login: the device's token, cookies and any
   ``X-Auth-CouchDB-*`` header never reach CouchDB, so the ``_admin`` role LiveSync writes into every token
   counts for nothing. ``_changes`` is streamed through unbuffered, its long poll clamped to ``feed_seconds``.

Every request of a known device is audited (route kind and outcome, never ids or contents). The setup wizard's
``GET /_node/_local/_config`` is answered here, read-only, with what the gate itself enforces.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import json
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qsl, urlencode

import anyio
import httpx2 as httpx
from joserfc import jws
from joserfc.errors import JoseError
from joserfc.jwk import ECKey

import notegate.strictjson as strictjson
from notegate.auth.ratelimit import TokenBuckets, source_of
from notegate.doors.admission import credit_peer
from notegate.errors import NotegateError, sentence
from notegate.livesync.documents import MAX_ANSWER_BYTES, assigned_revisions, written_revisions
from notegate.livesync.settings import MAX_REMEMBERED_PEERS, LiveSyncConfig
from notegate.policy.decision import Decision
from notegate.policy.livesync import (
    METHOD_OVERRIDES,
    METHODS,
    GateDevice,
    Route,
    decide_body,
    decide_cors,
    decide_route,
    decide_token_claims,
    decide_token_header,
)
from notegate.services.eventlog import event

#: HTTP status of each refusal (403 for every other livesync-* rule).
STATUS = {
    "livesync-unauthenticated": 401,
    "livesync-basic-auth": 401,
    "livesync-token-malformed": 401,
    "livesync-token-key-in-header": 401,
    "livesync-device-unknown": 401,
    "livesync-device-revoked": 401,
    "livesync-token-algorithm": 401,
    "livesync-token-signature": 401,
    "livesync-token-expiry": 401,
    "livesync-token-issued-at": 401,
    "livesync-token-subject": 401,
    "livesync-method": 405,
    "livesync-method-override": 405,
    "livesync-path-invalid": 400,
    "livesync-path-encoding": 400,
    "livesync-query-invalid": 400,
    "livesync-body-not-json": 400,
    "livesync-body-invalid": 400,
    "livesync-body-too-large": 413,
    "request-body-timeout": 408,
    "too-many-open-requests": 429,
    "rate-limited": 429,
    "rate-limit-full": 429,
    "server-busy": 503,
    "livesync-upstream-unavailable": 502,
}
#: Request headers passed to CouchDB (everything else, above all Authorization, Cookie and X-Auth-CouchDB-*,
#: stays at the gate).
FORWARD_REQUEST_HEADERS = ("accept", "content-type")
#: Response headers passed back (never Set-Cookie or WWW-Authenticate: the device has no CouchDB session).
FORWARD_RESPONSE_HEADERS = ("content-type", "cache-control", "etag", "x-couch-request-id", "x-couchdb-body-time")
MAX_TOKEN_BYTES = 8192


class GateRefused(NotegateError):
    """A gate refusal: its rule and message, answered as CouchDB-style JSON."""


def _b64json(part: str) -> Any:
    padded = part + "=" * (-len(part) % 4)
    return json.loads(base64.urlsafe_b64decode(padded.encode("ascii")))


def parse_json_body(raw: bytes) -> Any:
    """The body as JSON, refusing repeated keys (CouchDB and the gate could read ``{"_id": a, "_id": b}``
    differently) and anything that is not UTF-8 JSON."""
    try:
        return strictjson.loads(raw)
    except (ValueError, RecursionError):
        raise GateRefused("the body is not UTF-8 JSON, or it repeats a key", rule="livesync-body-not-json") from None


def _deny(decision: Decision) -> GateRefused:
    return GateRefused(decision.reason, rule=decision.rule)


def upstream_headers(headers: dict[str, str], auth: str | None) -> dict[str, str]:
    """What CouchDB receives: the allow-listed headers and the gate's own login, never the device's token."""
    out = {name: headers[name] for name in FORWARD_REQUEST_HEADERS if name in headers}
    out["accept-encoding"] = "identity"
    if auth:
        out["authorization"] = auth
    return out


def config_answer(config: LiveSyncConfig) -> dict[str, Any]:
    """The read-only answer to the setup wizard's ``GET /_node/_local/_config``: what the gate enforces, in
    the keys LiveSync checks. ``admins`` is empty (no device is an admin); the sizes are the gate's own, so
    the wizard may warn that they are below its recommendation: the warning is true and harmless."""
    return {
        "admins": {},
        "chttpd": {
            "require_valid_user": "true",
            "enable_cors": "true",
            "max_http_request_size": str(config.max_body_bytes),
        },
        "chttpd_auth": {"require_valid_user": "true"},
        "httpd": {"WWW-Authenticate": 'Bearer realm="notegate-livesync"', "enable_cors": "true"},
        "couchdb": {"max_document_size": str(config.max_body_bytes)},
        "cors": {"credentials": "true", "origins": ",".join(config.cors_origins)},
    }


class Gate:
    """The ASGI app. ``lookup(kid)`` returns the device row (or None); ``audit(**row)`` records a request;
    ``members(login, environment, client_class)`` is the membership's Decision (auth/members.py
    ``Membership.check_caller``); ``record(kid, keys)`` notes which device wrote which note revisions (read
    from a replication body, or from CouchDB's answer to a direct write such as LiveSync's own
    DirectFileManipulator makes), for the bridge to commit as that device; all run in a worker thread (the state
    database is synchronous)."""

    def __init__(
        self,
        config: LiveSyncConfig,
        *,
        environment: str,
        lookup: Callable[[str], Any],
        audit: Callable[..., None],
        upstream_auth: str | None = None,
        record: Callable[[str, list[str]], None] | None = None,
        members: Callable[[str, str | None, str], Decision] | None = None,
        clock: Callable[[], float] = time.time,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.config = config
        self.environment = environment
        self.lookup = lookup
        self.audit = audit
        self.upstream_auth = upstream_auth
        self.record = record
        self.members = members
        self.clock = clock
        self.transport = transport
        self.client: httpx.AsyncClient | None = None
        self.open_total = 0
        self.open_per_device: dict[str, int] = {}
        # Failed logins per source: a source that spent its budget is refused before any lookup or signature
        # check until its bucket refills (``blocked`` holds when; bounded like the buckets).
        per_minute = config.failed_logins_per_minute
        self.failures = TokenBuckets(capacity=per_minute, rate=per_minute / 60.0, max_sources=MAX_REMEMBERED_PEERS)
        self.blocked: dict[str, float] = {}

    # ------------------------------------------------------------------------------------------ ASGI
    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        await self._http(scope, receive, send)

    async def _lifespan(self, receive, send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                self._client()
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                if self.client is not None:
                    await self.client.aclose()
                await send({"type": "lifespan.shutdown.complete"})
                return

    def _client(self) -> httpx.AsyncClient:
        if self.client is None:
            limits = httpx.Limits(max_connections=self.config.max_open_requests, max_keepalive_connections=16)
            self.client = httpx.AsyncClient(transport=self.transport, limits=limits, follow_redirects=False)
        return self.client

    async def _http(self, scope, receive, send) -> None:
        started = self.clock()
        device = None
        route: Route | None = None
        outcome = "ok"
        cors: list[tuple[bytes, bytes]] = []
        try:
            headers = _headers(scope)
            origin = headers.get("origin")
            if origin is not None and decide_cors(origin, self.config.cors_origins).allowed:
                cors = _cors_headers(origin)
            if scope["method"] == "OPTIONS":
                await self._preflight(send, origin, headers.get("access-control-request-method"), cors)
                return
            if self.open_total >= self.config.max_open_requests:
                raise GateRefused("the gate holds as many requests as it serves at once", rule="server-busy")
            source = self._source(scope, headers)
            if self.blocked.get(source, 0.0) > self.clock():
                raise GateRefused("this address sent too many refused tokens; it waits", rule="rate-limited")
            try:
                device = await self._authenticate(headers)
            except GateRefused as exc:
                if STATUS.get(exc.rule) == 401:
                    self._failed(source)
                raise
            if self.members is not None:  # after the signature: only the device itself learns it was removed
                verdict = await anyio.to_thread.run_sync(self.members, device.person, device.environment, "livesync")
                if not verdict.allowed:
                    raise _deny(verdict)
            credit_peer(scope)  # the listener knows this address as a device's now (doors/admission.py)
            held = self.open_per_device.get(device.kid, 0)
            if held >= self.config.max_open_requests_per_device:
                raise GateRefused("this device holds as many open requests as it may", rule="too-many-open-requests")
            self.open_total += 1
            self.open_per_device[device.kid] = held + 1
            try:
                route, status = await self._serve(scope, receive, send, headers, cors, device.kid)
                if status >= 400:
                    outcome = f"couchdb-{status}"
            finally:
                self.open_total -= 1
                self.open_per_device[device.kid] -= 1
                if not self.open_per_device[device.kid]:
                    del self.open_per_device[device.kid]
        except GateRefused as exc:
            outcome = exc.rule
            await _answer(send, STATUS.get(exc.rule, 403), _refusal_body(exc), extra=[*_challenge(exc.rule), *cors])
        if device is not None:
            row = {
                "now": started,
                "environment": self.environment,
                "login": device.person,
                "client": device.connector,
                "client_class": "livesync",
                "tier": None,
                "session": None,
                "tool": f"livesync:{route.kind if route else 'refused'}",
                "path": None,  # document ids are note paths: kept out of the audit like contents
                "outcome": outcome,
            }
            try:
                await anyio.to_thread.run_sync(lambda: self.audit(**row))
            except Exception as exc:
                event("livesync.audit-failed", error=type(exc).__name__)

    def _source(self, scope, headers: dict[str, str]) -> str:
        client = scope.get("client")
        peer = client[0] if client else None
        return source_of(peer, headers.get("x-forwarded-for"), self.config.trusted_proxies)

    def _failed(self, source: str) -> None:
        now = self.clock()
        verdict = self.failures.take(source, now)
        if not verdict.allowed:
            if len(self.blocked) >= 4096:
                self.blocked = {s: t for s, t in self.blocked.items() if t > now}
            if len(self.blocked) < 4096:
                self.blocked[source] = now + verdict.retry_after

    # ------------------------------------------------------------------------------------------ the token
    async def _authenticate(self, headers: dict[str, str]):
        auth = headers.get("authorization")
        if auth is None:
            raise GateRefused("the request carries no device token", rule="livesync-unauthenticated")
        scheme, _, token = auth.partition(" ")
        if scheme.lower() == "basic":
            raise GateRefused("a password (Basic auth) was sent", rule="livesync-basic-auth")
        if scheme.lower() != "bearer" or not token or len(token) > MAX_TOKEN_BYTES:
            raise GateRefused("the Authorization header is not one Bearer token", rule="livesync-token-malformed")
        token = token.strip()
        parts = token.split(".")
        if len(parts) != 3:
            raise GateRefused("the token is not a compact JWS", rule="livesync-token-malformed")
        try:
            header = _b64json(parts[0])
        except (ValueError, binascii.Error, UnicodeDecodeError, RecursionError):
            raise GateRefused("the token's header is not base64url JSON", rule="livesync-token-malformed") from None
        kid = header.get("kid") if isinstance(header, dict) else None
        row = await anyio.to_thread.run_sync(self.lookup, kid) if isinstance(kid, str) and len(kid) <= 64 else None
        facts = (
            GateDevice(
                kid=row.kid, environment=row.environment, algorithm=row.algorithm, revoked=row.public_key is None
            )
            if row is not None
            else None
        )
        verdict = decide_token_header(header, facts, self.environment)
        if not verdict.allowed:
            raise _deny(verdict)
        try:
            key = ECKey.import_key(row.public_key)
            verified = jws.deserialize_compact(token, key, algorithms=[row.algorithm])
            claims = json.loads(verified.payload)
        except (JoseError, ValueError, UnicodeDecodeError):
            raise GateRefused(
                "the token's signature does not verify with the device's key", rule="livesync-token-signature"
            ) from None
        verdict = decide_token_claims(
            claims,
            facts,
            now=self.clock(),
            max_lifetime=self.config.max_token_seconds,
            skew=self.config.clock_skew_seconds,
        )
        if not verdict.allowed:
            raise _deny(verdict)
        return row

    # ------------------------------------------------------------------------------------------ the request
    async def _preflight(self, send, origin: str | None, method: str | None, cors) -> None:
        """A CORS preflight (no token: browsers send none) from one of Obsidian's origins, or the refusal."""
        verdict = decide_cors(origin, self.config.cors_origins, method or "")
        if not verdict.allowed:
            raise _deny(verdict)
        allow_headers = [
            (b"access-control-allow-methods", ", ".join(sorted(METHODS)).encode()),
            (b"access-control-allow-headers", b"authorization, content-type, accept"),
            (b"access-control-max-age", b"600"),
        ]
        await send({"type": "http.response.start", "status": 204, "headers": [*cors, *allow_headers]})
        await send({"type": "http.response.body", "body": b"", "more_body": False})

    async def _serve(self, scope, receive, send, headers: dict[str, str], cors, kid: str) -> tuple[Route, int]:
        """Serve one authenticated request: the route it took and the status CouchDB (or the gate) gave."""
        method = scope["method"]
        for name in METHOD_OVERRIDES:
            if name in headers:
                raise GateRefused(f"the request asks for another method ({name})", rule="livesync-method-override")
        raw_path = scope.get("raw_path") or scope["path"].encode("utf-8")
        raw_path = raw_path.decode("latin-1").partition("?")[0]
        raw_query = scope.get("query_string", b"").decode("latin-1")
        verdict = decide_route(
            method, raw_path, raw_query, self.config.database, maintenance=self.config.allow_maintenance
        )
        if not verdict.decision.allowed or verdict.route is None:
            raise _deny(verdict.decision)
        route = verdict.route
        body = b""
        parsed = None
        if method in ("POST", "PUT"):
            body = await self._body(receive, headers)
            parsed = parse_json_body(body) if body else None
            if method == "PUT" and parsed is None:
                raise GateRefused("a PUT carries no document", rule="livesync-body-invalid")
            check = decide_body(route, parsed)
            if not check.allowed:
                raise _deny(check)
        if route.kind == "config":
            await _answer(send, 200, config_answer(self.config), extra=cors)
            return route, 200
        if route.kind == "changes":
            raw_query = self._clamp_feed(raw_query)
        direct = route.kind in ("bulk_docs", "document") and method in ("POST", "PUT") and self.record is not None
        answer: list[bytes] | None = [] if direct else None  # CouchDB's answer names the revisions it assigned
        status = await self._forward(send, method, raw_path, raw_query, body, headers, route, cors, answer)
        if direct and status < 300 and self.record is not None:
            written = written_revisions(parsed) if route.kind == "bulk_docs" else []
            written += assigned_revisions(parsed, b"".join(answer or []))
            if written:
                await anyio.to_thread.run_sync(self.record, kid, written)
        return route, status

    async def _body(self, receive, headers: dict[str, str]) -> bytes:
        if headers.get("content-encoding", "identity") != "identity":
            raise GateRefused("the body is compressed; the gate reads bodies as JSON", rule="livesync-body-not-json")
        type_ = headers.get("content-type", "application/json").split(";")[0].strip().lower()
        if type_ != "application/json":
            raise GateRefused(f"the body is {type_[:40]}, not JSON", rule="livesync-body-not-json")
        limit = self.config.max_body_bytes
        declared = headers.get("content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > limit):
            raise GateRefused(f"the body is larger than {limit} bytes", rule="livesync-body-too-large")
        chunks: list[bytes] = []
        size = 0
        try:
            with anyio.fail_after(self.config.body_timeout_seconds):
                while True:
                    message = await receive()
                    if message["type"] == "http.disconnect":
                        raise GateRefused("the device went away mid-body", rule="request-body-timeout")
                    chunk = message.get("body", b"")
                    size += len(chunk)
                    if size > limit:
                        raise GateRefused(f"the body is larger than {limit} bytes", rule="livesync-body-too-large")
                    chunks.append(chunk)
                    if not message.get("more_body"):
                        break
        except TimeoutError:
            raise GateRefused("the body did not arrive in time", rule="request-body-timeout") from None
        return b"".join(chunks)

    def _clamp_feed(self, raw_query: str) -> str:
        """A long poll held at most ``feed_seconds`` (its ``heartbeat`` dropped: CouchDB keeps a feed with a
        heartbeat open forever); the device polls again, as PouchDB does after every answer."""
        pairs = [(k, v) for k, v in parse_qsl(raw_query, keep_blank_values=True) if k != "heartbeat"]
        if dict(pairs).get("feed") == "longpoll":
            cap = self.config.feed_seconds * 1000
            asked = dict(pairs).get("timeout", "")
            value = min(int(asked), cap) if asked.isdigit() else cap
            pairs = [(k, v) for k, v in pairs if k != "timeout"] + [("timeout", str(value))]
        return urlencode(pairs)

    async def _forward(
        self, send, method, raw_path, raw_query, body, headers, route: Route, cors, answer: list[bytes] | None = None
    ) -> int:
        """Stream CouchDB's answer to the device (``answer``, when given, keeps its first MAX_ANSWER_BYTES too)."""
        url = self.config.couchdb_url.rstrip("/") + raw_path + (f"?{raw_query}" if raw_query else "")
        read = self.config.upstream_seconds + (self.config.feed_seconds if route.kind == "changes" else 0)
        timeout = httpx.Timeout(connect=5.0, read=read, write=self.config.upstream_seconds, pool=5.0)
        client = self._client()
        request = client.build_request(
            method,
            url,
            content=body if method in ("POST", "PUT") else None,
            headers=upstream_headers(headers, self.upstream_auth),
            timeout=timeout,
        )
        try:
            response = await client.send(request, stream=True)
        except httpx.HTTPError as exc:
            raise GateRefused(
                f"CouchDB did not answer ({type(exc).__name__})", rule="livesync-upstream-unavailable"
            ) from None
        try:
            out = [
                (k.encode("latin-1"), v.encode("latin-1"))
                for k, v in response.headers.items()
                if k.lower() in FORWARD_RESPONSE_HEADERS
            ]
            await send({"type": "http.response.start", "status": response.status_code, "headers": [*out, *cors]})
            try:
                with anyio.fail_after(read + self.config.upstream_seconds):
                    async for chunk in response.aiter_raw():
                        if answer is not None and sum(map(len, answer)) <= MAX_ANSWER_BYTES:
                            answer.append(chunk)
                        await send({"type": "http.response.body", "body": chunk, "more_body": True})
                await send({"type": "http.response.body", "body": b"", "more_body": False})
            except (httpx.HTTPError, TimeoutError):
                event("livesync.upstream-cut", route=route.kind)
                await _end(send)
            except OSError:  # the device went away mid-stream (uvicorn's ClientDisconnected): nothing to send
                event("livesync.device-gone", route=route.kind)
        finally:
            await response.aclose()
        return response.status_code


def _headers(scope) -> dict[str, str]:
    out: dict[str, str] = {}
    for raw_name, raw_value in scope.get("headers", []):
        name = raw_name.decode("latin-1").lower()
        value = raw_value.decode("latin-1")
        if name == "authorization" and name in out:
            raise GateRefused("the request carries two Authorization headers", rule="livesync-token-malformed")
        out[name] = value if name not in out else out[name] + ", " + value
    return out


async def _end(send) -> None:
    """Close a streamed answer whose upstream was cut (the device sees a short body and retries)."""
    with contextlib.suppress(OSError):
        await send({"type": "http.response.body", "body": b"", "more_body": False})


def _cors_headers(origin: str) -> list[tuple[bytes, bytes]]:
    return [
        (b"access-control-allow-origin", origin.encode("latin-1")),
        (b"access-control-allow-credentials", b"true"),
        (b"vary", b"Origin"),
    ]


def _refusal_body(exc: GateRefused) -> dict[str, str]:
    error = "unauthorized" if STATUS.get(exc.rule) == 401 else "forbidden"
    return {"error": error, "reason": sentence(exc.explain()), "rule": exc.rule}


def _challenge(rule: str) -> list[tuple[bytes, bytes]]:
    return [(b"www-authenticate", b'Bearer realm="notegate-livesync"')] if STATUS.get(rule) == 401 else []


async def _answer(send, status: int, payload: dict, *, extra: list[tuple[bytes, bytes]] = ()) -> None:
    body = json.dumps(payload).encode("utf-8")
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()), *extra]
    try:
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body, "more_body": False})
    except (OSError, RuntimeError):  # the device went away: nothing to tell it
        pass
