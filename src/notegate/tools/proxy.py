"""The knowledge service's side of the tools gateway: the one connector lists and calls mounted tools.

``mount_tools_proxy`` wraps the MCP server's ``list_tools`` and ``call_tool`` (the door's only hook): a caller's
``tools/list`` is the notes tools plus, namespaced ``<mount>__<tool>``, the approved tools of the mounts its
environment and tier allow, as the tools process answers a ``tools:list`` token minted for this caller. A call
to a namespaced name goes to the tools process with a ``tools:call`` token minted for this one call (the
client's own token never leaves this process); what the caller does not see there (another environment's
mount, a listing waiting for approval, a mount that does not exist) is answered 404 by the same policy
function, and falls through to the SDK, which refuses it exactly as it refuses any unknown tool.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import anyio.to_thread
import httpx2
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult
from mcp_types import Tool as MCPTool

from notegate.doors.mcp.refusals import refusal
from notegate.errors import NotegateError
from notegate.policy.tools import namespaced, split_namespaced
from notegate.policy.vocab import Tier
from notegate.tools.tokens import Minter

log = logging.getLogger(__name__)

#: The argument a restricted caller passes a write tool's call to present an owner's grant (as for notes).
GRANT_ARGUMENT = "grant"
HANDLE_ARGUMENT = "handle"
_GRANT_SCHEMA = {
    "type": "string",
    "description": "A grant from request_elevation, approved by the owner: needed to call a tool that writes.",
}


class ToolsProxy:
    def __init__(self, services, resolver) -> None:
        runtime = services.runtime
        self.config = runtime.config.tools
        self.default_environment = runtime.config.default_environment
        self.resolver = resolver
        self.minter = Minter(runtime.state, runtime.config.state_dir, clock=runtime.clock)
        self._client: httpx2.AsyncClient | None = None

    def client(self) -> httpx2.AsyncClient:
        if self._client is None:
            self._client = httpx2.AsyncClient(
                base_url=self.config.url, trust_env=False, timeout=self.config.call_seconds + 5.0
            )
        return self._client

    def environment_of(self, caller) -> str:
        return caller.environment or self.default_environment

    async def _post(self, path: str, token: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """The tools process's answer, read as it arrives and cut at ``max_answer_bytes``: the knowledge
        service never holds more of one answer than that, whatever the tools process (or whoever listens on
        its port) sends."""
        limit = self.config.max_answer_bytes
        try:
            headers = {"Authorization": f"Bearer {token}"}
            async with self.client().stream("POST", path, json=body, headers=headers) as response:
                declared = response.headers.get("content-length", "")
                if declared.isdigit() and int(declared) > limit:
                    raise _too_large(path, limit)
                chunks, size = [], 0
                async for chunk in response.aiter_bytes():
                    size += len(chunk)
                    if size > limit:
                        raise _too_large(path, limit)
                    chunks.append(chunk)
                answer = json.loads(b"".join(chunks))
            if not isinstance(answer, dict):
                raise ValueError("not a JSON object")
            return response.status_code, answer
        except (httpx2.HTTPError, ValueError) as exc:
            raise NotegateError(
                f"the tools process did not answer ({type(exc).__name__})", rule="tools-unavailable"
            ) from None

    async def mounts_for(self, caller) -> list[dict[str, Any]]:
        token = self.minter.mint(caller, self.environment_of(caller), "tools:list")
        status, body = await self._post("/v1/list", token, {})
        if status != 200:
            raise NotegateError(
                str(body.get("error", "the tools process refused the listing")), rule="tools-unavailable"
            )
        return list(body.get("mounts", []))

    async def tools_for(self, caller) -> list[MCPTool]:
        """The mounted tools this caller sees, namespaced; none when the tools process does not answer."""
        try:
            mounts = await self.mounts_for(caller)
        except NotegateError:
            log.warning("the tools process did not answer a listing; mounted tools are left out")
            return []
        out = []
        for mount in mounts:
            for tool in mount["tools"]:
                out.append(self._listed(mount, tool, caller.tier))
        return out

    def _listed(self, mount: dict[str, Any], tool: dict[str, Any], tier: str) -> MCPTool:
        schema = dict(tool.get("inputSchema") or {"type": "object"})
        if HANDLE_ARGUMENT in (schema.get("properties") or {}):  # the tools process passes the upstream's own
            schema["properties"] = {k: v for k, v in schema["properties"].items() if k != HANDLE_ARGUMENT}
            if isinstance(schema.get("required"), list):
                schema["required"] = [name for name in schema["required"] if name != HANDLE_ARGUMENT]
        if tool.get("writes") and tier != Tier.TRUSTED:
            schema["properties"] = {**(schema.get("properties") or {}), GRANT_ARGUMENT: _GRANT_SCHEMA}
        description = tool.get("description") or ""
        return MCPTool(
            name=namespaced(mount["mount"], tool["name"]),
            title=f"{mount['mount']}: {tool.get('title') or tool['name']}",
            description=f"[{mount['mount']} ({mount['account']}), a mounted upstream tool] {description}".strip(),
            input_schema=schema,
            annotations=tool.get("annotations"),
        )

    async def call(self, context, mount: str, tool: str, arguments: dict[str, Any]) -> CallToolResult | None:
        """The mounted tool's result, or None when this caller does not see it (the SDK then answers as for
        any unknown tool). Refusals of a visible tool raise a readable ToolError."""
        arguments = dict(arguments)
        grant = arguments.pop(GRANT_ARGUMENT, None)
        # A hosted model passes its notes session handle to every tool, as the instructions say; it is the notes
        # tools' argument (and a credential) and never an upstream's, so it stops here. An upstream that takes a
        # session handle of its own (a remote notegate) gets the one the tools process holds for this caller
        # (tools/app.py HeldSessions): the model never sees it, results redact it.
        arguments.pop(HANDLE_ARGUMENT, None)
        try:
            caller = await anyio.to_thread.run_sync(
                lambda: self.resolver(context, grant=grant if isinstance(grant, str) else None)
            )
            # No listing first: the tools process decides visibility with the same policy function and answers
            # 404 [tools-hidden] for what this caller does not see (one round trip per call, not two).
            token = self.minter.mint(caller, self.environment_of(caller), "tools:call", mount=mount, tool=tool)
            status, body = await self._post("/v1/call", token, {"mount": mount, "tool": tool, "arguments": arguments})
            if status == 404:
                return None
            if status != 200:
                rule = str(body.get("rule") or "tools-unavailable")
                raise ToolError(str(body.get("error") or NotegateError("refused", rule=rule).explain()))
            return CallToolResult.model_validate(body["result"])
        except NotegateError as exc:
            raise refusal(exc) from None


def _too_large(path: str, limit: int) -> NotegateError:
    return NotegateError(
        f"the tools process's answer to {path} is larger than {limit} bytes", rule="tools-answer-too-large"
    )


def mount_tools_proxy(mcp, services, resolver) -> ToolsProxy | None:
    """Serve the mounted tools through ``mcp`` when ``[tools] url`` is set (the MCP door's one hook)."""
    if not services.runtime.config.tools.url:
        return None
    proxy = ToolsProxy(services, resolver)
    base_list, base_call = mcp.list_tools, mcp.call_tool

    async def list_tools() -> list[MCPTool]:
        notes = await base_list()
        try:
            caller = await anyio.to_thread.run_sync(lambda: resolver(None))
        except NotegateError:
            return notes
        return notes + await proxy.tools_for(caller)

    async def call_tool(name: str, arguments: dict[str, Any], context=None):
        parts = split_namespaced(name)
        if parts is not None:
            result = await proxy.call(context, parts[0], parts[1], arguments)
            if result is not None:
                return result
        return await base_call(name, arguments, context)

    mcp.list_tools = list_tools
    mcp.call_tool = call_tool
    return proxy
