"""The tools process's upstream OAuth routes, answered to the knowledge service only (a one-use ``tools:oauth``
token minted for the owner's action):

* ``POST /v1/oauth/start`` (the token names the mount): begin a grant; answers the authorization URL the
  owner's browser goes to (``redirect_uri``: the knowledge service's callback; ``client_document``: its Client
  ID Metadata Document's URL, when it has an https address);
* ``POST /v1/oauth/pending`` (no mount named): which mount and environment the returning ``state`` belongs
  to, so the knowledge service checks that the signed-in person owns it before anything is finished;
* ``POST /v1/oauth/finish`` (the token names that mount): relay ``code``, ``state`` and ``iss``; the
  provider exchanges the code with the verifier only this process holds and stores the grant sealed.
"""

from __future__ import annotations

from typing import Any

from mcp.shared.auth import AuthorizationCodeResult
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from notegate.errors import NotegateError
from notegate.network import local_url
from notegate.tools.oauth_names import CALLBACK_PATH, MAX_FIELD_CHARS
from notegate.tools.remote import RemoteUpstream, SealedGrant


def remote_upstream(gateway, mount: str, url: str) -> RemoteUpstream:
    return RemoteUpstream(
        mount=mount,
        launch=None,  # type: ignore[arg-type]  # nothing to start here: a URL
        environment=dict,
        on_listing=gateway.record_listing,
        restart_seconds=gateway.config.restart_seconds,
        max_line_bytes=gateway.config.max_line_bytes,
        url=url,
        storage=SealedGrant(gateway.state, gateway.opener, mount, gateway.clock),
        redirect_uri=local_url(gateway.config.port) + CALLBACK_PATH,  # never used when serving: only a grant redirects
        call_seconds=gateway.config.call_seconds,
    )


def _field(body: dict[str, Any], name: str, *, required: bool = True) -> str | None:
    value = body.get(name)
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value or len(value) > MAX_FIELD_CHARS:
        raise NotegateError(f"{name} must be a short string", rule="bad-argument")
    return value


def oauth_routes(gateway, bearer, read_body, refusal) -> list[Route]:
    flows = gateway.flows

    async def start(request: Request) -> JSONResponse:
        try:
            caller = gateway.verifier.verify(bearer(request), "tools:oauth")
            body = await read_body(request)
            redirect_uri = _field(body, "redirect_uri")
            assert redirect_uri is not None
            if not redirect_uri.endswith(CALLBACK_PATH) or not redirect_uri.startswith(("https://", "http://")):
                raise NotegateError("the redirect URI is not the knowledge service's callback", rule="bad-argument")
            url = await flows.start(
                caller.mount, caller.environment, redirect_uri, _field(body, "client_document", required=False)
            )
            return JSONResponse({"authorization_url": url})
        except NotegateError as exc:
            return refusal(exc)

    async def pending(request: Request) -> JSONResponse:
        try:
            caller = gateway.verifier.verify(bearer(request), "tools:oauth")
            flow = flows.pending(_field(await read_body(request), "state") or "")
            if caller.environment and caller.environment != flow.environment:
                raise NotegateError("no grant is under way for this return", rule="tools-oauth-unknown")
            return JSONResponse({"mount": flow.mount, "environment": flow.environment})
        except NotegateError as exc:
            return refusal(exc)

    async def finish(request: Request) -> JSONResponse:
        try:
            caller = gateway.verifier.verify(bearer(request), "tools:oauth")
            body = await read_body(request)
            flow = flows.pending(_field(body, "state") or "")
            if (flow.mount, flow.environment) != (caller.mount, caller.environment):
                raise NotegateError("no grant is under way for this return", rule="tools-oauth-unknown")
            result = AuthorizationCodeResult(
                code=_field(body, "code") or "",
                state=_field(body, "state") or "",
                iss=_field(body, "iss", required=False),
            )
            await flows.finish(flow, result)
            return JSONResponse({"mount": flow.mount, "granted": True})
        except NotegateError as exc:
            return refusal(exc)

    return [
        Route("/v1/oauth/start", start, methods=["POST"]),
        Route("/v1/oauth/pending", pending, methods=["POST"]),
        Route("/v1/oauth/finish", finish, methods=["POST"]),
    ]
