"""Static bearer tokens: printed once, stored as a hash, compared in constant time.

A token is ``ngt_<id>_<secret>``: the id finds the row, the secret (256 random bits) is checked against
its SHA-256 with ``hmac.compare_digest``.  A fast hash is right here because the secret is random, not
a password: there is nothing to brute-force.  The token string never reaches a log or the database.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from notegate.errors import NotegateError
from notegate.policy import (
    CONVERSATION_TIERS,
    Caller,
    ClientClass,
    caller_of,
    decide_token_name,
    decide_token_standing,
    decide_token_tier_change,
    default_tier,
)
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
    contracts: tuple[str, ...] = ()  # a machine token: the contracts it may call (given at creation)

    def caller(self, session: str = "-") -> Caller:
        """The caller this token is (the policy's :func:`~notegate.policy.caller_of`, as for every credential)."""
        return caller_of(self.claims(), client=self.name, session=session)

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


def _new_token(
    *,
    name: str,
    client_class: str,
    tier: str | None,
    login: str,
    display_name: str | None,
    environment: str | None,
    now: float,
    contracts: tuple[str, ...] = (),
) -> tuple[str, TokenRecord, dict[str, object]]:
    """A fresh token, its record and its row (the secret only as a hash); nothing stored yet."""
    tier = tier or default_tier(client_class)
    standing = decide_token_standing(client_class, tier, contracts=bool(contracts))
    if not standing.allowed:
        raise NotegateError(standing.reason, rule=standing.rule)
    if not name or len(name) > 100 or not name.isprintable():
        raise NotegateError("a token name must be 1-100 printable characters", rule="bad-argument")
    contracts = tuple(dict.fromkeys(contracts))
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
        contracts=contracts,
    )
    row = {**record.__dict__, "contracts": " ".join(contracts), "secret_hash": _hash(secret)}
    return f"{PREFIX}{token_id}_{secret}", record, row


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
    contracts: tuple[str, ...] = (),
) -> tuple[str, TokenRecord]:
    """Mint a token; returns the token string (shown once) and its record.

    The low-level recipe the tests build fixtures with: it neither checks the name nor delivers the secret.
    The owner's commands (``token create``, ``setup``) use :func:`issue_token`."""
    token, record, row = _new_token(
        name=name,
        client_class=client_class,
        tier=tier,
        login=login,
        display_name=display_name,
        environment=environment,
        now=now,
        contracts=contracts,
    )
    db.insert_token(row)
    return token, record


def issue_token(
    db: StateDB,
    *,
    name: str,
    client_class: str,
    tier: str | None,
    login: str,
    environment: str,
    deliver: Callable[[str], None],
    display_name: str | None = None,
    now: float,
    contracts: tuple[str, ...] = (),
) -> TokenRecord:
    """Mint a token the way the owner's commands do: its name is free in its environment
    (``policy.decide_token_name``), and the secret is delivered (``deliver(token)``: written to its file,
    printed) *before* the row that makes it valid is stored.  If delivery raises, nothing is stored, so no
    live token exists whose secret nobody holds.  The name is checked again inside the insert's transaction
    (two concurrent creates cannot both take it); a loss there raises after delivery, and the delivered
    value is then simply not a token."""
    taken = [r.name for r in list_tokens(db) if r.environment == environment and r.revoked_at is None]
    _refuse_unless(decide_token_name(name, taken))
    token, record, row = _new_token(
        name=name,
        client_class=client_class,
        tier=tier,
        login=login,
        display_name=display_name,
        environment=environment,
        now=now,
        contracts=contracts,
    )
    deliver(token)
    _refuse_unless(db.insert_token_checked(row, lambda names: decide_token_name(name, names)))
    return record


def _refuse_unless(decision) -> None:
    if not decision.allowed:
        raise NotegateError(decision.reason, rule=decision.rule)


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
        contracts=tuple(row["contracts"].split()),
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


def failure_class(db: StateDB, token: str | None) -> str:
    """Why a token did not verify, for the server's log only (never told to the caller): ``no-token``,
    ``unknown`` (not one of ours, or a wrong secret), ``revoked``, or ``not-static`` (an OAuth token)."""
    if not token:
        return "no-token"
    if not token.startswith(PREFIX):
        return "not-static"
    token_id, sep, secret = token[len(PREFIX) :].partition("_")
    row = db.token(token_id) if sep and token_id and token_id.isascii() and len(token) <= 200 else None
    if row is None or not hmac.compare_digest(row["secret_hash"], _hash(secret)):
        return "unknown"
    return "revoked" if row["revoked_at"] is not None else "unknown"


def list_tokens(db: StateDB) -> list[TokenRecord]:
    return [_record(r) for r in db.tokens()]


def set_token_tier(db: StateDB, token_id_or_name: str, tier: str) -> int:
    """The owner changes a token's tier (say, a restricted token made trusted). Its connector login stays the
    same, so what it wrote while restricted is still its own: it can never promote those items."""
    unknown = decide_token_tier_change(ClientClass.HOSTED, tier)
    if not unknown.allowed:
        raise NotegateError(unknown.reason, rule=unknown.rule, remedy=f"Use {' or '.join(CONVERSATION_TIERS)}.")
    return db.set_token_tier(token_id_or_name, tier, lambda client_class: decide_token_tier_change(client_class, tier))


def revoke_token(db: StateDB, token_id_or_name: str, *, now: float) -> int:
    return db.revoke_tokens(token_id_or_name, now)


def revoke_token_id(db: StateDB, token_id: str, *, now: float) -> int:
    """Revoke the one token with this id (the console's revoke buttons name ids, never names)."""
    return db.revoke_token_id(token_id, now)


def make_private_dirs(folder: Path) -> list[Path]:
    """Create ``folder`` and its missing parents, each mode 0700; returns the ones created (outermost
    first), so a caller that fails later, or an undo, can remove exactly those."""
    missing: list[Path] = []
    probe = folder
    while not probe.exists():
        missing.append(probe)
        if probe.parent == probe:
            break
        probe = probe.parent
    created: list[Path] = []
    for directory in reversed(missing):
        directory.mkdir(mode=0o700)
        os.chmod(directory, 0o700)  # mkdir's mode passes through the umask
        created.append(directory)
    return created


def write_token_file(path: Path, token: str) -> list[Path]:
    """Write ``token`` to ``path`` (mode 0600, replaced atomically), creating missing parent folders (0700).

    Returns the folders it created. Any failure raises ``[token-output-failed]`` and leaves no partial file
    and none of the folders it made."""
    created: list[Path] = []
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    try:
        created = make_private_dirs(path.parent)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(token + "\n")
        os.replace(tmp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        for directory in reversed(created):
            with contextlib.suppress(OSError):
                directory.rmdir()
        raise NotegateError(
            f"cannot write the token file {path} ({exc.strerror or type(exc).__name__}).", rule="token-output-failed"
        ) from None
    return created
