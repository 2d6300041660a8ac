"""Serve one plain MCP request in the ASGI task: the SDK's kernel without its per-request transport (issue 15).

Why: in stateless Streamable HTTP the SDK builds, for every POST, a :class:`StreamableHTTPServerTransport`,
two pairs of memory streams, a message-router task, a :class:`JSONRPCDispatcher` with its own task group, and
a server task started in the session manager's task group, then tears them all down again.  A CPU profile of
32 MCP writers put about half the server's CPU per commit in the event loop, much of it this set-up.  The
SDK's own single-exchange entry for protocol 2026-07-28 (``mcp.server._streamable_http_modern``) answers a
JSON-mode request directly in the ASGI task; this does the same for the legacy (handshake-era) wire, which
older SDKs and hosted connectors that register by DCR speak (the SDK's own client 2.3 and Claude Code 2.1.332
send 2026-07-28 and never reach the per-request transport).

What stays the SDK's: everything.  This only decides whether a POST is the one plain case, then calls the
SDK's own kernel (:func:`mcp.server.runner.serve_one`: the :class:`ServerRunner`, its middleware chain,
method surface validation, tool dispatch, output-schema validation) with exactly the connection and context
the stateless transport would have built, maps a failure with the dispatcher's own ladder
(:func:`handler_exception_to_error_data`, then ``code 0`` as the dispatcher pins), and writes the reply as
the transport does (``model_dump_json(by_alias=True, exclude_unset=True)``, ``Content-Type:
application/json``).  It sits inside the SDK's app, behind the bearer check, the auth context and the
body-size limit, and behind :class:`notegate.doors.http.DoorGuard`, so none of those change.

The plain case: a POST to a stateless JSON-response manager, no protocol-version header or one of the
handshake versions (anything else is the SDK's modern entry), passing the SDK's own transport-security check
(Content-Type, Host, Origin), Accept naming JSON, Content-Type ``application/json``, a body that parses and
validates as exactly one JSON-RPC request (not a batch, notification or response) other than ``initialize``.
Anything else is handed to the SDK unchanged (the body replayed), so every refusal keeps the SDK's exact
status, headers and words.  ``tests/doors/test_single_exchange.py`` sends a corpus both ways and compares.

It leans on SDK internals (the manager's ``_handle_request``, ``_task_group`` and ``_lifespan_state``, and
the modern entry's dispatch context): pinned by ``mcp==2.3.0`` in pyproject; on an upgrade the differential
test is the check that this still answers as the SDK does.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

import pydantic_core
from mcp.server._streamable_http_modern import _SingleExchangeDispatchContext
from mcp.server.connection import Connection
from mcp.server.runner import serve_one
from mcp.server.streamable_http import check_accept_headers
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import RequestBodyLimitMiddleware, TransportSecurityMiddleware
from mcp.shared.inbound import MCP_PROTOCOL_VERSION_HEADER
from mcp.shared.jsonrpc_dispatcher import handler_exception_to_error_data, progress_token_from_params
from mcp.shared.message import ServerMessageMetadata
from mcp.shared.transport_context import TransportContext
from mcp_types import (
    DEFAULT_NEGOTIATED_VERSION,
    ErrorData,
    JSONRPCError,
    JSONRPCRequest,
    JSONRPCResponse,
    jsonrpc_message_adapter,
)
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from starlette.requests import Request
from starlette.responses import Response

from notegate.asgibody import replayed

Scope = dict[str, Any]
Message = dict[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

#: The logger the SDK's dispatcher reports an unexpected handler failure on: the same line, in the same place.
_DISPATCH_LOG = logging.getLogger("mcp.shared.jsonrpc_dispatcher")
_VERSION_HEADER = MCP_PROTOCOL_VERSION_HEADER.lower().encode("ascii")
_JSON = "application/json"


def _content_type_is_json(request: Request) -> bool:
    """The transport's own Content-Type test (``StreamableHTTPServerTransport._check_content_type``)."""
    content_type = request.headers.get("content-type", "")
    return any(part.strip() == _JSON for part in content_type.split(";")[0].split(","))


class SingleExchange:
    """The session manager's request handler, answering the plain case itself and handing the rest on.

    ``enabled`` is a switch for the differential test and for measuring: off, every request takes the
    SDK's path exactly as before."""

    def __init__(self, manager: StreamableHTTPSessionManager, *, enabled: bool = True) -> None:
        self.manager = manager
        self.sdk = manager._handle_request  # private: the manager has no public per-request entry below its limit
        self.security = TransportSecurityMiddleware(manager.security_settings)
        self.enabled = enabled
        self.served = 0  # requests this path answered (the tests check the path was taken)

    @classmethod
    def install(cls, manager: StreamableHTTPSessionManager) -> SingleExchange:
        """Put the handler in place of the manager's own, inside the same body-size limit."""
        handler = cls(manager)
        manager.asgi_app = RequestBodyLimitMiddleware(handler, manager.max_request_body_size)
        return handler

    def _eligible(self, scope: Scope) -> str | None:
        """The protocol version the legacy stateless path would serve this request at, or None: not ours."""
        manager = self.manager
        if not (self.enabled and manager.stateless and manager.json_response) or manager._task_group is None:
            return None
        if scope.get("type") != "http" or scope.get("method") != "POST":
            return None
        version = None
        for key, value in scope.get("headers", ()):
            if key == _VERSION_HEADER:
                version = value.decode("latin-1")
                break
        if version is None:
            return DEFAULT_NEGOTIATED_VERSION
        return version if version in HANDSHAKE_PROTOCOL_VERSIONS else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        version = self._eligible(scope)
        if version is None:
            await self.sdk(scope, receive, send)
            return
        request = Request(scope, receive)
        if (
            await self.security.validate_request(request, is_post=True) is not None
            or not check_accept_headers(request)[0]
            or not _content_type_is_json(request)
        ):
            await self.sdk(scope, receive, send)  # nothing read yet: the SDK answers with its own words
            return
        body = await request.body()
        message = _one_request(body)
        if message is None:
            await self.sdk(scope, replayed(body, receive), send)
            return
        self.served += 1
        reply = await self._serve(request, message, version)
        await Response(
            reply.model_dump_json(by_alias=True, exclude_unset=True), status_code=200, headers={"Content-Type": _JSON}
        )(scope, receive, send)

    async def _serve(self, request: Request, message: JSONRPCRequest, version: str) -> JSONRPCResponse | JSONRPCError:
        """What the stateless transport's dispatcher would write for ``message``: same connection, same context.

        The transport builds ``Connection.from_envelope(version, None, None)`` (born ready, no back channel),
        a dispatch context whose transport cannot send requests, and metadata carrying the HTTP request; in
        JSON-response mode a notification about the request has no wire and is dropped, as here (no sink)."""
        connection = Connection.from_envelope(version, None, None)
        dctx = _SingleExchangeDispatchContext(
            transport=TransportContext(kind="streamable-http", can_send_request=False),
            request_id=message.id,
            message_metadata=ServerMessageMetadata(request_context=request, can_send_request=False),
            progress_token=progress_token_from_params(message.params),
        )
        try:
            result = await serve_one(
                self.manager.app,
                dctx,
                message.method,
                message.params,
                connection=connection,
                lifespan_state=self.manager._lifespan_state,
            )
        except Exception as exc:
            error = handler_exception_to_error_data(exc)
            if error is None:  # the dispatcher's catch-all, word for word (it pins code 0 for v1 compatibility)
                _DISPATCH_LOG.exception("handler for %r raised", message.method)
                error = ErrorData(code=0, message=str(exc))
            return JSONRPCError(jsonrpc="2.0", id=message.id, error=error)
        return JSONRPCResponse(jsonrpc="2.0", id=message.id, result=result)


def _one_request(body: bytes) -> JSONRPCRequest | None:
    """The body as one JSON-RPC request other than ``initialize``, parsed as the transport parses it; else None."""
    try:
        message = jsonrpc_message_adapter.validate_python(pydantic_core.from_json(body), by_name=False)
    except Exception:  # whatever the transport would refuse, it refuses in its own words
        return None
    if not isinstance(message, JSONRPCRequest) or message.method == "initialize":
        return None
    return message
