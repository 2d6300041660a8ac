"""The server's own state in SQLite (WAL): tokens, previews, audit — never note contents or tokens.

One connection per thread (SQLite connections are not shared across threads); WAL lets the server and
CLI commands use the same file at once.  Every timestamp is passed in by the caller (``now``) so tests
inject time instead of sleeping.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

SCHEMA = """
CREATE TABLE IF NOT EXISTS tokens (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    login TEXT NOT NULL,
    display_name TEXT NOT NULL,
    client_class TEXT NOT NULL,
    tier TEXT NOT NULL,
    environment TEXT,
    secret_hash TEXT NOT NULL,
    created_at REAL NOT NULL,
    revoked_at REAL,
    last_used_at REAL
);
CREATE TABLE IF NOT EXISTS audit (
    id INTEGER PRIMARY KEY,
    at REAL NOT NULL,
    environment TEXT,
    login TEXT,
    client TEXT,
    client_class TEXT,
    tier TEXT,
    session TEXT,
    tool TEXT NOT NULL,
    path TEXT,
    outcome TEXT NOT NULL,
    commit_id TEXT
);
CREATE INDEX IF NOT EXISTS audit_at ON audit(at);
CREATE TABLE IF NOT EXISTS previews (
    key TEXT PRIMARY KEY,
    expires_at REAL NOT NULL
);
"""


class StateDB:
    """Thin, typed access to the state database."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        self._conn().executescript(SCHEMA)

    def _conn(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=30, isolation_level=None)
            conn.row_factory = sqlite3.Row
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA busy_timeout=30000")
            self._local.conn = conn
        return conn

    @contextmanager
    def tx(self) -> Iterator[sqlite3.Connection]:
        conn = self._conn()
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        else:
            conn.execute("COMMIT")

    def query(self, sql: str, params: tuple = ()) -> list[sqlite3.Row]:
        return self._conn().execute(sql, params).fetchall()

    def close(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None

    # ------------------------------------------------------------- audit
    def audit(
        self,
        *,
        now: float,
        environment: str | None,
        login: str | None,
        client: str | None,
        client_class: str | None,
        tier: str | None,
        session: str | None,
        tool: str,
        path: str | None,
        outcome: str,
        commit_id: str | None = None,
    ) -> None:
        with self.tx() as db:
            db.execute(
                "INSERT INTO audit (at, environment, login, client, client_class, tier, session, tool, path,"
                " outcome, commit_id) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                (now, environment, login, client, client_class, tier, session, tool, path, outcome, commit_id),
            )

    # ----------------------------------------------------------- previews
    def remember_preview(self, key: str, expires_at: float, now: float) -> None:
        with self.tx() as db:
            db.execute("DELETE FROM previews WHERE expires_at < ?", (now,))
            db.execute("INSERT OR REPLACE INTO previews (key, expires_at) VALUES (?, ?)", (key, expires_at))

    def take_preview(self, key: str, now: float) -> bool:
        """Consume a preview: True once if it exists and has not expired."""
        with self.tx() as db:
            row = db.execute("SELECT expires_at FROM previews WHERE key = ?", (key,)).fetchone()
            if row is None:
                return False
            db.execute("DELETE FROM previews WHERE key = ?", (key,))
            return row["expires_at"] >= now
