"""The OAuth door end to end: a real `notegate serve` on 127.0.0.1 driven by the SDK's own OAuthClientProvider,
once with dynamic registration and once with a Client ID Metadata Document served by a local HTTPS stand-in
(test CA named in the config). The consent is approved by calling the backend directly (the browser page
is another branch); the approval goes through the same state database file the server uses."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx2
import pytest
from mcp import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientMetadata
from pydantic import AnyUrl

from notegate.config import load_config
from support import GatedClient, Server, running, text_of
from support.oauth import (
    CALLBACK,
    Memory,
    Person,
    StandIn,
    approved_code,
    check_restricted_hosted,
    exchange,
    mcp_status,
    pkce_params,
    register,
    set_server,
)

pytestmark = pytest.mark.anyio


def client_metadata() -> OAuthClientMetadata:
    return OAuthClientMetadata(
        client_name="Test hosted client",
        redirect_uris=[AnyUrl(CALLBACK)],
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        token_endpoint_auth_method="none",
    )


@asynccontextmanager
async def oauth_client(
    server: Server, config_path: Path, *, metadata_url: str | None = None, storage: Memory | None = None
) -> AsyncIterator[tuple[GatedClient, Memory, Person]]:
    storage = storage or Memory()
    person = Person(server, config_path)
    auth = OAuthClientProvider(
        f"{server.url}/mcp",
        client_metadata(),
        storage,
        redirect_handler=person.redirect,
        callback_handler=person.callback,
        client_metadata_url=metadata_url,
    )
    async with (
        httpx2.AsyncClient(auth=auth, timeout=60) as http,
        Client(streamable_http_client(f"{server.url}/mcp", http_client=http)) as client,
    ):
        started = await client.call_tool("session_start", {"project": "demo"})
        assert not started.is_error, text_of(started)
        assert started.structured_content["tier"] == "restricted"
        yield GatedClient(client, started.structured_content["handle"]), storage, person


# --------------------------------------------------------------------------------------- metadata
async def test_metadata_documents(served: Server) -> None:
    async with httpx2.AsyncClient() as http:
        meta = (await http.get(f"{served.url}/.well-known/oauth-authorization-server")).json()
        resource = (await http.get(f"{served.url}/.well-known/oauth-protected-resource/mcp")).json()
        challenge = await http.post(f"{served.url}/mcp", json={})
    assert meta["issuer"] == served.issuer
    assert meta["code_challenge_methods_supported"] == ["S256"]
    assert "none" in meta["token_endpoint_auth_methods_supported"]
    assert meta["client_id_metadata_document_supported"] is True
    assert meta["authorization_response_iss_parameter_supported"] is True
    assert meta["registration_endpoint"] == f"{served.issuer}/register"
    assert meta["revocation_endpoint"] == f"{served.issuer}/revoke"
    assert meta["authorization_endpoint"] == f"{served.issuer}/authorize"
    assert meta["token_endpoint"] == f"{served.issuer}/token"
    assert resource["resource"] == f"{served.issuer}/mcp"
    assert resource["authorization_servers"] == [served.issuer]
    assert challenge.status_code == 401
    assert "oauth-protected-resource/mcp" in challenge.headers["www-authenticate"]


# ----------------------------------------------------------------------------------- whole flows
async def test_whole_flow_with_dynamic_registration(served: Server, vault: Path) -> None:
    async with oauth_client(served, vault) as (client, storage, person):
        await check_restricted_hosted(client)
    assert storage.client is not None and not storage.client.client_id.startswith("https://")
    authorize = parse_qs(urlsplit(person.authorize_urls[0]).query)
    assert authorize["code_challenge_method"] == ["S256"]
    assert storage.tokens is not None and storage.tokens.access_token.startswith("nga_")
    # Tokens are hashed at rest: neither string is anywhere in the state database.
    raw = (load_config(vault).state_dir / "state.sqlite").read_bytes()
    assert storage.tokens.access_token.encode() not in raw and storage.tokens.refresh_token.encode() not in raw


async def test_whole_flow_with_a_client_metadata_document(vault: Path, tmp_path: Path) -> None:
    with StandIn(tmp_path) as standin:
        set_server(vault, cimd_ca_file=str(standin.ca), cimd_private_hosts=["localhost"])
        url = standin.url("/oauth/client.json")
        standin.serve(
            "/oauth/client.json", {"client_id": url, "client_name": "CIMD client", "redirect_uris": [CALLBACK]}
        )
        with running(vault) as server:
            async with oauth_client(server, vault, metadata_url=url) as (client, storage, _person):
                await check_restricted_hosted(client)
        assert storage.client is not None and storage.client.client_id == url
        assert "/oauth/client.json" in standin.hits


async def test_cimd_from_a_private_address_is_refused_at_authorize(vault: Path, tmp_path: Path) -> None:
    with StandIn(tmp_path) as standin:
        set_server(vault, cimd_ca_file=str(standin.ca))  # localhost not allowed to be private
        url = standin.document("/oauth/client.json")
        with running(vault) as server:
            async with httpx2.AsyncClient() as http:
                response = await http.get(f"{server.url}/authorize?{urlencode(pkce_params(url))}")
        assert response.status_code == 400
        assert standin.hits == []


async def test_authorize_refusals(served: Server) -> None:
    async with httpx2.AsyncClient() as http:
        client_id = (await register(http, served.url)).json()["client_id"]

        async def authorize(**extra: str) -> httpx2.Response:
            return await http.get(f"{served.url}/authorize?{urlencode(pkce_params(client_id, **extra))}")

        for missing in ({"code_challenge": "", "code_challenge_method": ""}, {"code_challenge_method": "plain"}):
            refused = await authorize(**missing)
            assert refused.status_code == 302
            query = parse_qs(urlsplit(refused.headers["location"]).query)
            assert query["error"] == ["invalid_request"] and "Refused [pkce-required]" in query["error_description"][0]
            assert query["state"] == ["st4te"] and query["iss"] == [served.issuer]
        no_method = await authorize(code_challenge_method="")  # RFC 7636: no method means plain
        assert (
            "Refused [pkce-required]" in parse_qs(urlsplit(no_method.headers["location"]).query)["error_description"][0]
        )

        other_port = await authorize(redirect_uri="http://127.0.0.1:44444/callback")  # loopback: any port
        assert other_port.status_code == 302 and "/oauth/consent?request=" in other_port.headers["location"]
        other_path = await authorize(redirect_uri="http://127.0.0.1:33333/elsewhere")
        assert other_path.status_code == 400 and "Refused [redirect-not-registered]" in other_path.text
        foreign = await authorize(redirect_uri="https://evil.example/cb")
        assert foreign.status_code == 400 and "Refused [redirect-not-registered]" in foreign.text
        scope_error = await authorize(scope="admin")
        assert scope_error.status_code == 302
        query = parse_qs(urlsplit(scope_error.headers["location"]).query)
        assert query["error"] == ["invalid_scope"] and query["iss"] == [served.issuer]  # iss on every redirect


async def test_registration_refuses_a_redirect_not_in_the_allowlist(served: Server) -> None:
    async with httpx2.AsyncClient() as http:
        refused = await register(http, served.url, ["https://evil.example/callback"])
        allowed = await register(http, served.url, ["https://claude.ai/api/mcp/auth_callback"])
        loopback = await register(http, served.url, ["http://[::1]:5000/cb", "http://localhost/cb"])
    assert refused.status_code == 400
    assert refused.json()["error"] == "invalid_redirect_uri"
    assert "Refused [redirect-not-allowed]" in refused.json()["error_description"]
    assert allowed.status_code == 201 and loopback.status_code == 201


async def test_unknown_client_at_the_token_endpoint_is_401_invalid_client(served: Server) -> None:
    async with httpx2.AsyncClient() as http:
        response = await http.post(
            f"{served.url}/token",
            data={
                "grant_type": "authorization_code",
                "client_id": "no-such-client",
                "code": "x",
                "code_verifier": "y" * 43,
                "redirect_uri": CALLBACK,
            },
        )
    assert response.status_code == 401 and response.json()["error"] == "invalid_client"


async def test_code_reuse_refresh_rotation_family_revocation_and_revoke(served: Server, vault: Path) -> None:
    async with httpx2.AsyncClient(timeout=30) as http:
        client_id, code, verifier = await approved_code(http, served, vault)
        first = await exchange(http, served, client_id, code, verifier)
        assert first.status_code == 200, first.text
        tokens = first.json()
        assert tokens["scope"] == "notes"  # no scope asked: the default scope
        assert tokens["expires_in"] == 3600
        again = await exchange(http, served, client_id, code, verifier)
        assert again.status_code == 400 and again.json()["error"] == "invalid_grant"
        # the reused code revoked the grant it started
        assert await mcp_status(http, served, tokens["access_token"]) == 401

        client_id, code, verifier = await approved_code(http, served, vault)
        tokens = (await exchange(http, served, client_id, code, verifier)).json()
        assert await mcp_status(http, served, tokens["access_token"]) == 200
        refresh = {"grant_type": "refresh_token", "client_id": client_id, "refresh_token": tokens["refresh_token"]}
        rotated = await http.post(f"{served.url}/token", data=refresh)
        assert rotated.status_code == 200
        new = rotated.json()
        assert new["refresh_token"] != tokens["refresh_token"]
        assert await mcp_status(http, served, new["access_token"]) == 200
        reused = await http.post(f"{served.url}/token", data=refresh)
        assert reused.status_code == 400 and reused.json()["error"] == "invalid_grant"
        # the whole family is gone: the newest access and refresh tokens too
        assert await mcp_status(http, served, new["access_token"]) == 401
        assert await mcp_status(http, served, tokens["access_token"]) == 401
        later = await http.post(f"{served.url}/token", data={**refresh, "refresh_token": new["refresh_token"]})
        assert later.status_code == 400

        # revocation by a public client: client_id alone, no client_secret field
        client_id, code, verifier = await approved_code(http, served, vault)
        tokens = (await exchange(http, served, client_id, code, verifier)).json()
        revoked = await http.post(
            f"{served.url}/revoke", data={"client_id": client_id, "token": tokens["refresh_token"]}
        )
        assert revoked.status_code == 200
        assert await mcp_status(http, served, tokens["access_token"]) == 401
        unknown = await http.post(f"{served.url}/revoke", data={"client_id": "nobody", "token": "x"})
        assert unknown.status_code == 401 and unknown.json()["error"] == "invalid_client"


async def test_a_token_for_another_resource_is_refused_at_mcp(served: Server, vault: Path) -> None:
    async with httpx2.AsyncClient(timeout=30) as http:
        client_id, code, verifier = await approved_code(http, served, vault, resource="https://other.example/mcp")
        other = (await exchange(http, served, client_id, code, verifier)).json()
        assert await mcp_status(http, served, other["access_token"]) == 401
        client_id, code, verifier = await approved_code(http, served, vault, resource=f"{served.url}/mcp")
        ours = (await exchange(http, served, client_id, code, verifier)).json()
        assert await mcp_status(http, served, ours["access_token"]) == 200
