"""One SQLite file shared by threads and processes: a connection per thread, WAL, immediate transactions.

SQLite connections must not cross threads, and the server, CLI commands and jobs open the same files at
once; WAL lets readers run beside one writer, and ``BEGIN IMMEDIATE`` takes the write lock up front so two
writers queue (``busy_timeout``) instead of failing half-way.

``durable``: ``synchronous=FULL``, so the WAL is synced at every commit and a row is on disk when its
transaction returns (the state database: what a write implies must survive a power cut, see
:mod:`notegate.vault.durable`; one ``fdatasync`` of ~0.3 ms per transaction on this machine's disk).
Otherwise ``NORMAL``: in WAL mode still consistent after a power cut (a checkpoint syncs), but the last
transactions may be lost, which suits the search index, rebuilt from git whenever its tip is behind.

Page caches: each connection keeps up to 2 MiB of pages (SQLite's default ``cache_size``), and a connection
per thread makes that per thread: under 32 MCP writers (32 worker threads, each with the state database's
and the index's connections) SQLite held 27-30 MiB, an eighth of the server's peak.  :func:`bound_page_caches`
caps what all of a process's connections hold together (``notegate serve`` calls it); a connection serving
alone keeps its whole cache, so one session's reads and searches run as fast as before.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

BUSY_TIMEOUT_MS = 30_000
#: SQLite's heap in ``notegate serve``, all connections together (``PRAGMA soft_heap_limit``).  Past it a
#: connection's cache stops growing and reuses its own least recent pages; nothing is refused (a soft limit).
#: Measured at 10,000 notes under 32 MCP writers (bench/probe_memory.py): SQLite 29.7 -> 16.7 MiB, peak RSS
#: 185-187 -> 162-164 MiB, searches and commits/s unchanged (bench/RESULTS.md, nineteenth session).
PAGE_CACHES_BYTES = 16 * 2**20


def bound_page_caches(limit: int = PAGE_CACHES_BYTES) -> int:
    """Cap SQLite's heap for the whole process (every connection, every thread: the limit belongs to the
    library, not to a connection); returns the limit now in force."""
    conn = sqlite3.connect(":memory:")
    try:
        conn.execute(f"PRAGMA soft_heap_limit={int(limit)}")
        return int(conn.execute("PRAGMA soft_heap_limit").fetchone()[0])
    finally:
        conn.close()


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
