"""The few OAuth endpoints notegate answers itself, in front of the SDK's, and why each one:

* ``/.well-known/oauth-authorization-server`` (RFC 8414): the SDK's document omits ``none`` among the token
  endpoint's auth methods, ``client_id_metadata_document_supported`` and
  ``authorization_response_iss_parameter_supported``; hosted clients need all three.
* ``/authorize``: refuses PKCE without ``code_challenge_method=S256`` (a missing method means ``plain``,
  RFC 7636 §4.3, which the SDK would take as S256), then runs the SDK's handler and adds ``iss``
  (RFC 9207) to every redirect that goes back to the client, errors included.
* ``/token`` and ``/revoke`` (RFC 7009): a DCR client's secret is stored only as its SHA-256, which the
  SDK's client authenticator cannot compare; both authenticate with
  :class:`~notegate.auth.client_auth.HashedSecretAuthenticator` (the SDK's ``TokenHandler`` does the rest of
  /token).  A public client revokes with its ``client_id`` alone (the SDK's /revoke wanted a
  ``client_secret`` field even then), a confidential one with its secret.  Revoking either token of a family
  revokes the whole family.
* ``/register``: the SDK's handler, behind a smaller body limit and the length limits of the fields it
  stores (:mod:`notegate.auth.anonymous`).

Every one of them reads at most a small body within ``body_timeout_seconds`` and refuses an over-long
stored field before any other work; a metadata document fetch that finds the CIMD pool full is answered
429 ``[cimd-busy]`` (:mod:`notegate.auth.cimd_pool`).  Requests per source are bounded in front of them
(:class:`notegate.auth.anonymous.AnonymousLimits`).
"""

from __future__ import annotations

import json

from mcp.server.auth.handlers.authorize import AuthorizationHandler
from mcp.server.auth.handlers.register import RegistrationHandler
from mcp.server.auth.handlers.token import TokenHandler
from mcp.server.auth.middleware.client_auth import AuthenticationError
from mcp.server.auth.provider import construct_redirect_uri
from mcp.server.auth.routes import build_metadata
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions, RevocationOptions
from mcp.shared.auth import InvalidRedirectUriError
from pydantic import AnyHttpUrl, AnyUrl, ValidationError
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route, request_response

from notegate.auth.anonymous import (
    MAX_FORM_BYTES,
    MAX_REGISTRATION_BYTES,
    BodyCap,
    field_refusal,
    registration_refusal,
)
from notegate.auth.cimd import CimdRefused
from notegate.auth.client_auth import HashedSecretAuthenticator
from notegate.auth.oauth import NotegateOAuthProvider
from notegate.errors import NotegateError

NO_STORE = {"Cache-Control": "no-store", "Pragma": "no-cache"}


def auth_settings(issuer: str, resource: str, scope: str) -> AuthSettings:
    return AuthSettings(
        issuer_url=issuer,
        resource_server_url=resource,
        # Every token carries the resource it was minted for (static tokens: this server's); /mcp refuses others.
        validate_token_resource=True,
        client_registration_options=ClientRegistrationOptions(
            enabled=True, valid_scopes=[scope], default_scopes=[scope]
        ),
        revocation_options=RevocationOptions(enabled=True),
    )


def metadata(issuer: str, scope: str) -> dict[str, object]:
    """RFC 8414 authorization-server metadata, from the SDK's builder plus what hosted clients need."""
    built = build_metadata(
        AnyHttpUrl(issuer),
        None,
        ClientRegistrationOptions(enabled=True, valid_scopes=[scope], default_scopes=[scope]),
        RevocationOptions(enabled=True),
    )
    doc = built.model_dump(mode="json", exclude_none=True)
    doc["issuer"] = issuer  # exact string comparison (RFC 8414 §3.3): no trailing slash added
    doc.update(
        scopes_supported=[scope],
        code_challenge_methods_supported=["S256"],
        token_endpoint_auth_methods_supported=["none", "client_secret_post", "client_secret_basic"],
        revocation_endpoint_auth_methods_supported=["none", "client_secret_post"],
        client_id_metadata_document_supported=True,
        authorization_response_iss_parameter_supported=True,
    )
    return doc


def with_iss(location: str, issuer: str) -> str:
    return construct_redirect_uri(location, iss=issuer)


def oauth_routes(provider: NotegateOAuthProvider) -> list[Route]:
    issuer = provider.issuer
    document = metadata(issuer, provider.policy.oauth_default_scope)
    sdk_authorize = AuthorizationHandler(provider)
    authenticator = HashedSecretAuthenticator(provider)
    token_handler = TokenHandler(provider, authenticator)
    consent_prefix = f"{issuer}/oauth/consent?"
    scope = provider.policy.oauth_default_scope

    async def well_known(_request: Request) -> Response:
        return JSONResponse(document, headers={"Cache-Control": "public, max-age=3600"})

    async def authorize(request: Request) -> Response:
        params = request.query_params if request.method == "GET" else await request.form()
        too_long = field_refusal(params)
        if too_long is not None:  # answered here, never redirected: the client's state is not echoed back
            return _json(400, "invalid_request", too_long)
        method = params.get("code_challenge_method")
        if not params.get("code_challenge") or method != "S256":
            refused = NotegateError(
                f"PKCE is required with code_challenge_method S256 (got {'none' if method is None else 'plain'})"
                if method in (None, "plain")
                else "PKCE is required with code_challenge_method S256",
                rule="pkce-required",
            )
            return await _refuse(params, "invalid_request", refused.explain())
        response = await sdk_authorize.handle(request)
        location = response.headers.get("location")
        if isinstance(response, RedirectResponse) and location and not location.startswith(consent_prefix):
            response.headers["location"] = with_iss(location, issuer)
        return response

    async def _refuse(params, error: str, description: str) -> Response:
        """Back to the client's redirect when it is a valid one for this client, else a 400 page (never a
        redirect to an address the client did not register)."""
        client_id = params.get("client_id")
        client = await provider.get_client(str(client_id)) if isinstance(client_id, str) and client_id else None
        raw = params.get("redirect_uri")
        if client is not None:
            try:
                target = client.validate_redirect_uri(AnyUrl(raw) if isinstance(raw, str) else None)
            except (InvalidRedirectUriError, ValidationError):
                target = None
            if target is not None:
                state = params.get("state")
                location = construct_redirect_uri(
                    str(target),
                    error=error,
                    error_description=description,
                    state=state if isinstance(state, str) else None,
                    iss=issuer,
                )
                return RedirectResponse(location, status_code=302, headers=NO_STORE)
        return JSONResponse({"error": error, "error_description": description}, status_code=400, headers=NO_STORE)

    async def revoke(request: Request) -> Response:
        form = await request.form()
        client_id, token = form.get("client_id"), form.get("token")
        if not isinstance(client_id, str) or not client_id or not isinstance(token, str) or not token:
            return JSONResponse(
                {"error": "invalid_request", "error_description": "token and client_id are required"},
                status_code=400,
                headers=NO_STORE,
            )
        try:
            client = await authenticator.authenticate_request(request)
        except AuthenticationError:
            return JSONResponse(
                {"error": "invalid_client", "error_description": "unknown client or wrong client secret"},
                status_code=401,
                headers=NO_STORE,
            )
        await provider.revoke_for(client.client_id, token)
        return Response(status_code=200, headers=NO_STORE)

    sdk_register = RegistrationHandler(
        provider, ClientRegistrationOptions(enabled=True, valid_scopes=[scope], default_scopes=[scope])
    )

    async def register(request: Request) -> Response:
        try:
            metadata = json.loads(await request.body())
        except (ValueError, UnicodeDecodeError):
            metadata = None  # the SDK's validation answers it in its own words
        too_long = registration_refusal(metadata)
        if too_long is not None:
            return _json(400, "invalid_client_metadata", too_long)
        return await sdk_register.handle(request)

    def cors(app):
        return CORSMiddleware(app, allow_origins="*", allow_methods=["GET", "POST", "OPTIONS"])

    seconds = provider.config.body_timeout_seconds

    def endpoint(handler, limit: int = MAX_FORM_BYTES):
        return BodyCap(request_response(_busy(handler)), limit, seconds)

    return [
        Route("/.well-known/oauth-authorization-server", cors(endpoint(well_known)), methods=["GET", "OPTIONS"]),
        Route("/authorize", endpoint(authorize), methods=["GET", "POST"]),
        Route("/token", cors(endpoint(token_handler.handle)), methods=["POST", "OPTIONS"]),
        Route("/revoke", cors(endpoint(revoke)), methods=["POST", "OPTIONS"]),
        Route("/register", cors(endpoint(register, MAX_REGISTRATION_BYTES)), methods=["POST", "OPTIONS"]),
    ]


def _json(status: int, error: str, refused: NotegateError, headers: dict[str, str] | None = None) -> Response:
    return JSONResponse(
        {"error": error, "error_description": refused.explain()},
        status_code=status,
        headers={**NO_STORE, **(headers or {})},
    )


def _busy(handler):
    """``handler``, answering 429 ``[cimd-busy]`` when a client's metadata document could not be fetched
    because the CIMD pool is full (anything else a fetch refuses makes the client unknown, as before)."""

    async def handle(request: Request) -> Response:
        try:
            return await handler(request)
        except CimdRefused as refused:
            if refused.rule != "cimd-busy":
                raise
            return _json(429, "temporarily_unavailable", refused, {"Retry-After": "1"})

    return handle
