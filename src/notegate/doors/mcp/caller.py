"""Who is calling: the verified bearer token over HTTP, or the fixed caller of a stdio process.

Why apart: this is where the MCP door reads what a request carries (the verified token, the session and
device headers, the conversation id in ``_meta``) and hands it to the one function every door turns
credentials into a :class:`Caller` with (:meth:`notegate.services.callers.Callers.resolve`).  Tiers come from
credentials, never from anything a caller writes; the request headers are caller data and only ever name the
session (hashed when they do not look plain) or carry the device proof that function verifies.
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
from notegate.errors import AuthError
from notegate.policy import Caller, Decision
from notegate.safety.secrets import scan_credentials
from notegate.services.callers import Callers

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
    """Decides the caller of a request. Over HTTP from the verified token; over stdio, a fixed caller; both
    through the one function every door uses (:meth:`notegate.services.callers.Callers.resolve`).

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
        callers: Callers | None = None,
    ) -> None:
        self.fixed = fixed
        self.still_valid = still_valid
        #: the lookups behind every door's caller (the HTTP app shares one with the contracts and /healthz)
        self.callers = callers or Callers(devices=devices, grants=grants, members=members, clock=clock)

    @property
    def grants(self) -> Grants | None:
        return self.callers.grants

    @grants.setter
    def grants(self, grants: Grants | None) -> None:
        self.callers.grants = grants

    @property
    def clock(self) -> Callable[[], float] | None:
        return self.callers.clock

    @clock.setter
    def clock(self, clock: Callable[[], float] | None) -> None:
        self.callers.clock = clock

    def __call__(self, ctx: Context | None, *, grant: str | None = None) -> Caller:
        headers = _headers(ctx)
        credential: Caller | AccessToken | None
        if self.fixed is not None:
            if self.still_valid is not None and not self.still_valid():
                raise AuthError(
                    "the token this notegate mcp started with is no longer valid (it was revoked)",
                    rule="token-revoked",
                    remedy=REVOKED_REMEDY,
                )
            credential = self.fixed
        else:
            credential = get_access_token()
            if credential is None or not credential.claims:
                raise AuthError("no verified credential on this request", remedy="Send Authorization: Bearer <token>.")
        return self.callers.resolve(
            credential,
            session=_session(headers),
            device_header=None if self.fixed is not None else _header(headers, DEVICE_HEADER),
            grant=grant,
            conversation=conversation_of(ctx) if grant else None,
        )


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
