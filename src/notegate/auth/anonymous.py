"""What an anonymous caller may cost the OAuth endpoints: requests per source, body bytes, field lengths.

Theory of operation
-------------------
notegate's authorization server answers strangers by design (a hosted chat app registers and asks for
consent before anyone has a token), so every endpoint a stranger reaches is bounded here, before its handler
does any work:

* **rate** (:class:`AnonymousLimits`, ASGI middleware in front of the whole app): each source address
  (:func:`notegate.auth.ratelimit.source_of`) has a token bucket for ``POST /register``
  (``registrations_per_hour``) and one for ``/authorize``, ``/token``, ``/revoke`` and the consent page's
  ``POST`` (``anonymous_requests_per_minute``); over it, HTTP 429 ``[rate-limited]`` with ``Retry-After``.
  The tables are bounded (``rate_limit_sources``).  Other paths pass through untouched.
* **bytes** (:class:`BodyCap`): a form or registration body over :data:`MAX_FORM_BYTES` /
  :data:`MAX_REGISTRATION_BYTES`, or one that does not arrive within ``body_timeout_seconds``, is refused
  before it is parsed (413 ``[oauth-body-too-large]``, 408 ``[request-body-timeout]``).
* **fields** (:func:`field_refusal`): every client-chosen value the server stores (``state``, ``resource``,
  ``scope``, ``redirect_uri``, ``client_id``, a registration's ``client_name`` and redirect URIs) has a
  length limit in :data:`FIELD_LIMITS`; over it, 400 ``[oauth-field-too-long]`` and nothing is stored.

Refusals use the OAuth error JSON the endpoints already answer with (``error``, ``error_description``), the
description being the one "Refused [rule]: ..." sentence.
"""

from __future__ import annotations

import json
import logging
import math
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any

import anyio
from starlette.middleware import Middleware

from notegate.asgibody import replayed
from notegate.auth.ratelimit import TokenBuckets, source_of
from notegate.errors import NotegateError

log = logging.getLogger("notegate.oauth")

Scope = dict[str, Any]
Message = dict[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]

#: The largest /authorize, /token or /revoke form read (their fields are short: see FIELD_LIMITS).
MAX_FORM_BYTES = 16 << 10
#: The largest registration (RFC 7591 metadata) read: it is stored as sent, so it is kept small.
MAX_REGISTRATION_BYTES = 8 << 10
#: Longest value of each client-chosen field an anonymous endpoint stores (characters).  ``state`` is opaque
#: to the server and echoed back; hosted clients send 32-100 characters, signed ones a few hundred.
FIELD_LIMITS: Mapping[str, int] = {
    "state": 1024,
    "resource": 512,
    "scope": 256,
    "redirect_uri": 512,
    "client_id": 512,
    "code_challenge": 128,
    "client_name": 200,
}
#: Redirect URIs one registration may list.
MAX_REDIRECT_URIS = 10

#: (method, path) of each anonymous endpoint → the bucket table that counts it.
ENDPOINTS: Mapping[tuple[str, str], str] = {
    ("POST", "/register"): "register",
    ("GET", "/authorize"): "oauth",
    ("POST", "/authorize"): "oauth",
    ("POST", "/token"): "oauth",
    ("POST", "/revoke"): "oauth",
    ("POST", "/oauth/consent"): "oauth",
    # logging in through an OpenID Connect provider, and an invitation's join (docs/how-to/members.md)
    ("GET", "/oidc/callback"): "oauth",
}
#: (method, path prefix) of anonymous endpoints with a path parameter → their table: starting a provider login
#: keeps a pending row (bounded overall by auth/oidc.MAX_PENDING, per source here), joining spends a ceremony.
ENDPOINT_PREFIXES: tuple[tuple[str, str, str], ...] = (("POST", "/oidc/", "oauth"), ("POST", "/join/", "oauth"))
NO_STORE = ((b"cache-control", b"no-store"), (b"pragma", b"no-cache"))


def oauth_error(
    status: int, error: str, refused: NotegateError, headers: Iterable[tuple[bytes, bytes]] = ()
) -> Callable[[Send], Awaitable[None]]:
    """An OAuth error answer (``{"error", "error_description"}``) as a function of ``send``."""
    body = json.dumps({"error": error, "error_description": refused.explain()}).encode("utf-8")

    async def respond(send: Send) -> None:
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode("ascii")),
                    *NO_STORE,
                    *headers,
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})

    return respond


def field_refusal(params: Mapping[str, Any], names: Iterable[str] = FIELD_LIMITS) -> NotegateError | None:
    """The refusal for the first field of ``params`` over its limit, or None.  Pure."""
    for name in names:
        value = params.get(name)
        limit = FIELD_LIMITS[name]
        if isinstance(value, str) and len(value) > limit:
            return NotegateError(
                f"the field {name} is {len(value)} characters, over its limit of {limit}", rule="oauth-field-too-long"
            )
    return None


def registration_refusal(metadata: Any) -> NotegateError | None:
    """The refusal for a registration whose stored fields are too long or too many, or None.  Pure."""
    if not isinstance(metadata, dict):
        return None  # the SDK's validation answers it
    uris = metadata.get("redirect_uris")
    if isinstance(uris, list):
        if len(uris) > MAX_REDIRECT_URIS:
            return NotegateError(
                f"the registration lists {len(uris)} redirect URIs, over the limit of {MAX_REDIRECT_URIS}",
                rule="oauth-field-too-long",
            )
        for uri in uris:
            refused = field_refusal({"redirect_uri": uri}, ("redirect_uri",))
            if refused is not None:
                return refused
    return field_refusal(metadata, ("client_name", "scope"))


class BodyCap:
    """Reads a request body up to ``limit`` bytes within ``seconds``, then hands the app the whole of it.

    Why not the SDK's limit: it answers a plain-text 413 a client cannot read as OAuth, and it waits for a
    slow body as long as the sender likes."""

    def __init__(self, app: App, limit: int, seconds: float) -> None:
        self.app = app
        self.limit = limit
        self.seconds = seconds

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] not in ("POST", "PUT"):
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        size = 0
        complete = False
        with anyio.move_on_after(self.seconds):
            while True:
                message = await receive()
                if message["type"] != "http.request":
                    return  # the client went away
                chunk = message.get("body", b"")
                size += len(chunk)
                if size > self.limit:
                    refused = NotegateError(f"the request body is over {self.limit} bytes", rule="oauth-body-too-large")
                    await oauth_error(413, "invalid_request", refused, ((b"connection", b"close"),))(send)
                    return
                chunks.append(chunk)
                if not message.get("more_body", False):
                    complete = True
                    break
        if not complete:
            refused = NotegateError(
                f"the request body did not arrive within {self.seconds:g} seconds", rule="request-body-timeout"
            )
            await oauth_error(408, "invalid_request", refused, ((b"connection", b"close"),))(send)
            return
        await self.app(scope, replayed(b"".join(chunks), receive), send)


class AnonymousLimits:
    """ASGI middleware: a per-source token bucket in front of each anonymous OAuth endpoint (see the module)."""

    def __init__(
        self,
        app: App,
        *,
        per_minute: int,
        registrations_per_hour: int,
        max_sources: int,
        trusted_proxies: Iterable[str] = (),
        behind_proxy: bool = False,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.app = app
        self.clock = clock
        self.trusted_proxies = tuple(trusted_proxies)
        self.tables = {
            "oauth": TokenBuckets(capacity=per_minute, rate=per_minute / 60.0, max_sources=max_sources),
            "register": TokenBuckets(
                capacity=registrations_per_hour, rate=registrations_per_hour / 3600.0, max_sources=max_sources
            ),
        }
        if behind_proxy and not self.trusted_proxies:
            log.warning(
                "public_url is set but trusted_proxies is empty: every anonymous OAuth request counts against "
                "the proxy's one address; name the proxy in [server] trusted_proxies"
            )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        method, path = scope.get("method", ""), scope.get("path", "")
        name = ENDPOINTS.get((method, path)) or next(
            (t for m, prefix, t in ENDPOINT_PREFIXES if m == method and path.startswith(prefix)), ""
        )
        table = self.tables.get(name)
        if scope["type"] != "http" or table is None:
            await self.app(scope, receive, send)
            return
        peer = scope.get("client")
        forwarded = None
        for key, value in scope.get("headers", ()):
            if key == b"x-forwarded-for":
                forwarded = value.decode("latin-1")  # the last one: a proxy appends its own header
        source = source_of(peer[0] if peer else None, forwarded, self.trusted_proxies)
        verdict = table.take(source, self.clock())
        if verdict.allowed:
            await self.app(scope, receive, send)
            return
        wait = max(1, math.ceil(verdict.retry_after))
        refused = NotegateError(
            f"too many requests to {scope['path']} from one address; the next is allowed in {wait} s"
            if verdict.rule == "rate-limited"
            else f"too many addresses are calling {scope['path']} at once; retry in {wait} s",
            rule=verdict.rule,
        )
        headers = ((b"retry-after", str(wait).encode("ascii")), (b"connection", b"close"))
        await oauth_error(429, "temporarily_unavailable", refused, headers)(send)


def anonymous_limits(config: Any) -> Middleware:
    """The app's :class:`AnonymousLimits`, from the [server] settings of ``config``."""
    return Middleware(
        AnonymousLimits,
        per_minute=config.anonymous_requests_per_minute,
        registrations_per_hour=config.registrations_per_hour,
        max_sources=config.rate_limit_sources,
        trusted_proxies=config.trusted_proxies,
        behind_proxy=bool(config.public_url),
    )
