"""Tools that are one service method on the wire: the tool's signature and docstring say what a model sees, and
its body is always the same, so it is written once here.

Why: fourteen tools had the same body, word for word but for the names (``await call(ctx, notes.write_note,
WriteResult, path=path, …, environment=environment, handle=handle, grant=grant)``).  What differs between them
is the declaration: the arguments with their descriptions, the annotations, the docstring and the result
model.  That stays written out at each tool, where the SDK reads it (``tools/list`` is built from it, unchanged:
``tests/doors/test_mcp_surface.py``); :func:`forwarding` supplies the body.

The rule of :mod:`.calls` holds: every argument reaches the service by keyword, under its own name, so a service
parameter renamed without its tool fails loudly (``tests/doors/test_mcp_forwarding.py``), never binds by
position.  A tool that does more than forward (read_attachment's content blocks, request_elevation's
conversation id, session_start's gate) keeps an ordinary ``@mcp.tool`` body.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any, TypeVar

from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp_types import ToolAnnotations

from notegate.doors.mcp.calls import ToolCall

F = TypeVar("F", bound=Callable[..., Any])


def forwarding(mcp: MCPServer, call: ToolCall, service: object) -> Callable[[ToolAnnotations], Callable[[F], F]]:
    """``@forward(READ)`` over ``async def read_note(ctx, path, …) -> NoteRead: "doc"`` registers the tool
    ``read_note`` that hands every argument, by name, to ``service.read_note`` and returns its result as the
    declared model (through ``call``: caller, session handle, worker thread, notice, refusals)."""

    def forward(annotations: ToolAnnotations) -> Callable[[F], F]:
        def register(declared: F) -> F:
            name = declared.__name__
            out = inspect.signature(declared, eval_str=True).return_annotation
            if not callable(getattr(service, name, None)):
                raise TypeError(f"the tool {name} forwards to {type(service).__name__}.{name}, which does not exist")

            @functools.wraps(declared)  # the SDK reads the declared signature, docstring and result through it
            async def tool(ctx: Context, **arguments: Any) -> Any:
                # looked up per call, as the hand-written bodies did (a test may replace the method)
                return await call(ctx, getattr(service, name), out, **arguments)

            mcp.tool(annotations=annotations)(tool)
            return tool  # type: ignore[return-value]

        return register

    return forward
