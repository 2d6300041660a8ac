"""Who is calling: the verified bearer token over HTTP, or the fixed caller of a stdio process.

Why apart: this is the one place a door turns credentials into a :class:`Caller`.  Tiers come from
credentials, never from anything a caller writes; the request headers are caller data and only ever name the
session (hashed when they do not look plain).  :meth:`CallerResolver.caller_from_token` is the seam where a
verified device header or an owner-approved grant raises a caller's tier.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Mapping
from dataclasses import replace

from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import AccessToken
from mcp.server.mcpserver import Context

from notegate.auth.devices import DeviceVerifier
from notegate.auth.grants import Grants, conversation_key
from notegate.errors import AuthError, NotegateError
from notegate.policy import Caller, Decision
from notegate.safety.secrets import scan_credentials

SESSION_HEADER = "x-notegate-session"
DEVICE_HEADER = "x-notegate-device"
#: Where clients put a conversation id in a request's ``_meta``: ChatGPT's anonymised conversation id
#: (OpenAI Apps SDK reference: ``openai/session``, "for correlating tool calls within the same ChatGPT session").
CONVERSATION_META_KEYS = ("openai/session",)

#: A session label a caller may choose, kept verbatim in commit trailers: short, plain, no ``_`` (every
#: notegate token has one) and nothing :func:`scan_credentials` takes for a credential.
SESSION_LABEL = re.compile(r"[A-Za-z0-9.:-]{1,64}")
SESSION_LABEL_MAX = 64

REVOKED_REMEDY = "Ask the owner for a new token, put it in the token file and restart notegate mcp."


def session_label(raw: str | None) -> str:
    """The label a caller's session gets in commits and history: its own if plain, else ``h-`` + a hash.

    Why: the label comes from a request header, so it is caller data that would be committed verbatim and
    shown by note_history; a credential pasted there must never reach history.  Linear in ``raw``: the
    length is checked before the pattern, the pattern has no backtracking, and only 64 characters at most
    are scanned for credentials.  Deterministic, so one session keeps one label."""
    if not raw:
        return "-"
    if len(raw) <= SESSION_LABEL_MAX and SESSION_LABEL.fullmatch(raw) and not scan_credentials(raw):
        return raw
    digest = hashlib.sha256()
    for start in range(0, len(raw), 4096):  # in pieces: no second copy of a huge header, steady cost per byte
        digest.update(raw[start : start + 4096].encode("utf-8", errors="surrogatepass"))
    return "h-" + digest.hexdigest()[:16]


def with_session(caller: Caller, session: str) -> Caller:
    return replace(caller, session=session)


class CallerResolver:
    """Decides the caller of a request. Over HTTP from the verified token; over stdio, a fixed caller.

    ``still_valid`` (stdio) re-checks the token the process started with on every call, so revoking it
    stops a running ``notegate mcp`` at its next call, not at its next restart."""

    def __init__(
        self,
        fixed: Caller | None = None,
        *,
        still_valid: Callable[[], bool] | None = None,
        devices: DeviceVerifier | None = None,
        grants: Grants | None = None,
        clock: Callable[[], float] | None = None,
        members: Callable[[str, str | None, str], Decision] | None = None,
    ) -> None:
        self.fixed = fixed
        #: (login, environment, client class) -> may that person still act there (auth/members.py): removing
        #: a member refuses their running sessions at their next call, whatever credential they hold.
        self.members = members
        self.still_valid = still_valid
        self.devices = devices
        self.grants = grants
        self.clock = clock

    def __call__(self, ctx: Context | None, *, grant: str | None = None) -> Caller:
        headers = _headers(ctx)
        if self.fixed is not None:
            caller = self.fixed_caller(self.fixed, headers)
        else:
            token = get_access_token()
            if token is None or not token.claims:
                raise AuthError("no verified credential on this request", remedy="Send Authorization: Bearer <token>.")
            caller = self.caller_from_token(token, headers)
        if self.members is not None:
            decision = self.members(caller.login, caller.environment, caller.client_class)
            if not decision.allowed:
                raise AuthError(decision.reason, rule=decision.rule)
        return self.with_grant(caller, grant, conversation_of(ctx))

    def with_grant(self, caller: Caller, grant: str | None, conversation: str | None) -> Caller:
        """The caller as a presented grant leaves it: trusted when the grant applies; a grant that does not
        apply is refused with its rule (the model passed it on purpose, so it must learn why it did not count).

        Why here, after the device header: a grant is the other credential that raises a tier, and this
        resolver is the one place a tier rises."""
        if not grant:
            return caller
        if self.grants is None or self.clock is None:
            raise NotegateError("this server does not issue grants", rule="grant-unknown")
        granted, decision = self.grants.tier_for(caller, grant, conversation, self.clock())
        if not decision.allowed:
            raise NotegateError(decision.reason, rule=decision.rule)
        return granted

    def fixed_caller(self, fixed: Caller, headers: Mapping[str, str] | None) -> Caller:
        """The stdio process's own caller, while the token it started with is still valid."""
        if self.still_valid is not None and not self.still_valid():
            raise AuthError(
                "the token this notegate mcp started with is no longer valid (it was revoked)",
                rule="token-revoked",
                remedy=REVOKED_REMEDY,
            )
        session = _session(headers)
        return fixed if session == "-" else with_session(fixed, session)

    def caller_from_token(self, token: AccessToken, headers: Mapping[str, str] | None) -> Caller:
        """The caller a verified token names, raised to trusted only by a verified device header.

        Why one method: this is the only place a tier rises, from a device key in the deployment config (or,
        later, a grant the owner approved), and from nothing else the request carries.  A header that does
        not count leaves the caller exactly as its token made it; the verifier audits why."""
        claims = token.claims or {}
        caller = Caller(
            login=str(claims["login"]),
            display_name=str(claims["display_name"]),
            client=token.client_id,
            client_class=str(claims["client_class"]),
            tier=str(claims["tier"]),
            session=_session(headers),
            environment=claims.get("environment"),
            connector=str(claims.get("connector") or ""),
        )
        if self.devices is not None:
            caller, _verdict = self.devices.tier_for(caller, _header(headers, DEVICE_HEADER))
        return caller


def _header(headers: Mapping[str, str] | None, name: str) -> str | None:
    try:
        return headers.get(name) if headers is not None else None
    except (AttributeError, LookupError, ValueError):
        return None


def conversation_of(ctx: Context | None) -> str | None:
    """The hashed conversation id the client sent in this request's ``_meta``, or None (none sent, stdio)."""
    if ctx is None:
        return None
    try:
        meta = ctx.request_context.meta
    except (AttributeError, LookupError, ValueError):
        return None
    if not isinstance(meta, Mapping):
        return None
    for key in CONVERSATION_META_KEYS:
        found = conversation_key(meta.get(key))
        if found is not None:
            return found
    return None


def _headers(ctx: Context | None) -> Mapping[str, str] | None:
    """The request's headers, or None (stdio, the in-memory client, or no request at all)."""
    if ctx is None:
        return None
    try:
        return ctx.headers
    except (AttributeError, LookupError, ValueError):
        return None


def _session(headers: Mapping[str, str] | None) -> str:
    return session_label(_header(headers, SESSION_HEADER))
