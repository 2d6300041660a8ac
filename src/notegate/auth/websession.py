"""Cookie sessions for persons on the web console, and the CSRF tokens of its forms.

Theory of operation:

* A session is opened only by a verified passkey assertion (``auth/passkeys.py``). Its cookie holds
  ``ngs_`` + 256 random bits; the state database keeps only the SHA-256 of it, so a copy of the database
  opens no session. A session lives at most :data:`MAX_SESSION_SECONDS` (12 h) and dies with its passkey
  (revoking a passkey deletes the sessions it opened).
* The step-up: a console action that grants trust or writes what sessions load needs a user-verified
  assertion at most a few minutes old (``notegate.policy.console``). Confirming with a passkey opens a new
  session (and closes the old one), so a session's ``created_at`` is always its last such assertion.
* Before login a browser carries a *pre-session* cookie (``ngp_`` + 256 random bits) only so the WebAuthn
  challenge and the CSRF token have something secret to be bound to.
* Cookies are HttpOnly, SameSite=Strict, Path=/, and Secure (with the ``__Host-`` prefix) whenever the
  console is not on loopback: plain http is only ever accepted on the loopback.
* Every form and every JSON POST carries a CSRF token = HMAC-SHA256 keyed by the cookie's secret. A page
  on another site can neither read the cookie nor the page, so it cannot compute the token; the check is
  constant-time. The token needs no storage and dies with its cookie.

Every secret is parsed strictly (:func:`parse_secret`) before it reaches a hash or the database: a value
that is not exactly a prefix and 43 base64url characters is no secret at all.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass
from urllib.parse import urlsplit

from notegate.errors import NotegateError
from notegate.network import LOOPBACK_HOSTS
from notegate.state import StateDB

#: A person's console session never outlives this, whatever else happens.
MAX_SESSION_SECONDS = 12 * 3600
#: The pre-session cookie only carries a ceremony; it may live as long as a session.
PRE_SESSION_SECONDS = MAX_SESSION_SECONDS

SESSION_PREFIX = "ngs_"
PRE_PREFIX = "ngp_"
SECRET_BYTES = 32
_SECRET_BODY = re.compile(r"[A-Za-z0-9_-]{43}")  # 32 bytes, base64url without padding
_CSRF_RE = re.compile(r"[A-Za-z0-9_-]{43}")
CSRF_CONTEXT = b"notegate-csrf-v1"
#: What a session opened by an OpenID Connect login records instead of a passkey id: ``oidc:`` + the identity's id
#: when the provider did not prove a second factor, ``oidc2:`` + it when it did (auth/oidc.py, policy/oidc.py).
OIDC_UNPROVEN = "oidc:"
OIDC_PROVEN = "oidc2:"


def mint_secret(prefix: str) -> str:
    return prefix + secrets.token_urlsafe(SECRET_BYTES)


def parse_secret(raw: object, prefix: str) -> str | None:
    """``raw`` if it is exactly ``prefix`` + 43 base64url characters, else None (never raises)."""
    if not isinstance(raw, str) or not raw.startswith(prefix):
        return None
    body = raw[len(prefix) :]
    return raw if _SECRET_BODY.fullmatch(body) and body.isascii() else None


def hash_secret(secret: str) -> str:
    """SHA-256 is right for 256 random bits: there is nothing to brute-force (as for bearer tokens)."""
    return hashlib.sha256(secret.encode("ascii")).hexdigest()


def csrf_token(binding: str) -> str:
    """The CSRF token of every form shown to the holder of the cookie secret ``binding``."""
    mac = hmac.new(binding.encode("ascii"), CSRF_CONTEXT, hashlib.sha256).digest()
    return base64.urlsafe_b64encode(mac).rstrip(b"=").decode("ascii")


def check_csrf(binding: str | None, presented: object) -> None:
    """Raise ``csrf-missing`` or ``csrf-invalid`` unless ``presented`` is the token of ``binding``."""
    if presented is None or presented == "":
        raise NotegateError("the form carried no CSRF token", rule="csrf-missing")
    if binding is None or not isinstance(presented, str) or not _CSRF_RE.fullmatch(presented):
        raise NotegateError("the form's CSRF token is not this browser's", rule="csrf-invalid")
    if not hmac.compare_digest(csrf_token(binding), presented):
        raise NotegateError("the form's CSRF token is not this browser's", rule="csrf-invalid")


def check_origin(origin: str | None, fetch_site: str | None, expected: str) -> None:
    """A POST from a page of another site is refused. Browsers say where a request comes from in
    ``Sec-Fetch-Site``; where that is missing, an ``Origin`` naming another site refuses. (``Origin: null`` is
    what our own forms send under ``Referrer-Policy: no-referrer``, so it decides nothing: the CSRF token does.)"""
    if fetch_site is not None:
        if fetch_site != "same-origin":
            raise NotegateError(f"the request came from a {fetch_site} page, not this console", rule="origin-mismatch")
    elif origin not in (None, "null", expected):
        raise NotegateError("the request came from a page of another site", rule="origin-mismatch")


def is_loopback(public_url: str) -> bool:
    """No public URL, or one on a loopback name: plain http is acceptable there and nowhere else."""
    if not public_url:
        return True
    host = (urlsplit(public_url).hostname or "").lower()
    return host in LOOPBACK_HOSTS


@dataclass(frozen=True)
class CookiePolicy:
    """Names and flags of the console's cookies; ``secure`` unless the console is on loopback."""

    secure: bool

    @property
    def session_name(self) -> str:
        return "__Host-notegate-session" if self.secure else "notegate-session"

    @property
    def pre_name(self) -> str:
        return "__Host-notegate-pre" if self.secure else "notegate-pre"

    def header(self, name: str, value: str, max_age: int) -> str:
        """A Set-Cookie value: HttpOnly, SameSite=Strict, Path=/ always; Secure off loopback."""
        parts = [f"{name}={value}", "Path=/", f"Max-Age={max(0, int(max_age))}", "HttpOnly", "SameSite=Strict"]
        if self.secure:
            parts.append("Secure")
        return "; ".join(parts)

    def clear(self, name: str) -> str:
        return self.header(name, "", 0)


@dataclass(frozen=True)
class WebSession:
    login: str
    passkey_id: str
    expires_at: float
    secret: str  # the cookie's secret: binds the CSRF token; never logged or stored
    #: When the user-verified passkey assertion that opened this session was checked: the console's step-up
    #: age (notegate.policy.console). A session is opened by nothing else, so no separate record is needed.
    created_at: float = float("-inf")

    @property
    def csrf(self) -> str:
        return csrf_token(self.secret)


class WebSessions:
    """Open, find and close console sessions (hashed in the state database)."""

    def __init__(self, state: StateDB, *, lifetime: float = MAX_SESSION_SECONDS) -> None:
        self.state = state
        self.lifetime = min(lifetime, MAX_SESSION_SECONDS)

    def open(self, *, login: str, passkey_id: str, now: float) -> WebSession:
        secret = mint_secret(SESSION_PREFIX)
        expires_at = now + self.lifetime
        self.state.insert_web_session(
            token_hash=hash_secret(secret), login=login, passkey_id=passkey_id, now=now, expires_at=expires_at
        )
        return WebSession(login=login, passkey_id=passkey_id, expires_at=expires_at, secret=secret, created_at=now)

    def current(self, raw_cookie: str | None, *, now: float) -> WebSession | None:
        """The live session this cookie opens, or None (malformed, unknown, expired, passkey revoked)."""
        secret = parse_secret(raw_cookie, SESSION_PREFIX)
        if secret is None:
            return None
        row = self.state.web_session(hash_secret(secret), now=now)
        if row is None:
            return None
        # A session a provider login opened without proving a second factor (``oidc:``) never counts as a
        # step-up; one opened by a passkey or a provider login that proved it (``oidc2:``) does, from its start.
        proven = not str(row["passkey_id"]).startswith(OIDC_UNPROVEN)
        return WebSession(
            login=row["login"],
            passkey_id=row["passkey_id"],
            expires_at=row["expires_at"],
            secret=secret,
            created_at=row["created_at"] if proven else float("-inf"),
        )

    def close(self, raw_cookie: str | None) -> None:
        secret = parse_secret(raw_cookie, SESSION_PREFIX)
        if secret is not None:
            self.state.delete_web_session(hash_secret(secret))


MAX_NEXT_LENGTH = 2048
_NEXT_RE = re.compile(r"/(?![/\\])[A-Za-z0-9\-._~!$&'()*+,;=:@%/?]*")


def parse_next(raw: object) -> str | None:
    """Where to go after logging in: a path on this server only (never ``//host``, a scheme or a backslash),
    so a crafted login link cannot send a person elsewhere. None when ``raw`` is not such a path."""
    if not isinstance(raw, str) or len(raw) > MAX_NEXT_LENGTH or not raw.isascii():
        return None
    return raw if _NEXT_RE.fullmatch(raw) else None
