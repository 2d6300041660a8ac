"""What the consent page needs from the authorization server, and nothing more.

Why a protocol of its own: the page (``doors/web``) and the authorization server (``auth/oauth.py``) are
built apart; the page only shows a pending request to the logged-in person and reports their answer.
It never sees codes, tokens or PKCE values, so a bug in a template cannot leak one.

Invariants the backend keeps (the page relies on them):

* ``pending`` answers only a live, unanswered request; a request id is unguessable (≥128 random bits).
* ``approve`` and ``deny`` answer a request at most once (a second answer raises ``NotegateError`` with
  rule ``consent-answered``) and return the exact redirect the client registered, with ``state`` and
  ``iss`` appended (RFC 9207), so the page redirects there with 303 and nothing else.
* ``client_name`` is chosen by the client: the page always shows it as unverified, and shows
  ``redirect_host`` prominently, because the host is what decides where the code goes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class PendingConsent:
    request_id: str
    client_id: str
    client_name: str  # chosen by the client: unverified, show it as such
    redirect_uri: str
    redirect_host: str  # what the page shows most prominently
    grants_text: str  # what the client will get, in words ("restricted: reads everything but private ...")
    created_at: float


class ConsentBackend(Protocol):
    def pending(self, request_id: str, *, now: float) -> PendingConsent | None:
        """The live, unanswered request with this id, or None (unknown, expired or answered)."""
        ...

    def approve(self, request_id: str, *, person: str, now: float) -> str:
        """Issue the authorization code for ``person``; return the redirect URL (code, state, iss)."""
        ...

    def deny(self, request_id: str, *, now: float) -> str:
        """Refuse the request; return the redirect URL (error=access_denied, state, iss)."""
        ...
