"""The contract door: ``GET /contracts`` and ``POST /contracts/<name>`` for machine tokens (issue 16).

Two locks on one door: a machine can never obtain a session handle (machine tokens are refused on /mcp,
``[machine-no-mcp]``: "machines use contracts"), and a conversation can never reach a contract (any other
class is refused here, ``[contract-not-for-conversations]``). The door only verifies the bearer, reads the
body (bounded: the contract's limit; a larger one is not read), and turns the service's result or refusal
into JSON; every decision is the service's and the policy's.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Collection
from contextlib import AbstractContextManager
from typing import Any

import anyio
import anyio.to_thread
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from notegate.auth.tokens import TokenRecord
from notegate.doors.admission import credit_peer
from notegate.errors import NotegateError, http_status
from notegate.policy import decide_host
from notegate.services.callers import Callers
from notegate.services.contracts import ContractsService

# The HTTP status of each refusal is the registry's (errors.http_status): none is decided here.
BODY_SECONDS = 30.0


def _granted(credential: Any) -> tuple[str, ...]:
    """The contracts a verified credential was given (only a machine token has any)."""
    return credential.contracts if isinstance(credential, TokenRecord) else ()


def _refused(exc: NotegateError) -> JSONResponse:
    body = {"status": "refused", "rule": exc.rule, "error": exc.explain()}
    return JSONResponse(body, status_code=http_status(exc.rule))


def _unauthenticated() -> JSONResponse:
    refused = NotegateError(
        "a machine token is required (Authorization: Bearer ngt_…)",
        rule="unauthenticated",
        remedy="Send the machine token notegate token create --class machine printed.",
    )
    response = _refused(refused)
    response.headers["WWW-Authenticate"] = "Bearer"
    return response


async def _body(request: Request, limit: int) -> tuple[bytes | None, int]:
    """The body, or None past ``limit`` (then nothing more is read; the answer closes the connection)."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        return None, int(declared)
    chunks: list[bytes] = []
    size = 0
    with anyio.fail_after(BODY_SECONDS):
        async for chunk in request.stream():
            size += len(chunk)
            if size > limit:
                return None, size
            chunks.append(chunk)
    return b"".join(chunks), size


def _unlimited(_credential: str) -> AbstractContextManager[None]:
    return contextlib.nullcontext()


def contract_routes(
    contracts: ContractsService,
    verify: Callable[[str], Any],
    allowed_hosts: Collection[str] | None = None,
    *,
    holding: Callable[[str], AbstractContextManager[None]] = _unlimited,
    callers: Callers | None = None,
) -> list[Route]:
    """``allowed_hosts`` (None: no check) are the Host values the MCP door answers to; a request naming
    another host is refused before its token is looked at, as on /mcp (DNS-rebinding protection).
    ``holding(credential id)`` counts a call among the credential's open requests (the MCP door's guard
    shares its limits) and raises the refusal when it has too many.  ``callers`` turns the credential into
    its caller, as for every door (None: no membership, device or grant lookups)."""
    callers = callers or Callers()

    def wrong_host(request: Request) -> JSONResponse | None:
        if allowed_hosts is None:
            return None
        host = request.headers.get("host")
        decision = decide_host(host, allowed_hosts)
        if decision.allowed:
            return None
        return _refused(
            NotegateError(
                f"the Host header {(host or '')[:100]!r} is not one this server answers to", rule=decision.rule
            )
        )

    async def credential(request: Request) -> Any | None:
        header = request.headers.get("authorization", "")
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            return None
        found = await anyio.to_thread.run_sync(verify, token.strip())
        if found is not None:
            credit_peer(request.scope)  # the listener remembers this peer as a caller (doors/admission.py)
        return found

    async def list_contracts(request: Request) -> JSONResponse:
        if (refused := wrong_host(request)) is not None:
            return refused
        found = await credential(request)
        if found is None:
            return _unauthenticated()
        try:
            caller = await anyio.to_thread.run_sync(callers.resolve, found)
            listed = await anyio.to_thread.run_sync(contracts.available, caller, _granted(found))
        except NotegateError as exc:
            return _refused(exc)
        return JSONResponse({"contracts": listed})

    async def call_contract(request: Request) -> JSONResponse:
        if (refused := wrong_host(request)) is not None:
            refused.headers["Connection"] = "close"  # its body is not read
            return refused
        found = await credential(request)
        if found is None:
            return _unauthenticated()
        name = request.path_params["name"]
        body: bytes | None = None
        granted = _granted(found)
        try:
            caller = await anyio.to_thread.run_sync(callers.resolve, found)
            with holding(found.id):
                body, size = await _body(request, contracts.body_limit(name))
                result = await anyio.to_thread.run_sync(lambda: contracts.call(caller, granted, name, body, size=size))
        except NotegateError as exc:
            response = _refused(exc)
            if body is None:
                response.headers["Connection"] = "close"
            return response
        return JSONResponse(result.as_json())

    return [
        Route("/contracts", list_contracts, methods=["GET"]),
        Route("/contracts/{name}", call_contract, methods=["POST"]),
    ]
