"""What a conversation holds between calls: its session handle and the previews it may confirm once."""

from __future__ import annotations

import sqlite3

from notegate.state.db import StateCore


class SessionTables(StateCore):
    """The session_handles and previews tables."""

    # ----------------------------------------------------------- previews
    def remember_preview(self, key: str, expires_at: float, now: float) -> None:
        with self.tx() as db:
            db.execute("DELETE FROM previews WHERE expires_at < ?", (now,))
            db.execute("INSERT OR REPLACE INTO previews (key, expires_at) VALUES (?, ?)", (key, expires_at))

    def take_preview(self, key: str, now: float) -> bool:
        """Consume a preview: True once if it exists and has not expired."""
        with self.tx() as db:
            # One DELETE … RETURNING: of two confirms racing (on any replica) exactly one gets the row.
            row = db.execute("DELETE FROM previews WHERE key = ? RETURNING expires_at", (key,)).fetchone()
            return row is not None and row["expires_at"] >= now

    # ----------------------------------------------------- session handles
    def create_handle(
        self,
        *,
        handle_hash: str,
        session_id: str,
        login: str,
        client: str,
        environment: str,
        project: str | None,
        now: float,
    ) -> None:
        with self.tx() as db:
            db.execute(
                "INSERT INTO session_handles (handle_hash, session_id, login, client, environment, project,"
                " created_at, last_used_at) VALUES (?,?,?,?,?,?,?,?)",
                (handle_hash, session_id, login, client, environment, project, now, now),
            )

    def touch_handle(self, handle_hash: str, *, now: float, idle_seconds: float) -> sqlite3.Row | None:
        """The handle's row if it is live (renewing it), else None. Expired handles are deleted."""
        with self.tx() as db:
            db.execute("DELETE FROM session_handles WHERE last_used_at < ?", (now - idle_seconds,))
            return db.execute(
                "UPDATE session_handles SET last_used_at = ? WHERE handle_hash = ? AND last_used_at >= ? RETURNING *",
                (now, handle_hash, now - idle_seconds),
            ).fetchone()
