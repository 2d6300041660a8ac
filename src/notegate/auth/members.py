"""Members of an environment: who they are (the state database, seeded from the config file), invitations,
what each member holds, and removal.

Theory of operation:

* **The database is the truth, the file the seed.** At start every ``members`` login of ``[environments.NAME]``
  that has no row is recorded (``source = 'config'``); from then on the console adds (by invitation) and removes
  members, and a removed member stays removed whatever the file says. :func:`notegate.policy.effective_members`
  combines the two, so a database not yet seeded still answers from the file. The doctor's ``members.config``
  check lists every disagreement, so the owner can bring the file in line once.
* **Invitations** are ``ngi_`` + 256 random bits, stored as SHA-256, shown once, valid :data:`INVITE_SECONDS`,
  spent exactly once (one UPDATE) by the person enrolling a passkey or linking a provider account through it.
* **Removal is one transaction** (``StateDB.member_remove``): the membership row, every static token, OAuth
  grant family, elevation grant and pending request, invitation and LiveSync device of that person in that
  environment, and every console session of theirs end together, and one audit row names what ended (the
  LiveSync gate also asks :meth:`Membership.check_caller` at every request, so a device row a restore left
  live is refused too). Workstation device keys live in the config file: the MCP door refuses every
  non-machine caller whose person is no longer a member
  (:func:`notegate.policy.decide_member_caller`), so a device key of a removed member raises nothing, and the
  doctor names the ``[devices.NAME]`` tables to delete.
* ``now`` is always a parameter.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from notegate.auth.websession import hash_secret, mint_secret, parse_secret
from notegate.errors import NotegateError
from notegate.policy import (
    Decision,
    decide_member_caller,
    decide_member_invite,
    decide_member_removal,
    decide_member_use,
    effective_members,
)

if TYPE_CHECKING:
    from notegate.config import Config
    from notegate.state import StateDB

INVITE_PREFIX = "ngi_"
#: An invitation link works this long, and once: long enough to be sent and opened the same day.
INVITE_SECONDS = 24 * 3600


@dataclass(frozen=True)
class Invitation:
    """What the owner sees once: the secret link, and the public id the listing and audit rows name."""

    token: str  # secret: shown once, stored only as a hash
    invite_id: str
    environment: str
    login: str
    expires_at: float


@dataclass(frozen=True)
class MemberView:
    """One member as the owner's page shows them (ids, names and times; never a secret)."""

    login: str
    source: str
    added_by: str
    added_at: float
    tokens: list[str]
    oauth: list[str]
    devices: list[str]
    grants: list[str]
    passkeys: int
    identities: list[str]
    last_activity: float | None


def seed_members(state: StateDB, config: Config, *, now: float) -> dict[str, list[str]]:
    """Record the config file's members that have no row yet, per environment (what was recorded)."""
    return {
        name: added
        for name, env in config.environments.items()
        if (added := state.member_seed(name, list(env.members), now=now))
    }


def _refuse(decision: Decision) -> None:
    if not decision.allowed:
        raise NotegateError(decision.reason, rule=decision.rule)


class Membership:
    """Who is a member (the one answer every door asks), invitations and removal."""

    def __init__(self, state: StateDB, config: Callable[[], Config]) -> None:
        self.state = state
        self.config = config

    # -- who is a member
    def members(self, environment: str) -> tuple[str, ...]:
        env = self.config().environment(environment)
        rows = [(r["login"], r["removed_at"] is None) for r in self.state.member_rows(env.name)]
        return effective_members(env.members, rows)

    def may_use(self, login: str, environment: str) -> bool:
        env = self.config().environment(environment)
        return decide_member_use(env.owner, self.members(env.name), login).allowed

    def persons(self) -> frozenset[str]:
        """Every owner and live member of every environment: the logins that may log in to the console."""
        config = self.config()
        found = {env.owner for env in config.environments.values()}
        for name in config.environments:
            found.update(self.members(name))
        return frozenset(found)

    def check_caller(self, login: str, environment: str | None, client_class: str) -> Decision:
        """May a connector login of ``login`` still act in ``environment`` (None: the default)?"""
        try:
            env = self.config().environment(environment)
        except NotegateError:
            return decide_member_caller((), "", login, client_class)
        rows = self.state.member_rows(env.name)
        removed = [r["login"] for r in rows if r["removed_at"] is not None]
        live = effective_members(env.members, [(r["login"], r["removed_at"] is None) for r in rows])
        return decide_member_caller(live, env.owner, login, client_class, removed)

    # -- invitations
    def invite(self, environment: str, login: object, *, by: str, now: float) -> Invitation:
        env = self.config().environment(environment)
        _refuse(decide_member_invite(env.owner, self.members(env.name), login))
        assert isinstance(login, str)
        token = mint_secret(INVITE_PREFIX)
        invite_id = "inv-" + secrets.token_hex(6)
        self.state.insert_invite(
            {
                "token_hash": hash_secret(token),
                "invite_id": invite_id,
                "environment": env.name,
                "login": login,
                "created_by": by,
                "created_at": now,
                "expires_at": now + INVITE_SECONDS,
            }
        )
        return Invitation(token, invite_id, env.name, login, now + INVITE_SECONDS)

    def check_invite(self, raw: object, *, now: float) -> Any:
        """The live, unused invitation this secret names (its row); else refused by name."""
        token = parse_secret(raw, INVITE_PREFIX)
        row = self.state.invite(hash_secret(token)) if token else None
        if row is None:
            raise NotegateError("this invitation is not one this server issued", rule="invite-unknown")
        if row["used_at"] is not None:
            raise NotegateError("this invitation was already used", rule="invite-used")
        if row["expires_at"] <= now:
            raise NotegateError("this invitation has expired", rule="invite-expired")
        return row

    def accept(self, raw: object, *, how: str, now: float) -> Any:
        """Spend the invitation and make its person a member (once: of two tabs, one wins)."""
        self.check_invite(raw, now=now)
        token = parse_secret(raw, INVITE_PREFIX)
        row = self.state.use_invite(hash_secret(token), how=how, by="invite", now=now) if token else None
        if row is None:
            raise NotegateError("this invitation was already used", rule="invite-used")
        return row

    # -- removal
    def remove(self, environment: str, login: object, *, by: str, now: float) -> dict[str, list[str]]:
        """End the membership and every credential of that person in that environment, in one transaction."""
        config = self.config()
        env = config.environment(environment)
        _refuse(decide_member_removal(env.owner, self.members(env.name), login))
        assert isinstance(login, str)
        if not any(r["login"] == login for r in self.state.member_rows(env.name)):
            self.state.member_seed(env.name, [login], now=now)  # a file member not seeded yet: record, then remove
        ended = self.state.member_remove(
            env.name, login, by=by, now=now, default_environment=env.name == config.default_environment
        )
        if ended is None:
            raise NotegateError(f"'{login}' is not a member of this environment", rule="member-unknown")
        ended["devices"] = sorted(d.name for d in config.devices.values() if d.person == login)
        return ended

    # -- the owner's overview
    def overview(self, environment: str) -> list[MemberView]:
        config = self.config()
        env = config.environment(environment)
        rows = {r["login"]: r for r in self.state.member_rows(env.name) if r["removed_at"] is None}
        default = env.name == config.default_environment
        views = []
        for login in self.members(env.name):
            row = rows.get(login)
            tokens = [
                f"{t['name']} ({t['client_class']})"
                for t in self.state.tokens()
                if t["login"] == login
                and t["revoked_at"] is None
                and (t["environment"] == env.name or (t["environment"] is None and default))
            ]
            oauth = [
                f"{f['client_name']} ({f['family_id'][:8]})"
                for f in self.state.query(
                    "SELECT client_name, family_id FROM oauth_families WHERE login = ? AND environment = ?"
                    " AND revoked_at IS NULL",
                    (login, env.name),
                )
            ]
            grants = [
                g["grant_id"]
                for g in self.state.query(
                    "SELECT grant_id FROM elevation_grants WHERE login = ? AND revoked_at IS NULL"
                    " AND (environment = ? OR (environment IS NULL AND ? = 1))",
                    (login, env.name, 1 if default else 0),
                )
            ]
            last = self.state.query(
                "SELECT MAX(at) AS at FROM audit WHERE login = ? AND (environment = ? OR environment IS NULL)",
                (login, env.name),
            )
            views.append(
                MemberView(
                    login=login,
                    source=row["source"] if row is not None else "config",
                    added_by=row["added_by"] if row is not None else "config",
                    added_at=row["added_at"] if row is not None else 0.0,
                    tokens=tokens,
                    oauth=oauth,
                    devices=sorted(d.name for d in config.devices.values() if d.person == login)
                    + [f"{d.name} (LiveSync)" for d in self.state.livesync_devices(env.name) if d.person == login],
                    grants=grants,
                    passkeys=sum(1 for p in self.state.passkeys(login) if p["revoked_at"] is None),
                    identities=[i["provider"] for i in self.state.oidc_identities(login) if i["revoked_at"] is None],
                    last_activity=last[0]["at"] if last else None,
                )
            )
        return views

    # -- the doctor
    def disagreements(self) -> list[str]:
        """Where the state database and the config file disagree about members, one line each."""
        config = self.config()
        lines = []
        for name, env in config.environments.items():
            rows = {r["login"]: r for r in self.state.member_rows(name)}
            for login in env.members:
                row = rows.get(login)
                if row is not None and row["removed_at"] is not None:
                    lines.append(f"{name}: the config lists '{login}', removed from the console by {row['removed_by']}")
            for login, row in rows.items():
                if row["removed_at"] is None and login not in env.members:
                    lines.append(f"{name}: '{login}' is a member ({row['source']}) the config does not list")
            for device in config.devices.values():
                if (
                    device.person in rows
                    and rows[device.person]["removed_at"] is not None
                    and not any(
                        device.person in self.members(n) or device.person == e.owner
                        for n, e in config.environments.items()
                    )
                ):
                    lines.append(f"[devices.{device.name}] belongs to '{device.person}', no longer a member")
        return lines
