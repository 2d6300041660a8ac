"""One ASGI app: MCP (Streamable HTTP, stateless) at /mcp, /healthz, and the background sync loop.

notegate is its own OAuth 2.1 authorization server (:mod:`notegate.auth.oauth`): the SDK serves /authorize,
/token, /register and the protected-resource metadata over our provider, and :mod:`notegate.auth.oauth_routes`
answers the metadata, /authorize's PKCE and ``iss`` and /revoke in front of it.  The bearer check is the
SDK's own middleware driven by the same provider, for static tokens and OAuth access tokens alike; a
missing or wrong token (or one minted for another resource) gets a 401 with a ``WWW-Authenticate``
challenge before any tool code runs.  An hourly sweep drops expired OAuth codes and tokens and unused
registrations.  Behind those checks, :mod:`notegate.doors.single_exchange` answers a plain one-request POST in
its own ASGI task with the SDK's kernel (no per-request transport, streams or tasks); the rest is the SDK's.

In front of the SDK sits :class:`DoorGuard`, the door's own limits, because the SDK's are the wrong shape
for a model to act on (a bare ``413 Request body too large`` in plain text) or absent (any number of
open requests per credential).  Its invariants:

* ``GET /mcp`` is answered 405 (``Allow: POST``), as the spec allows: in stateless mode the SDK opens an
  event stream that nothing is ever sent on, so each one was only a held file descriptor.
* A body over :func:`body_limit` (derived from ``max_note_bytes``, so every note the policy accepts fits
  through the transport) is answered with a JSON-RPC error object, HTTP 413, after reading and
  discarding the rest of the body up to :data:`DRAIN_LIMIT_BYTES`, so the client reads the answer
  instead of a reset connection.  A body that does not arrive within ``body_timeout_seconds`` is
  answered 408: a slow sender cannot hold its slot.
* A verified credential holds at most ``max_open_requests_per_credential`` requests open at once,
  and the whole door at most ``max_open_requests``; over either, HTTP 429 with the exact rule.
  Unverified requests take no slot: the SDK refuses them with 401 without reading their body.
* Every refusal of the guard closes its connection (``Connection: close``), so refused clients cannot
  pile up idle keep-alive connections either.
"""

from __future__ import annotations

import contextlib
import hmac
import logging
from collections.abc import AsyncIterator, Callable, Collection
from typing import Any

import anyio
import anyio.to_thread
from mcp.server.auth.provider import AccessToken
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.datastructures import URLPath
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import BaseRoute, Match, Mount, NoMatchFound, Route

from notegate.auth.anonymous import anonymous_limits
from notegate.auth.consent import ConsentBackend
from notegate.auth.devices import DeviceVerifier
from notegate.auth.grants import Grants, owners_in
from notegate.auth.oauth import NotegateOAuthProvider, access_token, static_access_token
from notegate.auth.oauth_routes import auth_settings, oauth_routes
from notegate.auth.tokens import TokenRecord
from notegate.doors import heap
from notegate.doors.guard import (
    MCP_PATHS,
    VERIFIED,
    Credential,
    DoorGuard,
    Receive,
    Scope,
    Send,
    bearer,
    body_limit,
    refuse_host,
)
from notegate.doors.hostfirst import HostFirst
from notegate.doors.mcp import CallerResolver, build_mcp
from notegate.doors.single_exchange import SingleExchange
from notegate.errors import NotegateError, http_status
from notegate.network import (
    DEFAULT_HOST,
    DEFAULT_PORT,
    LOOPBACK_HOSTS,
    LOOPBACK_PEERS,
    LOOPBACK_URL_HOSTS,
    WILDCARD_HOSTS,
    local_url,
)
from notegate.policy import Caller, decide_metrics_reader, metrics_environments
from notegate.services import diskspace
from notegate.services.callers import Callers
from notegate.services.container import Services
from notegate.services.eventlog import event
from notegate.services.metrics import CONTENT_TYPE as METRICS_CONTENT_TYPE
from notegate.services.metrics import Metrics
from notegate.services.runtime import Runtime
from notegate.tools.health import ToolsHealth

log = logging.getLogger("notegate")
WORKER_THREADS = 8

# The operator's limits (open requests, body timeout, idle connections, connections) are [server] settings:
# their defaults live in notegate.config.SERVER_SETTINGS, the one table.
#: How often expired OAuth codes and tokens and unused registrations are swept.
OAUTH_SWEEP_SECONDS = 3600.0


# Listen addresses that mean "this machine only" (the server names itself ``localhost`` on them) and the peer
# addresses of a connection from this machine (what /metrics lets in without a token): notegate.network.


def base_url(runtime: Runtime, host: str, port: int) -> str:
    """The one URL this server names itself by: the OAuth issuer, the resource and the links it prints.

    Behind a proxy it is ``public_url``. On loopback it is ``http://localhost:PORT``, never the IP: a
    passkey's relying party must be a domain (WebAuthn refuses IP addresses), so the consent and login
    pages the issuer sends a browser to have to live on ``localhost`` for the owner to log in there."""
    if runtime.config.public_url:
        return runtime.config.public_url.rstrip("/")
    if host in LOOPBACK_HOSTS:
        return local_url(port)
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}"


def _transport_security(runtime: Runtime, host: str) -> TransportSecuritySettings:
    hosts = [f"{name}:*" for name in LOOPBACK_URL_HOSTS] + list(runtime.config.allowed_hosts)
    origins = [f"http://{name}:*" for name in LOOPBACK_URL_HOSTS]
    if runtime.config.public_url:
        from urllib.parse import urlparse

        public = urlparse(runtime.config.public_url)
        hosts.append(public.netloc)
        origins.append(f"{public.scheme}://{public.netloc}")
    if host not in LOOPBACK_HOSTS | WILDCARD_HOSTS:
        hosts.append(f"{host}:*")
    return TransportSecuritySettings(allowed_hosts=hosts, allowed_origins=origins)


async def sync_loop(runtime: Runtime) -> None:
    """Fetch every environment on the policy's interval; repack now and then. Never dies on one failure."""
    interval = runtime.policy.fetch_interval_seconds
    ticks = 0
    while True:
        await anyio.sleep(interval)
        try:
            await anyio.to_thread.run_sync(runtime.sync_all)
            ticks += 1
            if ticks % 6 == 0:  # about every 30 s: counting loose objects and packs is cheap
                await anyio.to_thread.run_sync(runtime.maintain)
        except Exception:  # keep serving; the next tick tries again
            log.exception("background sync failed")


async def oauth_sweep_loop(
    provider: NotegateOAuthProvider, grants: Grants | None = None, interval: float = OAUTH_SWEEP_SECONDS
) -> None:
    """Drop expired codes and tokens and registrations unused for a day (never one with a live token); and
    elevation requests answered or expired, grants ended a day ago (auditing expiries nobody presented)."""
    while True:
        await anyio.sleep(interval)
        try:
            swept = await anyio.to_thread.run_sync(lambda: provider.core.sweep(now=provider.clock()))
            log.info("oauth sweep: %s", swept)
            if grants is not None:
                swept = await anyio.to_thread.run_sync(lambda: grants.sweep(now=provider.clock()))
                log.info("elevation sweep: %s", swept)
        except Exception:  # keep serving; the next tick tries again
            log.exception("oauth sweep failed")


class DoorOAuthProvider(NotegateOAuthProvider):
    """The provider, answering the SDK's bearer check from what the guard verified moments before.

    Why: every /mcp request used to verify its token twice (the guard counts open requests per credential,
    then the SDK's middleware asks the provider), each time a state-DB lookup behind a worker-thread hop;
    on a busy machine the extra hop alone cost milliseconds.  Only the exact token the guard verified in
    this very request is taken (compared in constant time); anything else is looked up as before."""

    async def load_access_token(self, token: str) -> AccessToken | None:
        verified = VERIFIED.get()
        if verified is not None and hmac.compare_digest(verified[0].encode(), token.encode()):
            found = verified[1]
            if isinstance(found, TokenRecord):
                return static_access_token(found, token, self.resource)
            return access_token(found, token)
        return await super().load_access_token(token)


class LazyRoutes(BaseRoute):
    """Routes built on the first request that could be one of theirs: the contract door and the console.

    Why: importing those doors (passkeys, page templates, contract schemas) took a large share of a
    restart before the first MCP read could be served, for pages the owner opens now and then. Requests
    to ``skip`` (the MCP endpoint) never build them; any other request that reaches this point builds
    them once, then is matched exactly as if the routes were listed in the app's table in this place: the
    first full match among them wins, else their first partial one (a later full match, such as the
    catch-all mount, still beats a partial one, as the router does for a flat list).
    """

    def __init__(self, build: Callable[[], list[BaseRoute]], *, skip: Collection[str] = ()) -> None:
        self._build = build
        self._skip = frozenset(skip)
        self._routes: list[BaseRoute] | None = None

    @property
    def routes(self) -> list[BaseRoute]:
        if self._routes is None:  # built on the event loop in one synchronous step: no request sees half
            self._routes = self._build()
        return self._routes

    @property
    def built(self) -> bool:
        return self._routes is not None

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        if scope["type"] == "http" and scope.get("path") in self._skip:
            return Match.NONE, {}
        partial: tuple[Match, Scope] | None = None
        for route in self.routes:
            match, child = route.matches(scope)
            if match is Match.FULL:
                return match, {**child, "notegate.lazy_route": route}
            if match is Match.PARTIAL and partial is None:
                partial = (match, {**child, "notegate.lazy_route": route})
        return partial if partial is not None else (Match.NONE, {})

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        await scope["notegate.lazy_route"].handle(scope, receive, send)

    def url_path_for(self, name: str, /, **path_params: Any) -> URLPath:
        for route in self.routes:
            with contextlib.suppress(NoMatchFound):
                return route.url_path_for(name, **path_params)
        raise NoMatchFound(name, path_params)


def environment_details(runtime: Runtime, caller: Caller | None) -> dict[str, object]:
    """What /healthz tells a caller: "ok" to anyone; the head and index of one environment to its own token."""
    if caller is None:  # free space below min_free_bytes anywhere: "degraded", still 200 (reads are served)
        low = diskspace.any_low(runtime.policy, runtime.config)
        return {"status": "degraded", "disk": "low"} if low else {"status": "ok"}
    name = caller.environment or runtime.config.default_environment
    if name not in runtime.config.environments:
        return {"status": "ok"}
    env = runtime.environment(name)
    details: dict[str, Any] = {"head": env.store.head(), "indexed": env.index.indexed_commit, "fetch": "ok"}
    details["disk"] = diskspace.health(runtime.policy, runtime.config, name)
    meaning = env.meaning  # search by meaning: on (its vectors, and whether they are catching up) or why off
    details["meaning"] = (
        {"status": "off", "reason": runtime.meaning_off or "off"}
        if meaning is None
        else {"status": "on", "vectors": len(meaning.vectors), "catching_up": not meaning.wait_idle(0)}
    )
    refusal = env.store.refusal
    if refusal is not None:  # what the origin holds and was refused: its short id and how many rules, no paths
        details["fetch"] = "refused"
        details["fetch_refused"] = {"commit": refusal.tip[:12], "rules": len(refusal.verdict.rules())}
    return {"status": "ok" if details["disk"]["status"] == "ok" else "degraded", "environments": {name: details}}


def create_app(
    runtime: Runtime,
    *,
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    consent: ConsentBackend | None = None,
    settle_heap: bool = False,
) -> Starlette:
    """``settle_heap``: freeze the start-up heap once the environments are open (:mod:`notegate.doors.heap`);
    ``notegate serve`` sets it, being the whole process; an app served inside another process (the tests')
    leaves that process's collector alone."""
    url = base_url(runtime, host, port)
    provider = DoorOAuthProvider(runtime.state, runtime.config, issuer=url, resource=f"{url}/mcp", clock=runtime.clock)
    services = Services.build(runtime)
    # One verifier per server: its audience is this server's URL (public_url, or host:port on loopback).
    devices = DeviceVerifier(lambda: runtime.config, runtime.clock, state=runtime.state, host=host, port=port)
    # one per app: the MCP resolver and the approval page
    grants = Grants(runtime.state, runtime.policy, owner_of=owners_in(lambda: runtime.config))
    # The one function every door turns a credential into a caller with (MCP, contracts, /healthz, /metrics).
    callers = Callers(devices=devices, grants=grants, members=runtime.members.check_caller, clock=runtime.clock)
    mcp = build_mcp(
        services,
        resolver=CallerResolver(callers=callers),
        elevation_base=url,
        auth_server_provider=provider,
        auth=auth_settings(url, f"{url}/mcp", runtime.policy.oauth_default_scope),
    )
    max_note_bytes = runtime.policy.max_note_bytes
    security = _transport_security(runtime, host)
    mcp_app = mcp.streamable_http_app(
        stateless_http=True,
        json_response=True,
        transport_security=security,
        host=host,
        # The guard answers first; the SDK's own limit stays as a backstop at the same size.
        max_request_body_size=body_limit(max_note_bytes),
    )
    # A plain tools/call (or any one request) is answered in its ASGI task, by the SDK's own kernel, without
    # the per-request transport, streams and tasks of the stateless path; the rest goes to the SDK unchanged.
    single = SingleExchange.install(mcp.session_manager)

    def verify(token: str) -> Credential | None:
        return provider.credential(token)

    tools_health = ToolsHealth.of_runtime(runtime)  # [tools] url set: its upstreams, to an environment's token

    async def healthz(request: Request) -> JSONResponse:
        header = request.headers.get("authorization")
        if header is None:
            return JSONResponse(await anyio.to_thread.run_sync(environment_details, runtime, None))
        token = bearer(header)
        record = await anyio.to_thread.run_sync(verify, token) if token else None
        if record is None:
            refused = NotegateError(
                "the bearer token is not valid (revoked or mistyped)",
                rule="unauthenticated",
                remedy="Send no token for the bare status, or a live token of an environment for its details.",
            )
            return JSONResponse(
                {"status": "ok", "error": refused.explain()},
                status_code=http_status(refused.rule),
                headers={"WWW-Authenticate": "Bearer"},
            )
        try:
            caller = await anyio.to_thread.run_sync(callers.resolve, record)
        except NotegateError as exc:
            return JSONResponse({"status": "ok", "error": exc.explain()}, status_code=http_status(exc.rule))
        details = await anyio.to_thread.run_sync(environment_details, runtime, caller)
        environments = details.get("environments")
        if tools_health is not None and isinstance(environments, dict):
            for name, facts in environments.items():
                facts["tools"] = await tools_health.of(name)
        return JSONResponse(details)

    metrics = Metrics(runtime, services, clock=runtime.clock)

    async def metrics_page(request: Request) -> Response:
        """Prometheus text format, for a scraper on this machine (every environment) or one holding a machine
        token (its own environment's figures only)."""
        token = bearer(request.headers.get("authorization"))
        record = await anyio.to_thread.run_sync(verify, token) if token else None
        peer = request.client.host if request.client else ""
        headers = {"WWW-Authenticate": "Bearer"}
        try:
            caller = await anyio.to_thread.run_sync(callers.resolve, record) if record is not None else None
        except NotegateError as exc:
            return PlainTextResponse(exc.explain() + "\n", status_code=http_status(exc.rule), headers=headers)
        decision = decide_metrics_reader(
            loopback_peer=peer in LOOPBACK_PEERS and token is None,
            behind_proxy=bool(runtime.config.public_url),
            client_class=caller.client_class if caller is not None else None,
        )
        if not decision.allowed:
            refused = NotegateError(decision.reason, rule=decision.rule)
            return PlainTextResponse(refused.explain() + "\n", status_code=http_status(refused.rule), headers=headers)
        environments = metrics_environments(
            decision,
            caller.environment if caller is not None else None,
            runtime.config.default_environment,
            runtime.config.environments,
        )
        body = await anyio.to_thread.run_sync(metrics.render, environments)
        return Response(body, media_type=METRICS_CONTENT_TYPE)

    @contextlib.asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        # A few worker threads are plenty (writes serialise on the environment's lock anyway), and each
        # thread holds its own SQLite connections and page caches: bounding them bounds memory.
        anyio.to_thread.current_default_thread_limiter().total_tokens = WORKER_THREADS
        await anyio.to_thread.run_sync(lambda: runtime.open_all(background_index=True))
        if settle_heap:
            heap.settle()  # what start loaded is kept out of every later collection (doors/heap.py)
        event("start", url=url, mcp=f"{url}/mcp", environments=",".join(runtime.config.environments))
        metrics.start()
        async with mcp.session_manager.run(), anyio.create_task_group() as tasks:
            tasks.start_soon(sync_loop, runtime)
            tasks.start_soon(oauth_sweep_loop, provider, grants)
            try:
                yield
            finally:
                tasks.cancel_scope.cancel()
                metrics.stop()
        runtime.close()
        event("stop", url=url)  # after the last write: an operator reads the log's end as a clean shutdown

    config = runtime.config
    allowed_hosts = security.allowed_hosts if security.enable_dns_rebinding_protection else None
    guarded = DoorGuard(
        mcp_app,
        verify=verify,
        max_note_bytes=max_note_bytes,
        per_credential=config.max_open_requests_per_credential,
        total=config.max_open_requests,
        body_timeout=config.body_timeout_seconds,
        failure=provider.failure,
        allowed_hosts=allowed_hosts,
        verify_on_loop=runtime.state.dialect == "sqlite",
    )

    def doors() -> list[BaseRoute]:
        from notegate.doors.contracts_http import contract_routes
        from notegate.doors.web import web_routes

        return [
            # Machine contracts (issue 16): machine tokens only, never the MCP tools.
            *contract_routes(services.contracts, verify, allowed_hosts, holding=guarded.holding, callers=callers),
            # The console (passkey login, the consent page); the consent page answers the OAuth core's requests.
            *web_routes(
                runtime,
                consent=consent if consent is not None else provider.core,
                elevation=grants,
                port=port,
                services=services,
                callers=callers,
            ),
        ]

    app = Starlette(
        routes=[
            Route("/healthz", healthz, methods=["GET"]),
            Route("/metrics", metrics_page, methods=["GET"]),
            *oauth_routes(provider),
            LazyRoutes(doors, skip=MCP_PATHS),
            Mount("/", app=guarded),
        ],
        lifespan=lifespan,
        # Outermost (inside only Starlette's error handler): the Host allowlist answers before any route, then
        # the requests per source to the anonymous OAuth endpoints (a foreign Host spends no one's tokens).
        middleware=[Middleware(HostFirst, allowed_hosts=allowed_hosts, refuse=refuse_host), anonymous_limits(config)],
    )
    app.state.mcp = mcp
    app.state.guard = guarded
    app.state.single_exchange = single
    app.state.runtime = runtime
    app.state.services = services
    app.state.oauth = provider
    return app
