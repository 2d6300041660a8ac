"""One upstream MCP server per mount, supervised: started with exactly its mount's variables, spoken to with
the official SDK's client over stdio, restarted with backoff when it crashes, each call bounded in time.

Why a supervisor task per mount: an upstream is a child process with a protocol session; a crash (or a hung
ping) ends the session, and the next start waits ``restart_seconds`` doubled per crash in a row (up to 64
times it), so a crashing upstream costs a start a minute at most, never a loop. While it is down, a call is
refused at once (``tools-upstream-down``) rather than queued: one broken upstream holds no worker.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import anyio
import mcp.client.stdio as sdk_stdio
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp_types import CallToolResult, Tool

from notegate.errors import NotegateError
from notegate.tools import linebound
from notegate.tools.install import Launch

log = logging.getLogger(__name__)

#: How often a running upstream is pinged, and how long a ping may take before it counts as a crash.
PING_SECONDS = 5.0
PING_TIMEOUT = 10.0
#: The longest a start (spawn, initialize, first tools/list) may take before it counts as a crash.
START_SECONDS = 60.0
#: The longest wait between restarts, as a multiple of the first.
MAX_BACKOFF_FACTOR = 64
#: Crashes in a row after which an upstream is reported "failed" rather than "restarting" (it is still started
#: again, at the longest wait): the owner is told it does not come back by itself.
FAILED_AFTER = 5


def isolate_child_environment() -> None:
    """Make the SDK's stdio client start servers with nothing of this process's environment.

    The SDK merges a "safe" set of this process's variables (HOME, PATH, SHELL, USER, …) under the ones we
    pass; an upstream must see exactly its mount's declared variables and nothing else. The tools process
    calls this once at start (it is its own process: nothing else there starts stdio servers). It also makes
    the SDK read each server's stdout bounded per line (:mod:`.linebound`)."""
    sdk_stdio.get_default_environment = dict  # type: ignore[assignment]
    linebound.install()


def listing_digest(tool: Tool) -> str:
    """SHA-256 of what a caller would be shown of a tool: its name, title, description, input schema and
    annotations. A new tool, or any change of one of these (the "rug pull"), is a new digest to approve."""
    shown = {
        "name": tool.name,
        "title": tool.title,
        "description": tool.description,
        "input_schema": tool.input_schema,
        "annotations": tool.annotations.model_dump(mode="json", exclude_none=True) if tool.annotations else None,
    }
    return hashlib.sha256(json.dumps(shown, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


@dataclass
class Upstream:
    """A mount's upstream. ``environment`` is called at each start (credentials are opened then, so a
    credential stored anew counts at the next start); ``on_listing`` is told each fresh tool list."""

    mount: str
    launch: Launch
    environment: Callable[[], dict[str, str]]
    on_listing: Callable[[Upstream], Awaitable[None]]
    restart_seconds: float = 1.0
    max_line_bytes: int = 4 << 20
    clock: Callable[[], float] = anyio.current_time
    status: str = "starting"
    crashes: int = 0  # in a row; a start that reaches a tool list resets it
    restarts: int = 0
    next_start_at: float = 0.0
    tools: list[Tool] = field(default_factory=list)
    last_refusal: str | None = None  # the rule that last cut this upstream off (a too-long line), if any
    _session: ClientSession | None = None
    _cut: ClientSession | None = None  # the session a too-long line ended
    _crashed: anyio.Event | None = None
    _stopped: bool = False

    def state(self) -> str:
        """What the owner is told: running, starting, restarting (waiting out its backoff) or failed (it
        crashed ``FAILED_AFTER`` times in a row; still retried at the longest wait)."""
        if self.status == "up":
            return "running"
        if self.status == "starting" and self.restarts == 0:
            return "starting"
        return "failed" if self.crashes >= FAILED_AFTER else "restarting"

    def health(self) -> dict[str, Any]:
        out: dict[str, Any] = {"state": self.state(), "restarts": self.restarts, "crashes_in_a_row": self.crashes}
        if self.status == "down":
            out["retry_in_seconds"] = round(max(0.0, self.next_start_at - self.clock()), 1)
        if self.last_refusal:
            out["last_refusal"] = self.last_refusal
        return out

    async def run(self) -> None:
        """Start, serve, restart with backoff, until cancelled."""
        while not self._stopped:
            self._crashed = anyio.Event()
            try:
                await self._serve_once()
            except Exception as exc:  # any failure of a child process is a crash to restart
                log.warning("upstream of mount %s stopped: %s", self.mount, type(exc).__name__)
            self._session = None
            self.status = "down"
            self.crashes += 1
            self.restarts += 1
            delay = min(self.restart_seconds * 2 ** (self.crashes - 1), self.restart_seconds * MAX_BACKOFF_FACTOR)
            self.next_start_at = self.clock() + delay
            await anyio.sleep(delay)

    async def _serve_once(self) -> None:
        params = StdioServerParameters(
            command=self.launch.argv[0], args=list(self.launch.argv[1:]), env=self.environment(), cwd=self.launch.cwd
        )
        # an upstream's stderr may echo its credentials: never logged
        with (
            open(os.devnull, "w") as errlog,
            linebound.bounded(self.max_line_bytes, self._line_too_long),
        ):
            async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
                with anyio.fail_after(START_SECONDS):
                    await session.initialize()
                    listing = await session.list_tools()
                await self._serving(session, list(listing.tools))

    async def _serving(self, session: ClientSession, tools: list[Tool]) -> None:
        """A started session: record its listing, then serve (pinged) until it crashes or is stopped."""
        self.tools = tools
        self._session = session
        await self.on_listing(self)
        self.status = "up"
        self.crashes = 0
        assert self._crashed is not None
        async with anyio.create_task_group() as tg:
            tg.start_soon(self._pinger, session)
            await self._crashed.wait()
            tg.cancel_scope.cancel()

    async def _pinger(self, session: ClientSession) -> None:
        while True:
            await anyio.sleep(PING_SECONDS)
            try:
                with anyio.fail_after(PING_TIMEOUT):
                    await session.send_ping()
            except Exception:  # a ping that fails means the session is gone
                self._mark_crashed()
                return

    def _line_too_long(self) -> None:
        log.warning(
            "upstream of mount %s wrote a line over %d bytes: cut off, restarting", self.mount, self.max_line_bytes
        )
        self.last_refusal = "tools-upstream-line-too-long"
        self._cut = self._session
        self._mark_crashed()

    def _mark_crashed(self) -> None:
        if self._crashed is not None:
            self._crashed.set()

    async def call(self, tool: str, arguments: dict[str, Any], seconds: float) -> CallToolResult:
        """One call, bounded by ``seconds``; refused at once while the upstream is down."""
        session = self._session
        if session is None or self.status != "up":
            raise NotegateError(f"the upstream of mount '{self.mount}' is not running", rule="tools-upstream-down")
        try:
            with anyio.fail_after(seconds):
                return await session.call_tool(tool, arguments, read_timeout_seconds=seconds)
        except TimeoutError:
            raise NotegateError(
                f"the upstream of mount '{self.mount}' did not answer within {seconds:g} s",
                rule="tools-upstream-timeout",
            ) from None
        except Exception as exc:
            if _connection_lost(exc):
                self._mark_crashed()
                if session is self._cut:
                    raise NotegateError(
                        f"the upstream of mount '{self.mount}' wrote a line longer than {self.max_line_bytes} bytes;"
                        " it was cut off unread and is restarted",
                        rule="tools-upstream-line-too-long",
                    ) from None
                raise NotegateError(
                    f"the upstream of mount '{self.mount}' stopped during the call", rule="tools-upstream-down"
                ) from None
            raise

    async def stop(self) -> None:
        self._stopped = True
        self._mark_crashed()


def _connection_lost(exc: BaseException) -> bool:
    from mcp.shared.exceptions import MCPError
    from mcp_types import CONNECTION_CLOSED

    if isinstance(exc, (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream)):
        return True
    return isinstance(exc, MCPError) and getattr(exc, "code", None) == CONNECTION_CLOSED
