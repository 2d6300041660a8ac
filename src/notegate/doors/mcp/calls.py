"""The one way a tool reaches a service: resolve the caller, check its session handle, run the service in a
worker thread, convert its result to the door's model, add the inbox notice, translate refusals.

Why keyword-only forwarding: a tool names every argument it passes (``fn(caller, path=path, …)``), so
reordering a service's parameters cannot silently mis-bind, and renaming one fails loudly (and in
``tests/doors/test_mcp_forwarding.py``) instead of passing a value to the wrong parameter.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import anyio
import anyio.to_thread
from mcp.server.mcpserver import Context

from notegate.doors.mcp.caller import CallerResolver, with_session
from notegate.doors.mcp.refusals import refusal
from notegate.doors.mcp.results import ToolResult, to_result
from notegate.errors import NotegateError
from notegate.policy import Caller
from notegate.services.container import Services

R = TypeVar("R", bound=ToolResult)

#: Tool calls that may run in worker threads at once (their own limiter, apart from the default one the
#: door's token checks and health pages use).  Why not the default 8: concurrent writes are committed
#: together only while they wait at the environment's write lock at the same time (group commit), so 8
#: threads capped every group at 8 writes, with the guard's token checks queued behind them; 32 concurrent
#: MCP writers then made fewer commits per second than 32 threads in process.  Still bounded, since each
#: thread keeps its own SQLite connections.
TOOL_THREADS = 32


class ToolCall:
    """``await call(ctx, service_method, ResultModel, name=value, …, environment=…, handle=…)``."""

    def __init__(self, services: Services, resolver: CallerResolver, threads: int = TOOL_THREADS) -> None:
        self.services = services
        self.resolver = resolver
        self.threads = threads
        self._limiter: anyio.CapacityLimiter | None = None

    def limiter(self) -> anyio.CapacityLimiter:
        """Made on first use, inside the event loop that serves the calls (anyio binds it there)."""
        if self._limiter is None:
            self._limiter = anyio.CapacityLimiter(self.threads)
        return self._limiter

    def gate(self, caller: Caller, handle: str | None) -> Caller:
        """Gated classes (hosted) must present a live handle of their own; it names the session in commits."""
        sessions = self.services.sessions
        if not sessions.gated(caller):
            return caller
        return with_session(caller, sessions.check(caller, handle))

    async def __call__(
        self,
        ctx: Context,
        fn: Callable[..., Any],
        out: type[R],
        /,
        *,
        environment: str | None = None,
        handle: str | None = None,
        grant: str | None = None,
        session_tool: bool = False,
        **arguments: Any,
    ) -> R:
        """``session_tool`` (session_start itself) skips the handle and the notice (it reports the count).
        ``grant`` goes to the resolver only (it may raise the tier), never to a service."""
        try:

            def run() -> R:
                # In the worker thread (context variables follow it): resolving may read the state DB
                # (a revoked stdio token, a device header's audit row) and must not hold the event loop.
                caller = self.resolver(ctx, grant=grant)
                if session_tool:
                    return to_result(out, fn(caller, environment=environment, **arguments))
                gated = self.gate(caller, handle)
                result = to_result(out, fn(gated, environment=environment, **arguments))
                result.notice = self.services.inbox.notice(gated, environment)
                return result

            return await anyio.to_thread.run_sync(run, limiter=self.limiter())
        except NotegateError as exc:
            raise refusal(exc) from None
