"""OAuth and elevation: redirect URIs and client registration, a session's request for elevation, the
owner's approval or denial of it, and whether a grant still lifts a caller.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

from notegate.network import LOOPBACK_URL_HOSTS
from notegate.policy.caller import Caller, decide_reader
from notegate.policy.decision import Decision, allow, deny
from notegate.policy.settings import Policy
from notegate.policy.vocab import ClientClass, Tier

#: What an OAuth credential is, whoever consented: a hosted client (a chat app holds the grant family, and a
#: chat cannot be told apart from its prompt) at the restricted tier.  Trust is never the default: only a
#: grant the owner approves lifts it, per request (:func:`decide_grant`).
OAUTH_STANDING: tuple[ClientClass, Tier] = (ClientClass.HOSTED, Tier.RESTRICTED)

#: An RFC 8252 loopback redirect: http, a loopback host, an optional port, a path (no user info, no fragment).
_LOOPBACK = re.compile(r"http://(" + "|".join(map(re.escape, LOOPBACK_URL_HOSTS)) + r")(?::[0-9]{1,5})?(/[^#@\s]*)?\Z")


def _loopback_key(uri: str) -> tuple[str, str] | None:
    """``(host, path?query)`` of a loopback redirect, else None: the port is left out because a native
    client picks it when it starts listening (RFC 8252 §7.3)."""
    match = _LOOPBACK.match(uri)
    if match is None:
        return None
    return match.group(1), match.group(2) or "/"


def decide_redirect_uri(uri: str, registered: Iterable[str], allowlist: Iterable[str]) -> Decision:
    """May an authorization code be sent to ``uri``?  Both checks must pass, enforced at every authorize:

    * it is exactly one the client registered (or its metadata document lists); a loopback redirect may
      differ from the registered one only in its port (RFC 8252 §7.3);
    * it is on the policy's allowlist: an exact entry, or ``http://<loopback>:*`` for that loopback host.
    """
    registered = tuple(registered)
    loop = _loopback_key(uri)
    if uri not in registered and (loop is None or loop not in {_loopback_key(r) for r in registered}):
        return deny("redirect-not-registered", "the redirect URI is not one this client registered")
    for entry in allowlist:
        if entry == uri:
            return allow("redirect-allowed")
        if entry.endswith(":*") and loop is not None and entry[: -len(":*")] == f"http://{loop[0]}":
            return allow("redirect-allowed", "loopback")
    return deny("redirect-not-allowed", "the redirect URI is not on this server's allowlist (oauth_redirect_allowlist)")


def decide_registration_redirects(uris: Iterable[str], allowlist: Iterable[str]) -> Decision:
    """May a client register these redirect URIs?  Each must be on the allowlist (checked at registration so a
    client learns at once, and again at every authorize in :func:`decide_redirect_uri`)."""
    uris = tuple(uris)
    allowlist = tuple(allowlist)
    if not uris:
        return deny("redirect-not-registered", "a client must register at least one redirect URI")
    for uri in uris:
        decision = decide_redirect_uri(uri, uris, allowlist)
        if not decision.allowed:
            return decision
    return allow("redirects-allowed")


def decide_registration(count: int, cap: int, evictable: bool = False) -> Decision:
    """May one more dynamic client registration be kept?  Below the cap, yes.  At the cap, the oldest
    registration that never completed a consent makes room (rule ``registration-evict``): it holds no token,
    and refusing instead would let a stranger's flood of free registrations lock the owner's own new connector
    out.  Only when every registration has completed a consent (all belong to people who logged in) is one
    refused."""
    if count < cap:
        return allow("registration")
    if evictable:
        return allow("registration-evict", "the oldest registration that never completed a consent makes room")
    return deny(
        "registration-cap",
        f"this server already keeps {count} client registrations, its limit (oauth_max_registrations = {cap}), "
        "and every one of them has completed a consent",
    )


# -------------------------------------------------------------- elevation


def decide_elevation_request(policy: Policy, caller: Caller, pending: int) -> Decision:
    """May ``caller`` ask the owner for elevation, with ``pending`` unanswered requests of its connector login
    still live?  Only a restricted conversation caller needs it; the cap keeps a session from flooding the
    owner with links (each one is something the owner must read)."""
    reader = decide_reader(caller)
    if not reader.allowed:
        return reader
    if caller.tier == Tier.TRUSTED:
        return deny("elevation-not-needed", "this caller needs no elevation grant.")
    if pending >= policy.elevation_pending_cap:
        return deny(
            "elevation-pending-cap",
            f"this connector login already has {pending} unanswered elevation requests, the limit "
            f"(elevation_pending_cap = {policy.elevation_pending_cap}).",
        )
    return allow("elevation-request")


def decide_elevation_approval(
    policy: Policy,
    *,
    environment_owner: str | None,
    person: str,
    assertion_at: float | None,
    user_verified: bool,
    now: float,
) -> Decision:
    """May ``person`` approve a request made in the environment ``environment_owner`` owns (None: nobody
    owns it any more), with a passkey assertion made at ``assertion_at``?  Only the environment's owner,
    with a user-verified assertion at most ``elevation_assertion_seconds`` old (a login cookie from hours
    ago proves nobody is at the keyboard).

    Why the owner and not the asker: a grant makes a connector login trusted in the whole environment, and
    a trusted writer changes ``rules/`` and what every session loads, the owner's included.  A member who
    approved their own connector's request could write the owner's digest; so a member asks, the owner
    decides (for the owner's own sessions the two are the same person)."""
    if environment_owner is None or person != environment_owner:
        return deny(
            "elevation-approver-not-owner",
            "only the owner of the environment this session asked in may approve its elevation.",
        )
    if assertion_at is None or not user_verified:
        return deny(
            "elevation-assertion-unverified",
            "approving needs a passkey assertion with user verification (PIN or biometric).",
        )
    age = now - assertion_at
    if age < 0 or age > policy.elevation_assertion_seconds:
        return deny(
            "elevation-assertion-stale",
            f"the passkey assertion is {int(age)} s old; approving needs one at most "
            f"{policy.elevation_assertion_seconds} s old.",
        )
    return allow("elevation-approved")


def decide_elevation_denial(*, asked_by: str, person: str, environment_owner: str | None) -> Decision:
    """May ``person`` deny a request the connector login of ``asked_by`` made?  The person whose connector
    asked, or the owner of the environment it asked in (``environment_owner``, None when unknown).

    Why the asker too, when only the owner may approve: a denial takes nothing away but one request, so a
    member may withdraw their own session's ask.  Anyone else logged in (another member holding a forwarded
    link) may not: a member never cancels the owner's requests."""
    if person == asked_by or (environment_owner is not None and person == environment_owner):
        return allow("elevation-denied")
    return deny(
        "elevation-deny-wrong-person",
        "this request was made by a connector login of another person, and you are not the environment's owner.",
    )


class GrantFacts(Protocol):
    """What a stored grant says (``notegate.auth.grants.Grant``): policy needs only this."""

    @property
    def connector(self) -> str: ...

    @property
    def conversation(self) -> str | None: ...

    @property
    def expires_at(self) -> float: ...

    @property
    def revoked_at(self) -> float | None: ...


def decide_grant(grant: GrantFacts, caller: Caller, conversation: str | None, now: float) -> Decision:
    """Does this grant make ``caller`` trusted?  Allowed: trusted for everything a trusted caller may do (its
    connector login stays the same, so :func:`decide_author` still keeps it from promoting what it wrote).

    Bound to the connector login that asked: any other one, even another OAuth login of the same client,
    gets nothing.  Bound to the conversation where the client sent an id when asking (``conversation`` is
    that id's hash, or None when the client sends none)."""
    reader = decide_reader(caller)
    if not reader.allowed:
        return reader
    if grant.revoked_at is not None:
        return deny("grant-revoked", "the owner revoked this grant.")
    if now >= grant.expires_at:
        return deny("grant-expired", "this grant has expired.")
    if grant.connector != caller.connector_id:
        return deny("grant-other-connector", "this grant belongs to another connector login; it counts only there.")
    if grant.conversation is not None and conversation != grant.conversation:
        return deny("grant-other-conversation", "this grant was approved for another conversation.")
    return allow("grant-trusted", "an owner-approved grant of this connector login.")


class RequestFacts(Protocol):
    """What a stored elevation request says before the owner answered it (its grant value is known already)."""

    @property
    def connector(self) -> str: ...

    @property
    def conversation(self) -> str | None: ...

    @property
    def answered_at(self) -> float | None: ...

    @property
    def expires_at(self) -> float: ...


@dataclass(frozen=True)
class _Unapproved:
    """A request's bindings as :func:`decide_grant` reads them, before the owner answered."""

    connector: str
    conversation: str | None
    expires_at: float = float("inf")
    revoked_at: float | None = None


def decide_presented_grant(
    grant: GrantFacts | None, request: RequestFacts | None, caller: Caller, conversation: str | None, now: float
) -> Decision:
    """A caller presented a grant value: does it lift the caller, and if not, what is it told?  ``grant`` is
    the stored grant the value names (None: none), ``request`` the elevation request it was minted for (looked
    at only when there is no grant).

    An approved grant answers as :func:`decide_grant`.  A request still waiting for the owner is bound as its
    grant will be: another connector login holding the value is told exactly what it would be told after
    approval, never that a request is waiting (``grant-pending`` goes only to the one that asked).  Anything
    else is ``grant-unknown``: never approved, denied, expired unanswered, or ended and swept."""
    if grant is not None:
        return decide_grant(grant, caller, conversation, now)
    if request is not None and request.answered_at is None and request.expires_at > now:
        bound = decide_grant(_Unapproved(request.connector, request.conversation), caller, conversation, now)
        if not bound.allowed:
            return bound
        return deny("grant-pending", "the owner has not approved this request yet.")
    return deny("grant-unknown", "no such grant (never approved, denied, expired unanswered or ended over a day ago).")
