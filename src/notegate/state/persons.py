"""Persons: passkeys, one-time enrol links, web sessions and pending WebAuthn challenges (no passwords)."""

from __future__ import annotations

import sqlite3

from notegate.state.db import StateCore


class PersonTables(StateCore):
    """The passkeys, enrol_links, web_sessions and web_challenges tables."""

    # -- persons and passkeys ---------------------------------------------------------------------------
    # Everything the console's login needs: passkeys, one-time enrol links, web sessions, pending WebAuthn
    # challenges. Callers pass ``now``; expired rows are swept on the way.
    def insert_passkey(self, row: dict[str, object]) -> None:
        with self.tx() as db:
            db.execute(
                "INSERT INTO passkeys (id, login, credential_id, public_key, user_handle, sign_count, name,"
                " created_at) VALUES (:id, :login, :credential_id, :public_key, :user_handle, :sign_count, :name,"
                " :created_at)",
                row,
            )

    def passkey_by_credential(self, credential_id: bytes) -> sqlite3.Row | None:
        return self.query_one("SELECT * FROM passkeys WHERE credential_id = ?", (credential_id,))

    def passkeys(self, login: str | None = None) -> list[sqlite3.Row]:
        if login is None:
            return self.query("SELECT * FROM passkeys ORDER BY created_at, id")
        return self.query("SELECT * FROM passkeys WHERE login = ? ORDER BY created_at, id", (login,))

    def user_handle(self, login: str) -> bytes | None:
        rows = self.query("SELECT user_handle FROM passkeys WHERE login = ? ORDER BY created_at LIMIT 1", (login,))
        return bytes(rows[0]["user_handle"]) if rows else None

    def passkey_used(self, passkey_id: str, *, sign_count: int, now: float) -> None:
        with self.tx() as db:
            db.execute(
                "UPDATE passkeys SET sign_count = ?, last_used_at = ? WHERE id = ?", (sign_count, now, passkey_id)
            )

    def revoke_passkey(self, passkey_id: str, *, now: float, login: str | None = None) -> int:
        """Revoke one live passkey (only ``login``'s when given) and end the sessions it opened."""
        with self.tx() as db:
            cur = db.execute(
                "UPDATE passkeys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL AND (? IS NULL OR login = ?)",
                (now, passkey_id, login, login),
            )
            if cur.rowcount:
                db.execute("DELETE FROM web_sessions WHERE passkey_id = ?", (passkey_id,))
            return cur.rowcount

    def insert_enrol_link(self, *, token_hash: str, login: str, now: float, expires_at: float) -> None:
        with self.tx() as db:
            db.execute(
                "INSERT INTO enrol_links (token_hash, login, created_at, expires_at) VALUES (?,?,?,?)",
                (token_hash, login, now, expires_at),
            )

    def enrol_link(self, token_hash: str) -> sqlite3.Row | None:
        return self.query_one("SELECT * FROM enrol_links WHERE token_hash = ?", (token_hash,))

    def use_enrol_link(self, token_hash: str, *, now: float) -> bool:
        """Mark a live, unused link used: True exactly once (one immediate transaction)."""
        with self.tx() as db:
            cur = db.execute(
                "UPDATE enrol_links SET used_at = ? WHERE token_hash = ? AND used_at IS NULL AND expires_at > ?",
                (now, token_hash, now),
            )
            return cur.rowcount == 1

    def insert_web_session(
        self, *, token_hash: str, login: str, passkey_id: str, now: float, expires_at: float
    ) -> None:
        with self.tx() as db:
            db.execute("DELETE FROM web_sessions WHERE expires_at <= ?", (now,))
            db.execute(
                "INSERT INTO web_sessions (token_hash, login, passkey_id, created_at, expires_at) VALUES (?,?,?,?,?)",
                (token_hash, login, passkey_id, now, expires_at),
            )

    def web_session(self, token_hash: str, *, now: float) -> sqlite3.Row | None:
        """A live session whose passkey (or OpenID Connect identity: ``oidc:``/``oidc2:`` + its id, see
        auth/oidc.py) is still live, else None."""
        return self.query_one(
            "SELECT s.* FROM web_sessions s LEFT JOIN passkeys p ON p.id = s.passkey_id"
            " LEFT JOIN oidc_identities o ON s.passkey_id IN ('oidc:' || o.id, 'oidc2:' || o.id)"
            " WHERE s.token_hash = ? AND s.expires_at > ?"
            " AND ((p.id IS NOT NULL AND p.revoked_at IS NULL) OR (o.id IS NOT NULL AND o.revoked_at IS NULL))",
            (token_hash, now),
        )

    def delete_web_session(self, token_hash: str) -> None:
        with self.tx() as db:
            db.execute("DELETE FROM web_sessions WHERE token_hash = ?", (token_hash,))

    def put_challenge(
        self,
        *,
        binding_hash: str,
        purpose: str,
        challenge: bytes,
        login: str | None,
        user_handle: bytes | None,
        now: float,
        expires_at: float,
    ) -> None:
        with self.tx() as db:
            db.execute("DELETE FROM web_challenges WHERE expires_at <= ?", (now,))
            db.execute(
                "INSERT OR REPLACE INTO web_challenges (binding_hash, purpose, challenge, login, user_handle,"
                " expires_at) VALUES (?,?,?,?,?,?)",
                (binding_hash, purpose, challenge, login, user_handle, expires_at),
            )

    def take_challenge(self, *, binding_hash: str, purpose: str, now: float) -> sqlite3.Row | None:
        """The pending challenge, consumed (single use), or None if absent or expired."""
        with self.tx() as db:
            row = db.execute(
                "DELETE FROM web_challenges WHERE binding_hash = ? AND purpose = ? RETURNING *", (binding_hash, purpose)
            ).fetchone()
            return row if row is not None and row["expires_at"] > now else None

    # -- end of persons and passkeys ----------------------------------------------------------------------
