"""The state database on PostgreSQL: a psycopg 3 connection pool speaking the SQLite dialect notegate.state writes.

Theory of operation. ``notegate.state`` holds every statement once, in SQLite's dialect (``?`` and ``:name``
placeholders, ``INSERT OR REPLACE``/``OR IGNORE``, ``IS ?``); :func:`translate` turns a statement into
PostgreSQL's, and :func:`translate_ddl` does the same for the schema (``INTEGER PRIMARY KEY`` → an identity
column, ``REAL`` → ``DOUBLE PRECISION``, ``BLOB`` → ``BYTEA``). Both are pure and cached; this is the one place
the two dialects differ. What only SQLite has (PRAGMA, VACUUM, the online backup API, ``json_type``) stays in
notegate.state's SQLite branch.

Concurrency. SQLite's ``BEGIN IMMEDIATE`` makes every write transaction the only writer; several replicas on
one PostgreSQL have no such lock. A transaction here runs at READ COMMITTED, where a single
``UPDATE … WHERE used_at IS NULL`` or ``DELETE … RETURNING`` is still won by exactly one caller (the second
waits for the row lock, re-reads the row and finds nothing to do), and ``INSERT … ON CONFLICT DO NOTHING``
lets exactly one insert land. What reads before it writes (count the registrations, then insert one) names a
*claim*: ``tx(claim=...)`` takes a transaction-scoped advisory lock on it first, so every replica's
transactions on that claim queue exactly as SQLite's writers do, and the lock ends with the transaction.
"""

from __future__ import annotations

import functools
import logging
import re
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from typing import Any

from notegate.errors import NotegateError

log = logging.getLogger(__name__)

#: Connections one StateDB may hold at once (the server's worker threads share them).
POOL_MAX = 8
#: How long a caller waits for a free connection before the pool raises.
POOL_TIMEOUT_SECONDS = 30.0
#: How long opening waits for the first connection before start-up is refused [state-unavailable].
CONNECT_WAIT_SECONDS = 10.0

#: The key columns each ``INSERT OR REPLACE`` target conflicts on (its primary key).
REPLACE_KEYS: dict[str, tuple[str, ...]] = {
    "previews": ("key",),
    "inbox_holds": ("environment", "path"),
    "reflect_files": ("path",),
    "notices": ("environment", "login", "client"),
    "web_challenges": ("binding_hash", "purpose"),
    "schema_migrations": ("version",),
}

_NAMED = re.compile(r"(?<![:\w]):([A-Za-z_]\w*)")
_INSERT = re.compile(r"^\s*INSERT\s+OR\s+(REPLACE|IGNORE)\s+INTO\s+(\w+)\s*\(([^)]*)\)(.*)$", re.IGNORECASE | re.DOTALL)


def redacted(text: str, url: str) -> str:
    """``text`` (a driver's message) with ``url`` and any password in it removed (pure)."""
    if url:
        text = text.replace(url, describe_url(url))
    found = re.search(r"://[^:/?#@\s]*:([^@\s]+)@", url)
    if found:
        text = text.replace(found.group(1), "***")
    return re.sub(r"(password\s*=\s*)\S+", r"\1***", text, flags=re.IGNORECASE)


def describe_url(url: str) -> str:
    """What a person may read of a state URL: database, host and user, never a password (pure)."""
    import psycopg
    from psycopg.conninfo import conninfo_to_dict

    try:
        parts = conninfo_to_dict(url)
    except psycopg.Error:  # a malformed URL is described as exactly that, never echoed
        return "a PostgreSQL URL that does not parse"
    host = str(parts.get("host") or "the default host")
    where = f"{host}:{parts['port']}" if parts.get("port") else host
    return f"database {parts.get('dbname') or 'of the user'} on {where} as {parts.get('user') or 'the login user'}"


@dataclass(frozen=True)
class AdvisoryHold:
    """What :meth:`LocalPostgres.advisory` got: the lock (``held``), and whether someone else had it first
    (``waited``: their work, a push, has probably moved what this holder is about to build on)."""

    held: bool
    waited: bool


class Row(tuple):
    """A row read by index or by column name, with ``keys()``: what notegate.state's callers use of sqlite3.Row."""

    _names: tuple[str, ...] = ()

    def __new__(cls, names: tuple[str, ...], values: Sequence[Any]) -> Row:
        row = super().__new__(cls, values)
        row._names = names
        return row

    def __getitem__(self, key):  # type: ignore[override]
        if isinstance(key, str):
            return tuple.__getitem__(self, self._names.index(key))
        return tuple.__getitem__(self, key)

    def keys(self) -> list[str]:
        return list(self._names)


def _row_factory(cursor):
    names = tuple(d.name for d in cursor.description or ())
    return lambda values: Row(names, values)


@functools.lru_cache(maxsize=1024)
def translate(sql: str) -> str:
    """One SQLite-dialect statement of notegate.state in PostgreSQL's dialect (pure; no SQL is parsed beyond the
    few forms notegate.state uses, and a form it does not know is left as written, so PostgreSQL refuses it)."""
    out = sql.replace("%", "%%")
    out = re.sub(r"\bIS\s+\?", "IS NOT DISTINCT FROM ?", out)
    match = _INSERT.match(out)
    if match:
        verb, table, columns, rest = match.groups()
        names = [c.strip() for c in columns.split(",")]
        out = f"INSERT INTO {table} ({columns}){rest.rstrip()}"
        if verb.upper() == "IGNORE":
            out += " ON CONFLICT DO NOTHING"
        else:
            keys = REPLACE_KEYS[table]
            sets = ", ".join(f"{n} = EXCLUDED.{n}" for n in names if n not in keys)
            out += f" ON CONFLICT ({', '.join(keys)}) DO " + (f"UPDATE SET {sets}" if sets else "NOTHING")
    out = _NAMED.sub(r"%(\1)s", out)
    return out.replace("?", "%s")


def translate_ddl(script: str) -> list[str]:
    """The schema script (SQLite DDL) as PostgreSQL statements, one per list item (pure)."""
    text = re.sub(r"--[^\n]*", "", script)
    text = re.sub(r"\bINTEGER PRIMARY KEY\b", "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY", text)
    text = re.sub(r"\bINTEGER\b", "BIGINT", text)
    text = re.sub(r"\bREAL\b", "DOUBLE PRECISION", text)
    text = re.sub(r"\bBLOB\b", "BYTEA", text)
    return [s.strip() for s in text.split(";") if s.strip()]


class _Cursor:
    """What notegate.state reads of a cursor: rows, ``rowcount``."""

    def __init__(self, cursor) -> None:
        self._cursor = cursor
        self.rowcount = cursor.rowcount

    def fetchone(self):
        return self._cursor.fetchone() if self._cursor.description else None

    def fetchall(self):
        return self._cursor.fetchall() if self._cursor.description else []

    def __iter__(self):
        return iter(self.fetchall())


class _Conn:
    """A pooled connection that takes notegate.state's SQLite-dialect statements."""

    def __init__(self, conn) -> None:
        self._conn = conn

    def execute(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> _Cursor:
        return _Cursor(self._conn.execute(translate(sql), params or None))

    def executemany(self, sql: str, rows) -> None:
        with self._conn.cursor() as cur:
            cur.executemany(translate(sql), list(rows))


class LocalPostgres:
    """A connection pool on one PostgreSQL database; ``tx()`` and ``query()`` as LocalSQLite offers them."""

    def __init__(self, url: str, *, wait_seconds: float = CONNECT_WAIT_SECONDS) -> None:
        import psycopg
        import psycopg_pool
        from psycopg_pool import ConnectionPool

        # Client-side binding: SQLite's untyped "? IS NULL OR …" has no type for PostgreSQL to infer from
        # a server-side parameter; psycopg quotes each value as a literal instead (its documented mode).
        self._owner = threading.get_ident()
        self._pool = ConnectionPool(
            url,
            min_size=1,
            max_size=POOL_MAX,
            timeout=POOL_TIMEOUT_SECONDS,
            kwargs={
                "autocommit": True,
                "row_factory": _row_factory,
                "cursor_factory": psycopg.ClientCursor,
                "connect_timeout": max(1, int(wait_seconds)),
            },
            open=True,
            name="notegate-state",
        )
        try:
            self._pool.wait(timeout=wait_seconds)
        except psycopg_pool.PoolTimeout:
            self._pool.close()
            # Never the URL: it may carry a password. The pool logs the driver's reason (without it).
            raise NotegateError(
                f"the state database ([state] url) could not be reached within {wait_seconds:g} s",
                rule="state-unavailable",
            ) from None

    @contextmanager
    def tx(self, claim: str | None = None) -> Iterator[_Conn]:
        with self._pool.connection() as conn, conn.transaction():
            if claim is not None:
                conn.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", (claim,))
            yield _Conn(conn)

    @contextmanager
    def advisory(self, claim: str, wait_seconds: float) -> Iterator[AdvisoryHold]:
        """Hold ``claim``'s advisory lock for the block (one transaction on one pooled connection, so the lock
        ends with it, whatever happens to this process), waiting at most ``wait_seconds`` for it. Yields
        whether it was held, and whether another holder had to be waited for: the block runs either way,
        for a lock taken for fairness never decides correctness. Waiters are served in arrival order."""
        import psycopg
        import psycopg_pool

        try:
            conn = self._pool.getconn(timeout=wait_seconds)
        except (psycopg.Error, psycopg_pool.PoolTimeout):
            log.warning("state database out of reach: %s taken without its lock", claim.split(":")[0])
            yield AdvisoryHold(held=False, waited=False)
            return
        hold = AdvisoryHold(held=False, waited=False)
        try:
            try:
                conn.execute("BEGIN")
                free = conn.execute("SELECT pg_try_advisory_xact_lock(hashtextextended(%s, 0))", (claim,))
                if free.fetchone()[0]:
                    hold = AdvisoryHold(held=True, waited=False)
                else:
                    conn.execute(f"SET LOCAL lock_timeout = '{max(1, int(wait_seconds * 1000))}ms'")
                    conn.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", (claim,))
                    hold = AdvisoryHold(held=True, waited=True)
            except psycopg.Error:
                log.warning("%s lock not had within %g s: going on without it", claim.split(":")[0], wait_seconds)
                hold = AdvisoryHold(held=False, waited=True)
            yield hold
        finally:
            with suppress(psycopg.Error):
                conn.execute("ROLLBACK")  # nothing was written: ends the transaction and releases the lock
            self._pool.putconn(conn)

    @contextmanager
    def snapshot(self) -> Iterator[_Conn]:
        """A read-only transaction that sees one committed state throughout (a backup's copy)."""
        with self._pool.connection() as conn, conn.transaction():
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            yield _Conn(conn)

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        with self._pool.connection() as conn:
            return _Conn(conn).execute(sql, params).fetchall()

    def close(self) -> None:
        """Close the pool, from the thread that opened it. Any other thread's close is a no-op: it holds no
        connection between statements (LocalSQLite's close means "this thread's connection")."""
        if threading.get_ident() == self._owner:
            self._pool.close()
