"""The elevation tool: a restricted session asks the owner for a grant (approved in the browser, by passkey)."""

from __future__ import annotations

from typing import Annotated

from mcp.server.mcpserver import Context
from pydantic import Field

from notegate.doors.mcp.args import APPEND, EnvArg, GrantArg, HandleArg
from notegate.doors.mcp.caller import conversation_of
from notegate.doors.mcp.forwarding import ToolSet
from notegate.doors.mcp.results import ToolResult


class ElevationResult(ToolResult):
    link: str = Field(description="Show this to the owner: the approval page (single use, 10 minutes).")
    code: str = Field(description="Show this to the owner too: the page shows the same 4 letters.")
    grant: str = Field(description="Once approved, pass this as `grant` to every tool. A secret: never show it.")
    grant_id: str = Field(description="The grant's public name (the owner sees it in `notegate grant list`).")
    expires_at: str = Field(description="When the link stops working (UTC).")
    message: str


TOOLS = ToolSet()


@TOOLS.forward(APPEND, from_request=lambda ctx: {"conversation": conversation_of(ctx)})
async def request_elevation(
    ctx: Context,
    reason: Annotated[
        str, Field(description="One line for the owner: what you want to do that a restricted session may not.")
    ],
    environment: EnvArg = None,
    handle: HandleArg = None,
    grant: GrantArg = None,
) -> ElevationResult:
    """Ask the owner to let this session write outside the inbox for a few hours. Returns a link and a code:
    show both to the owner, who approves in the browser with a passkey; then pass the returned grant as
    `grant` to the other tools. Nothing changes until the owner approves."""
