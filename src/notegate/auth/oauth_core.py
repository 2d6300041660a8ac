"""The authorization server's state machine, synchronous and clocked: consent, codes, grant families, tokens.

Theory of operation
-------------------
* A **grant family** is one connector login: one client, one person, one environment, and the chain of
  refresh tokens that started with one authorization code.  Its id names the connector
  (``oauth:<family id>``) in authorship, quotas and the audit.
* ``authorize`` stores a *pending request* (its id: 256 random bits, stored as a hash) and sends the
  browser to the consent page.  Pending requests are bounded ([server] ``oauth_max_pending_per_client`` and
  ``oauth_max_pending_consents``: the oldest unanswered ones make room) and so are the fields they hold.
  The person who approves it becomes the family's person; the family is bound to one environment that
  person may use: the deployment's default environment if they may use it, else the first configured one
  they may.  A person of no environment cannot approve.
* Codes: single use (spent with one UPDATE), ``oauth_code_seconds`` (60 s), bound to client, redirect URI
  and PKCE challenge (the SDK's token handler checks the verifier against it).  Presenting a spent code
  again revokes the family it started (RFC 6749 §4.1.2).
* Tokens are opaque (256 random bits) and stored only as SHA-256.  Access tokens live
  ``oauth_access_token_seconds`` (1 h) and carry the ``resource`` they were asked for (RFC 8707), which
  /mcp checks.  A refresh token is rotated on every use; presenting a rotated one again revokes the whole
  family, so a stolen refresh token and its rightful owner cannot both keep going.
* Every OAuth caller is ``hosted`` and ``restricted``: trust comes from a device key or an owner-approved
  grant, never from an OAuth login.
* Time is a parameter (``now``) everywhere; nothing here sleeps or reads the clock.
"""

from __future__ import annotations

import hashlib
import json
import secrets
from dataclasses import dataclass
from urllib.parse import urlsplit

from mcp.server.auth.provider import construct_redirect_uri

from notegate.auth.anonymous import field_refusal
from notegate.auth.consent import PendingConsent
from notegate.auth.members import Membership
from notegate.config import Config
from notegate.errors import NotegateError
from notegate.policy import OAUTH_STANDING, Caller, caller_of, decide_redirect_uri
from notegate.state import StateDB

ACCESS_PREFIX = "nga_"
REFRESH_PREFIX = "ngr_"
GRANTS_TEXT = (
    "restricted: reads everything but private notes, writes only the inbox (a reviewer promotes what it writes)"
)


def digest(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(frozen=True)
class CodeGrant:
    """An unspent, unexpired authorization code as the token endpoint needs it."""

    code_hash: str
    family_id: str
    client_id: str
    redirect_uri: str
    redirect_uri_provided_explicitly: bool
    code_challenge: str
    scopes: tuple[str, ...]
    resource: str | None
    expires_at: float


@dataclass(frozen=True)
class TokenGrant:
    """A live token (access or refresh) with the family it belongs to."""

    token_hash: str
    kind: str
    family_id: str
    client_id: str
    client_name: str
    login: str
    environment: str
    scopes: tuple[str, ...]
    resource: str | None
    expires_at: float

    @property
    def connector(self) -> str:
        return f"oauth:{self.family_id}"

    @property
    def id(self) -> str:
        """The credential the door counts open requests against: the connector login."""
        return self.connector

    def caller(self, session: str = "-") -> Caller:
        """The caller this grant is (the policy's :func:`~notegate.policy.caller_of`, as for every credential)."""
        return caller_of(self.claims(), client=self.client_name, session=session)

    def claims(self) -> dict[str, str | None]:
        """The same claim keys a static token carries, so the MCP door builds the caller the same way."""
        return {
            "login": self.login,
            "display_name": self.login,
            "client_class": OAUTH_STANDING[0],
            "tier": OAUTH_STANDING[1],
            "environment": self.environment,
            "connector": self.connector,
        }


@dataclass(frozen=True)
class IssuedTokens:
    access_token: str
    refresh_token: str
    expires_in: int
    scopes: tuple[str, ...]


class OAuthCore:
    """Everything the provider and the consent page need, over the state database. Implements
    :class:`notegate.auth.consent.ConsentBackend`."""

    def __init__(self, state: StateDB, config: Config, *, issuer: str) -> None:
        self.state = state
        self.config = config
        self.policy = config.policy
        self.issuer = issuer.rstrip("/")

    # ------------------------------------------------------------ authorize
    def start(
        self,
        *,
        client_id: str,
        client_name: str,
        redirect_uri: str,
        redirect_uri_provided_explicitly: bool,
        registered: tuple[str, ...],
        state: str | None,
        code_challenge: str,
        scopes: list[str] | None,
        resource: str | None,
        now: float,
    ) -> str:
        """Store a pending request and return the consent page's URL. The redirect is checked again here."""
        decision = decide_redirect_uri(redirect_uri, registered, self.policy.oauth_redirect_allowlist)
        if not decision.allowed:
            raise NotegateError(decision.reason, rule=decision.rule)
        request_id = secrets.token_urlsafe(32)
        params = {
            "redirect_uri": redirect_uri,
            "explicit": redirect_uri_provided_explicitly,
            "state": state,
            "code_challenge": code_challenge,
            "scopes": list(scopes or [self.policy.oauth_default_scope]),
            "resource": resource,
        }
        too_long = field_refusal({"state": state, "resource": resource, "redirect_uri": redirect_uri})
        if too_long is not None:
            raise too_long
        # Bounded (issue 27): a stranger's flood of requests drops the oldest unanswered ones of its own
        # client first, then the oldest overall; it never refuses, so it cannot lock the owner's consent out.
        self.state.oauth_insert_pending(
            request_hash=digest(request_id),
            client_id=client_id,
            client_name=client_name,
            params_json=json.dumps(params),
            now=now,
            live_after=now - self.policy.oauth_consent_seconds,
            max_total=self.config.oauth_max_pending_consents,
            max_per_client=self.config.oauth_max_pending_per_client,
        )
        return f"{self.issuer}/oauth/consent?request={request_id}"

    # -------------------------------------------------------------- consent
    def _live(self, request_id: str, now: float):
        row = self.state.oauth_pending(digest(request_id))
        if row is None or row["created_at"] < now - self.policy.oauth_consent_seconds:
            return None
        return row

    def pending(self, request_id: str, *, now: float) -> PendingConsent | None:
        row = self._live(request_id, now)
        if row is None or row["answered_at"] is not None:
            return None
        params = json.loads(row["params_json"])
        return PendingConsent(
            request_id=request_id,
            client_id=row["client_id"],
            client_name=row["client_name"],
            redirect_uri=params["redirect_uri"],
            redirect_host=urlsplit(params["redirect_uri"]).netloc,
            grants_text=GRANTS_TEXT,
            created_at=row["created_at"],
        )

    def environment_for(self, person: str) -> str | None:
        """The environment a new grant of ``person`` is bound to: the default if they may use it, else the
        first configured one they may, else None."""
        # membership lives in the state database (the config file seeds it)
        members = Membership(self.state, lambda: self.config)
        default = self.config.default_environment
        if default in self.config.environments and members.may_use(person, default):
            return default
        return next((name for name in self.config.environments if members.may_use(person, name)), None)

    def _answer(self, request_id: str, now: float):
        row = self._live(request_id, now)
        if row is None:
            raise NotegateError("there is no such consent request (unknown or expired)", rule="consent-unknown")
        if row["answered_at"] is not None:
            raise NotegateError("this consent request was already answered", rule="consent-answered")
        return row

    def _claim(self, request_id: str, now: float):
        answered = self.state.oauth_answer_pending(digest(request_id), now)
        if answered is None:
            raise NotegateError("this consent request was already answered", rule="consent-answered")
        return answered, json.loads(answered["params_json"])

    def approve(self, request_id: str, *, person: str, now: float) -> str:
        self._answer(request_id, now)
        environment = self.environment_for(person)
        if environment is None:
            raise NotegateError(
                f"'{person}' is not the owner or a member of any environment", rule="consent-no-environment"
            )
        row, params = self._claim(request_id, now)
        family_id = secrets.token_hex(12)
        self.state.oauth_insert_family(
            family_id=family_id,
            client_id=row["client_id"],
            client_name=row["client_name"],
            login=person,
            environment=environment,
            now=now,
        )
        code = secrets.token_urlsafe(32)
        self.state.oauth_insert_code(
            code_hash=digest(code),
            family_id=family_id,
            client_id=row["client_id"],
            params_json=json.dumps(params),
            expires_at=now + self.policy.oauth_code_seconds,
        )
        return construct_redirect_uri(params["redirect_uri"], code=code, state=params["state"], iss=self.issuer)

    def deny(self, request_id: str, *, now: float) -> str:
        self._answer(request_id, now)
        _row, params = self._claim(request_id, now)
        return construct_redirect_uri(
            params["redirect_uri"], error="access_denied", state=params["state"], iss=self.issuer
        )

    # ---------------------------------------------------------------- codes
    def load_code(self, client_id: str, code: str, *, now: float) -> CodeGrant | None:
        """The live code, or None. A spent code presented again revokes the family it started."""
        row = self.state.oauth_code(digest(code))
        if row is None or row["client_id"] != client_id or row["expires_at"] < now:
            return None
        if row["used_at"] is not None:
            self.state.oauth_revoke_family(row["family_id"], now)
            return None
        params = json.loads(row["params_json"])
        return CodeGrant(
            code_hash=row["code_hash"],
            family_id=row["family_id"],
            client_id=row["client_id"],
            redirect_uri=params["redirect_uri"],
            redirect_uri_provided_explicitly=bool(params["explicit"]),
            code_challenge=params["code_challenge"],
            scopes=tuple(params["scopes"]),
            resource=params["resource"],
            expires_at=row["expires_at"],
        )

    def exchange_code(self, grant: CodeGrant, *, now: float) -> IssuedTokens | None:
        """Spend the code and mint the family's first tokens; None if it was spent meanwhile (then the
        family is revoked: two exchanges of one code mean one of them is not the client)."""
        if not self.state.oauth_use_code(grant.code_hash, now):
            self.state.oauth_revoke_family(grant.family_id, now)
            return None
        self.state.oauth_touch_client(grant.client_id, now)
        return self._mint(grant.family_id, grant.client_id, grant.scopes, grant.resource, now)

    # --------------------------------------------------------------- tokens
    def _mint(
        self, family_id: str, client_id: str, scopes: tuple[str, ...], resource: str | None, now: float
    ) -> IssuedTokens:
        access = ACCESS_PREFIX + secrets.token_urlsafe(32)
        refresh = REFRESH_PREFIX + secrets.token_urlsafe(32)
        for kind, token, seconds in (
            ("access", access, self.policy.oauth_access_token_seconds),
            ("refresh", refresh, self.policy.oauth_refresh_token_seconds),
        ):
            self.state.oauth_insert_token(
                token_hash=digest(token),
                kind=kind,
                family_id=family_id,
                client_id=client_id,
                scopes=" ".join(scopes),
                resource=resource,
                expires_at=now + seconds,
                now=now,
            )
        return IssuedTokens(access, refresh, self.policy.oauth_access_token_seconds, scopes)

    def _grant(self, token: str, kind: str, now: float) -> tuple[TokenGrant | None, object]:
        prefix = ACCESS_PREFIX if kind == "access" else REFRESH_PREFIX
        if not token.startswith(prefix) or len(token) > 200 or not token.isascii():
            return None, None
        row = self.state.oauth_token(digest(token))
        if row is None or row["kind"] != kind:
            return None, None
        if row["revoked_at"] is not None or row["family_revoked_at"] is not None or row["expires_at"] < now:
            return None, None
        grant = TokenGrant(
            token_hash=row["token_hash"],
            kind=kind,
            family_id=row["family_id"],
            client_id=row["client_id"],
            client_name=row["client_name"],
            login=row["login"],
            environment=row["environment"],
            scopes=tuple(row["scopes"].split()),
            resource=row["resource"],
            expires_at=row["expires_at"],
        )
        return grant, row

    def access(self, token: str, *, now: float) -> TokenGrant | None:
        """The live access token's grant, or None (unknown, expired, revoked, or its family revoked)."""
        return self._grant(token, "access", now)[0]

    def load_refresh(self, client_id: str, token: str, *, now: float) -> TokenGrant | None:
        """The live refresh token, or None. A rotated one presented again revokes its whole family."""
        grant, row = self._grant(token, "refresh", now)
        if grant is None or grant.client_id != client_id:
            return None
        if row["used_at"] is not None:  # type: ignore[index]
            self.state.oauth_revoke_family(grant.family_id, now)
            return None
        return grant

    def rotate(self, grant: TokenGrant, scopes: list[str], *, now: float) -> IssuedTokens | None:
        """Spend the refresh token and mint the next pair of its family; None (and the family revoked) if it
        was spent meanwhile."""
        if not self.state.oauth_use_refresh(grant.token_hash, now):
            self.state.oauth_revoke_family(grant.family_id, now)
            return None
        self.state.oauth_touch_client(grant.client_id, now)
        return self._mint(grant.family_id, grant.client_id, tuple(scopes or grant.scopes), grant.resource, now)

    def revoke(self, token: str, *, client_id: str | None, now: float) -> bool:
        """Revoke the family of an access or refresh token (of ``client_id``, when given). RFC 7009: an
        unknown token is not an error, so this answers whether anything was revoked."""
        for kind in ("access", "refresh"):
            grant, _row = self._grant(token, kind, now)
            if grant is not None and (client_id is None or grant.client_id == client_id):
                self.state.oauth_revoke_family(grant.family_id, now)
                return True
        return False

    def sweep(self, *, now: float) -> dict[str, int]:
        """The hourly sweep: expired codes and tokens, old consent requests, unused registrations."""
        return self.state.oauth_sweep(
            now=now,
            consent_seconds=self.policy.oauth_consent_seconds,
            unused_client_seconds=self.policy.oauth_unused_registration_seconds,
        )
