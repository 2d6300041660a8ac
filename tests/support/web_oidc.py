"""OpenID Connect providers for the tests: the real one (``oidc-provider-mock``, a Flask app built on Authlib,
run on loopback in a thread) and a hostile stand-in that serves real discovery, keys and a token endpoint but
answers with whatever ID token a test crafted (wrong issuer, audience, nonce, expired, another algorithm, an
unknown key), so each refusal is checked through the real server by its exact rule."""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
import warnings
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx2
import pytest
from joserfc import jwt
from joserfc.jwk import KeySet, OctKey, RSAKey

from notegate.auth.websession import PRE_PREFIX, csrf_token, mint_secret

CLIENT_ID = "notegate-test"
PRE_COOKIE = "notegate-pre"


def add_provider(config_path: Path, name: str, issuer: str, **values: object) -> None:
    """Append an ``[oidc.NAME]`` table to the deployment's config."""
    lines = [f"\n[oidc.{name}]", f'issuer = "{issuer}"', f'client_id = "{CLIENT_ID}"']
    for key, value in values.items():
        lines.append(f"{key} = {json.dumps(value)}")
    config_path.write_text(config_path.read_text() + "\n".join(lines) + "\n")


@contextlib.contextmanager
def real_provider() -> Iterator[str]:
    """oidc-provider-mock on loopback; its issuer URL. Skips when the dev extra is missing (NOTEGATE_REQUIRE_OIDC
    turns the skip into a failure, as .ci/run sets it)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # authlib.jose's deprecation, inside the provider only
            from oidc_provider_mock import run_server_in_thread
    except ImportError:
        if os.environ.get("NOTEGATE_REQUIRE_OIDC"):
            pytest.fail("NOTEGATE_REQUIRE_OIDC is set but oidc-provider-mock is missing (pip install -e '.[dev]')")
        pytest.skip("oidc-provider-mock is missing (the dev extras)")
    previous = os.environ.get("AUTHLIB_INSECURE_TRANSPORT")
    os.environ["AUTHLIB_INSECURE_TRANSPORT"] = "1"  # the provider on plain http, on loopback only
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with run_server_in_thread(require_nonce=True) as server:
                yield f"http://localhost:{server.server_port}"
    finally:
        if previous is None:
            os.environ.pop("AUTHLIB_INSECURE_TRANSPORT", None)
        else:
            os.environ["AUTHLIB_INSECURE_TRANSPORT"] = previous


def set_user(issuer: str, sub: str, **claims: Any) -> None:
    """What the real provider puts in this subject's ID tokens (amr, acr, auth_time, ...)."""
    assert httpx2.put(f"{issuer}/users/{sub}", json=claims).status_code == 204


class StubProvider:
    """A provider whose token endpoint answers with :attr:`token` (set by the test per login)."""

    def __init__(self) -> None:
        self.key = RSAKey.generate_key(2048, parameters={"kid": "stub-1", "use": "sig"}, private=True)
        self.rogue = RSAKey.generate_key(2048, parameters={"kid": "rogue", "use": "sig"}, private=True)
        self.token = ""
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _json(self, value: object) -> None:
                body = json.dumps(value).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:
                if self.path == "/.well-known/openid-configuration":
                    self._json(
                        {
                            "issuer": stub.issuer,
                            "authorization_endpoint": f"{stub.issuer}/authorize",
                            "token_endpoint": f"{stub.issuer}/token",
                            "jwks_uri": f"{stub.issuer}/jwks",
                        }
                    )
                elif self.path == "/jwks":
                    self._json(KeySet([stub.key]).as_dict(private=False))
                else:
                    self.send_error(404)

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", "0"))
                self.rfile.read(length)
                self._json({"access_token": "at", "token_type": "Bearer", "id_token": stub.token})

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.issuer = f"http://localhost:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def mint(self, nonce: str, *, key: Any = None, alg: str = "RS256", **claims: Any) -> str:
        now = int(time.time())
        payload = {
            "iss": self.issuer,
            "aud": CLIENT_ID,
            "sub": "stub-subject",
            "iat": now,
            "exp": now + 300,
            "auth_time": now,
            "nonce": nonce,
            **claims,
        }
        payload = {k: v for k, v in payload.items() if v is not None}
        signer = key or self.key
        if alg == "HS256":
            signer = OctKey.import_key("a-shared-secret-that-proves-nothing-32b", parameters={"kid": "stub-1"})
        header = {"alg": alg, "kid": signer.kid}
        return jwt.encode(header, payload, signer, algorithms=[alg])


def browser_client(console: Any) -> tuple[httpx2.Client, str]:
    """A client with a pre-session cookie (as the login page gives a browser) and its CSRF token."""
    pre = mint_secret(PRE_PREFIX)
    client = httpx2.Client(base_url=console.url, cookies={PRE_COOKIE: pre}, follow_redirects=False)
    return client, csrf_token(pre)


def start(client: httpx2.Client, csrf: str, provider: str, purpose: str = "login", **form: str) -> dict[str, str]:
    """POST the start form; the authorization request's parameters (state, nonce, max_age, ...)."""
    answer = client.post(f"/oidc/{provider}/start", params={"purpose": purpose}, data={"csrf": csrf, **form})
    assert answer.status_code == 303, answer.text[:500]
    return {k: v[0] for k, v in parse_qs(urlsplit(answer.headers["location"]).query).items()}
