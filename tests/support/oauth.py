"""OAuth over the real HTTP door: the SDK's token storage, a person who consents, registration, codes and exchanges."""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import ssl
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx2
from mcp.client.auth import TokenStorage
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthToken

from notegate.auth.oauth_core import OAuthCore
from notegate.config import load_config
from notegate.lab.standins import make_ca
from notegate.state import StateDB
from support import GatedClient, Server, text_of

CALLBACK = "http://127.0.0.1:33333/callback"


class Memory(TokenStorage):
    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


def backend(config_path: Path, issuer: str) -> OAuthCore:
    """The consent backend over the server's own state file (what the consent page will call)."""
    config = load_config(config_path)
    return OAuthCore(StateDB(config.state_dir / "state.sqlite"), config, issuer=issuer)


class Person:
    """Plays the browser and the person at the consent page: follows /authorize, approves as ``login``."""

    def __init__(self, server: Server, config_path: Path, login: str = "owner") -> None:
        self.server = server
        self.config_path = config_path
        self.login = login
        self.answers: list[str] = []
        self.authorize_urls: list[str] = []

    async def redirect(self, url: str) -> None:
        self.authorize_urls.append(url)
        async with httpx2.AsyncClient() as http:
            response = await http.get(url, follow_redirects=False)
        assert response.status_code == 302, response.text
        consent = response.headers["location"]
        assert consent.startswith(f"{self.server.url}/oauth/consent?request=")
        request_id = parse_qs(urlsplit(consent).query)["request"][0]
        core = backend(self.config_path, self.server.url)
        shown = core.pending(request_id, now=time.time())
        assert shown is not None and shown.redirect_host == "127.0.0.1:33333"
        self.answers.append(core.approve(request_id, person=self.login, now=time.time()))

    async def callback(self) -> AuthorizationCodeResult:
        query = parse_qs(urlsplit(self.answers[-1]).query)
        return AuthorizationCodeResult(code=query["code"][0], state=query["state"][0], iss=query["iss"][0])


async def check_restricted_hosted(client: GatedClient) -> None:
    tools = {t.name for t in (await client.list_tools()).tools}
    assert {"read_note", "inbox_write", "write_note"} <= tools
    read = await client.call_tool("read_note", {"path": "rules/digest.md"})
    assert not read.is_error, text_of(read)
    wrote = await client.call_tool("inbox_write", {"kind": "capture", "text": "An idea.", "title": "oauth idea"})
    assert not wrote.is_error, text_of(wrote)
    refused = await client.call_tool(
        "write_note", {"path": "ideas/x.md", "content": "x\n", "base_revision": "absent", "confirmed": True}
    )
    assert refused.is_error and "Refused [restricted-outside-inbox]" in text_of(refused)


def set_server(config_path: Path, **values: str | list[str]) -> None:
    import json

    text = config_path.read_text()
    for key, value in values.items():
        lines = [f"{key} = {json.dumps(value)}" if ln.split("=")[0].strip() == key else ln for ln in text.splitlines()]
        text = "\n".join(lines) + "\n"
    config_path.write_text(text)


# --------------------------------------------------------------------------------- refusals
def pkce_params(client_id: str, **extra: str) -> dict[str, str]:
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
    params.update(extra)
    return {k: v for k, v in params.items() if v != ""}


async def register(http: httpx2.AsyncClient, url: str, redirect_uris: list[str] | None = None) -> httpx2.Response:
    body = {
        "client_name": "probe",
        "redirect_uris": redirect_uris or [CALLBACK],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
    }
    return await http.post(f"{url}/register", json=body)


# --------------------------------------------------------------- codes, refresh, revocation, resource
async def exchange(http, server: Server, client_id: str, code: str, verifier: str) -> httpx2.Response:
    return await http.post(
        f"{server.url}/token",
        data={
            "grant_type": "authorization_code",
            "client_id": client_id,
            "code": code,
            "code_verifier": verifier,
            "redirect_uri": CALLBACK,
        },
    )


async def approved_code(http, server: Server, vault: Path, **extra: str) -> tuple[str, str, str]:
    """A registered client, an approved code and its PKCE verifier."""
    client_id = (await register(http, server.url)).json()["client_id"]
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).decode().rstrip("=")
    params = {**pkce_params(client_id), "code_challenge": challenge, **extra}
    response = await http.get(f"{server.url}/authorize?{urlencode(params)}")
    request_id = parse_qs(urlsplit(response.headers["location"]).query)["request"][0]
    back = backend(vault, server.url).approve(request_id, person="owner", now=time.time())
    query = parse_qs(urlsplit(back).query)
    assert query["state"] == ["st4te"] and query["iss"] == [server.url]
    return client_id, query["code"][0], verifier


async def mcp_status(http, server: Server, token: str) -> int:
    response = await http.post(
        f"{server.url}/mcp",
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}},
        headers={
            "Authorization": f"Bearer {token}",
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": "2025-11-25",
        },
    )
    return response.status_code


class StandIn:
    """A real HTTPS server on 127.0.0.1 answering each path from ``routes``: (status, headers, body[, delay])."""

    def __init__(self, directory: Path) -> None:
        self.ca, cert, key = make_ca(directory)
        self.routes: dict[str, tuple] = {}
        self.hits: list[str] = []
        routes, hits = self.routes, self.hits

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                hits.append(self.path)
                status, headers, body, *delay = routes.get(self.path, (404, {}, b"not here"))
                if delay:
                    time.sleep(delay[0])  # a slow server (the fetcher's deadline is what is tested)
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(cert, key)
        self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
        self.port = self.server.server_address[1]
        # shutdown() waits for serve_forever to look at its flag: every 0.5 s by default, here every 10 ms
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)

    def url(self, path: str) -> str:
        return f"https://localhost:{self.port}{path}"

    def serve(self, path: str, document: dict | bytes, headers: dict[str, str] | None = None, **kw) -> str:
        body = document if isinstance(document, bytes) else json.dumps(document).encode()
        self.routes[path] = (
            kw.get("status", 200),
            {"Content-Type": "application/json", **(headers or {})},
            body,
            *([kw["delay"]] if "delay" in kw else []),
        )
        return self.url(path)

    def document(self, path: str, **extra) -> str:
        url = self.url(path)
        return self.serve(
            path,
            {"client_id": url, "client_name": "Stand-in client", "redirect_uris": ["http://127.0.0.1:9/cb"], **extra},
        )

    def __enter__(self) -> StandIn:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()
