"""Elevation: a restricted session asks, the owner approves with a passkey, the session holds a grant.

Theory of operation
-------------------
* ``request`` (the ``request_elevation`` tool) stores one request for the asking connector login and returns
  three values: an approval **link** ``{base}/elevate/<id>`` for the owner (single use, ``elevation_link_seconds``),
  a 4-letter **code** from an unambiguous alphabet that the page shows too, so the owner can tell which
  session asked, and the **grant** value the model passes back as ``grant``.  The grant counts for nothing
  until the owner approves the link.
* The approval page talks to :class:`ElevationBackend` only: ``pending``, ``approve`` (with the time and the
  user verification of a fresh passkey assertion), ``deny``.  It never sees the grant value.
* ``tier_for`` turns a presented grant into a tier: trusted when :func:`notegate.policy.decide_grant` allows
  (same connector login, same conversation where the client sent an id, not expired, not revoked), else the
  caller exactly as its token made it, with the refusing rule.  It never raises, whatever string it is given.

Invariants
----------
* The link id (192 random bits) and the grant value (256 random bits) are stored only as SHA-256.  The grant
  id (``g-`` + 64 random bits, not a secret) is what listings, audit rows and trailers name.
* A request is answered at most once (one UPDATE); a stale or unverified assertion does not consume it, so the
  page can ask for a fresh one.
* Only the environment's owner may approve (:func:`notegate.policy.decide_elevation_approval`: a member's
  grant would let their connector write what the owner's sessions load); the person whose connector asked
  or the owner may deny (:func:`notegate.policy.decide_elevation_denial`); a refused answer consumes nothing.
* A grant value presented before approval is held to the same bindings (connector login, conversation) and
  only then told ``[grant-pending]``.
* The hourly sweep (:meth:`Grants.sweep`) drops answered and lapsed requests and grants that ended a day ago;
  a grant stays listed, and is refused by its own rule, until then.
* Every step is an audit row (tool ``elevation``) naming the person, the client and the connector login:
  request, approval, refused approval, denial, refused denial, first use per session, refused use, expiry
  (once: at the first presentation or the sweep, whichever comes first), a link lapsed unanswered, revocation.
* ``now`` is always a parameter: tests inject time, nothing here reads a clock.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from notegate.errors import NotegateError
from notegate.policy import (
    Caller,
    Decision,
    Policy,
    decide_elevation_approval,
    decide_elevation_denial,
    decide_elevation_request,
    decide_presented_grant,
    deny,
    lifted,
)

if TYPE_CHECKING:
    import sqlite3

    from notegate.config import Config
    from notegate.state import StateDB

#: No 0/O, 1/I/L, 2/Z, 5/S, 6/G, 8/B, Q, U/V: letters that read alike on a phone screen or when spoken.
CODE_ALPHABET = "ACDEFHJKMNPRTWXY"
CODE_LENGTH = 4
GRANT_PREFIX = "ngg_"
_GRANT_VALUE = re.compile(r"ngg_[A-Za-z0-9_-]{43}\Z")
_GRANT_ID = re.compile(r"g-[0-9a-f]{16}")  # a request's (and its grant's) public id
MAX_REASON_CHARS = 500
MAX_CONVERSATION_CHARS = 512
MAX_AUDITED_USES = 4096  # (grant, session) pairs whose first use was audited, bounded
#: How long the hourly sweep keeps a grant after it expired or was revoked: presented within that day it is
#: still refused by its own rule ([grant-expired], [grant-revoked]); after it, [grant-unknown].
KEEP_ENDED_GRANT_SECONDS = 24 * 3600


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", errors="surrogatepass")).hexdigest()


def conversation_key(raw: object) -> str | None:
    """The stored form of a client's conversation id (ChatGPT's ``openai/session``): its hash, or None.

    Why hashed: the id is client data of any length; only equality matters."""
    if not isinstance(raw, str) or not raw or len(raw) > MAX_CONVERSATION_CHARS:
        return None
    return _sha("conversation:" + raw)[:32]


def owners_in(config: Callable[[], Config]) -> Callable[[str | None], str | None]:
    """``owner_of`` over the live deployment config: environment name (None: the default) -> its owner."""

    def owner_of(environment: str | None) -> str | None:
        try:
            return config().environment(environment).owner
        except NotegateError:  # an environment removed from the config since: nobody owns it any more
            return None

    return owner_of


@dataclass(frozen=True)
class _Asked:
    """A stored request's facts as :func:`notegate.policy.decide_presented_grant` reads them."""

    connector: str
    conversation: str | None
    answered_at: float | None
    expires_at: float


@dataclass(frozen=True)
class Ticket:
    """What ``request_elevation`` hands the model: show link and code to the owner, keep the grant."""

    link: str
    code: str
    grant: str  # secret: returned once, stored only as a hash
    grant_id: str
    expires_at: float


@dataclass(frozen=True)
class PendingElevation:
    """What the approval page shows (never the grant value)."""

    link_id: str
    code: str
    reason: str  # the session's own words: show escaped and marked as such
    person: str
    client: str
    client_class: str
    connector: str
    asked_at: float
    expires_at: float


@dataclass(frozen=True)
class Grant:
    grant_id: str
    connector: str
    login: str
    client: str
    environment: str | None
    conversation: str | None
    approved_by: str
    created_at: float
    expires_at: float
    revoked_at: float | None

    @classmethod
    def of(cls, row: sqlite3.Row) -> Grant:
        return cls(**{name: row[name] for name in cls.__dataclass_fields__})


class ElevationBackend(Protocol):
    """What the approval page (``doors/web``) needs, and nothing more."""

    def pending(self, link_id: str, *, now: float) -> PendingElevation | None:
        """The live, unanswered request behind this link, or None (unknown, expired or answered)."""
        ...

    def approve(
        self, link_id: str, *, person: str, assertion_at: float | None, user_verified: bool, now: float
    ) -> Grant:
        """Answer yes with a passkey assertion made at ``assertion_at``; the grant now counts."""
        ...

    def deny(self, link_id: str, *, person: str, now: float) -> None:
        """Answer no: the grant never counts.  Only the person whose connector asked, or the environment's
        owner, may (:func:`notegate.policy.decide_elevation_denial`)."""
        ...


class Grants:
    """Requests, approvals and grants over the state DB (the :class:`ElevationBackend` of the pages)."""

    def __init__(
        self, state: StateDB, policy: Policy, *, owner_of: Callable[[str | None], str | None] | None = None
    ) -> None:
        self.state = state
        self.policy = policy
        # environment name (None: the default) -> its owner's login, or None when unknown (then nobody may
        # approve): approval and denial ask it
        self.owner_of = owner_of or (lambda _environment: None)
        self._used: OrderedDict[tuple[str, str], None] = OrderedDict()

    # ------------------------------------------------------------ asking
    def request(self, caller: Caller, *, reason: str, conversation: str | None, base: str, now: float) -> Ticket:
        """Store a request of ``caller``'s connector login; refused past the pending cap."""
        reason = " ".join(reason.split()) if isinstance(reason, str) else ""
        if not reason or len(reason) > MAX_REASON_CHARS:
            raise NotegateError(
                f"the reason must be 1 to {MAX_REASON_CHARS} characters long",
                rule="elevation-reason-invalid",
            )
        first = decide_elevation_request(self.policy, caller, 0)
        if not first.allowed:
            raise NotegateError(first.reason, rule=first.rule)
        link_id = secrets.token_urlsafe(24)
        grant = GRANT_PREFIX + secrets.token_urlsafe(32)
        grant_id = "g-" + secrets.token_hex(8)
        code = "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))
        expires_at = now + self.policy.elevation_link_seconds
        refused: list[Decision] = []

        def fits(pending: int) -> bool:
            decision = decide_elevation_request(self.policy, caller, pending)
            refused.extend([] if decision.allowed else [decision])
            return decision.allowed

        row = {
            "link_hash": _sha(link_id),
            "grant_id": grant_id,
            "grant_hash": _sha(grant),
            "code": code,
            "reason": reason,
            "connector": caller.connector_id,
            "login": caller.login,
            "client": caller.client,
            "client_class": caller.client_class,
            "environment": caller.environment,
            "conversation": conversation,
            "created_at": now,
            "expires_at": expires_at,
        }
        if not self.state.elevation_insert_request(row, now=now, fits=fits):
            decision = refused[-1]
            self._audit(caller, grant_id, f"elevation-refused:{decision.rule}", now)
            raise NotegateError(decision.reason, rule=decision.rule)
        self._audit(caller, grant_id, "elevation-requested", now)
        return Ticket(f"{base.rstrip('/')}/elevate/{link_id}", code, grant, grant_id, expires_at)

    # ---------------------------------------------------- the owner's page
    def pending(self, link_id: str, *, now: float) -> PendingElevation | None:
        row = self._live_request(link_id, now)
        return None if row is None else self._as_pending(row, link_id)

    def approve(
        self, link_id: str, *, person: str, assertion_at: float | None, user_verified: bool, now: float
    ) -> Grant:
        return self._approve(self._live_request(link_id, now), person, assertion_at, user_verified, now)

    def _approve(
        self, row: sqlite3.Row | None, person: str, assertion_at: float | None, user_verified: bool, now: float
    ) -> Grant:
        if row is None:
            raise _unknown()
        decision = decide_elevation_approval(
            self.policy,
            environment_owner=self.owner_of(row["environment"]),
            person=person,
            assertion_at=assertion_at,
            user_verified=user_verified,
            now=now,
        )
        if not decision.allowed:
            self._audit_row(row, f"elevation-approval-refused:{decision.rule} by={person}", now)
            raise NotegateError(decision.reason, rule=decision.rule)
        answered = self.state.elevation_answer(row["link_hash"], outcome="approved", now=now)
        if answered is None:
            raise _unknown()
        grant = {
            "grant_id": row["grant_id"],
            "grant_hash": row["grant_hash"],
            "connector": row["connector"],
            "login": row["login"],
            "client": row["client"],
            "environment": row["environment"],
            "conversation": row["conversation"],
            "approved_by": person,
            "created_at": now,
            "expires_at": now + self.policy.elevation_grant_seconds,
        }
        self.state.elevation_insert_grant(grant)
        self._audit_row(row, f"elevation-approved by={person}", now)
        return Grant(**{k: v for k, v in grant.items() if k != "grant_hash"}, revoked_at=None)

    def deny(self, link_id: str, *, person: str, now: float) -> None:
        self._deny(self._live_request(link_id, now), person, now)

    def _deny(self, row: sqlite3.Row | None, person: str, now: float) -> None:
        if row is None:
            raise _unknown()
        decision = decide_elevation_denial(
            asked_by=row["login"], person=person, environment_owner=self.owner_of(row["environment"])
        )
        if not decision.allowed:
            self._audit_row(row, f"elevation-denial-refused:{decision.rule} by={person}", now)
            raise NotegateError(decision.reason, rule=decision.rule)
        if self.state.elevation_answer(row["link_hash"], outcome="denied", now=now) is None:
            raise _unknown()
        self._audit_row(row, f"elevation-denied by={person}", now)

    # ------------------------------------------- the owner's elevations page
    # The page lists open requests and answers them by their public request id (the grant id): the link id
    # exists only as a hash. The same decisions answer as through the link (owner approves; asker or owner
    # denies), so a request id grants nothing a signed-in person could not already do with the link.
    def open_requests(self, environment: str, *, default: str, now: float) -> list[PendingElevation]:
        """Live, unanswered requests of ``environment`` (a request bound to none is the ``default`` one's),
        with the request id as link id."""
        rows = self.state.elevation_requests_open(now)
        return [self._as_pending(row) for row in rows if (row["environment"] or default) == environment]

    def pending_by_id(self, grant_id: str, *, now: float) -> PendingElevation | None:
        row = self._live_by_id(grant_id, now)
        return None if row is None else self._as_pending(row)

    def environment_of_request(self, grant_id: str, *, now: float) -> tuple[bool, str | None]:
        """(is it a live request, its environment)."""
        row = self._live_by_id(grant_id, now)
        return (False, None) if row is None else (True, row["environment"])

    def approve_by_id(
        self, grant_id: str, *, person: str, assertion_at: float | None, user_verified: bool, now: float
    ) -> Grant:
        return self._approve(self._live_by_id(grant_id, now), person, assertion_at, user_verified, now)

    def deny_by_id(self, grant_id: str, *, person: str, now: float) -> None:
        self._deny(self._live_by_id(grant_id, now), person, now)

    def _live_by_id(self, grant_id: object, now: float) -> sqlite3.Row | None:
        if not isinstance(grant_id, str) or not _GRANT_ID.fullmatch(grant_id):
            return None
        row = self.state.elevation_request_by_id(grant_id)
        if row is None or row["answered_at"] is not None or row["expires_at"] <= now:
            return None
        return row

    @staticmethod
    def _as_pending(row: sqlite3.Row, link_id: str | None = None) -> PendingElevation:
        return PendingElevation(
            link_id=link_id or row["grant_id"],
            code=row["code"],
            reason=row["reason"],
            person=row["login"],
            client=row["client"],
            client_class=row["client_class"],
            connector=row["connector"],
            asked_at=row["created_at"],
            expires_at=row["expires_at"],
        )

    # ------------------------------------------------------ the owner's CLI
    def list(self) -> list[Grant]:
        return [Grant.of(row) for row in self.state.elevation_grants()]

    def revoke(self, grant_id: str, *, person: str, now: float) -> bool:
        row = self.state.elevation_revoke(grant_id, now)
        if row is None:
            return False
        self._audit_row(row, f"grant-revoked by={person}", now)
        return True

    # ------------------------------------------------------------- using
    def tier_for(self, caller: Caller, grant: object, conversation: str | None, now: float) -> tuple[Caller, Decision]:
        """The caller as this grant leaves it: trusted, or exactly as it was with the refusing rule. Never raises
        on the grant's value (any string, any length, lone surrogates included)."""
        if not isinstance(grant, str) or not _GRANT_VALUE.match(grant):
            return caller, deny("grant-unknown", "this is not a grant notegate issued.")
        digest = _sha(grant)
        row = self.state.elevation_grant(digest)
        if row is None:
            asked = self.state.elevation_request_by_grant(digest)
            request = (
                None
                if asked is None
                else _Asked(asked["connector"], asked["conversation"], asked["answered_at"], asked["expires_at"])
            )
            decision = decide_presented_grant(None, request, caller, conversation, now)
            if decision.rule not in ("grant-pending", "grant-unknown"):  # a waiting request's binding refused
                self._audit(caller, asked["grant_id"], f"grant-refused:{decision.rule}", now)
            return caller, decision
        facts = Grant.of(row)
        decision = decide_presented_grant(facts, None, caller, conversation, now)
        if decision.allowed:
            granted = lifted(caller, grant_id=facts.grant_id)
            key = (facts.grant_id, caller.session)
            if key not in self._used:
                self._used[key] = None
                while len(self._used) > MAX_AUDITED_USES:
                    self._used.popitem(last=False)
                self._audit(granted, facts.grant_id, "grant-used", now)
            return granted, decision
        if decision.rule == "grant-expired":
            if self.state.elevation_mark_expiry_audited(facts.grant_id):
                self._audit(caller, facts.grant_id, "grant-expired", now)
        else:
            self._audit(caller, facts.grant_id, f"grant-refused:{decision.rule}", now)
        return caller, decision

    # ------------------------------------------------------------- sweep
    def sweep(self, *, now: float) -> dict[str, int]:
        """The hourly sweep (with the OAuth one): audit every grant that expired unseen (``grant-expired``,
        once, as a presented one would) and every link that expired unanswered (``elevation-expired``); drop
        requests that are answered or expired (an approved one lives on as its grant) and grants that ended
        (expired or revoked) more than :data:`KEEP_ENDED_GRANT_SECONDS` ago.  Grants stay listed until then."""
        expired = 0
        for row in self.state.elevation_grants_expired_unaudited(now):
            if self.state.elevation_mark_expiry_audited(row["grant_id"]):
                self._audit_row(row, "grant-expired", now)
                expired += 1
        lapsed = self.state.elevation_requests_lapsed(now)
        for row in lapsed:
            self._audit_row(row, "elevation-expired", now)
        counts = self.state.elevation_sweep(now=now, keep_ended_seconds=KEEP_ENDED_GRANT_SECONDS)
        return {"grants_expired": expired, "links_expired": len(lapsed), **counts}

    # ------------------------------------------------------------- audit
    def _live_request(self, link_id: object, now: float) -> sqlite3.Row | None:
        if not isinstance(link_id, str) or not 20 <= len(link_id) <= 64:
            return None
        row = self.state.elevation_request(_sha(link_id))
        if row is None or row["answered_at"] is not None or row["expires_at"] <= now:
            return None
        return row

    def _audit(self, caller: Caller, grant_id: str, outcome: str, now: float) -> None:
        self.state.audit(
            now=now,
            **caller.audit_fields(),
            tool="elevation",
            path=f"grant:{grant_id} connector:{caller.connector_id}",
            outcome=outcome,
        )

    def _audit_row(self, row: sqlite3.Row, outcome: str, now: float) -> None:
        self.state.audit(
            now=now,
            environment=row["environment"],
            login=row["login"],
            client=row["client"],
            client_class=row["client_class"] if "client_class" in row.keys() else None,  # noqa: SIM118 - sqlite3.Row
            tier=None,
            session=None,
            tool="elevation",
            path=f"grant:{row['grant_id']} connector:{row['connector']}",
            outcome=outcome,
        )


def _unknown() -> NotegateError:
    return NotegateError("this approval link is unknown, expired or already answered", rule="elevation-unknown")
