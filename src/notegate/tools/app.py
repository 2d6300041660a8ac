"""``notegate tools serve``: the tools process, an ASGI app on loopback.

It loads every catalog entry from the local cache (each verified against its pin: any entry that fails
stops the start, never a warning), starts one supervised upstream per mount with exactly the mount's
declared variables (its credentials, opened here and nowhere else), and answers the knowledge service only:

* ``POST /v1/list`` (a ``tools:list`` token): the approved tools of the mounts of the token's environment;
* ``POST /v1/call`` (a ``tools:call`` token naming the mount and tool): one call, bounded in time and result
  size, arguments and results through the credential scanner, one audit row naming the person and connector;
* ``POST /v1/verify`` (a one-use ``tools:verify`` token naming the mount and variable): does a value the owner
  holds equal the stored credential? The answer is a yes or no; the stored value never leaves this process;
* ``GET /healthz``: without a token, only how many upstreams are in each state (loopback is shared by every
  process of the host: no mount's name); with a ``tools:health`` token, each mount of the token's environment
  (every mount for '') with its state (running, held: running with a listing waiting for approval, starting,
  restarting with backoff, failed), restarts and the rule that last cut it off.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import logging
import os
import shutil
import time
from collections import Counter, OrderedDict
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Any

import anyio
import anyio.to_thread
from mcp_types import CallToolResult, TextContent, Tool
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from notegate.errors import NotegateError
from notegate.policy.container import engine_environment
from notegate.policy.tools import decide_mount, decide_mount_tool
from notegate.safety.secrets import scan_credentials
from notegate.tools.container import container_launch, find_engine, verify_image
from notegate.tools.grantflow import GrantFlows
from notegate.tools.install import Entry, install
from notegate.tools.oauth_routes import oauth_routes, remote_upstream
from notegate.tools.sealing import Opener
from notegate.tools.settings import ToolsConfig
from notegate.tools.tokens import ToolsCaller, Verifier
from notegate.tools.upstream import Upstream, isolate_child_environment, listing_digest

log = logging.getLogger(__name__)

#: HTTP status of each refusal the tools process answers with (anything else: 403).
STATUS = {
    "tools-token-invalid": 401,
    "tools-hidden": 404,
    "tools-upstream-down": 503,
    "tools-upstream-timeout": 504,
    "tools-result-too-large": 502,
    "tools-upstream-line-too-long": 502,
    "tools-oauth-not-remote": 409,
    "tools-oauth-failed": 502,
    "tools-oauth-unknown": 404,
}
#: The upstream states in which a mount serves its (approved) tools: anything else makes /healthz "degraded".
SERVING = ("running", "held")
#: The largest request body the tools process reads (a call's arguments).
MAX_REQUEST_BYTES = 1 << 20


@dataclass
class Mount:
    name: str
    catalog: str
    account: str
    environment: str
    variables: tuple[str, ...]
    write_tools: tuple[str, ...]


class Gateway:
    """The catalog, the mounts and their upstreams, inside the tools process."""

    def __init__(
        self,
        state,
        opener: Opener,
        config: ToolsConfig,
        clock: Callable[[], float] = time.time,
        mint_keys: Collection[str] | None = None,
    ) -> None:
        self.state = state
        self.opener = opener
        self.config = config
        self.clock = clock
        self.verifier = Verifier(state, clock, pinned=mint_keys)  # the knowledge service's key ids, from the start
        self.mounts: dict[str, Mount] = {}
        self.upstreams: dict[str, Upstream] = {}
        self.live: dict[str, dict[str, tuple[Tool, str]]] = {}  # mount -> tool -> (its listing, its digest)
        self.flows = GrantFlows(self)  # upstream OAuth grants under way
        self.sessions = HeldSessions()  # upstream session handles, per mount and connector login

    def load(self) -> None:
        """Verify and install every catalog entry, then prepare each mount's upstream. Raises on the first
        entry that does not load (a hard failure: the process does not start half-loaded)."""
        node = shutil.which("node")
        launches = {}
        remotes = {}
        containers: dict[str, Entry] = {}
        engine = None
        for row in self.state.catalog_entries():
            entry = Entry.of(row)
            if entry.kind == "remote":  # nothing to install: a URL, reached with the mount's grant
                remotes[entry.name] = entry.package
                continue
            if entry.kind == "container":  # nothing to install: an image the owner loaded into the engine
                engine = engine or find_engine(self.config.engine)
                verify_image(entry, engine)
                containers[entry.name] = entry
                continue
            launches[entry.name] = install(entry, self.config.cache, self.config.installs, node=node)
        for row in self.state.mounts():
            mount = Mount(**{k: row[k] for k in Mount.__dataclass_fields__})
            decision = decide_mount(
                mount.name, mount.catalog, mount.account, mount.environment, mount.variables, mount.write_tools
            )
            if not decision.allowed:
                raise NotegateError(f"mount '{mount.name}': {decision.reason}", rule=decision.rule)
            if mount.catalog not in launches and mount.catalog not in remotes and mount.catalog not in containers:
                raise NotegateError(f"mount '{mount.name}' names no catalog entry", rule="tools-unknown")
            self.mounts[mount.name] = mount
            if mount.catalog in remotes:
                self.upstreams[mount.name] = remote_upstream(self, mount.name, remotes[mount.catalog])
                continue
            if mount.catalog in containers:  # its argv names the mount's variables: built per mount
                assert engine is not None
                launch = container_launch(containers[mount.catalog], engine, mount.name, mount.variables, self.config)
            else:
                launch = launches[mount.catalog]
            self.upstreams[mount.name] = Upstream(
                mount=mount.name,
                launch=launch,
                environment=lambda m=mount: self.environment_of(m, engine=m.catalog in containers),
                on_listing=self.record_listing,
                restart_seconds=self.config.restart_seconds,
                max_line_bytes=self.config.max_line_bytes,
            )

    def environment_of(self, mount: Mount, *, engine: bool = False) -> dict[str, str]:
        """Exactly the mount's declared variables that hold a credential, opened now; with ``engine``, also
        what a container engine's client needs to reach its daemon (it passes on only the declared names)."""
        sealed = self.state.sealed_credentials(mount.name)
        opened = {v: self.opener.open(mount.name, v, sealed[v]) for v in mount.variables if v in sealed}
        return {**engine_environment(dict(os.environ)), **opened} if engine else opened

    async def record_listing(self, upstream: Upstream) -> None:
        now = self.clock()

        tools = list(upstream.tools)

        def record() -> None:
            live = {}
            for tool in tools:
                live[tool.name] = (tool, listing_digest(tool))
                listing = tool.model_dump_json(by_alias=True, exclude_none=True)
                self.state.see_tool_listing(upstream.mount, tool.name, live[tool.name][1], listing, now)
            # Each listing hashed once per start, not per request. Swapped whole, before the upstream counts as
            # up (Upstream.run): no call reaches the new process while the old listing is in force.
            self.live[upstream.mount] = live

        await anyio.to_thread.run_sync(record)

    def approved_tools(self, mount: str) -> dict[str, Any]:
        """tool name -> its live listing, for the tools whose live digest the owner approved."""
        approved = self.state.approved_digests(mount)
        live = self.live.get(mount, {})
        return {name: tool for name, (tool, digest) in live.items() if digest in approved.get(name, set())}

    async def health(self, environment: str | None) -> dict[str, dict[str, Any]]:
        """mount -> its upstream's health, for the mounts of ``environment`` (None: every mount). A running
        upstream whose live listing holds a tool the owner has not approved is "held" (its other tools serve)."""
        rows = {
            name: upstream.health()  # on the loop: the upstream's clock is the loop's
            for name, upstream in sorted(self.upstreams.items())
            if environment is None or self.mounts[name].environment == environment
        }
        return await anyio.to_thread.run_sync(self._with_held, rows)

    def _with_held(self, rows: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
        out = {}
        for name, row in rows.items():
            approved = self.state.approved_digests(name)
            live = self.live.get(name, {})
            held = sorted(tool for tool, (_t, digest) in live.items() if digest not in approved.get(tool, set()))
            row["held_tools"] = len(held)
            if row["state"] == "running" and held:
                row["state"] = "held"
            out[name] = row
        return out

    def matches(self, caller: ToolsCaller, value: str) -> bool:
        """Is ``value`` the credential stored for the token's (mount, variable)? Compared as SHA-256 digests in
        constant time; a mount of another environment is "no such mount" (it may be newer than this start)."""
        mount = next((m for m in self.state.mounts() if m["name"] == caller.mount), None)
        if mount is None or mount["environment"] != caller.environment:
            raise NotegateError("no such mount", rule="tools-hidden")
        sealed = self.state.sealed_credentials(caller.mount).get(caller.tool)
        if sealed is None:
            return False
        stored = self.opener.open(caller.mount, caller.tool, sealed)
        return hmac.compare_digest(hashlib.sha256(stored.encode()).digest(), hashlib.sha256(value.encode()).digest())

    # ------------------------------------------------------------------ the two answers
    def listing(self, caller: ToolsCaller) -> list[dict[str, Any]]:
        out = []
        for name, mount in sorted(self.mounts.items()):
            if mount.environment != caller.environment:
                continue
            tools = []
            for tool in self.approved_tools(name).values():
                decision = decide_mount_tool(
                    caller_environment=caller.environment,
                    tier=caller.tier,
                    mount_environment=mount.environment,
                    tool=tool.name,
                    write_tools=mount.write_tools,
                    approved=True,
                    calling=False,
                )
                if decision.allowed:
                    shown = tool.model_dump(mode="json", by_alias=True, exclude_none=True)
                    tools.append({**shown, "writes": tool.name in mount.write_tools})
            out.append({"mount": name, "account": mount.account, "tools": tools})
        return out

    async def call(self, caller: ToolsCaller, mount_name: str, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        mount = self.mounts.get(mount_name)
        started = time.monotonic()
        outcome, redacted = "refused", []
        try:
            if mount is None or (caller.mount, caller.tool) != (mount_name, tool):
                raise NotegateError("no such tool", rule="tools-hidden")
            approved = self.approved_tools(mount_name)
            decision = decide_mount_tool(
                caller_environment=caller.environment,
                tier=caller.tier,
                mount_environment=mount.environment,
                tool=tool,
                write_tools=mount.write_tools,
                approved=tool in approved,
                calling=True,
            )
            if not decision.allowed:
                outcome = f"refused:{decision.rule}"
                raise NotegateError(decision.reason, rule=decision.rule)
            found = scan_credentials(json.dumps(arguments, ensure_ascii=False))
            if found:
                outcome = "refused:tools-secret-argument"
                raise NotegateError(
                    f"the arguments hold what looks like a credential ({', '.join(sorted({f.kind for f in found}))})",
                    rule="tools-secret-argument",
                )
            held = (mount_name, caller.login, caller.connector)
            if declares_handle(approved[tool]):
                arguments = self.sessions.passed(held, arguments)
            result = await self.upstreams[mount_name].call(tool, arguments, self.config.call_seconds)
            self.sessions.keep(held, result)
            result, redacted = redact(result)
            body = result.model_dump(mode="json", by_alias=True, exclude_none=True)
            if len(json.dumps(body)) > self.config.max_result_bytes:
                outcome = "refused:tools-result-too-large"
                raise NotegateError(
                    f"the result is larger than {self.config.max_result_bytes} bytes", rule="tools-result-too-large"
                )
            outcome = "error" if result.is_error else "ok"
            return {"result": body, "redacted": redacted}
        except NotegateError as exc:
            if outcome == "refused":
                outcome = f"refused:{exc.rule}"
            raise
        finally:
            row = {
                "at": self.clock(),
                "environment": caller.environment,
                "login": caller.login,
                "connector": caller.connector,
                "client": caller.client,
                "tier": caller.tier,
                "mount": mount_name,
                "tool": tool,
                "outcome": outcome,
                "duration_ms": round((time.monotonic() - started) * 1000, 3),
                "redacted": " ".join(redacted),
            }
            await anyio.to_thread.run_sync(self.state.audit_tool_call, row)


#: The argument in which a notegate server's knowledge tools take the handle its ``session_start`` returned.
SESSION_HANDLE = "handle"


def declares_handle(tool: Tool) -> bool:
    """Does this mounted tool take a session handle (a notegate server mounted as a remote, whose hosted callers
    must pass one to every knowledge tool)?"""
    properties = (tool.input_schema or {}).get("properties")
    return isinstance(properties, dict) and SESSION_HANDLE in properties


class HeldSessions:
    """The session handles upstreams gave, kept here for the caller's next calls to the same mount.

    Why: a session handle is a credential (the scanner's ``notegate-session-handle``), so :func:`redact` takes it
    out of the result the model reads, and the knowledge service strips whatever the model passes as ``handle``
    (that is its handle at *this* notegate, which no upstream may see). The model can therefore never carry an
    upstream's handle; without this, a remote notegate's knowledge tools refused every call through the gateway
    (``session-handle-missing``) and only ``session_start`` worked. The handle is kept like the mount's grant, in
    this process only, per (mount, person, connector login): another person or connector never gets it. In memory,
    at most ``max_held``, the least recently used forgotten first; after a restart the upstream asks for a new
    session, as it does when one expires."""

    def __init__(self, max_held: int = 1024) -> None:
        self.max_held = max_held
        self._held: OrderedDict[tuple[str, str, str], str] = OrderedDict()

    def passed(self, key: tuple[str, str, str], arguments: dict[str, Any]) -> dict[str, Any]:
        """``arguments`` with the handle held for ``key``, or without one (the upstream then asks for a session)."""
        out = {k: v for k, v in arguments.items() if k != SESSION_HANDLE}
        handle = self._held.get(key)
        if handle is not None:
            self._held.move_to_end(key)
            out[SESSION_HANDLE] = handle
        return out

    def keep(self, key: tuple[str, str, str], result: CallToolResult) -> None:
        """Hold the handle a result names in its structured part (what ``session_start`` answers)."""
        structured = result.structured_content
        handle = structured.get(SESSION_HANDLE) if isinstance(structured, dict) else None
        if result.is_error or not isinstance(handle, str) or not handle or len(handle) > 256:
            return
        self._held[key] = handle
        self._held.move_to_end(key)
        while len(self._held) > self.max_held:
            self._held.popitem(last=False)


def redact(result: CallToolResult) -> tuple[CallToolResult, list[str]]:
    """``result`` with every credential the scanner finds in its text replaced by ``[redacted:KIND]``, and the
    kinds found. Structured content is scanned as JSON: a credential there drops the structured part whole
    (the text part carries the redacted copy)."""
    kinds: list[str] = []
    content = []
    for item in result.content:
        if isinstance(item, TextContent):
            found = scan_credentials(item.text)
            if found:
                text = item.text
                for hit in sorted(found, key=lambda f: f.start, reverse=True):
                    text = text[: hit.start] + f"[redacted:{hit.kind}]" + text[hit.end :]
                kinds += [f.kind for f in found]
                item = item.model_copy(update={"text": text})
        content.append(item)
    update: dict[str, Any] = {"content": content}
    if result.structured_content is not None:
        found = scan_credentials(json.dumps(result.structured_content, ensure_ascii=False))
        if found:
            kinds += [f.kind for f in found]
            update["structured_content"] = None
    return result.model_copy(update=update), sorted(set(kinds))


def _refusal(exc: NotegateError) -> JSONResponse:
    return JSONResponse({"error": exc.explain(), "rule": exc.rule}, status_code=STATUS.get(exc.rule, 403))


def _bearer(request: Request) -> str | None:
    scheme, _, value = request.headers.get("authorization", "").partition(" ")
    return value.strip() if scheme.lower() == "bearer" and value.strip() else None


async def _body(request: Request) -> dict[str, Any]:
    raw = await request.body()
    if len(raw) > MAX_REQUEST_BYTES:
        raise NotegateError("the request is too large", rule="bad-argument")
    try:
        data = json.loads(raw or b"{}")
    except ValueError:
        raise NotegateError("the request is not JSON", rule="bad-argument") from None
    if not isinstance(data, dict):
        raise NotegateError("the request is not a JSON object", rule="bad-argument")
    return data


def create_tools_app(gateway: Gateway) -> Starlette:
    async def list_route(request: Request) -> JSONResponse:
        try:
            caller = gateway.verifier.verify(_bearer(request), "tools:list")
            return JSONResponse({"mounts": await anyio.to_thread.run_sync(gateway.listing, caller)})
        except NotegateError as exc:
            return _refusal(exc)

    async def call_route(request: Request) -> JSONResponse:
        try:
            caller = gateway.verifier.verify(_bearer(request), "tools:call")
            body = await _body(request)
            arguments = body.get("arguments") or {}
            if not isinstance(arguments, dict):
                raise NotegateError("arguments must be an object", rule="bad-argument")
            answer = await gateway.call(caller, str(body.get("mount", "")), str(body.get("tool", "")), arguments)
            return JSONResponse(answer)
        except NotegateError as exc:
            return _refusal(exc)

    async def verify_route(request: Request) -> JSONResponse:
        """Does the stored credential equal the value the owner holds? Match or not, nothing else."""
        try:
            caller = gateway.verifier.verify(_bearer(request), "tools:verify")
            value = (await _body(request)).get("value")
            if not isinstance(value, str):
                raise NotegateError("value must be a string", rule="bad-argument")
            match = await anyio.to_thread.run_sync(gateway.matches, caller, value)
            return JSONResponse({"match": match})
        except NotegateError as exc:
            return _refusal(exc)

    async def healthz(request: Request) -> JSONResponse:
        token = _bearer(request)
        try:
            caller = gateway.verifier.verify(token, "tools:health") if token is not None else None
        except NotegateError as exc:
            return _refusal(exc)
        environment = (caller.environment or None) if caller is not None else None
        upstreams = await gateway.health(environment)
        ok = all(u["state"] in SERVING for u in upstreams.values())
        body: dict[str, Any] = {"status": "ok" if ok else "degraded"}
        if caller is None:
            body["mounts"] = dict(sorted(Counter(u["state"] for u in upstreams.values()).items()))
        else:
            body["upstreams"] = upstreams
        return JSONResponse(body)

    @contextlib.asynccontextmanager
    async def lifespan(app):
        isolate_child_environment()
        async with anyio.create_task_group() as tg:
            gateway.flows.task_group = tg
            for upstream in gateway.upstreams.values():
                tg.start_soon(upstream.run)
            yield
            tg.cancel_scope.cancel()

    return Starlette(
        routes=[
            Route("/v1/list", list_route, methods=["POST"]),
            Route("/v1/call", call_route, methods=["POST"]),
            Route("/v1/verify", verify_route, methods=["POST"]),
            *oauth_routes(gateway, _bearer, _body, _refusal),
            Route("/healthz", healthz, methods=["GET"]),
        ],
        lifespan=lifespan,
    )
