"""An owner's upstream OAuth grant, under way: started from the console (or ``notegate tools oauth``), finished
when the authorization server sends the owner's browser back to the knowledge service.

How a grant runs, in the tools process: :meth:`GrantFlows.start` opens a session to the remote server with a
fresh provider over the mount's :class:`~notegate.tools.remote.SealedGrant` (fresh: an old grant's tokens and
registration are not reused, so a re-grant really asks again). The server answers 401; the SDK's provider
discovers the authorization server, registers (or names its Client ID Metadata Document), makes the PKCE pair
and the state, and hands the authorization URL to our redirect handler, which gives it back to the owner's
page. The flow then waits (at most :data:`FLOW_SECONDS`) in the callback handler. The knowledge service relays
the browser's return (``state``, ``code``, ``iss``) to :meth:`finish`; the provider checks the state and the
issuer, exchanges the code with its verifier, and stores the tokens sealed. Only then is the mount's upstream
told to start with them.

At most one flow per mount: a new start cancels the one before. Nothing of a flow is stored but what the
provider stores (sealed); a tools process restarted mid-flow forgets it (start again).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from urllib.parse import parse_qs, urlsplit

import anyio
from anyio.abc import TaskGroup
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import AuthorizationCodeResult

from notegate.errors import NotegateError
from notegate.tools.remote import RemoteUpstream, SealedGrant, http_client, provider

log = logging.getLogger(__name__)

#: How long the owner has, from the authorization URL to the browser's return.
FLOW_SECONDS = 600.0
#: How long a start may take to reach the authorization URL (discovery and registration, over the network).
START_SECONDS = 30.0


class FreshGrant(SealedGrant):
    """The mount's sealed storage, read as empty: a new grant registers and authorizes again."""

    async def get_tokens(self):
        return None

    async def get_client_info(self):
        return None


@dataclass
class Flow:
    mount: str
    environment: str
    url_ready: anyio.Event = field(default_factory=anyio.Event)
    returned: anyio.Event = field(default_factory=anyio.Event)
    done: anyio.Event = field(default_factory=anyio.Event)
    authorization_url: str = ""
    state: str = ""
    result: AuthorizationCodeResult | None = None
    error: str | None = None
    cancel: anyio.CancelScope = field(default_factory=anyio.CancelScope)


class GrantFlows:
    def __init__(self, gateway) -> None:
        self.gateway = gateway
        self.by_mount: dict[str, Flow] = {}
        self.task_group: TaskGroup | None = None

    def remote(self, mount: str, environment: str) -> RemoteUpstream:
        upstream = self.gateway.upstreams.get(mount)
        known = self.gateway.mounts.get(mount)
        if known is None or known.environment != environment:
            raise NotegateError("no such mount", rule="tools-hidden")
        if not isinstance(upstream, RemoteUpstream):
            raise NotegateError(f"the mount '{mount}' is not a remote upstream", rule="tools-oauth-not-remote")
        return upstream

    async def start(self, mount: str, environment: str, redirect_uri: str, client_document: str | None) -> str:
        upstream = self.remote(mount, environment)
        old = self.by_mount.pop(mount, None)
        if old is not None:
            old.cancel.cancel()
        flow = Flow(mount, environment)
        self.by_mount[mount] = flow
        if self.task_group is None or upstream.storage is None:  # an app served without its lifespan
            raise NotegateError("the tools process is not running its upstreams", rule="tools-unavailable")
        storage = FreshGrant(upstream.storage.state, upstream.storage.opener, mount, upstream.storage.clock)
        self.task_group.start_soon(self._run, flow, upstream, storage, redirect_uri, client_document)
        with anyio.move_on_after(START_SECONDS):
            await flow.url_ready.wait()
        if not flow.authorization_url:
            flow.cancel.cancel()
            raise NotegateError(
                f"the remote server of mount '{mount}' did not offer an authorization ({flow.error or 'no answer'})",
                rule="tools-oauth-failed",
            )
        return flow.authorization_url

    async def _run(
        self, flow: Flow, upstream: RemoteUpstream, storage: SealedGrant, redirect_uri: str, document: str | None
    ) -> None:
        async def redirect(url: str) -> None:
            flow.state = (parse_qs(urlsplit(url).query).get("state") or [""])[0]
            flow.authorization_url = url
            flow.url_ready.set()

        async def callback() -> AuthorizationCodeResult:
            await flow.returned.wait()
            assert flow.result is not None
            return flow.result

        auth = provider(
            upstream.url,
            storage,
            redirect_uri,
            redirect_handler=redirect,
            callback_handler=callback,
            client_document=document,
        )
        with flow.cancel, anyio.move_on_after(FLOW_SECONDS):
            try:
                async with (
                    http_client(upstream.call_seconds, upstream.max_line_bytes, auth) as http,
                    streamable_http_client(upstream.url, http_client=http) as (read, write),
                    ClientSession(read, write) as session,
                ):
                    await session.initialize()
                upstream.grant_stored()
            except Exception as exc:  # any failure of the remote or the flow ends it, named for the owner
                flow.error = type(exc).__name__
                log.warning("the upstream grant of mount %s failed: %s", flow.mount, flow.error)
        flow.url_ready.set()
        flow.done.set()
        if self.by_mount.get(flow.mount) is flow:
            del self.by_mount[flow.mount]

    def pending(self, state: str) -> Flow:
        for flow in self.by_mount.values():
            if flow.state and flow.state == state:
                return flow
        raise NotegateError("no grant is under way for this return", rule="tools-oauth-unknown")

    async def finish(self, flow: Flow, result: AuthorizationCodeResult) -> None:
        flow.result = result
        flow.returned.set()
        with anyio.move_on_after(START_SECONDS):
            await flow.done.wait()
        if not flow.done.is_set() or flow.error:
            raise NotegateError(
                f"the grant of mount '{flow.mount}' did not complete ({flow.error or 'no answer'})",
                rule="tools-oauth-failed",
            )
