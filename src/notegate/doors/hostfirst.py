"""The Host allowlist, first on every route: the outermost middleware of the server's one ASGI app.

Why here and not per door: the MCP door, the contracts and the console each checked the Host header, but
``/metrics``, ``/healthz`` and the OAuth and well-known routes did not, so a page the owner opened, its name
rebound to 127.0.0.1 (DNS rebinding), read every environment's figures from ``/metrics`` as a loopback peer.
A check around the whole app cannot be forgotten by the next route: a request naming a foreign Host is
answered 421 ``[host-not-allowed]`` before any route, token or body is looked at.  The doors' own checks stay
behind it (the console's is stricter: its exact port).

Host names are compared lowercased (they are case-insensitive; browsers send them lowercased anyway), with
:func:`notegate.policy.decide_host`, the decision the MCP door and the SDK's own check make.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection
from typing import Any

from notegate.policy import decide_host
from notegate.services.eventlog import event

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]
ASGI = Callable[[Scope, Receive, Send], Awaitable[None]]
#: How much of a foreign Host header the refusal repeats.
SHOWN_HOST_CHARS = 100


class HostFirst:
    """ASGI middleware: a foreign Host gets ``refuse(host, path, send)`` (the 421), anything else the app.
    ``allowed_hosts`` None turns the check off (the SDK's DNS-rebinding protection is off too)."""

    def __init__(
        self,
        app: ASGI,
        *,
        allowed_hosts: Collection[str] | None,
        refuse: Callable[[str, str, Send], Awaitable[None]],
    ) -> None:
        self.app = app
        self.allowed = None if allowed_hosts is None else frozenset(h.lower() for h in allowed_hosts)
        self.refuse = refuse

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.allowed is None or scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)  # the lifespan, or no allowlist
            return
        host = next((v.decode("latin-1") for k, v in scope.get("headers", ()) if k == b"host"), None)
        if decide_host(host.lower() if host else host, self.allowed).allowed:
            await self.app(scope, receive, send)
            return
        event("refused", status=421, reason="host-not-allowed")
        if scope["type"] == "websocket":  # closed before it is accepted: the server answers 403
            await send({"type": "websocket.close", "code": 1008})
            return
        await self.refuse((host or "")[:SHOWN_HOST_CHARS], scope.get("path", ""), send)
