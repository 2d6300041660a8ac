"""The state database itself: the connection (SQLite, one per thread, or a PostgreSQL pool), its dialect,
write transactions, the migrations run at open, whole-database backups and loads, and the read-only looks
(integrity_problems, inspect_postgres) that never create, migrate or lock what they inspect."""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Self

from notegate.sqlite import LocalSQLite
from notegate.state.grouped import GroupedRows
from notegate.state.schema import (
    MIGRATIONS,
    MIGRATIONS_SCHEMA,
    SCHEMA,
    SCHEMA_VERSION,
    SQLITE_SCRIPT,
    postgres_ddl,
    postgres_migrations,
)

#: How long a replica waits for another's push to one origin before pushing anyway (StateDB.push_lock).
PUSH_LOCK_WAIT_SECONDS = 10.0


def _storable(value: str | None) -> str | None:
    """A caller's text as SQLite can store it: a lone surrogate (a path that was not UTF-8, refused by the
    path rules) is kept as its escape, so the refusal is still audited instead of failing the call."""
    if value is None or value.isascii():
        return value
    return value.encode("utf-8", "backslashreplace").decode("utf-8")


#: The contract_calls table as SCHEMA creates it (the SQLite side of migration 3 rebuilds it from this).
_CONTRACT_CALLS_DDL = re.search(r"CREATE TABLE IF NOT EXISTS contract_calls \(.*?\n\)", SCHEMA, re.DOTALL)[0]


class StateCore:
    """What every table family stands on: the connection, ``tx``, ``query`` and the migrations at open.
    Each family module subclasses it with its tables' methods; notegate.state.StateDB combines them."""

    def __init__(self, path: Path, *, url: str = "", durable: bool = True) -> None:
        """``durable``: SQLite syncs each transaction (``synchronous=FULL``, see :mod:`notegate.sqlite`);
        PostgreSQL keeps its own default, ``synchronous_commit = on``, which notegate never turns off."""
        self.path = path
        self.dialect = "postgres" if url else "sqlite"
        #: audit rows of calls that end at once, one transaction per group (AuditTables.audit)
        self._audit_group = GroupedRows(lambda rows: self._insert_audit(rows))  # type: ignore[attr-defined]
        if url:
            from notegate.postgres import LocalPostgres

            self._pg = LocalPostgres(url)
            self.query = self._pg.query  # type: ignore[method-assign]
        else:
            self._db = LocalSQLite(path, named_rows=True, durable=durable)
            self._conn = self._db.conn
        self._migrate()

    @classmethod
    def for_config(cls, config) -> Self:
        """The deployment's state database: ``[state] url`` when set, else state.sqlite in state_dir."""
        return cls(config.state_dir / "state.sqlite", url=config.state_url, durable=config.durability)

    @contextmanager
    def tx(self, claim: str | None = None) -> Iterator:
        """One write transaction. SQLite's ``BEGIN IMMEDIATE`` already makes it the only writer; on
        PostgreSQL ``claim`` names what a read-then-write transaction must hold alone across every replica
        (a transaction-scoped advisory lock), e.g. the count of registrations before a DCR insert."""
        if self.dialect == "postgres":
            with self._pg.tx(claim) as db:
                yield db
        else:
            with self._db.tx() as db:
                yield db

    @contextmanager
    def push_lock(self, environment: str) -> Iterator[bool]:
        """Held around a replica's push to one environment's origin (VaultStore.push_lock): on PostgreSQL an
        advisory lock per environment, so replicas queue for the origin in arrival order instead of the last
        winner winning again; waited for at most PUSH_LOCK_WAIT_SECONDS, then the push goes on without it.
        The origin's compare-and-swap still decides every push. SQLite (one process): nothing to hold.

        Yields whether another replica held it first: then its push has probably moved the origin, and the
        store fetches before building on its own tip instead of losing one push to find out."""
        if self.dialect != "postgres":
            yield False
            return
        with self._pg.advisory(f"push:{environment}", PUSH_LOCK_WAIT_SECONDS) as hold:
            yield hold.waited

    # ---------------------------------------------------------- migrations
    # schema_migrations(version, applied_at) records what ran; each migration is idempotent (CREATE … IF NOT
    # EXISTS, a column added only where it is missing), so a file from before the table existed migrates too.
    def _migrate(self) -> None:
        now = time.time()
        if self.dialect == "postgres":
            # One transaction under the "schema" claim: replicas starting together queue, the first applies
            # what is missing, the others find it recorded (no DDL lock taken on a database that is current).
            with self.tx(claim="schema") as db:
                for statement in postgres_ddl(MIGRATIONS_SCHEMA):
                    db.execute(statement)
                done = {int(r[0]) for r in db.execute("SELECT version FROM schema_migrations")}
                for version, statements in postgres_migrations().items():
                    if version not in done:
                        for statement in statements:
                            db.execute(statement)
                        db.execute("INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)", (version, now))
            return
        # SQLite: every step is idempotent and cheap, so each open runs them all (a file from before the
        # migration table existed, or one written by an older server, migrates the same way).
        self._conn().executescript(SQLITE_SCRIPT)
        self._sqlite_columns()
        with self.tx() as db:
            for version in MIGRATIONS:
                db.execute(
                    "INSERT OR IGNORE INTO schema_migrations (version, applied_at) VALUES (?, ?)", (version, now)
                )
        self._hash_clear_client_secrets()

    def migrations(self) -> list[int]:
        """The versions recorded in schema_migrations, in order."""
        return [int(r[0]) for r in self.query("SELECT version FROM schema_migrations ORDER BY version")]

    def _sqlite_columns(self) -> None:
        """Columns added after a table was first created (SQLite's CREATE IF NOT EXISTS keeps old tables)."""
        with self.tx() as db:
            columns = {row[1] for row in db.execute("PRAGMA table_info(inbox_parts)")}
            if "connector" not in columns:
                # Parts recorded before connector logins: '' = written by every connector of that person.
                db.execute("ALTER TABLE inbox_parts ADD COLUMN connector TEXT NOT NULL DEFAULT ''")
            if "secret_hash" not in {row[1] for row in db.execute("PRAGMA table_info(oauth_clients)")}:
                db.execute("ALTER TABLE oauth_clients ADD COLUMN secret_hash TEXT")
            if "contracts" not in {row[1] for row in db.execute("PRAGMA table_info(tokens)")}:
                # The contracts a machine token may call, space-separated ('' for every other class).
                db.execute("ALTER TABLE tokens ADD COLUMN contracts TEXT NOT NULL DEFAULT ''")
            tasks = {row[1] for row in db.execute("PRAGMA table_info(tasks)")}
            for column in ("connector", "client", "login"):  # migration 3: '' = the server's own task
                if column not in tasks:
                    db.execute(f"ALTER TABLE tasks ADD COLUMN {column} TEXT NOT NULL DEFAULT ''")
            keyed = {row[1]: row[5] for row in db.execute("PRAGMA table_info(contract_calls)")}
            if not keyed.get("connector"):
                # Migration 3: SQLite cannot change a primary key in place, so the table is copied under the new
                # one. Every row already names the connector that recorded it, and stays that connector's.
                db.execute("ALTER TABLE contract_calls RENAME TO contract_calls_before_5")
                db.execute(_CONTRACT_CALLS_DDL)
                db.execute(
                    "INSERT INTO contract_calls (environment, contract, key, input_hash, fields, commit_id, connector,"
                    " at) SELECT environment, contract, key, input_hash, fields, commit_id, connector, at"
                    " FROM contract_calls_before_5"
                )
                db.execute("DROP TABLE contract_calls_before_5")

    def _hash_clear_client_secrets(self) -> None:
        """Registrations of an older database kept their client_secret in clear inside info_json: keep only
        its SHA-256, then rewrite the whole file (VACUUM) and truncate the WAL, so no old page, free slot or
        WAL frame still holds the secret (unless another process holds a read open at that moment: then the
        checkpoint finishes later). SQLite only: no PostgreSQL state database ever held a clear secret."""
        conn = self._conn()
        rows = conn.execute(
            "SELECT client_id, info_json FROM oauth_clients WHERE json_valid(info_json)"
            " AND json_type(info_json, '$.client_secret') = 'text'"
        ).fetchall()
        if not rows:
            return
        with self.tx() as db:
            for client_id, info_json in rows:
                info = json.loads(info_json)
                secret, info["client_secret"] = info["client_secret"], None
                digest = hashlib.sha256(secret.encode("utf-8", "surrogatepass")).hexdigest()
                db.execute(
                    "UPDATE oauth_clients SET info_json = ?, secret_hash = ? WHERE client_id = ?",
                    (json.dumps(info, separators=(",", ":")), digest, client_id),
                )
        conn.execute("VACUUM")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def query(self, sql: str, params: tuple = ()) -> list[sqlite3.Row]:
        return self._conn().execute(sql, params).fetchall()

    def query_one(self, sql: str, params: tuple = ()) -> sqlite3.Row | None:
        """The first row ``sql`` returns, or None when it returns none (a lookup by key)."""
        rows = self.query(sql, params)
        return rows[0] if rows else None

    def close(self) -> None:
        if self.dialect == "postgres":
            self._pg.close()
        else:
            self._db.close()

    # ------------------------------------------------------------- backups
    def backup_to(self, path: Path) -> None:
        """A consistent copy of the whole database at ``path`` through SQLite's online backup API: the
        server and CLI commands go on writing meanwhile; the copy is one committed state, self-contained
        (rollback journal, no WAL beside it). On PostgreSQL the copy is a SQLite file of the same schema,
        read in one REPEATABLE READ transaction (one committed state too)."""
        if self.dialect == "postgres":
            self._pg_backup_to(path)
            return
        target = sqlite3.connect(path)
        try:
            self._conn().backup(target)
            target.execute("PRAGMA journal_mode=DELETE")
        finally:
            target.close()

    def _pg_backup_to(self, path: Path) -> None:
        copy = type(self)(path)
        try:
            with self._pg.snapshot() as source, copy.tx() as target:
                for name in self._table_names():
                    if name == "schema_migrations":
                        continue  # the copy records its own
                    rows = source.execute(f'SELECT * FROM "{name}"').fetchall()  # noqa: S608 - a table name
                    if rows:
                        columns = ", ".join(rows[0].keys())
                        marks = ", ".join("?" * len(rows[0]))
                        target.executemany(f'INSERT INTO "{name}" ({columns}) VALUES ({marks})', rows)  # noqa: S608
        finally:
            copy.close()
        journal = sqlite3.connect(path)
        try:
            journal.execute("PRAGMA journal_mode=DELETE")
        finally:
            journal.close()

    def load_from(self, source: StateCore) -> None:
        """Copy every row of ``source`` (a restored SQLite copy) into this PostgreSQL database, in one
        transaction (all or nothing), then move each identity column past the highest id copied, so the next
        insert does not reuse one. The caller checked the database was empty (decide_new_state_database)."""
        assert self.dialect == "postgres" and source.dialect == "sqlite"
        with self.tx(claim="schema") as target:
            for name in source._table_names():
                if name == "schema_migrations":
                    continue  # this database records its own
                rows = source.query(f'SELECT * FROM "{name}"')  # noqa: S608 - a table name from the catalogue
                if rows:
                    columns = ", ".join(rows[0].keys())
                    marks = ", ".join("?" * len(rows[0]))
                    target.executemany(f'INSERT INTO "{name}" ({columns}) VALUES ({marks})', rows)  # noqa: S608
            identities = target.execute(
                "SELECT table_name, column_name FROM information_schema.columns"
                " WHERE table_schema = current_schema() AND is_identity = 'YES'"
            ).fetchall()
            for table, column in identities:
                top = target.execute(f'SELECT MAX("{column}") FROM "{table}"').fetchone()[0]  # noqa: S608
                if top is not None:
                    target.execute(f'ALTER TABLE "{table}" ALTER COLUMN "{column}" RESTART WITH {int(top) + 1}')

    def _table_names(self) -> list[str]:
        if self.dialect == "postgres":
            sql = (
                "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()"
                " AND table_type = 'BASE TABLE' ORDER BY table_name"
            )
        else:
            sql = "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name"
        return [row[0] for row in self.query(sql)]

    def columns(self, table: str) -> list[str]:
        """The column names of one table, in order (from the catalogue)."""
        if self.dialect == "postgres":
            sql = (
                "SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema()"
                " AND table_name = ? ORDER BY ordinal_position"
            )
            return [row[0] for row in self.query(sql, (table,))]
        return [row[1] for row in self.query(f'PRAGMA table_info("{table}")')]

    def table_counts(self) -> dict[str, int]:
        """{table: row count} for every table of the database (names from the catalogue, quoted)."""
        counts = {}
        for name in self._table_names():  # names come from the catalogue, quoted
            counts[name] = int(self.query(f'SELECT COUNT(*) FROM "{name}"')[0][0])  # noqa: S608
        return counts

    def secret_digests(self) -> dict[str, str]:
        """One SHA-256 per kind of stored secret hash (static tokens, OAuth tokens, elevation grants), over
        the sorted (id, hash) pairs: equal digests mean the same credentials survived, without naming any."""
        queries = {
            "tokens": "SELECT id, secret_hash FROM tokens ORDER BY id",
            "oauth_tokens": "SELECT token_hash, kind FROM oauth_tokens ORDER BY token_hash",
            "elevation_grants": "SELECT grant_id, grant_hash FROM elevation_grants ORDER BY grant_id",
        }
        digests = {}
        for kind, sql in queries.items():
            lines = "\n".join(f"{a}:{b}" for a, b in self.query(sql))
            digests[kind] = hashlib.sha256(lines.encode()).hexdigest()
        return digests


def expected_columns() -> dict[str, tuple[str, ...]]:
    """{table: its columns} of the schema this notegate creates, read from an in-memory SQLite made from it
    (both dialects create the same tables and columns)."""
    conn = sqlite3.connect(":memory:")
    try:
        conn.executescript(SQLITE_SCRIPT)  # the columns of every migration
        names = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
        return {n: tuple(r[1] for r in conn.execute(f'PRAGMA table_info("{n}")')) for n in names}
    finally:
        conn.close()


@dataclass(frozen=True)
class PostgresStatus:
    """What a read-only look at a PostgreSQL state database found (never its URL or any row's contents)."""

    unreachable: str  # why it could not be reached ('' when connected)
    migrations: tuple[int, ...]  # the versions schema_migrations records (() when there is none)
    missing: tuple[str, ...]  # notegate's tables or columns (table.column) not there
    rows: int  # rows in notegate's tables, all together

    def problems(self) -> list[str]:
        """What stops this notegate using the database as it is ([] when nothing does)."""
        if self.unreachable:
            return [f"cannot connect ({self.unreachable})"]
        if not self.migrations:
            return []  # nothing there yet: the first start (or notegate init) creates it
        out = []
        newer = [v for v in self.migrations if v > SCHEMA_VERSION]
        if newer:
            out.append(f"schema {max(newer)} is newer than this notegate's ({SCHEMA_VERSION})")
        pending = sorted(set(MIGRATIONS) - set(self.migrations))
        if pending:
            out.append(f"migration {', '.join(map(str, pending))} not applied yet (the next start applies it)")
        if self.missing:
            out.append(f"{len(self.missing)} tables or columns missing: {', '.join(self.missing[:5])}")
        return out


def inspect_postgres(url: str, *, wait_seconds: float = 5.0) -> PostgresStatus:
    """Connect to a PostgreSQL state database read-only and report what is there, changing nothing (no
    migration, no table made): the doctor's check, and what init and restore ask before they write."""
    import psycopg

    from notegate.postgres import redacted

    try:
        conn = psycopg.connect(url, autocommit=True, connect_timeout=max(1, int(wait_seconds)))
    except psycopg.Error as exc:
        return PostgresStatus(redacted(str(exc).strip().splitlines()[0] if str(exc).strip() else "", url), (), (), 0)
    try:
        conn.execute("SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY")
        found: dict[str, set[str]] = {}
        for table, column in conn.execute(
            "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = current_schema()"
        ):
            found.setdefault(table, set()).add(column)
        expected = expected_columns()
        missing = []
        for table, columns in expected.items():
            if table not in found:
                missing.append(table)
            else:
                missing += [f"{table}.{c}" for c in columns if c not in found[table]]
        migrations: tuple[int, ...] = ()
        if "schema_migrations" in found:
            rows = conn.execute("SELECT version FROM schema_migrations ORDER BY version").fetchall()
            migrations = tuple(int(r[0]) for r in rows)
        count = 0
        for table in sorted(set(expected) & set(found) - {"schema_migrations"}):  # names from our own schema
            count += int(conn.execute(f'SELECT COUNT(*) FROM "{table}"').fetchone()[0])  # noqa: S608
        return PostgresStatus("", migrations, tuple(missing) if migrations else (), count)
    except psycopg.Error as exc:
        return PostgresStatus(redacted(str(exc).strip().splitlines()[0], url), (), (), 0)
    finally:
        conn.close()


def integrity_problems(path: Path, limit: int = 20) -> list[str]:
    """``PRAGMA integrity_check`` of a state database on a read-only connection: [] when it is sound.

    Read-only (``mode=ro``) so the check never creates, migrates or repairs the file it inspects; a file that
    is not a database at all is one problem, reported in SQLite's words (no row contents are ever read).
    """
    if not path.is_file():
        return ["the state database does not exist"]
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=5)
    except sqlite3.Error as exc:
        return [f"cannot open it read-only ({exc})"]
    try:
        rows = conn.execute(f"PRAGMA integrity_check({int(limit)})").fetchall()
    except sqlite3.DatabaseError as exc:
        return [str(exc)]
    finally:
        conn.close()
    found = [str(row[0]) for row in rows]
    return [] if found == ["ok"] else found
