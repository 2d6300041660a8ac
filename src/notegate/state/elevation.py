"""Elevation's rows: requests (the approval link only hashed) and owner-approved grants (the grant hashed)."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from notegate.state.db import StateCore


class ElevationTables(StateCore):
    """The elevation_requests and elevation_grants tables."""

    # ----------------------------------------------------------- elevation
    # -- elevation: SQL of auth/grants.py. Rows in, rows out; no decisions here.
    def elevation_insert_request(self, row: dict[str, object], *, now: float, fits: Callable[[int], bool]) -> bool:
        """Keep a request if ``fits(live unanswered requests of its connector login)``: one immediate
        transaction, so two requests racing cannot both take the last place."""
        with self.tx(claim=f"elevation_requests:{row['connector']}") as db:
            pending = int(
                db.execute(
                    "SELECT COUNT(*) FROM elevation_requests WHERE connector = ? AND answered_at IS NULL"
                    " AND expires_at > ?",
                    (row["connector"], now),
                ).fetchone()[0]
            )
            if not fits(pending):
                return False
            db.execute(
                "INSERT INTO elevation_requests (link_hash, grant_id, grant_hash, code, reason, connector, login,"
                " client, client_class, environment, conversation, created_at, expires_at) VALUES (:link_hash,"
                " :grant_id, :grant_hash, :code, :reason, :connector, :login, :client, :client_class, :environment,"
                " :conversation, :created_at, :expires_at)",
                row,
            )
            return True

    def elevation_pending_count(self, connector: str, now: float) -> int:
        rows = self.query(
            "SELECT COUNT(*) FROM elevation_requests WHERE connector = ? AND answered_at IS NULL AND expires_at > ?",
            (connector, now),
        )
        return int(rows[0][0])

    def elevation_request(self, link_hash: str) -> sqlite3.Row | None:
        return self.query_one("SELECT * FROM elevation_requests WHERE link_hash = ?", (link_hash,))

    def elevation_requests_open(self, now: float) -> list[sqlite3.Row]:
        """Live, unanswered requests, oldest first (the owner's elevations page)."""
        return self.query(
            "SELECT * FROM elevation_requests WHERE answered_at IS NULL AND expires_at > ? ORDER BY created_at",
            (now,),
        )

    def elevation_request_by_id(self, grant_id: str) -> sqlite3.Row | None:
        return self.query_one("SELECT * FROM elevation_requests WHERE grant_id = ?", (grant_id,))

    def elevation_request_by_grant(self, grant_hash: str) -> sqlite3.Row | None:
        return self.query_one("SELECT * FROM elevation_requests WHERE grant_hash = ?", (grant_hash,))

    def elevation_answer(self, link_hash: str, *, outcome: str, now: float) -> sqlite3.Row | None:
        """Mark a live request answered and return it, or None (answered before, expired, unknown): one UPDATE,
        so two answers racing cannot both win."""
        with self.tx() as db:
            cur = db.execute(
                "UPDATE elevation_requests SET answered_at = ?, outcome = ? WHERE link_hash = ?"
                " AND answered_at IS NULL AND expires_at > ?",
                (now, outcome, link_hash, now),
            )
            if cur.rowcount != 1:
                return None
            return db.execute("SELECT * FROM elevation_requests WHERE link_hash = ?", (link_hash,)).fetchone()

    def elevation_insert_grant(self, row: dict[str, object]) -> None:
        with self.tx() as db:
            db.execute(
                "INSERT INTO elevation_grants (grant_id, grant_hash, connector, login, client, environment,"
                " conversation, approved_by, created_at, expires_at) VALUES (:grant_id, :grant_hash, :connector,"
                " :login, :client, :environment, :conversation, :approved_by, :created_at, :expires_at)",
                row,
            )

    def elevation_grant(self, grant_hash: str) -> sqlite3.Row | None:
        return self.query_one("SELECT * FROM elevation_grants WHERE grant_hash = ?", (grant_hash,))

    def elevation_grants(self) -> list[sqlite3.Row]:
        return self.query("SELECT * FROM elevation_grants ORDER BY created_at")

    def elevation_revoke(self, grant_id: str, now: float) -> sqlite3.Row | None:
        """Revoke a live grant by its id; the row, or None if there was none to revoke."""
        with self.tx() as db:
            cur = db.execute(
                "UPDATE elevation_grants SET revoked_at = ? WHERE grant_id = ? AND revoked_at IS NULL", (now, grant_id)
            )
            if cur.rowcount != 1:
                return None
            return db.execute("SELECT * FROM elevation_grants WHERE grant_id = ?", (grant_id,)).fetchone()

    def elevation_mark_expiry_audited(self, grant_id: str) -> bool:
        """True once per grant: the first caller to see it expired writes the expiry's audit row."""
        with self.tx() as db:
            cur = db.execute(
                "UPDATE elevation_grants SET expiry_audited = 1 WHERE grant_id = ? AND expiry_audited = 0", (grant_id,)
            )
            return cur.rowcount == 1

    def elevation_grants_expired_unaudited(self, now: float) -> list[sqlite3.Row]:
        """Grants past their expiry (not revoked) whose expiry has no audit row yet."""
        return self.query(
            "SELECT * FROM elevation_grants WHERE expires_at <= ? AND revoked_at IS NULL AND expiry_audited = 0",
            (now,),
        )

    def elevation_requests_lapsed(self, now: float) -> list[sqlite3.Row]:
        """Requests whose link expired unanswered."""
        return self.query("SELECT * FROM elevation_requests WHERE answered_at IS NULL AND expires_at <= ?", (now,))

    def elevation_sweep(self, *, now: float, keep_ended_seconds: float) -> dict[str, int]:
        """Drop requests answered or expired, and grants that ended (expired or revoked) before
        ``now - keep_ended_seconds``. Returns how many rows of each went."""
        ended = now - keep_ended_seconds
        with self.tx() as db:
            return {
                "requests": db.execute(
                    "DELETE FROM elevation_requests WHERE answered_at IS NOT NULL OR expires_at <= ?", (now,)
                ).rowcount,
                "grants": db.execute(
                    "DELETE FROM elevation_grants WHERE expires_at < ? OR revoked_at < ?", (ended, ended)
                ).rowcount,
            }
