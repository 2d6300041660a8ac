"""Tools declared at module level, each one service method on the wire, bound to a server when it is built.

Why module level: a tool is read and addressed by its name (``tools_notes.write_note``), as in the SDK's own
examples, not found as a closure inside a long ``register``.  What a model sees is the declaration: the
arguments with their descriptions, the annotations, the docstring and the result model, written out at each
tool where the SDK reads it (``tools/list`` is built from it, unchanged: ``tests/doors/test_mcp_surface.py``).
The body is the same for every tool (``await call(ctx, service.method, Result, name=value, …)``), so it is
written once here, in :meth:`ToolSet.register`; what little differs is said in the declaration's options:
another method name, fixed keywords, a value the door takes from the request, a result shaped before or
after the call.

The rule of :mod:`.calls` holds: every argument reaches the service by keyword, under its own name, so a
service parameter renamed without its tool fails loudly (``tests/doors/test_mcp_forwarding.py``), never binds
by position.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp_types import ToolAnnotations

from notegate.doors.mcp.calls import ToolCall

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True)
class Declared:
    """One tool as declared: the function the SDK reads, and how its call reaches the service."""

    declaration: Callable[..., Any]
    annotations: ToolAnnotations
    #: The service's method (the tool's own name unless said otherwise).
    method: str
    #: Keywords the door always passes to ``call`` (session_start's ``session_tool=True``).
    fixed: Mapping[str, Any] = field(default_factory=dict)
    #: Keywords the door takes from the request, never from the model's arguments (request_elevation's
    #: conversation id).
    from_request: Callable[[Context], dict[str, Any]] | None = None
    #: The model ``call`` returns, when the declared result is not it (read_attachment's content blocks).
    out: type | None = None
    #: The service's answer made into ``out`` (in the worker thread, before the result is checked).
    adapt: Callable[[Any], Any] | None = None
    #: ``out`` made into what the tool returns (on the event loop, after the call).
    present: Callable[[Any], Any] | None = None


class ToolSet:
    """The tools of one module: ``TOOLS = ToolSet()``, then ``@TOOLS.forward(READ)`` over each declaration;
    :meth:`register` binds them all to a server, a :class:`ToolCall` and the service object."""

    def __init__(self) -> None:
        self.declared: list[Declared] = []

    def forward(
        self,
        annotations: ToolAnnotations,
        *,
        method: str | None = None,
        fixed: Mapping[str, Any] | None = None,
        from_request: Callable[[Context], dict[str, Any]] | None = None,
        out: type | None = None,
        adapt: Callable[[Any], Any] | None = None,
        present: Callable[[Any], Any] | None = None,
    ) -> Callable[[F], F]:
        """``@TOOLS.forward(READ)`` over ``async def read_note(ctx, path, …) -> NoteRead: "doc"`` declares the
        tool ``read_note``, which hands every argument, by name, to the service's ``read_note``.  The
        declaration is returned unchanged: its body is never run."""

        def declare(declaration: F) -> F:
            self.declared.append(
                Declared(
                    declaration,
                    annotations,
                    method or declaration.__name__,
                    dict(fixed or {}),
                    from_request,
                    out,
                    adapt,
                    present,
                )
            )
            return declaration

        return declare

    def register(self, mcp: MCPServer, call: ToolCall, service: object) -> None:
        """Every declared tool on ``mcp``, calling ``service``.  A tool whose method the service lacks fails
        here, when the server is built, not at its first call."""
        for declared in self.declared:
            mcp.tool(annotations=declared.annotations)(_bound(declared, call, service))


def _bound(declared: Declared, call: ToolCall, service: object) -> Callable[..., Any]:
    name = declared.method
    if not callable(getattr(service, name, None)):
        tool = declared.declaration.__name__
        raise TypeError(f"the tool {tool} forwards to {type(service).__name__}.{name}, which does not exist")
    out = declared.out or inspect.signature(declared.declaration, eval_str=True).return_annotation
    adapt, present, from_request, fixed = declared.adapt, declared.present, declared.from_request, declared.fixed

    @functools.wraps(declared.declaration)  # the SDK reads the declared signature, docstring and result through it
    async def tool(ctx: Context, **arguments: Any) -> Any:
        method = getattr(service, name)  # looked up per call, as the hand-written bodies did (a test may replace it)
        fn = method if adapt is None else (lambda caller, **kw: adapt(method(caller, **kw)))
        extra = from_request(ctx) if from_request is not None else {}
        result = await call(ctx, fn, out, **fixed, **extra, **arguments)
        return result if present is None else present(result)

    return tool
