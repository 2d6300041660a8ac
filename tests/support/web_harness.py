"""The console under test: a real uvicorn server on loopback in this process (so the clock and the consent
backend can be injected), and a real chromium with a CDP virtual authenticator per simulated device."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx2
import uvicorn
from playwright.sync_api import Error as PlaywrightError

from notegate.auth.consent import PendingConsent
from notegate.config import load_config
from notegate.doors.http import create_app
from notegate.errors import NotegateError
from notegate.lab.browser import AUTHENTICATOR as AUTHENTICATOR
from notegate.lab.browser import CHROMIUM as CHROMIUM
from notegate.lab.browser import CHROMIUM_ARGS as CHROMIUM_ARGS
from notegate.services.runtime import Runtime
from support import free_port

# Debian's chromium, its flags and the virtual platform authenticator: one definition, shared with the lab.


class Clock:
    """The server's injected clock: real time plus whatever a test skips ahead."""

    def __init__(self) -> None:
        self.offset = 0.0

    def __call__(self) -> float:
        return time.time() + self.offset

    def advance(self, seconds: float) -> None:
        self.offset += seconds


@dataclass
class FakeConsent:
    """A ConsentBackend that keeps its requests in a dict and records every answer."""

    requests: dict[str, PendingConsent] = field(default_factory=dict)
    answers: list[tuple[str, str, str | None]] = field(default_factory=list)

    def add(self, request_id: str, redirect_uri: str, client_name: str = "Claude") -> PendingConsent:
        from urllib.parse import urlsplit

        pending = PendingConsent(
            request_id=request_id,
            client_id="https://claude.ai/oauth/client.json",
            client_name=client_name,
            redirect_uri=redirect_uri,
            redirect_host=urlsplit(redirect_uri).hostname or "",
            grants_text="restricted: reads everything but private notes, writes only the inbox",
            created_at=time.time(),
        )
        self.requests[request_id] = pending
        return pending

    def pending(self, request_id: str, *, now: float) -> PendingConsent | None:
        return self.requests.get(request_id)

    def _answer(self, request_id: str, kind: str, person: str | None) -> PendingConsent:
        pending = self.requests.pop(request_id, None)
        if pending is None:
            raise NotegateError("this request was already answered", rule="consent-unknown")
        self.answers.append((request_id, kind, person))
        return pending

    def approve(self, request_id: str, *, person: str, now: float) -> str:
        pending = self._answer(request_id, "approve", person)
        return f"{pending.redirect_uri}?code=fake-code&state=s1&iss=test"

    def deny(self, request_id: str, *, now: float) -> str:
        pending = self._answer(request_id, "deny", None)
        return f"{pending.redirect_uri}?error=access_denied&state=s1&iss=test"


@dataclass
class Console:
    url: str
    port: int
    runtime: Runtime
    clock: Clock
    consent: FakeConsent
    config_path: Path

    def enrol_link(self, login: str | None = None) -> str:
        """What `notegate owner enroll` prints, from the real CLI."""
        return cli(self.config_path, "owner", "enroll", *(["--login", login] if login else [])).strip()


def cli(config_path: Path, *argv: str) -> str:
    import io
    from contextlib import redirect_stdout

    from notegate.cli import main

    out = io.StringIO()
    with redirect_stdout(out):
        code = main([*argv[:2], "--config", str(config_path), *argv[2:]])
    assert code == 0, (argv, out.getvalue())
    return out.getvalue()


def set_server(config_path: Path, **values: object) -> None:
    """Rewrite [server] keys (the port the CLI prints links for, a public_url)."""
    lines = config_path.read_text().splitlines()
    for key, value in values.items():
        rendered = f'"{value}"' if isinstance(value, str) else str(value)
        lines = [f"{key} = {rendered}" if ln.split("=")[0].strip() == key else ln for ln in lines]
    config_path.write_text("\n".join(lines) + "\n")


@contextlib.contextmanager
def serve_console(config_path: Path, *, with_consent: bool = True) -> Iterator[Console]:
    """A real uvicorn server on 127.0.0.1 serving the whole app (MCP, console) with an injected clock, on
    `make run`'s defaults: no public_url, so the server names itself http://localhost:PORT (the OAuth
    issuer, the consent page and the passkey login share that origin)."""
    port = free_port()
    set_server(config_path, port=port)
    config = load_config(config_path)
    clock = Clock()
    runtime = Runtime(config, clock=clock)
    consent = FakeConsent()
    app = create_app(runtime, host="127.0.0.1", port=port, consent=consent if with_consent else None)
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, daemon=True, name="console-server")
    thread.start()
    url = f"http://localhost:{port}"
    deadline = time.monotonic() + 60
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the console server did not start")
        time.sleep(0.02)
    assert httpx2.get(f"http://127.0.0.1:{port}/healthz").status_code == 200
    try:
        yield Console(url, port, runtime, clock, consent, config_path)
    finally:
        server.should_exit = True
        thread.join(timeout=30)


class Device:
    """One browser context with its own virtual authenticator: a person's phone or laptop."""

    def __init__(self, browser: Any, *, credentials: list[dict] | None = None) -> None:
        self.context = browser.new_context()
        self.page = self.context.new_page()
        self.cdp = self.context.new_cdp_session(self.page)
        self.cdp.send("WebAuthn.enable", {"enableUI": False})
        self.authenticator = self.cdp.send("WebAuthn.addVirtualAuthenticator", {"options": AUTHENTICATOR})[
            "authenticatorId"
        ]
        for credential in credentials or ():
            self.cdp.send("WebAuthn.addCredential", {"authenticatorId": self.authenticator, "credential": credential})

    def swap_authenticator(self) -> list[dict]:
        """Replace this device's authenticator by an empty one; returns the old one's credentials."""
        old = self.credentials()
        self.cdp.send("WebAuthn.removeVirtualAuthenticator", {"authenticatorId": self.authenticator})
        self.authenticator = self.cdp.send("WebAuthn.addVirtualAuthenticator", {"options": AUTHENTICATOR})[
            "authenticatorId"
        ]
        return old

    def credentials(self) -> list[dict]:
        return self.cdp.send("WebAuthn.getCredentials", {"authenticatorId": self.authenticator})["credentials"]

    def user_verified(self, verified: bool) -> None:
        self.cdp.send("WebAuthn.setUserVerified", {"authenticatorId": self.authenticator, "isUserVerified": verified})

    def close(self) -> None:
        self.context.close()

    # -- what a person does
    def enrol(self, link: str, name: str = "laptop") -> str:
        """Open the printed link and create a passkey; returns the rule the page ended with ("ok" if enrolled)."""
        self.page.goto(link)
        if self.page.locator("#refusal").count():
            return self.page.locator("#refusal").get_attribute("data-rule") or ""
        self.page.fill("#name", name)
        return self.ceremony()

    def ceremony(self) -> str:
        """Click the page's passkey button; wait for the server's verdict (or the browser's own refusal) and,
        on success, for the page the script goes to. Returns the rule that refused, or "ok"."""
        seen: list[Any] = []

        def record(response: Any) -> None:
            if response.request.method == "POST" or response.request.is_navigation_request():
                seen.append(response)

        self.page.on("response", record)
        try:
            self.page.click("#go")
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline:
                for i, response in enumerate(seen):
                    if response.request.method == "POST" and response.status != 200:
                        return response.json()["rule"]
                    if response.request.method == "POST" and response.url.endswith("/verify"):
                        went = [r for r in seen[i + 1 :] if r.request.is_navigation_request()]
                        if went:
                            self._arrive(urlsplit(went[-1].url))
                            return "ok"
                try:
                    rule = self.page.evaluate("() => document.getElementById('status')?.getAttribute('data-rule')")
                except PlaywrightError:  # the page is navigating: the next round sees where it went
                    rule = None
                if rule and rule.startswith("browser:"):
                    return rule
                self.page.wait_for_timeout(50)
            raise AssertionError(f"the passkey step did not finish: {[(r.url, r.status) for r in seen]}")
        finally:
            self.page.remove_listener("response", record)

    def _arrive(self, url: Any) -> None:
        """Wait until the script's navigation to ``path`` has loaded a new page (the old one said "ok")."""
        self.page.wait_for_function(
            "(path) => location.pathname + location.search === path && document.readyState === 'complete'"
            " && document.getElementById('status')?.getAttribute('data-rule') !== 'ok'",
            arg=url.path + (f"?{url.query}" if url.query else ""),
            timeout=20_000,
        )

    def login(self, console: Console, next_path: str | None = None) -> str:
        self.page.goto(f"{console.url}/login" + (f"?next={next_path}" if next_path else ""))
        return self.ceremony()


#: A same-origin JSON POST from the page, with the page's CSRF token (as the console's script sends it).
FETCH = """async ([url, body]) => {
  const csrf = document.getElementById('ceremony')?.getAttribute('data-csrf') ?? '';
  const r = await fetch(url, {method: 'POST', headers: {'Content-Type': 'application/json', 'X-CSRF-Token': csrf},
                              body: JSON.stringify(body)});
  return await r.json();
}"""


def _b64url(data: bytes) -> str:
    import base64

    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def sign_assertion(credential: dict, options: dict, origin: str, *, user_verified: bool) -> dict:
    """An assertion signed with a virtual authenticator's own key (from WebAuthn.getCredentials), with the UV
    flag as asked: what a hostile or broken client could send, which the browser never would."""
    import base64
    import hashlib
    import json as jsonlib
    import struct

    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    key = serialization.load_der_private_key(base64.b64decode(credential["privateKey"]), password=None)
    client_data = jsonlib.dumps(
        {"type": "webauthn.get", "challenge": options["challenge"], "origin": origin, "crossOrigin": False}
    ).encode()
    flags = 0x01 | (0x04 if user_verified else 0)
    auth_data = (
        hashlib.sha256(options["rpId"].encode()).digest()
        + bytes([flags])
        + struct.pack(">I", 1000 + time.time_ns() % 1000)
    )
    signed = auth_data + hashlib.sha256(client_data).digest()
    if isinstance(key, ec.EllipticCurvePrivateKey):
        signature = key.sign(signed, ec.ECDSA(hashes.SHA256()))
    else:  # Ed25519, which webauthn offers first
        signature = key.sign(signed)
    raw_id = base64.b64decode(credential["credentialId"])
    return {
        "id": _b64url(raw_id),
        "rawId": _b64url(raw_id),
        "type": "public-key",
        "response": {
            "clientDataJSON": _b64url(client_data),
            "authenticatorData": _b64url(auth_data),
            "signature": _b64url(signature),
            "userHandle": _b64url(base64.b64decode(credential["userHandle"])),
        },
        "clientExtensionResults": {},
    }


def enrolled(console: Console, device: Device, login: str | None = None) -> Device:
    assert device.enrol(console.enrol_link(login)) == "ok"
    return device


def assert_strict(headers: httpx2.Headers | dict) -> None:
    policy = headers["content-security-policy"]
    assert "default-src 'none'" in policy and "script-src 'self';" in policy
    assert "unsafe-inline" not in policy and "unsafe-eval" not in policy
    assert "frame-ancestors 'none'" in policy
    assert headers["referrer-policy"] == "no-referrer"
    assert headers["x-content-type-options"] == "nosniff"
