"""A DCR client's client_secret through the real server: never in the state DB file, the right one works at
/token and /revoke (form field or Basic header), a wrong or missing one is 401 invalid_client, a public client
still needs none; and the SDK's own OAuthClientProvider registers as a confidential client and goes on."""

from __future__ import annotations

import base64
import hashlib
import secrets
import time
from pathlib import Path
from urllib.parse import parse_qs, quote, urlencode, urlsplit

import httpx2
import pytest
from mcp import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientMetadata
from pydantic import AnyUrl

from notegate.config import load_config
from support import Server, text_of
from support.oauth import CALLBACK, Memory, Person, backend, mcp_status

pytestmark = pytest.mark.anyio


def _db_bytes(vault: Path) -> bytes:
    state_dir = load_config(vault).state_dir
    return b"".join(p.read_bytes() for p in sorted(state_dir.glob("state.sqlite*")))


async def _register(http, url: str, method: str) -> dict:
    body = {
        "client_name": "confidential probe",
        "redirect_uris": [CALLBACK],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": method,
    }
    response = await http.post(f"{url}/register", json=body)
    assert response.status_code == 201, response.text
    return response.json()


async def _code(http, server: Server, vault: Path, client_id: str) -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).decode().rstrip("=")
    params = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": CALLBACK,
        "state": "st4te",
        "code_challenge": challenge,
        "code_challenge_method": "S256",
    }
    response = await http.get(f"{server.url}/authorize?{urlencode(params)}")
    request_id = parse_qs(urlsplit(response.headers["location"]).query)["request"][0]
    back = backend(vault, server.url).approve(request_id, person="owner", now=time.time())
    return parse_qs(urlsplit(back).query)["code"][0], verifier


def _exchange_form(client_id: str, code: str, verifier: str, **extra: str) -> dict[str, str]:
    return {
        "grant_type": "authorization_code",
        "client_id": client_id,
        "code": code,
        "code_verifier": verifier,
        "redirect_uri": CALLBACK,
        **extra,
    }


def _invalid_client(response: httpx2.Response) -> None:
    assert response.status_code == 401, response.text
    assert response.json()["error"] == "invalid_client"
    assert response.headers["cache-control"] == "no-store"


async def test_client_secret_post_is_stored_hashed_and_checked(served: Server, vault: Path) -> None:
    async with httpx2.AsyncClient(timeout=30) as http:
        registered = await _register(http, served.url, "client_secret_post")
        client_id, secret = registered["client_id"], registered["client_secret"]
        assert len(secret) >= 32
        code, verifier = await _code(http, served, vault, client_id)
        form = _exchange_form(client_id, code, verifier)
        _invalid_client(await http.post(f"{served.url}/token", data=form))  # no secret
        _invalid_client(await http.post(f"{served.url}/token", data={**form, "client_secret": secret[:-1] + "x"}))
        _invalid_client(await http.post(f"{served.url}/token", data={**form, "client_secret": "é" * 600}))
        # the stored hash itself is not a secret that works
        digest = hashlib.sha256(secret.encode()).hexdigest()
        _invalid_client(await http.post(f"{served.url}/token", data={**form, "client_secret": digest}))
        ok = await http.post(f"{served.url}/token", data={**form, "client_secret": secret})
        assert ok.status_code == 200, ok.text
        tokens = ok.json()
        assert await mcp_status(http, served, tokens["access_token"]) == 200

        refresh = {"grant_type": "refresh_token", "client_id": client_id, "refresh_token": tokens["refresh_token"]}
        _invalid_client(await http.post(f"{served.url}/token", data=refresh))
        rotated = await http.post(f"{served.url}/token", data={**refresh, "client_secret": secret})
        assert rotated.status_code == 200, rotated.text
        new = rotated.json()

        revoke = {"client_id": client_id, "token": new["refresh_token"]}
        _invalid_client(await http.post(f"{served.url}/revoke", data=revoke))
        _invalid_client(await http.post(f"{served.url}/revoke", data={**revoke, "client_secret": "wrong"}))
        assert await mcp_status(http, served, new["access_token"]) == 200  # the refused revocations did nothing
        revoked = await http.post(f"{served.url}/revoke", data={**revoke, "client_secret": secret})
        assert revoked.status_code == 200
        assert await mcp_status(http, served, new["access_token"]) == 401
    raw = _db_bytes(vault)
    assert secret.encode() not in raw
    assert hashlib.sha256(secret.encode()).hexdigest().encode() in raw  # what is kept instead


async def test_client_secret_basic_is_checked_from_the_header(served: Server, vault: Path) -> None:
    async with httpx2.AsyncClient(timeout=30) as http:
        registered = await _register(http, served.url, "client_secret_basic")
        client_id, secret = registered["client_id"], registered["client_secret"]
        code, verifier = await _code(http, served, vault, client_id)
        form = _exchange_form(client_id, code, verifier)

        def basic(user: str, password: str) -> dict[str, str]:
            pair = f"{quote(user, safe='')}:{quote(password, safe='')}".encode()
            return {"Authorization": "Basic " + base64.b64encode(pair).decode()}

        _invalid_client(await http.post(f"{served.url}/token", data=form))
        _invalid_client(await http.post(f"{served.url}/token", data={**form, "client_secret": secret}))  # not basic
        _invalid_client(await http.post(f"{served.url}/token", data=form, headers=basic(client_id, "wrong")))
        _invalid_client(await http.post(f"{served.url}/token", data=form, headers=basic("other-client", secret)))
        bad_header = {"Authorization": "Basic !!!not-base64"}
        _invalid_client(await http.post(f"{served.url}/token", data=form, headers=bad_header))
        ok = await http.post(f"{served.url}/token", data=form, headers=basic(client_id, secret))
        assert ok.status_code == 200, ok.text
    assert secret.encode() not in _db_bytes(vault)


async def test_a_public_client_needs_no_secret(served: Server, vault: Path) -> None:
    async with httpx2.AsyncClient(timeout=30) as http:
        registered = await _register(http, served.url, "none")
        assert "client_secret" not in registered or registered["client_secret"] is None
        client_id = registered["client_id"]
        code, verifier = await _code(http, served, vault, client_id)
        ok = await http.post(f"{served.url}/token", data=_exchange_form(client_id, code, verifier))
        assert ok.status_code == 200, ok.text
        tokens = ok.json()
        revoked = await http.post(
            f"{served.url}/revoke", data={"client_id": client_id, "token": tokens["access_token"]}
        )
        assert revoked.status_code == 200
        assert await mcp_status(http, served, tokens["access_token"]) == 401


async def test_the_sdk_client_registers_confidential_and_works(served: Server, vault: Path) -> None:
    """The official OAuthClientProvider with client_secret_post: DCR, consent, code exchange with its secret."""
    storage = Memory()
    person = Person(served, vault)
    metadata = OAuthClientMetadata(
        client_name="Confidential SDK client",
        redirect_uris=[AnyUrl(CALLBACK)],
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        token_endpoint_auth_method="client_secret_post",
    )
    auth = OAuthClientProvider(
        f"{served.url}/mcp", metadata, storage, redirect_handler=person.redirect, callback_handler=person.callback
    )
    async with (
        httpx2.AsyncClient(auth=auth, timeout=60) as http,
        Client(streamable_http_client(f"{served.url}/mcp", http_client=http)) as client,
    ):
        started = await client.call_tool("session_start", {"project": "demo"})
        assert not started.is_error, text_of(started)
        assert started.structured_content["tier"] == "restricted"
    assert storage.client is not None and storage.client.client_secret
    assert storage.client.client_secret.encode() not in _db_bytes(vault)
