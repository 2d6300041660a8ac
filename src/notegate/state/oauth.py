"""OAuth's rows: registrations, consent requests, codes, grant families and tokens (secrets only hashed)."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from notegate.state.db import StateCore


class OAuthTables(StateCore):
    """The oauth_* tables."""

    # --------------------------------------------------------------- OAuth
    # -- OAuth: SQL of the authorization server (auth/oauth.py). Rows in, rows out; no decisions here.
    def oauth_register_client(
        self,
        client_id: str,
        info_json: str,
        now: float,
        fits: Callable[[int, bool], str | None],
        secret_hash: str | None = None,
    ) -> bool:
        """Keep a registration as ``fits(count of registrations, whether one never completed a consent)``
        says: ``"keep"``, ``"evict"`` (first drop the oldest registration that never completed a consent:
        no grant family, never used at /token, so it holds no token; and its pending consent requests) or
        None (refuse).  One immediate transaction, so two registrations racing cannot both take the last
        place.  ``info_json`` holds no client_secret; its hash is ``secret_hash``."""
        with self.tx(claim="oauth_clients") as db:
            count = int(db.execute("SELECT COUNT(*) FROM oauth_clients").fetchone()[0])
            idle = db.execute(
                "SELECT client_id FROM oauth_clients c WHERE c.last_used_at = c.created_at AND NOT EXISTS"
                " (SELECT 1 FROM oauth_families f WHERE f.client_id = c.client_id)"
                " ORDER BY c.created_at, c.client_id LIMIT 1"
            ).fetchone()
            verdict = fits(count, idle is not None)
            if verdict is None:
                return False
            if verdict == "evict" and idle is not None:
                db.execute("DELETE FROM oauth_pending WHERE client_id = ?", (idle[0],))
                db.execute("DELETE FROM oauth_clients WHERE client_id = ?", (idle[0],))
            db.execute(
                "INSERT INTO oauth_clients (client_id, info_json, created_at, last_used_at, secret_hash)"
                " VALUES (?,?,?,?,?)",
                (client_id, info_json, now, now, secret_hash),
            )
            return True

    def oauth_client(self, client_id: str) -> sqlite3.Row | None:
        return self.query_one("SELECT * FROM oauth_clients WHERE client_id = ?", (client_id,))

    def oauth_touch_client(self, client_id: str, now: float) -> None:
        with self.tx() as db:
            db.execute("UPDATE oauth_clients SET last_used_at = ? WHERE client_id = ?", (now, client_id))

    def oauth_insert_pending(
        self,
        *,
        request_hash: str,
        client_id: str,
        client_name: str,
        params_json: str,
        now: float,
        live_after: float = float("-inf"),
        max_total: int | None = None,
        max_per_client: int | None = None,
    ) -> int:
        """Store a consent request, keeping the table bounded: requests created before ``live_after`` (expired)
        go, then the oldest unanswered ones of this client while it holds ``max_per_client``, then the oldest
        unanswered ones of any client while there are ``max_total``.  Returns how many live requests were
        dropped to make room.  One immediate transaction, so racing requests cannot overfill it."""
        dropped = 0
        with self.tx(claim="oauth_pending") as db:
            db.execute("DELETE FROM oauth_pending WHERE created_at < ?", (live_after,))
            bounds = (
                (
                    max_per_client,
                    "SELECT COUNT(*) FROM oauth_pending WHERE client_id = ? AND answered_at IS NULL",
                    "DELETE FROM oauth_pending WHERE request_hash IN (SELECT request_hash FROM oauth_pending"
                    " WHERE client_id = ? AND answered_at IS NULL ORDER BY created_at, request_hash LIMIT ?)",
                    (client_id,),
                ),
                (
                    max_total,
                    "SELECT COUNT(*) FROM oauth_pending WHERE answered_at IS NULL",
                    "DELETE FROM oauth_pending WHERE request_hash IN (SELECT request_hash FROM oauth_pending"
                    " WHERE answered_at IS NULL ORDER BY created_at, request_hash LIMIT ?)",
                    (),
                ),
            )
            for cap, count_sql, drop_sql, args in bounds:
                if cap is None:
                    continue
                count = int(db.execute(count_sql, args).fetchone()[0])
                if count >= cap:
                    dropped += db.execute(drop_sql, (*args, count - cap + 1)).rowcount
            db.execute(
                "INSERT INTO oauth_pending (request_hash, client_id, client_name, params_json, created_at)"
                " VALUES (?,?,?,?,?)",
                (request_hash, client_id, client_name, params_json, now),
            )
        return dropped

    def oauth_pending(self, request_hash: str) -> sqlite3.Row | None:
        return self.query_one("SELECT * FROM oauth_pending WHERE request_hash = ?", (request_hash,))

    def oauth_answer_pending(self, request_hash: str, now: float) -> sqlite3.Row | None:
        """Mark the request answered and return it, or None if it was already answered (or never was):
        one UPDATE, so two answers racing cannot both win."""
        with self.tx() as db:
            cur = db.execute(
                "UPDATE oauth_pending SET answered_at = ? WHERE request_hash = ? AND answered_at IS NULL",
                (now, request_hash),
            )
            if cur.rowcount != 1:
                return None
            return db.execute("SELECT * FROM oauth_pending WHERE request_hash = ?", (request_hash,)).fetchone()

    def oauth_insert_family(
        self, *, family_id: str, client_id: str, client_name: str, login: str, environment: str, now: float
    ) -> None:
        with self.tx() as db:
            db.execute(
                "INSERT INTO oauth_families (family_id, client_id, client_name, login, environment, created_at)"
                " VALUES (?,?,?,?,?,?)",
                (family_id, client_id, client_name, login, environment, now),
            )

    def oauth_family(self, family_id: str) -> sqlite3.Row | None:
        return self.query_one("SELECT * FROM oauth_families WHERE family_id = ?", (family_id,))

    def oauth_live_families(self, environment: str, now: float) -> list[sqlite3.Row]:
        """An environment's grant families that are not revoked, with their client's row and how many of
        their tokens are still live (never a token or its hash)."""
        return self.query(
            "SELECT f.family_id, f.client_id, f.client_name, f.login, f.environment, f.created_at,"
            " (SELECT COUNT(*) FROM oauth_tokens t WHERE t.family_id = f.family_id AND t.revoked_at IS NULL"
            " AND t.expires_at > ?) AS live_tokens,"
            " (SELECT MAX(t.created_at) FROM oauth_tokens t WHERE t.family_id = f.family_id) AS last_token_at,"
            " c.created_at AS registered_at, c.info_json AS client_info"
            " FROM oauth_families f LEFT JOIN oauth_clients c ON c.client_id = f.client_id"
            " WHERE f.environment = ? AND f.revoked_at IS NULL ORDER BY f.created_at",
            (now, environment),
        )

    def oauth_revoke_family(self, family_id: str, now: float) -> None:
        """The whole grant family: the family itself and every token it holds."""
        with self.tx() as db:
            db.execute(
                "UPDATE oauth_families SET revoked_at = ? WHERE family_id = ? AND revoked_at IS NULL", (now, family_id)
            )
            db.execute(
                "UPDATE oauth_tokens SET revoked_at = ? WHERE family_id = ? AND revoked_at IS NULL", (now, family_id)
            )

    def oauth_insert_code(
        self, *, code_hash: str, family_id: str, client_id: str, params_json: str, expires_at: float
    ) -> None:
        with self.tx() as db:
            db.execute(
                "INSERT INTO oauth_codes (code_hash, family_id, client_id, params_json, expires_at) VALUES (?,?,?,?,?)",
                (code_hash, family_id, client_id, params_json, expires_at),
            )

    def oauth_code(self, code_hash: str) -> sqlite3.Row | None:
        return self.query_one("SELECT * FROM oauth_codes WHERE code_hash = ?", (code_hash,))

    def oauth_use_code(self, code_hash: str, now: float) -> bool:
        """Spend a code: True once (one UPDATE, so two exchanges racing cannot both win)."""
        with self.tx() as db:
            cur = db.execute(
                "UPDATE oauth_codes SET used_at = ? WHERE code_hash = ? AND used_at IS NULL", (now, code_hash)
            )
            return cur.rowcount == 1

    def oauth_insert_token(
        self,
        *,
        token_hash: str,
        kind: str,
        family_id: str,
        client_id: str,
        scopes: str,
        resource: str | None,
        expires_at: float,
        now: float,
    ) -> None:
        with self.tx() as db:
            db.execute(
                "INSERT INTO oauth_tokens (token_hash, kind, family_id, client_id, scopes, resource, expires_at,"
                " created_at) VALUES (?,?,?,?,?,?,?,?)",
                (token_hash, kind, family_id, client_id, scopes, resource, expires_at, now),
            )

    def oauth_token(self, token_hash: str) -> sqlite3.Row | None:
        """A token joined with its family (login, environment, client name, family revocation)."""
        return self.query_one(
            "SELECT t.*, f.login, f.environment, f.client_name, f.revoked_at AS family_revoked_at"
            " FROM oauth_tokens t JOIN oauth_families f ON f.family_id = t.family_id WHERE t.token_hash = ?",
            (token_hash,),
        )

    def oauth_use_refresh(self, token_hash: str, now: float) -> bool:
        """Rotate a refresh token out: True once; False means it was used (or revoked) before."""
        with self.tx() as db:
            cur = db.execute(
                "UPDATE oauth_tokens SET used_at = ? WHERE token_hash = ? AND kind = 'refresh' AND used_at IS NULL"
                " AND revoked_at IS NULL",
                (now, token_hash),
            )
            return cur.rowcount == 1

    def oauth_sweep(self, *, now: float, consent_seconds: float, unused_client_seconds: float) -> dict[str, int]:
        """Drop what can no longer be used: answered or expired consent requests, expired codes, expired
        or revoked tokens, families with no token left, and registrations unused for ``unused_client_seconds``
        that hold no live token. Returns how many rows of each went."""
        with self.tx() as db:
            counts = {
                "pending": db.execute(
                    "DELETE FROM oauth_pending WHERE answered_at IS NOT NULL OR created_at < ?",
                    (now - consent_seconds,),
                ).rowcount,
                "codes": db.execute("DELETE FROM oauth_codes WHERE expires_at < ?", (now,)).rowcount,
                "tokens": db.execute(
                    "DELETE FROM oauth_tokens WHERE expires_at < ? OR revoked_at IS NOT NULL", (now,)
                ).rowcount,
            }
            counts["families"] = db.execute(
                "DELETE FROM oauth_families WHERE family_id NOT IN (SELECT family_id FROM oauth_tokens)"
                " AND family_id NOT IN (SELECT family_id FROM oauth_codes)"
            ).rowcount
            counts["clients"] = db.execute(
                "DELETE FROM oauth_clients WHERE last_used_at < ? AND client_id NOT IN"
                " (SELECT client_id FROM oauth_tokens WHERE revoked_at IS NULL AND expires_at >= ?)",
                (now - unused_client_seconds, now),
            ).rowcount
            return counts
