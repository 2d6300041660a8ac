"""Logging in with an OpenID Connect provider: notegate as a relying party, beside passkeys.

Theory of operation:

* **Authorization Code with PKCE (S256), ``state`` and ``nonce``.** :meth:`RelyingParty.start` keeps one pending
  request per browser, provider and purpose (``oidc_pending``: the ``state`` only as its SHA-256, bound to the
  browser's cookie secret, dead after :data:`PENDING_SECONDS`, at most :data:`MAX_PENDING` at once) and returns
  the provider's authorization URL. :meth:`RelyingParty.finish` consumes it (single use), exchanges the code
  with the verifier and validates the ID token.
* **The ID token is checked by joserfc, never by hand**: the signature with a key of the provider's JWKS
  (``kid``), only the algorithms the provider's table accepts (asymmetric only), then ``iss``, ``aud``, ``exp``,
  ``iat`` and ``nonce`` by ``JWTClaimsRegistry``; ``azp`` by :func:`notegate.policy.decide_authorized_party`.
  Each failure is refused by its own rule (``oidc-issuer``, ``oidc-audience``, ``oidc-expired``, ``oidc-nonce``,
  ``oidc-algorithm``, ``oidc-key-unknown``, ...). A token already used is refused ``oidc-replayed``
  (``oidc_seen`` keeps its hash until it expires) before its claims are read.
* **A person is (issuer, subject)**, never an e-mail: ``oidc_identities`` links one to a login, made only through
  an owner's invitation. An unknown subject is refused ``oidc-subject-unknown`` with what the owner must do.
* **Outbound calls are bounded**: the issuer is the owner's configuration, not a caller's; still, each call has a
  deadline (``fetch_seconds``), a size cap (:data:`MAX_DOCUMENT_BYTES`), follows no redirect, and only https
  (http on loopback). Discovery is cached :data:`DISCOVERY_SECONDS`; the keys are re-read on an unknown ``kid``
  at most once per :data:`KEYS_REFRESH_SECONDS`, so a stranger's callback cannot make the server fetch at will
  (and an unknown ``state`` is refused before any fetch).
* ``now`` is always a parameter; nothing here reads a clock.
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import ssl
import threading
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode, urlsplit

from joserfc import errors as jose_errors
from joserfc import jwt
from joserfc.jwk import KeySet

from notegate.auth.websession import hash_secret
from notegate.errors import NotegateError
from notegate.oidcconfig import LOOPBACK, OidcProvider
from notegate.policy import decide_authorized_party

if TYPE_CHECKING:
    from notegate.state import StateDB

#: A login must come back from the provider within this long.
PENDING_SECONDS = 10 * 60
#: Pending logins kept at once over every browser: past it a new one is refused [oidc-busy].
MAX_PENDING = 1000
MAX_DOCUMENT_BYTES = 256 * 1024
DISCOVERY_SECONDS = 3600
KEYS_REFRESH_SECONDS = 60
#: Clock skew tolerated on exp and iat.
LEEWAY_SECONDS = 60
#: A used ID token's hash is kept until it expires, but never longer than this.
MAX_SEEN_SECONDS = 24 * 3600
PURPOSES = ("login", "link", "step-up", "approve", "link-self")


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None  # a 3xx is answered as an error: nothing is followed


def _unavailable(provider: OidcProvider, what: str) -> NotegateError:
    return NotegateError(f"the provider '{provider.name}' {what}", rule="oidc-provider-unavailable")


def _checked_url(provider: OidcProvider, url: object) -> str:
    parts = urlsplit(url) if isinstance(url, str) else None
    if parts is None or not parts.hostname:
        raise _unavailable(provider, "named an endpoint that is not a URL")
    if parts.scheme != "https" and not (parts.scheme == "http" and parts.hostname in LOOPBACK):
        raise _unavailable(provider, "named an endpoint that is not https")
    return str(url)


def fetch_json(
    provider: OidcProvider, url: str, *, data: Mapping[str, str] | None = None, auth: str | None = None
) -> dict[str, Any]:
    """GET (or POST ``data`` as a form) ``url`` of ``provider``: at most ``fetch_seconds`` per step and
    :data:`MAX_DOCUMENT_BYTES`, no redirects, JSON object only. Refused [oidc-provider-unavailable]."""
    url = _checked_url(provider, url)
    body = urlencode(dict(data)).encode("ascii") if data is not None else None
    request = urllib.request.Request(url, data=body, method="POST" if body is not None else "GET")  # noqa: S310
    request.add_header("Accept", "application/json")
    request.add_header("User-Agent", "notegate-oidc")
    if body is not None:
        request.add_header("Content-Type", "application/x-www-form-urlencoded")
    if auth is not None:
        request.add_header("Authorization", auth)
    handlers: list[Any] = [_NoRedirect()]
    if url.startswith("https:"):
        handlers.append(
            urllib.request.HTTPSHandler(context=ssl.create_default_context(cafile=provider.ca_file or None))
        )
    opener = urllib.request.build_opener(*handlers)
    try:
        with opener.open(request, timeout=provider.fetch_seconds) as response:
            raw = response.read(MAX_DOCUMENT_BYTES + 1)
    except urllib.error.HTTPError as exc:
        raw = exc.read(MAX_DOCUMENT_BYTES + 1) if exc.fp is not None else b""
        error = _json_or_none(raw)
        code = error.get("error") if isinstance(error, dict) else None
        if isinstance(code, str) and code.isascii() and len(code) < 64:
            raise NotegateError(
                f"the provider '{provider.name}' answered {exc.code} {code}", rule="oidc-provider-error"
            ) from None
        raise _unavailable(provider, f"answered HTTP {exc.code}") from None
    except (urllib.error.URLError, OSError, ValueError) as exc:
        raise _unavailable(provider, f"did not answer ({type(exc).__name__})") from None
    if len(raw) > MAX_DOCUMENT_BYTES:
        raise _unavailable(provider, f"sent more than {MAX_DOCUMENT_BYTES} bytes")
    document = _json_or_none(raw)
    if not isinstance(document, dict):
        raise _unavailable(provider, "did not answer with a JSON object")
    return document


def _json_or_none(raw: bytes) -> Any:
    try:
        return json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None


@dataclass(frozen=True)
class Discovery:
    issuer: str
    authorization_endpoint: str
    token_endpoint: str
    jwks_uri: str


def parse_discovery(provider: OidcProvider, document: Mapping[str, Any]) -> Discovery:
    """The endpoints a discovery document names; its ``issuer`` must be the configured one exactly."""
    if document.get("issuer") != provider.issuer:
        raise NotegateError(
            f"the discovery document of '{provider.name}' names another issuer than the configured '{provider.issuer}'",
            rule="oidc-issuer",
        )
    return Discovery(
        issuer=provider.issuer,
        authorization_endpoint=_checked_url(provider, document.get("authorization_endpoint")),
        token_endpoint=_checked_url(provider, document.get("token_endpoint")),
        jwks_uri=_checked_url(provider, document.get("jwks_uri")),
    )


def parse_keys(provider: OidcProvider, document: Mapping[str, Any]) -> KeySet:
    """The provider's public signing keys (private members, if a provider ever sent them, are ignored)."""
    keys = document.get("keys")
    if not isinstance(keys, list) or not keys:
        raise _unavailable(provider, "published no signing keys")
    public = []
    for key in keys:
        if isinstance(key, dict) and key.get("use", "sig") == "sig":
            public.append({k: v for k, v in key.items() if k not in ("d", "p", "q", "dp", "dq", "qi", "k")})
    try:
        return KeySet.import_key_set({"keys": [k for k in public if k.get("kty") in ("RSA", "EC", "OKP")]})
    except (jose_errors.JoseError, ValueError, TypeError, KeyError):
        raise _unavailable(provider, "published signing keys that do not parse") from None


def verify_signature(raw: str, keys: KeySet, provider: OidcProvider) -> dict[str, Any]:
    """The claims of an ID token whose signature joserfc verified with one of ``keys``, by an algorithm the
    provider's table accepts; else refused by the rule of what failed."""
    try:
        return dict(jwt.decode(raw, keys, algorithms=list(provider.algorithms)).claims)
    except jose_errors.UnsupportedAlgorithmError:
        raise NotegateError(
            f"the ID token is signed with an algorithm '{provider.name}' is not allowed to use",
            rule="oidc-algorithm",
        ) from None
    except (jose_errors.InvalidKeyIdError, jose_errors.MissingKeyError):
        raise NotegateError(
            "the ID token is signed with a key the provider does not publish", rule="oidc-key-unknown"
        ) from None
    except jose_errors.BadSignatureError:
        raise NotegateError("the ID token's signature does not verify", rule="oidc-token-invalid") from None
    except (jose_errors.JoseError, ValueError, TypeError):
        raise NotegateError("the provider's ID token is not a signed JWT", rule="oidc-token-invalid") from None


def validate_claims(claims: Mapping[str, Any], *, provider: OidcProvider, nonce: str, now: float) -> None:
    """``iss``, ``aud``, ``sub``, ``exp``, ``iat`` and ``nonce`` by joserfc's registry, then ``azp``."""
    registry = jwt.JWTClaimsRegistry(
        now=int(now),
        leeway=LEEWAY_SECONDS,
        iss={"essential": True, "value": provider.issuer},
        aud={"essential": True, "value": provider.client_id},
        sub={"essential": True},
        exp={"essential": True},
        iat={"essential": True},
        nonce={"essential": True, "value": nonce},
    )
    try:
        registry.validate(dict(claims))
    except jose_errors.ExpiredTokenError:
        raise NotegateError("the ID token has expired", rule="oidc-expired") from None
    except (jose_errors.InvalidClaimError, jose_errors.MissingClaimError) as exc:
        claim = getattr(exc, "claim", "")
        what = f"the ID token's '{claim}' is missing or not the expected value"
        if claim == "iss":
            raise NotegateError(what, rule="oidc-issuer") from None
        if claim == "aud":
            raise NotegateError(what, rule="oidc-audience") from None
        if claim == "nonce":
            raise NotegateError(what, rule="oidc-nonce") from None
        if claim == "exp":
            raise NotegateError(what, rule="oidc-expired") from None
        if claim == "iat" and "future" in str(exc):
            raise NotegateError("the ID token was issued in the future", rule="oidc-issued-in-future") from None
        raise NotegateError(what, rule="oidc-token-invalid") from None
    except (jose_errors.JoseError, ValueError, TypeError):
        raise NotegateError("the ID token's claims do not validate", rule="oidc-token-invalid") from None
    decision = decide_authorized_party(claims, provider.client_id)
    if not decision.allowed:
        raise NotegateError(decision.reason, rule=decision.rule)


def validate_id_token(raw: str, *, keys: KeySet, provider: OidcProvider, nonce: str, now: float) -> dict[str, Any]:
    """The claims of an ID token whose signature and claims joserfc checked (no replay check: that needs
    the state database, :meth:`RelyingParty.finish` adds it)."""
    claims = verify_signature(raw, keys, provider)
    validate_claims(claims, provider=provider, nonce=nonce, now=now)
    return claims


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


@dataclass(frozen=True)
class Finished:
    """A login the provider vouched for: its provider, the ID token's claims and the pending request."""

    provider: OidcProvider
    claims: dict[str, Any]
    purpose: str
    login: str | None
    invite_hash: str | None
    next: str | None


class RelyingParty:
    """Start and finish provider logins over the state database (blocking: call from a worker thread)."""

    def __init__(
        self,
        state: StateDB,
        providers: Callable[[], Mapping[str, OidcProvider]],
        *,
        redirect_uri: str,
        fetch: Callable[..., dict[str, Any]] = fetch_json,
    ) -> None:
        self.state = state
        self.providers = providers
        self.redirect_uri = redirect_uri
        self.fetch = fetch
        self._lock = threading.Lock()
        self._discovery: dict[str, tuple[Discovery, float]] = {}
        self._keys: dict[str, tuple[KeySet, float]] = {}

    def provider(self, name: object) -> OidcProvider:
        found = self.providers().get(name) if isinstance(name, str) else None
        if found is None:
            raise NotegateError("there is no such identity provider here", rule="oidc-provider-unknown")
        return found

    def discovery(self, provider: OidcProvider, *, now: float) -> Discovery:
        with self._lock:
            cached = self._discovery.get(provider.name)
        if cached is not None and cached[1] > now:
            return cached[0]
        found = parse_discovery(provider, self.fetch(provider, provider.issuer + "/.well-known/openid-configuration"))
        with self._lock:
            self._discovery[provider.name] = (found, now + DISCOVERY_SECONDS)
        return found

    def keys(self, provider: OidcProvider, *, now: float, refresh: bool = False) -> KeySet:
        """The provider's keys (cached); ``refresh`` re-reads them, at most once per KEYS_REFRESH_SECONDS."""
        with self._lock:
            cached = self._keys.get(provider.name)
        if cached is not None and (not refresh or cached[1] > now - KEYS_REFRESH_SECONDS):
            return cached[0]
        found = parse_keys(provider, self.fetch(provider, self.discovery(provider, now=now).jwks_uri))
        with self._lock:
            self._keys[provider.name] = (found, now)
        return found

    def start(
        self,
        name: str,
        *,
        purpose: str,
        binding: str,
        now: float,
        login: str | None = None,
        invite_hash: str | None = None,
        next_path: str | None = None,
        max_age: int | None = None,
    ) -> str:
        """Keep a pending login and return the provider's authorization URL to send the browser to. A step-up
        (``max_age`` given) asks the provider for a fresh login (``prompt=login``, ``max_age``)."""
        assert purpose in PURPOSES
        provider = self.provider(name)
        endpoint = self.discovery(provider, now=now).authorization_endpoint
        state = secrets.token_urlsafe(32)
        nonce = secrets.token_urlsafe(32)
        verifier = secrets.token_urlsafe(48)
        kept = self.state.put_oidc_pending(
            {
                "state_hash": hash_secret(state),
                "binding_hash": hash_secret(binding),
                "provider": provider.name,
                "purpose": purpose,
                "nonce": nonce,
                "verifier": verifier,
                "login": login,
                "invite_hash": invite_hash,
                "next": next_path,
                "created_at": now,
                "expires_at": now + PENDING_SECONDS,
            },
            now=now,
            cap=MAX_PENDING,
        )
        if not kept:
            raise NotegateError(f"{MAX_PENDING} provider logins are already under way", rule="oidc-busy")
        params = {
            "response_type": "code",
            "client_id": provider.client_id,
            "redirect_uri": self.redirect_uri,
            "scope": "openid",
            "state": state,
            "nonce": nonce,
            "code_challenge": _b64(hashlib.sha256(verifier.encode("ascii")).digest()),
            "code_challenge_method": "S256",
        }
        if max_age is not None:
            params.update(max_age=str(int(max_age)), prompt="login")
        return endpoint + ("&" if "?" in endpoint else "?") + urlencode(params)

    def finish(self, query: Mapping[str, str], *, bindings: tuple[str | None, ...], now: float) -> Finished:
        """The provider's answer at the callback: the pending login it belongs to (consumed), the code exchanged
        and the ID token validated; else refused by name. Nothing is fetched for an unknown ``state``."""
        state = query.get("state")
        pending = (
            self.state.take_oidc_pending(hash_secret(state), now=now)
            if isinstance(state, str) and 0 < len(state) <= 128 and state.isascii()
            else None
        )
        if pending is None or pending["binding_hash"] not in {hash_secret(b) for b in bindings if b}:
            raise NotegateError(
                "this login is not one this browser started (or it timed out)", rule="oidc-state-unknown"
            )
        provider = self.provider(pending["provider"])
        error = query.get("error")
        if error is not None:
            code = "".join(c for c in str(error) if c.isascii() and c.isprintable())[:64]
            raise NotegateError(f"the provider '{provider.name}' answered '{code}'", rule="oidc-provider-error")
        code = query.get("code")
        if not isinstance(code, str) or not code or len(code) > 2048:
            raise NotegateError("the provider sent no authorization code", rule="oidc-provider-error")
        discovery = self.discovery(provider, now=now)
        form = {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": self.redirect_uri,
            "code_verifier": pending["verifier"],
            "client_id": provider.client_id,
        }
        auth = None
        if provider.client_secret:
            pair = f"{_form(provider.client_id)}:{_form(provider.client_secret)}".encode()
            auth = "Basic " + base64.b64encode(pair).decode("ascii")
        answer = self.fetch(provider, discovery.token_endpoint, data=form, auth=auth)
        raw = answer.get("id_token")
        if not isinstance(raw, str) or not raw or len(raw) > MAX_DOCUMENT_BYTES:
            raise NotegateError("the provider's answer holds no ID token", rule="oidc-token-invalid")
        claims = self._validate(provider, raw, pending["nonce"], now)
        return Finished(provider, claims, pending["purpose"], pending["login"], pending["invite_hash"], pending["next"])

    def _validate(self, provider: OidcProvider, raw: str, nonce: str, now: float) -> dict[str, Any]:
        keys = self.keys(provider, now=now)
        try:
            claims = verify_signature(raw, keys, provider)
        except NotegateError as exc:
            if exc.rule != "oidc-key-unknown":
                raise
            keys = self.keys(provider, now=now, refresh=True)  # the provider may have rotated its keys
            claims = verify_signature(raw, keys, provider)
        # The signature first (a forged token is nobody's replay), then single use, then the claims.
        exp = claims.get("exp")
        until = float(exp) if isinstance(exp, int | float) and not isinstance(exp, bool) else now
        digest = hashlib.sha256(raw.encode("ascii", "replace")).hexdigest()
        if not self.state.oidc_first_use(digest, expires_at=max(min(until, now + MAX_SEEN_SECONDS), now + 1), now=now):
            raise NotegateError("this ID token was already used for a login", rule="oidc-replayed")
        validate_claims(claims, provider=provider, nonce=nonce, now=now)
        return claims

    def identity(self, provider: OidcProvider, claims: Mapping[str, Any]) -> Any:
        """The live identity (issuer, subject) names, or None."""
        row = self.state.oidc_identity(provider.issuer, str(claims["sub"]))
        return row if row is not None and row["revoked_at"] is None else None

    def link(self, provider: OidcProvider, claims: Mapping[str, Any], login: str, *, now: float) -> Any:
        """Link (issuer, subject) to ``login`` (an invitation's person); refused when it is someone else's."""
        subject = str(claims["sub"])
        existing = self.state.oidc_identity(provider.issuer, subject)
        if existing is not None and existing["login"] != login:
            raise NotegateError("this provider account is linked to another person here", rule="oidc-identity-taken")
        if existing is None:
            self.state.insert_oidc_identity(
                {
                    "id": "oi_" + secrets.token_hex(6),
                    "provider": provider.name,
                    "issuer": provider.issuer,
                    "subject": subject,
                    "login": login,
                    "created_at": now,
                }
            )
        return self.state.oidc_identity(provider.issuer, subject)


def _form(value: str) -> str:
    from urllib.parse import quote

    return quote(value, safe="")  # RFC 6749 2.3.1: form-encode id and secret before Basic
