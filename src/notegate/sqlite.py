"""One SQLite file shared by threads and processes: a connection per thread, WAL, immediate transactions.

SQLite connections must not cross threads, and the server, CLI commands and jobs open the same files at
once; WAL lets readers run beside one writer, and ``BEGIN IMMEDIATE`` takes the write lock up front so two
writers queue (``busy_timeout``) instead of failing half-way.

``durable``: ``synchronous=FULL``, so the WAL is synced at every commit and a row is on disk when its
transaction returns (the state database: what a write implies must survive a power cut, see
:mod:`notegate.vault.durable`; one ``fdatasync`` of ~0.3 ms per transaction on this machine's disk).
Otherwise ``NORMAL``: in WAL mode still consistent after a power cut (a checkpoint syncs), but the last
transactions may be lost, which suits the search index, rebuilt from git whenever its tip is behind.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

BUSY_TIMEOUT_MS = 30_000


class LocalSQLite:
    def __init__(self, path: Path, *, named_rows: bool = False, durable: bool = False) -> None:
        self.path = path
        self._named_rows = named_rows
        self._synchronous = "FULL" if durable else "NORMAL"
        self._local = threading.local()
        path.parent.mkdir(parents=True, exist_ok=True)

    def conn(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
            if self._named_rows:
                conn.row_factory = sqlite3.Row
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute(f"PRAGMA synchronous={self._synchronous}")
            conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
            self._local.conn = conn
        return conn

    @contextmanager
    def tx(self) -> Iterator[sqlite3.Connection]:
        conn = self.conn()
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        else:
            conn.execute("COMMIT")

    def close(self) -> None:
        """Close this thread's connection (other threads' close with their threads)."""
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None
