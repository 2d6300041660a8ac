"""One ASGI app: MCP (Streamable HTTP, stateless) at /mcp, /healthz, and the background sync loop.

The bearer check is the SDK's own middleware driven by our :class:`StaticTokenVerifier`; a missing or
wrong token gets a 401 with a ``WWW-Authenticate`` challenge before any tool code runs.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator

import anyio
import anyio.to_thread
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Mount, Route

from notegate.auth.tokens import verify_token
from notegate.doors.mcp import CallerResolver, build_mcp
from notegate.services.runtime import Runtime

log = logging.getLogger("notegate")
WORKER_THREADS = 8


class StaticTokenVerifier:
    """Maps a bearer token to its record; the claims carry what the door needs to build the caller."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime

    async def verify_token(self, token: str) -> AccessToken | None:
        record = await anyio.to_thread.run_sync(lambda: verify_token(self.runtime.state, token))
        if record is None:
            return None
        return AccessToken(
            token=token,
            client_id=record.name,
            scopes=[],
            subject=record.login,
            claims={
                "login": record.login,
                "display_name": record.display_name,
                "client_class": record.client_class,
                "tier": record.tier,
                "environment": record.environment,
                "token_id": record.id,
                "connector": record.connector,
            },
        )


def base_url(runtime: Runtime, host: str, port: int) -> str:
    if runtime.config.public_url:
        return runtime.config.public_url.rstrip("/")
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}"


def _transport_security(runtime: Runtime, host: str) -> TransportSecuritySettings:
    hosts = ["127.0.0.1:*", "localhost:*", "[::1]:*", *runtime.config.allowed_hosts]
    origins = ["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"]
    if runtime.config.public_url:
        from urllib.parse import urlparse

        public = urlparse(runtime.config.public_url)
        hosts.append(public.netloc)
        origins.append(f"{public.scheme}://{public.netloc}")
    if host not in ("127.0.0.1", "localhost", "::1", "0.0.0.0", "::"):  # noqa: S104 - comparison only
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


def create_app(runtime: Runtime, *, host: str = "127.0.0.1", port: int = 8765) -> Starlette:
    url = base_url(runtime, host, port)
    mcp = build_mcp(
        runtime,
        resolver=CallerResolver(),
        token_verifier=StaticTokenVerifier(runtime),
        auth=AuthSettings(
            # Static tokens carry no audience; the verifier itself is the authority for this server.
            issuer_url=url,
            resource_server_url=f"{url}/mcp",
            validate_token_resource=False,
        ),
    )
    mcp_app = mcp.streamable_http_app(
        stateless_http=True,
        json_response=True,
        transport_security=_transport_security(runtime, host),
        host=host,
    )

    async def healthz(_request: Request) -> JSONResponse:
        envs = {}
        for name in runtime.config.environments:
            env = runtime.environment(name)
            envs[name] = {"head": env.store.head(), "indexed": env.index.indexed_commit}
        return JSONResponse({"status": "ok", "environments": envs})

    @contextlib.asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        # A few worker threads are plenty (writes serialise on the environment's lock anyway), and each
        # thread holds its own SQLite connections and page caches: bounding them bounds memory.
        anyio.to_thread.current_default_thread_limiter().total_tokens = WORKER_THREADS
        await anyio.to_thread.run_sync(lambda: runtime.open_all(background_index=True))
        async with mcp.session_manager.run(), anyio.create_task_group() as tasks:
            tasks.start_soon(sync_loop, runtime)
            try:
                yield
            finally:
                tasks.cancel_scope.cancel()
        runtime.close()

    app = Starlette(
        routes=[Route("/healthz", healthz, methods=["GET"]), Mount("/", app=mcp_app)],
        lifespan=lifespan,
    )
    app.state.mcp = mcp
    app.state.runtime = runtime
    return app
