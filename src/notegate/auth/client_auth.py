"""Client authentication at /token and /revoke against a client_secret stored only as its SHA-256.

Theory of operation
-------------------
The SDK's registration handler mints a DCR client's ``client_secret`` (256 random bits) and returns it once;
the provider stores only its SHA-256 (``oauth_clients.secret_hash``), never the secret.  The SDK's own
``ClientAuthenticator`` compares the stored secret as is, so it cannot work over a hash: notegate answers
/token (the SDK's ``TokenHandler`` with this authenticator) and /revoke itself.

How the secret is read follows the client's registered ``token_endpoint_auth_method`` exactly as the SDK's
authenticator does (``client_secret_basic``: the Authorization header, its client id equal to the form's;
``client_secret_post``: the form field; ``none``: no secret).  Then:

* a client with a stored hash must present the secret whose SHA-256 equals it (``hmac.compare_digest`` on the
  two hex digests), whatever method it registered;
* a client registered for a secret method but holding no hash fails (nothing would have been checked);
* a public client (``none``, CIMD clients among them) passes with its client id alone: PKCE and the consent
  guard its codes, as for every public client.

A fast hash is right because the secret is random, not chosen by a person.  Every failure is
``AuthenticationError``, which the handlers answer ``401 invalid_client`` (how Claude's clients learn to
register again); the message never carries the secret.
"""

from __future__ import annotations

import base64
import binascii
import hmac
from typing import TYPE_CHECKING
from urllib.parse import unquote

from mcp.server.auth.middleware.client_auth import AuthenticationError, ClientAuthenticator
from starlette.requests import Request

from notegate.auth.oauth_core import digest

if TYPE_CHECKING:
    from notegate.auth.oauth import NotegateClient, NotegateOAuthProvider

MAX_SECRET_CHARS = 512


def secret_matches(stored_hash: str | None, presented: str | None) -> bool:
    """Does ``presented`` hash to ``stored_hash``?  False for a missing or oversized secret."""
    if not stored_hash or not isinstance(presented, str) or not presented or len(presented) > MAX_SECRET_CHARS:
        return False
    return hmac.compare_digest(stored_hash.encode(), digest(presented).encode())


def _basic_secret(header: str, client_id: str) -> str:
    if not header.startswith("Basic "):
        raise AuthenticationError("Missing or invalid Basic authentication in Authorization header")
    try:
        decoded = base64.b64decode(header[6:], validate=True).decode("utf-8")
    except (ValueError, UnicodeDecodeError, binascii.Error):
        raise AuthenticationError("Invalid Basic authentication header") from None
    if ":" not in decoded:
        raise AuthenticationError("Invalid Basic authentication header")
    basic_id, secret = decoded.split(":", 1)
    if unquote(basic_id) != client_id:  # RFC 6749 §2.3.1: both parts are form-urlencoded
        raise AuthenticationError("Client ID mismatch in Basic auth")
    return unquote(secret)


class HashedSecretAuthenticator(ClientAuthenticator):
    """The SDK's authenticator, over a stored hash instead of a stored secret."""

    def __init__(self, provider: NotegateOAuthProvider) -> None:
        super().__init__(provider)
        self.notegate = provider

    async def authenticate_request(self, request: Request) -> NotegateClient:
        form = await request.form()
        client_id = form.get("client_id")
        if not isinstance(client_id, str) or not client_id:
            raise AuthenticationError("Missing client_id")
        client = await self.notegate.get_client(client_id)
        if client is None:
            raise AuthenticationError("Invalid client_id")
        method = client.token_endpoint_auth_method
        if method == "client_secret_basic":
            presented: str | None = _basic_secret(request.headers.get("Authorization", ""), client_id)
        elif method == "client_secret_post":
            raw = form.get("client_secret")
            presented = raw if isinstance(raw, str) else None
        elif method == "none":
            presented = None
        else:
            raise AuthenticationError(f"Unsupported auth method: {method}")
        stored = client.secret_hash
        if stored is None:
            if method != "none":
                raise AuthenticationError("Client is registered for secret-based authentication but has no secret")
            return client
        if not presented:
            raise AuthenticationError("Client secret is required")
        if not secret_matches(stored, presented):
            raise AuthenticationError("Invalid client_secret")
        expires = client.client_secret_expires_at
        if expires and expires < int(self.notegate.clock()):
            raise AuthenticationError("Client secret has expired")
        return client
