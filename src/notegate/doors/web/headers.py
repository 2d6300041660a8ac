"""Security headers for every console page, and the Host check in front of them.

Invariants:

* Every answer of a console route (pages, JSON, static files, redirects, refusals) carries a strict CSP
  with no inline script or style (scripts and styles only from this server), ``frame-ancestors 'none'``,
  ``Referrer-Policy: no-referrer``, ``X-Content-Type-Options: nosniff`` and ``Cache-Control: no-store``.
  A handler may widen only ``form-action`` (the consent page must let its form's redirect reach the
  client's registered redirect URI); it sets its own CSP from :func:`csp` and the middleware keeps it.
* A request whose Host is not one this console answers to is refused before any handler (DNS rebinding).
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Iterable
from typing import Any
from urllib.parse import urlsplit

from notegate.errors import NotegateError

Scope = dict[str, Any]
ASGI = Callable[[Scope, Callable[[], Awaitable[dict]], Callable[[dict], Awaitable[None]]], Awaitable[None]]

_SAFE_SCHEME = re.compile(r"[a-z][a-z0-9+.-]{0,31}")
_SAFE_NETLOC = re.compile(r"[A-Za-z0-9.\-]{1,253}(:[0-9]{1,5})?|\[[0-9A-Fa-f:.]{2,45}\](:[0-9]{1,5})?")


def csp(form_targets: Iterable[str] = ()) -> str:
    """The console's Content-Security-Policy; ``form_targets`` are extra origins a form may submit to."""
    forms = " ".join(["'self'", *form_targets])
    return (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
        f"form-action {forms}; frame-ancestors 'none'; base-uri 'none'"
    )


def csp_source(url: str) -> str | None:
    """A CSP source naming exactly the origin of ``url`` (``https://claude.ai``, ``cursor:``), or None when
    it cannot be written safely (so the redirect is blocked rather than the policy widened)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if not _SAFE_SCHEME.fullmatch(scheme):
        return None
    if scheme in ("http", "https"):
        return f"{scheme}://{parts.netloc}" if _SAFE_NETLOC.fullmatch(parts.netloc) else None
    return f"{scheme}:"


def provider_csp(providers: Iterable[Any]) -> str:
    """The CSP of a page with "sign in with a provider" forms: their POST answers with a redirect to the
    provider's authorization endpoint, and a browser applies form-action to that redirect too, so each offered
    provider's issuer origin is allowed (docs/how-to/members.md: the endpoint must be on the issuer's origin)."""
    return csp([source for p in providers if (source := csp_source(p.issuer))])


HOST_REFUSED = NotegateError("this console does not answer to that Host name", rule="web-host-refused")

STATIC_HEADERS: tuple[tuple[bytes, bytes], ...] = (
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-content-type-options", b"nosniff"),
    (b"cache-control", b"no-store"),
    (b"cross-origin-opener-policy", b"same-origin"),
)


class SecurityHeaders:
    """ASGI middleware around one console route."""

    def __init__(self, app: ASGI, *, allowed_hosts: frozenset[str]) -> None:
        self.app = app
        self.allowed_hosts = allowed_hosts

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        host = next((v.decode("latin-1") for k, v in scope.get("headers", ()) if k == b"host"), "").lower()

        async def send_with_headers(message: dict) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", ()))
                names = {k.lower() for k, _ in headers}
                if b"content-security-policy" not in names:
                    headers.append((b"content-security-policy", csp().encode("ascii")))
                headers += [(k, v) for k, v in STATIC_HEADERS if k not in names]
                message = {**message, "headers": headers}
            await send(message)

        if host not in self.allowed_hosts:
            body = HOST_REFUSED.explain().encode("utf-8")
            await send_with_headers(
                {
                    "type": "http.response.start",
                    "status": 421,
                    "headers": [(b"content-type", b"text/plain; charset=utf-8"), (b"connection", b"close")],
                }
            )
            await send({"type": "http.response.body", "body": body})
            return
        await self.app(scope, receive, send_with_headers)
