"""Static bearer tokens: printed once, stored as a hash, compared in constant time.

A token is ``ngt_<id>_<secret>``: the id finds the row, the secret (256 random bits) is checked against
its SHA-256 with ``hmac.compare_digest``.  A fast hash is right here because the secret is random, not
a password: there is nothing to brute-force.  The token string never reaches a log or the database.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass

from notegate.errors import NotegateError
from notegate.policy import CLIENT_CLASSES, TIERS, Caller, default_tier
from notegate.state import StateDB

PREFIX = "ngt_"


@dataclass(frozen=True)
class TokenRecord:
    id: str
    name: str
    login: str
    display_name: str
    client_class: str
    tier: str
    environment: str | None
    created_at: float
    revoked_at: float | None
    last_used_at: float | None

    def caller(self, session: str = "-") -> Caller:
        return Caller(
            login=self.login,
            display_name=self.display_name,
            client=self.name,
            client_class=self.client_class,
            tier=self.tier,
            session=session,
            environment=self.environment,
            connector=self.connector,
        )

    @property
    def connector(self) -> str:
        """The connector login this token is: its id (not secret: the secret half never leaves the hash)."""
        return f"token:{self.id}"

    def claims(self) -> dict[str, str | None]:
        """What the HTTP door needs to rebuild the caller from a verified token."""
        return {
            "login": self.login,
            "display_name": self.display_name,
            "client_class": self.client_class,
            "tier": self.tier,
            "environment": self.environment,
            "connector": self.connector,
        }


def _hash(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def create_token(
    db: StateDB,
    *,
    name: str,
    client_class: str,
    tier: str | None,
    login: str,
    display_name: str | None = None,
    environment: str | None = None,
    now: float,
) -> tuple[str, TokenRecord]:
    """Mint a token; returns the token string (shown once) and its record."""
    if client_class not in CLIENT_CLASSES:
        raise NotegateError(
            f"unknown client class '{client_class}'",
            rule="bad-argument",
            remedy=f"Use one of: {', '.join(CLIENT_CLASSES)}.",
        )
    tier = tier or default_tier(client_class)
    if tier not in TIERS:
        raise NotegateError(f"unknown tier '{tier}'", rule="bad-argument", remedy=f"Use one of: {', '.join(TIERS)}.")
    if (client_class == "machine") != (tier == "machine"):
        raise NotegateError(
            "the machine class and the machine tier go together",
            rule="bad-argument",
            remedy="Use --class machine (its tier is machine), or a hosted/workstation class with "
            "--tier restricted|trusted.",
        )
    if not name or len(name) > 100 or not name.isprintable():
        raise NotegateError("a token name must be 1-100 printable characters", rule="bad-argument")
    token_id = secrets.token_hex(8)
    secret = secrets.token_urlsafe(32)
    record = TokenRecord(
        id=token_id,
        name=name,
        login=login,
        display_name=display_name or login,
        client_class=client_class,
        tier=tier,
        environment=environment,
        created_at=now,
        revoked_at=None,
        last_used_at=None,
    )
    db.insert_token({**record.__dict__, "secret_hash": _hash(secret)})
    return f"{PREFIX}{token_id}_{secret}", record


def _record(row) -> TokenRecord:
    return TokenRecord(
        id=row["id"],
        name=row["name"],
        login=row["login"],
        display_name=row["display_name"],
        client_class=row["client_class"],
        tier=row["tier"],
        environment=row["environment"],
        created_at=row["created_at"],
        revoked_at=row["revoked_at"],
        last_used_at=row["last_used_at"],
    )


def verify_token(db: StateDB, token: str, *, now: float | None = None) -> TokenRecord | None:
    """The live record for ``token``, or None. Never says which part was wrong."""
    if not token.startswith(PREFIX) or len(token) > 200 or not token.isascii():
        return None  # real tokens are ASCII: anything else (a lone surrogate, say) is simply not one
    token_id, sep, secret = token[len(PREFIX) :].partition("_")
    if not sep or not token_id or not secret:
        return None
    row = db.token(token_id)
    expected = row["secret_hash"] if row is not None else _hash("no-such-token")
    ok = hmac.compare_digest(expected, _hash(secret))
    if row is None or not ok or row["revoked_at"] is not None:
        return None
    return _record(row)


def list_tokens(db: StateDB) -> list[TokenRecord]:
    return [_record(r) for r in db.tokens()]


def set_token_tier(db: StateDB, token_id_or_name: str, tier: str) -> int:
    """The owner changes a token's tier (say, a restricted token made trusted). Its connector login stays the
    same, so what it wrote while restricted is still its own: it can never promote those items."""
    if tier not in ("restricted", "trusted"):
        raise NotegateError(f"unknown tier '{tier}'", rule="bad-argument", remedy="Use restricted or trusted.")
    return db.set_token_tier(token_id_or_name, tier)


def revoke_token(db: StateDB, token_id_or_name: str, *, now: float) -> int:
    return db.revoke_tokens(token_id_or_name, now)
