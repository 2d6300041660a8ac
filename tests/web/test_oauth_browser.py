"""The whole OAuth flow with a person in a real chromium: the SDK's own OAuthClientProvider against a real
notegate server on loopback (the OAuth core as the consent backend, no fake), the person logged in with a
passkey, the consent page read and clicked, the browser sent to the client's own loopback redirect URI (a
tiny HTTP server, as a CLI client runs one), and the client then a hosted, restricted caller over MCP.
Once with dynamic registration, once with a Client ID Metadata Document (local HTTPS stand-in, test CA).

Playwright's sync API cannot run inside an event loop, so the SDK client runs in its own thread with its own
loop; the authorization URL comes to the test thread through a queue, and the callback URL goes back through
the redirect server's queue."""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import anyio
import httpx2
from mcp import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientMetadata
from pydantic import AnyUrl

from notegate.doors.http import base_url
from support import GatedClient, text_of
from support.oauth import Memory, StandIn, check_restricted_hosted
from support.oauth import set_server as set_config
from support.web_harness import Console, Device, enrolled, serve_console

WAIT = 60  # seconds any one hand-over may take on a loaded machine


class AccessDenied(Exception):
    """What the client's callback handler raises when the redirect carries an error instead of a code."""


class RedirectServer:
    """The client's redirect URI: a real HTTP server on 127.0.0.1 that records every URL it is sent to."""

    def __init__(self) -> None:
        self.landed: queue.Queue[str] = queue.Queue()
        landed = self.landed

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                landed.put(f"http://127.0.0.1:{self.server.server_address[1]}{self.path}")
                body = b"You may close this window."
                self.send_response(200)
                self.send_header("Content-Type", "text/plain")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}/callback"
        # shutdown() waits for serve_forever to look at its flag: every 0.5 s by default, here every 10 ms
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True, name="redirect-uri"
        )

    def __enter__(self) -> RedirectServer:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()


class HostedClient(threading.Thread):
    """The SDK client in its own thread and event loop: registers (or presents its metadata URL), hands the
    authorization URL over, waits for the redirect, then works over MCP as a hosted caller."""

    def __init__(self, server_url: str, redirect: RedirectServer, *, metadata_url: str | None = None) -> None:
        super().__init__(daemon=True, name="sdk-client")
        self.server_url = server_url
        self.redirect = redirect
        self.metadata_url = metadata_url
        self.storage = Memory()
        self.authorize: queue.Queue[str] = queue.Queue()
        self.authorize_urls: list[str] = []
        self.callbacks: list[str] = []
        self.tier: str | None = None
        self.error: BaseException | None = None

    async def _redirect_handler(self, url: str) -> None:
        self.authorize_urls.append(url)
        self.authorize.put(url)

    async def _callback_handler(self) -> AuthorizationCodeResult:
        url = await anyio.to_thread.run_sync(lambda: self.redirect.landed.get(timeout=WAIT))
        self.callbacks.append(url)
        query = {k: v[0] for k, v in parse_qs(urlsplit(url).query).items()}
        if "error" in query:
            raise AccessDenied(query["error"])
        return AuthorizationCodeResult(code=query["code"], state=query["state"], iss=query.get("iss"))

    async def _main(self) -> None:
        metadata = OAuthClientMetadata(
            client_name="Test hosted client",
            redirect_uris=[AnyUrl(self.redirect.url)],
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            token_endpoint_auth_method="none",
        )
        auth = OAuthClientProvider(
            f"{self.server_url}/mcp",
            metadata,
            self.storage,
            redirect_handler=self._redirect_handler,
            callback_handler=self._callback_handler,
            client_metadata_url=self.metadata_url,
        )
        async with (
            httpx2.AsyncClient(auth=auth, timeout=WAIT) as http,
            Client(streamable_http_client(f"{self.server_url}/mcp", http_client=http)) as client,
        ):
            started = await client.call_tool("session_start", {"project": "demo"})
            assert not started.is_error, text_of(started)
            self.tier = started.structured_content["tier"]
            await check_restricted_hosted(GatedClient(client, started.structured_content["handle"]))

    def run(self) -> None:
        try:
            anyio.run(self._main)
        except BaseException as error:  # handed to the test thread, which asserts on it
            self.error = error

    def finish(self) -> None:
        self.join(timeout=WAIT)
        assert not self.is_alive(), "the SDK client did not finish"


def causes(error: BaseException | None) -> list[BaseException]:
    """Every exception inside ``error``, through exception groups and causes (the SDK wraps in task groups)."""
    found: list[BaseException] = []
    pending = [error] if error is not None else []
    while pending:
        current = pending.pop()
        found.append(current)
        pending.extend(getattr(current, "exceptions", ()))
        pending.extend(e for e in (current.__cause__, current.__context__) if e is not None)
    return found


@contextmanager
def oauth_console(vault: Path) -> Iterator[Console]:
    """The real server with the OAuth core as its consent backend, on `make run`'s defaults (no public_url):
    the issuer is http://localhost:PORT, so /authorize, the consent page and the passkey login share one
    origin. These flows are the "a client on the loopback drives the whole OAuth flow" of issue 10."""
    with serve_console(vault, with_consent=False) as console:
        yield console


def consent_in_browser(console: Console, device: Device, client: HostedClient, *, click: str, name: str) -> str:
    """Follow the client's authorization URL, check what the consent page shows, click; returns the URL the
    browser was redirected to."""
    authorize = client.authorize.get(timeout=WAIT)
    assert authorize.startswith(f"{console.url}/authorize?")
    page = device.page
    page.goto(authorize)
    assert page.url.startswith(f"{console.url}/oauth/consent?request="), page.url
    assert page.locator("#redirect-host").text_content() == f"127.0.0.1:{client.redirect.port}"
    assert page.locator("#client-name").text_content() == f"“{name}”"
    assert "unverified" in page.locator("#unverified").text_content()
    page.click(click)
    page.wait_for_url(f"{client.redirect.url}?**", timeout=WAIT * 1000)
    assert page.locator("body").text_content() == "You may close this window."
    return page.url


def test_whole_flow_with_dynamic_registration_consent_clicked(vault: Path, device: Device) -> None:
    with oauth_console(vault) as console, RedirectServer() as redirect:
        enrolled(console, device)
        client = HostedClient(console.url, redirect)
        client.start()
        landed = consent_in_browser(console, device, client, click="#approve", name="Test hosted client")
        client.finish()
    assert client.error is None, repr(client.error)
    query = parse_qs(urlsplit(landed).query)
    assert set(query) == {"code", "state", "iss"} and query["iss"] == [console.url]
    assert client.callbacks == [landed]
    assert client.tier == "restricted"
    assert client.storage.client is not None and not client.storage.client.client_id.startswith("https://")
    assert client.storage.tokens is not None and client.storage.tokens.access_token.startswith("nga_")


def test_whole_flow_with_a_client_metadata_document_consent_clicked(
    vault: Path, device: Device, tmp_path: Path
) -> None:
    with StandIn(tmp_path) as standin, RedirectServer() as redirect:
        set_config(vault, cimd_ca_file=str(standin.ca), cimd_private_hosts=["localhost"])
        url = standin.serve(
            "/oauth/client.json",
            {
                "client_id": standin.url("/oauth/client.json"),
                "client_name": "CIMD client",
                "redirect_uris": [redirect.url],
            },
        )
        with oauth_console(vault) as console:
            enrolled(console, device)
            client = HostedClient(console.url, redirect, metadata_url=url)
            client.start()
            landed = consent_in_browser(console, device, client, click="#approve", name="CIMD client")
            client.finish()
        assert "/oauth/client.json" in standin.hits
    assert client.error is None, repr(client.error)
    query = parse_qs(urlsplit(landed).query)
    assert set(query) == {"code", "state", "iss"} and query["iss"] == [console.url]
    assert client.tier == "restricted"
    assert client.storage.client is not None and client.storage.client.client_id == url
    assert client.storage.tokens is not None and client.storage.tokens.access_token.startswith("nga_")


def test_deny_clicked_in_the_browser_gives_access_denied_and_no_token(vault: Path, device: Device) -> None:
    with oauth_console(vault) as console, RedirectServer() as redirect:
        enrolled(console, device)
        client = HostedClient(console.url, redirect)
        client.start()
        landed = consent_in_browser(console, device, client, click="#deny", name="Test hosted client")
        client.finish()
    query = parse_qs(urlsplit(landed).query)
    assert query["error"] == ["access_denied"] and "code" not in query
    assert query["iss"] == [console.url]
    assert client.callbacks == [landed]
    assert query["state"] == parse_qs(urlsplit(client.authorize_urls[0]).query)["state"]
    assert any(isinstance(e, AccessDenied) and str(e) == "access_denied" for e in causes(client.error))
    assert client.storage.tokens is None and client.tier is None


def test_default_loopback_serve_lets_the_person_log_in_at_consent(vault: Path, device: Device) -> None:
    with serve_console(vault, with_consent=False) as console, RedirectServer() as redirect:
        enrolled(console, device)
        # the MCP URL `notegate serve` prints for this config
        client = HostedClient(base_url(console.runtime, "127.0.0.1", console.port), redirect)
        client.start()
        try:
            device.page.goto(client.authorize.get(timeout=WAIT))
            if "/login?" in device.page.url:
                assert device.ceremony() == "ok"
            assert "/oauth/consent?request=" in device.page.url
            assert device.page.locator("#approve").count() == 1
        finally:
            redirect.landed.put(f"{redirect.url}?error=test_over")  # release the client whatever happened
            client.finish()
