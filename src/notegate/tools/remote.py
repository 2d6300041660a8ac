"""Remote upstreams: an MCP server elsewhere (Streamable HTTP), reached with an OAuth grant the tools process
holds for one mount — one upstream account — so two members never share one token.

Theory of operation
-------------------
* The tools process is the OAuth client. It uses the official SDK's ``OAuthClientProvider`` (protected
  resource discovery, RFC 8414 metadata, a Client ID Metadata Document when the server supports it and the
  deployment has an https address to serve one, dynamic registration otherwise, PKCE S256, the ``resource``
  indicator of RFC 8707, refresh before expiry) over a storage that seals everything it keeps.
* :class:`SealedGrant` is that storage. Tokens (access and refresh) and the client registration are sealed
  to the tools process's recipient under the mount's name and the reserved names :data:`GRANT` and
  :data:`CLIENT` (never environment variable names, so never handed to a local upstream); only this process
  opens them (:class:`~notegate.tools.sealing.Opener`). The knowledge service, which starts the grant and
  relays the browser's return, sees the authorization code — useless without the PKCE verifier, which never
  leaves this process — and nothing else.
* :class:`RemoteUpstream` is a supervised upstream like a local one (same states, backoff, ping, per-call
  time bound), whose session is a Streamable HTTP client carrying the provider. Without a grant it waits in
  the state ``needs-grant``; a provider that would need a person (the grant was revoked, the refresh token
  expired) stops the session with ``tools-oauth-grant-needed`` instead of waiting for one.
* Bounds: every request has ``call_seconds`` at most; every response body is cut at ``max_line_bytes``
  (:class:`BoundedTransport`, and the SDK's own SSE event bound at the same size); no redirect is followed
  off the server's origin (the SDK's rule); no proxy from the environment. All of it runs on this process's
  event loop: an outbound fetch holds no worker thread.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import anyio
import httpx2
from mcp import ClientSession
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata, OAuthToken
from pydantic import AnyUrl

from notegate.errors import NotegateError
from notegate.tools.oauth_names import CLIENT, CLIENT_NAME, GRANT
from notegate.tools.sealing import SEAL_PURPOSE, Opener, seal
from notegate.tools.upstream import Upstream


class BoundedStream(httpx2.AsyncByteStream):
    def __init__(self, inner: httpx2.AsyncByteStream, limit: int) -> None:
        self.inner = inner
        self.limit = limit

    async def __aiter__(self) -> AsyncIterator[bytes]:
        seen = 0
        async for chunk in self.inner:
            seen += len(chunk)
            if seen > self.limit:
                raise httpx2.ReadError(f"the remote answered more than {self.limit} bytes")
            yield chunk

    async def aclose(self) -> None:
        await self.inner.aclose()


class BoundedTransport(httpx2.AsyncBaseTransport):
    """Every response body cut at ``limit`` bytes as it arrives (never read whole first)."""

    def __init__(self, limit: int) -> None:
        self.inner = httpx2.AsyncHTTPTransport(trust_env=False)
        self.limit = limit

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        response = await self.inner.handle_async_request(request)
        response.stream = BoundedStream(response.stream, self.limit)  # type: ignore[arg-type]
        return response

    async def aclose(self) -> None:
        await self.inner.aclose()


def http_client(seconds: float, max_bytes: int, auth: httpx2.Auth | None = None) -> httpx2.AsyncClient:
    return httpx2.AsyncClient(
        auth=auth, timeout=seconds, transport=BoundedTransport(max_bytes), trust_env=False, follow_redirects=False
    )


def refresh_margin(expires_in: int | None) -> float:
    """How long before an access token's end the gateway refreshes it: a quarter of its life, at most a
    minute (a request sent in the last moment would meet a 401)."""
    return min(60.0, (expires_in or 0) / 4)


class SealedGrant:
    """The SDK's TokenStorage for one mount: sealed in the state database, opened by this process only."""

    def __init__(self, state, opener: Opener, mount: str, clock: Callable[[], float] = time.time) -> None:
        self.state = state
        self.opener = opener
        self.mount = mount
        self.clock = clock
        #: When the stored access token expires (seconds since the epoch), as sealed with it.
        self.expires_at: float | None = None
        #: The provider's context, to tell it the loaded token's expiry (the SDK does not keep it across a
        #: restart, so it would send an expired token, get a 401, and ask for a person instead of refreshing).
        self.context: Any = None
        #: Set after a 401 with a live refresh token: the next start refreshes before anything else.
        self.force_refresh = False

    def _open(self, name: str) -> dict[str, Any] | None:
        sealed = self.state.sealed_credentials(self.mount).get(name)
        if sealed is None:
            return None
        return json.loads(self.opener.open(self.mount, name, sealed))

    def _store(self, name: str, value: dict[str, Any]) -> None:
        recipient = self.state.tools_key(SEAL_PURPOSE)
        if not recipient:
            raise NotegateError("no seal key is stored", rule="tools-seal-key-missing")
        text = json.dumps(value, separators=(",", ":"))
        self.state.store_sealed_credential(self.mount, name, seal(recipient, self.mount, name, text), self.clock())

    def has_grant(self) -> bool:
        return GRANT in self.state.sealed_credentials(self.mount)

    async def get_tokens(self) -> OAuthToken | None:
        data = await anyio.to_thread.run_sync(self._open, GRANT)
        if data is None:
            return None
        self.expires_at = data.get("expires_at")
        token = OAuthToken.model_validate(data["token"])
        if self.context is not None:
            if self.force_refresh:
                self.context.token_expiry_time = 0.0
            elif self.expires_at is not None:
                self.context.token_expiry_time = self.expires_at - refresh_margin(token.expires_in)
        self.force_refresh = False
        return token

    def refreshable(self) -> bool:
        data = self._open(GRANT)
        return bool(data and data.get("token", {}).get("refresh_token"))

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.expires_at = self.clock() + tokens.expires_in if tokens.expires_in else None
        if self.context is not None and self.context.token_expiry_time:  # refresh a little before the end
            self.context.token_expiry_time -= refresh_margin(tokens.expires_in)
        value = {"token": tokens.model_dump(mode="json", exclude_none=True), "expires_at": self.expires_at}
        await anyio.to_thread.run_sync(self._store, GRANT, value)

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        data = await anyio.to_thread.run_sync(self._open, CLIENT)
        return OAuthClientInformationFull.model_validate(data) if data is not None else None

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        await anyio.to_thread.run_sync(self._store, CLIENT, client_info.model_dump(mode="json", exclude_none=True))


def client_metadata(redirect_uri: str, mount: str) -> OAuthClientMetadata:
    return OAuthClientMetadata(
        client_name=f"{CLIENT_NAME} ({mount})",
        redirect_uris=[AnyUrl(redirect_uri)],
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        token_endpoint_auth_method="none",  # noqa: S106 - a public client: PKCE, no secret
    )


def provider(
    url: str,
    storage: SealedGrant,
    redirect_uri: str,
    *,
    redirect_handler: Callable[[str], Awaitable[None]],
    callback_handler: Callable[[], Awaitable[AuthorizationCodeResult]],
    client_document: str | None,
) -> OAuthClientProvider:
    made = OAuthClientProvider(
        url,
        client_metadata(redirect_uri, storage.mount),
        storage,
        redirect_handler=redirect_handler,
        callback_handler=callback_handler,
        client_metadata_url=client_document,
    )
    return made


async def _no_callback() -> AuthorizationCodeResult:  # never reached: _needs_person raises first
    raise NotegateError("no authorization is under way", rule="tools-oauth-grant-needed")


@dataclass
class RemoteUpstream(Upstream):
    """A mount's remote upstream: the same supervision as a local one, over Streamable HTTP with its grant."""

    url: str = ""
    storage: SealedGrant | None = None
    redirect_uri: str = ""
    client_document: str | None = None
    call_seconds: float = 30.0
    granted: anyio.Event = field(default_factory=anyio.Event)
    _needs_grant: bool = False
    _refresh_tried: bool = False

    def state(self) -> str:
        if self.status == "needs-grant":
            return "needs-grant"
        return super().state()

    async def _serve_once(self) -> None:
        assert self.storage is not None
        if self._needs_grant or not await anyio.to_thread.run_sync(self.storage.has_grant):
            self.status = "needs-grant"
            self.crashes = 0
            self.granted = anyio.Event()
            await self.granted.wait()
            self._needs_grant = False
            self.storage.expires_at = None
        auth = provider(
            self.url,
            self.storage,
            self.redirect_uri,
            redirect_handler=self._needs_person,
            callback_handler=_no_callback,
            client_document=self.client_document,
        )
        self.storage.context = auth.context
        async with (
            http_client(self.call_seconds, self.max_line_bytes, auth) as http,
            streamable_http_client(self.url, http_client=http, max_sse_event_size=self.max_line_bytes) as (read, write),
            ClientSession(read, write) as session,
        ):
            with anyio.fail_after(self.call_seconds):
                await session.initialize()
                listing = await session.list_tools()
            self._refresh_tried = False
            await self._serving(session, list(listing.tools))

    async def _needs_person(self, _url: str) -> None:
        """The provider wants the owner's browser: never here, mid-call. After a 401 with a refresh token
        held, the next start refreshes first (once); after that, the owner must grant again."""
        assert self.storage is not None
        if not self._refresh_tried and await anyio.to_thread.run_sync(self.storage.refreshable):
            self._refresh_tried = True
            self.storage.force_refresh = True
            raise NotegateError("the upstream refused the access token; refreshing", rule="tools-upstream-down")
        self._needs_grant = True
        self.last_refusal = "tools-oauth-grant-needed"
        raise NotegateError(
            "the upstream asks for its owner's authorization again (the grant was revoked or expired)",
            rule="tools-oauth-grant-needed",
        )

    def grant_stored(self) -> None:
        """A grant was just stored: start now (no wait for the next backoff)."""
        self.granted.set()
