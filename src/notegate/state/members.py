"""Members, invitations and OpenID Connect identities (migration 7): rows in, rows out; no decisions here.

The decisions are in notegate.policy.members and notegate.policy.oidc; auth/members.py and auth/oidc.py
call these methods. A member's removal is one transaction (:meth:`MemberTables.member_remove`): every
credential of that person in that environment ends together, or none does.
"""

from __future__ import annotations

import sqlite3

from notegate.state.db import StateCore


def _returned(db, sql: str, params: tuple) -> list[str]:
    """The first column of every row an ``UPDATE … RETURNING`` changed: the ids a removal ended."""
    return [r[0] for r in db.execute(sql, params).fetchall()]


class MemberTables(StateCore):
    """The members, member_invites, oidc_identities, oidc_pending and oidc_seen tables."""

    # -- membership
    def member_seed(self, environment: str, logins: list[str], *, now: float) -> list[str]:
        """Record the config file's members that have no row yet (a removed member keeps their row, so the
        file never brings them back); the logins recorded now."""
        added: list[str] = []
        with self.tx(claim=f"members:{environment}") as db:
            for login in logins:
                cur = db.execute(
                    "INSERT OR IGNORE INTO members (environment, login, source, added_by, added_at)"
                    " VALUES (?, ?, 'config', 'config', ?)",
                    (environment, login, now),
                )
                if cur.rowcount:
                    added.append(login)
        return added

    def member_rows(self, environment: str | None = None) -> list[sqlite3.Row]:
        if environment is None:
            return self.query("SELECT * FROM members ORDER BY environment, added_at, login")
        return self.query("SELECT * FROM members WHERE environment = ? ORDER BY added_at, login", (environment,))

    def member_add(self, environment: str, login: str, *, by: str, source: str, now: float) -> None:
        """A member from now on (a removed one comes back as a new membership)."""
        with self.tx(claim=f"members:{environment}") as db:
            cur = db.execute(
                "UPDATE members SET source = ?, added_by = ?, added_at = ?, removed_by = NULL, removed_at = NULL"
                " WHERE environment = ? AND login = ? AND removed_at IS NOT NULL",
                (source, by, now, environment, login),
            )
            if not cur.rowcount:
                db.execute(
                    "INSERT OR IGNORE INTO members (environment, login, source, added_by, added_at)"
                    " VALUES (?, ?, ?, ?, ?)",
                    (environment, login, source, by, now),
                )

    def member_remove(
        self, environment: str, login: str, *, by: str, now: float, default_environment: bool
    ) -> dict[str, list[str]] | None:
        """End ``login``'s membership of ``environment`` and, in the same transaction, every credential of that
        person there: static tokens, OAuth grant families (and their tokens), elevation grants and requests,
        pending invitations, LiveSync devices; and every console session of that person. What ended, by kind
        (ids, never a secret), or None when ``login`` was not a live member. ``default_environment``: rows that name no
        environment belong to this one."""
        here = (environment, 1 if default_environment else 0)
        with self.tx(claim=f"members:{environment}") as db:
            cur = db.execute(
                "UPDATE members SET removed_by = ?, removed_at = ? WHERE environment = ? AND login = ?"
                " AND removed_at IS NULL",
                (by, now, environment, login),
            )
            if not cur.rowcount:
                return None
            ended: dict[str, list[str]] = {}
            ended["tokens"] = _returned(
                db,
                "UPDATE tokens SET revoked_at = ? WHERE login = ? AND revoked_at IS NULL"
                " AND (environment = ? OR (environment IS NULL AND ? = 1)) RETURNING id",
                (now, login, *here),
            )
            families = _returned(
                db,
                "UPDATE oauth_families SET revoked_at = ? WHERE login = ? AND environment = ?"
                " AND revoked_at IS NULL RETURNING family_id",
                (now, login, environment),
            )
            for family in families:
                db.execute(
                    "UPDATE oauth_tokens SET revoked_at = ? WHERE family_id = ? AND revoked_at IS NULL", (now, family)
                )
            ended["oauth_families"] = families
            ended["grants"] = _returned(
                db,
                "UPDATE elevation_grants SET revoked_at = ? WHERE login = ? AND revoked_at IS NULL"
                " AND (environment = ? OR (environment IS NULL AND ? = 1)) RETURNING grant_id",
                (now, login, *here),
            )
            ended["elevation_requests"] = _returned(
                db,
                "UPDATE elevation_requests SET answered_at = ?, outcome = 'member-removed' WHERE login = ?"
                " AND answered_at IS NULL AND (environment = ? OR (environment IS NULL AND ? = 1))"
                " RETURNING grant_id",
                (now, login, *here),
            )
            ended["invites"] = _returned(
                db,
                "UPDATE member_invites SET used_at = ?, used_how = 'member-removed' WHERE login = ?"
                " AND environment = ? AND used_at IS NULL RETURNING invite_id",
                (now, login, environment),
            )
            # a LiveSync device is revoked as `livesync device revoke` does it: its public key deleted
            ended["livesync_devices"] = _returned(
                db,
                "UPDATE livesync_devices SET public_key = NULL, revoked_at = ? WHERE person = ?"
                " AND environment = ? AND revoked_at IS NULL RETURNING kid",
                (now, login, environment),
            )
            sessions = db.execute("DELETE FROM web_sessions WHERE login = ? RETURNING token_hash", (login,)).fetchall()
            ended["console_sessions"] = [str(len(sessions))]
            return ended

    # -- invitations
    def insert_invite(self, row: dict[str, object]) -> None:
        with self.tx() as db:
            db.execute("DELETE FROM member_invites WHERE used_at IS NULL AND expires_at <= ?", (row["created_at"],))
            db.execute(
                "INSERT INTO member_invites (token_hash, invite_id, environment, login, created_by, created_at,"
                " expires_at) VALUES (:token_hash, :invite_id, :environment, :login, :created_by, :created_at,"
                " :expires_at)",
                row,
            )

    def invite(self, token_hash: str) -> sqlite3.Row | None:
        return self.query_one("SELECT * FROM member_invites WHERE token_hash = ?", (token_hash,))

    def invites(self, environment: str) -> list[sqlite3.Row]:
        return self.query(
            "SELECT invite_id, environment, login, created_by, created_at, expires_at, used_at, used_how"
            " FROM member_invites WHERE environment = ? ORDER BY created_at DESC",
            (environment,),
        )

    def use_invite(self, token_hash: str, *, how: str, by: str, now: float) -> sqlite3.Row | None:
        """Spend a live invitation and make its person a member, in one transaction: the row, exactly once."""
        with self.tx() as db:
            row = db.execute(
                "UPDATE member_invites SET used_at = ?, used_how = ? WHERE token_hash = ? AND used_at IS NULL"
                " AND expires_at > ? RETURNING *",
                (now, how, token_hash, now),
            ).fetchone()
            if row is None:
                return None
            cur = db.execute(
                "UPDATE members SET source = 'invite', added_by = ?, added_at = ?, removed_by = NULL,"
                " removed_at = NULL WHERE environment = ? AND login = ?",
                (row["created_by"], now, row["environment"], row["login"]),
            )
            if not cur.rowcount:
                db.execute(
                    "INSERT INTO members (environment, login, source, added_by, added_at)"
                    " VALUES (?, ?, 'invite', ?, ?)",
                    (row["environment"], row["login"], row["created_by"], now),
                )
            return row

    # -- OpenID Connect identities
    def oidc_identity(self, issuer: str, subject: str) -> sqlite3.Row | None:
        return self.query_one("SELECT * FROM oidc_identities WHERE issuer = ? AND subject = ?", (issuer, subject))

    def oidc_identities(self, login: str | None = None) -> list[sqlite3.Row]:
        if login is None:
            return self.query("SELECT * FROM oidc_identities ORDER BY created_at")
        return self.query("SELECT * FROM oidc_identities WHERE login = ? ORDER BY created_at", (login,))

    def insert_oidc_identity(self, row: dict[str, object]) -> bool:
        """Link (issuer, subject) to a login; False when that identity is already linked (to anyone)."""
        with self.tx() as db:
            cur = db.execute(
                "INSERT OR IGNORE INTO oidc_identities (id, provider, issuer, subject, login, created_at)"
                " VALUES (:id, :provider, :issuer, :subject, :login, :created_at)",
                row,
            )
            return cur.rowcount == 1

    def oidc_identity_used(self, identity_id: str, *, now: float) -> None:
        with self.tx() as db:
            db.execute("UPDATE oidc_identities SET last_used_at = ? WHERE id = ?", (now, identity_id))

    def put_oidc_pending(self, row: dict[str, object], *, now: float, cap: int) -> bool:
        """Keep one pending authorization request (its state hashed), unless ``cap`` live ones are kept already;
        a browser holds one per provider and purpose (a new start replaces it)."""
        with self.tx(claim="oidc_pending") as db:
            db.execute("DELETE FROM oidc_pending WHERE expires_at <= ?", (now,))
            db.execute(
                "DELETE FROM oidc_pending WHERE binding_hash = ? AND provider = ? AND purpose = ?",
                (row["binding_hash"], row["provider"], row["purpose"]),
            )
            if int(db.execute("SELECT COUNT(*) FROM oidc_pending").fetchone()[0]) >= cap:
                return False
            db.execute(
                "INSERT INTO oidc_pending (state_hash, binding_hash, provider, purpose, nonce, verifier, login,"
                " invite_hash, next, created_at, expires_at) VALUES (:state_hash, :binding_hash, :provider,"
                " :purpose, :nonce, :verifier, :login, :invite_hash, :next, :created_at, :expires_at)",
                row,
            )
            return True

    def take_oidc_pending(self, state_hash: str, *, now: float) -> sqlite3.Row | None:
        """The pending request this ``state`` names, consumed (single use), or None (unknown or expired)."""
        with self.tx() as db:
            row = db.execute("DELETE FROM oidc_pending WHERE state_hash = ? RETURNING *", (state_hash,)).fetchone()
            return row if row is not None and row["expires_at"] > now else None

    def oidc_first_use(self, token_hash: str, *, expires_at: float, now: float) -> bool:
        """True the first time an ID token (its hash) is presented, False for a replay; kept until it expires."""
        with self.tx() as db:
            db.execute("DELETE FROM oidc_seen WHERE expires_at <= ?", (now,))
            cur = db.execute(
                "INSERT OR IGNORE INTO oidc_seen (token_hash, expires_at) VALUES (?, ?)", (token_hash, expires_at)
            )
            return cur.rowcount == 1
