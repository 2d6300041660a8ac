"""The server's own state in SQLite (WAL): tokens, previews, audit — never note contents or tokens.

One connection per thread (SQLite connections are not shared across threads); WAL lets the server and
CLI commands use the same file at once.  Every timestamp is passed in by the caller (``now``) so tests
inject time instead of sleeping.
"""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from notegate.sqlite import LocalSQLite

#: The state database's schema generation, recorded in every backup's manifest: a restore refuses a manifest
#: from a newer generation (policy.decide_backup_manifest). It is the newest migration (MIGRATIONS below):
#: a table or column added is a new migration and a new version, and tests/test_state_schema.py holds the
#: digest of each version's schema (:func:`schema_digest`), so a schema changed without it fails there.
SCHEMA_VERSION = 4

#: How many tools StateDB.audit_rows can leave out of one client's rows (its statement's placeholders).
AUDIT_HIDDEN_TOOLS = 8

#: How long a replica waits for another's push to one origin before pushing anyway (StateDB.push_lock).
PUSH_LOCK_WAIT_SECONDS = 10.0

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
    last_used_at REAL,
    contracts TEXT NOT NULL DEFAULT ''
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
CREATE TABLE IF NOT EXISTS inbox_parts (
    id INTEGER PRIMARY KEY,
    environment TEXT NOT NULL,
    path TEXT NOT NULL,
    login TEXT NOT NULL,
    client TEXT NOT NULL,
    at REAL NOT NULL,
    commit_id TEXT NOT NULL,
    op TEXT NOT NULL,
    connector TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS inbox_parts_path ON inbox_parts(environment, path);
CREATE TABLE IF NOT EXISTS inbox_holds (
    environment TEXT NOT NULL,
    path TEXT NOT NULL,
    version TEXT NOT NULL,
    reason TEXT NOT NULL,
    reviewer TEXT NOT NULL,
    at REAL NOT NULL,
    PRIMARY KEY (environment, path)
);
CREATE TABLE IF NOT EXISTS session_handles (
    handle_hash TEXT PRIMARY KEY,
    session_id TEXT NOT NULL,
    login TEXT NOT NULL,
    client TEXT NOT NULL,
    environment TEXT NOT NULL,
    project TEXT,
    created_at REAL NOT NULL,
    last_used_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS reflect_files (path TEXT PRIMARY KEY, size INTEGER, mtime REAL);
CREATE TABLE IF NOT EXISTS reflect_runs (id INTEGER PRIMARY KEY, started_at REAL, status TEXT);
-- the last result of each scheduled job (review, reflect) as its one-line summary: counts and codes, never
-- a note's contents
CREATE TABLE IF NOT EXISTS job_runs (
    id INTEGER PRIMARY KEY,
    job TEXT NOT NULL,
    environment TEXT,
    at REAL NOT NULL,
    line TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS write_usage (
    id INTEGER PRIMARY KEY,
    connector TEXT NOT NULL,
    at REAL NOT NULL,
    bytes INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS write_usage_connector ON write_usage(connector, at);
-- task notes the server leaves for an environment's owner (a refused fetch: kind 'fetch-refused', key = the
-- refused tip); list_inbox shows the open ones first. Text is produced by code (ids, counts, rule names,
-- escaped paths), never a note's contents; a caller's own words, when a task quotes them, only inside a fence.
-- ``connector`` (with ``client`` and ``login``) names the connector login whose input opened the task ('' =
-- the server's own): list_inbox names it as the author, and each connector's open tasks are bounded.
CREATE TABLE IF NOT EXISTS tasks (
    id INTEGER PRIMARY KEY,
    environment TEXT NOT NULL,
    kind TEXT NOT NULL,
    key TEXT NOT NULL,
    text TEXT NOT NULL,
    created_at REAL NOT NULL,
    resolved_at REAL,
    connector TEXT NOT NULL DEFAULT '',
    client TEXT NOT NULL DEFAULT '',
    login TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS tasks_open ON tasks(environment, kind, resolved_at);
-- machine contracts: one row per idempotency key of one connector login (environment, contract, connector, key):
-- two machines using the same key are two records, never a conflict. ``fields`` maps each JSON pointer of the
-- validated input to a short hash of its value (never the value), so a replay of that connector with other input
-- can be refused naming what differs; ``commit_id`` is the commit that recorded it (NULL: nothing needed changing).
CREATE TABLE IF NOT EXISTS contract_calls (
    environment TEXT NOT NULL,
    contract TEXT NOT NULL,
    key TEXT NOT NULL,
    input_hash TEXT NOT NULL,
    fields TEXT NOT NULL,
    commit_id TEXT,
    connector TEXT NOT NULL,
    at REAL NOT NULL,
    PRIMARY KEY (environment, contract, connector, key)
);
CREATE TABLE IF NOT EXISTS notices (
    environment TEXT NOT NULL,
    login TEXT NOT NULL,
    client TEXT NOT NULL,
    last_count INTEGER NOT NULL,
    last_at REAL NOT NULL,
    PRIMARY KEY (environment, login, client)
);
-- OAuth: registrations, consent requests, codes, grant families and tokens. Every secret (request id,
-- code, token, a DCR client's own client_secret) is stored only as its SHA-256: info_json never holds
-- client_secret (auth/client_auth.py compares the hash; older databases are hashed at open).
CREATE TABLE IF NOT EXISTS oauth_clients (
    client_id TEXT PRIMARY KEY,
    info_json TEXT NOT NULL,
    created_at REAL NOT NULL,
    last_used_at REAL NOT NULL,
    secret_hash TEXT
);
CREATE TABLE IF NOT EXISTS oauth_pending (
    request_hash TEXT PRIMARY KEY,
    client_id TEXT NOT NULL,
    client_name TEXT NOT NULL,
    params_json TEXT NOT NULL,
    created_at REAL NOT NULL,
    answered_at REAL
);
CREATE TABLE IF NOT EXISTS oauth_codes (
    code_hash TEXT PRIMARY KEY,
    family_id TEXT NOT NULL,
    client_id TEXT NOT NULL,
    params_json TEXT NOT NULL,
    expires_at REAL NOT NULL,
    used_at REAL
);
CREATE TABLE IF NOT EXISTS oauth_families (
    family_id TEXT PRIMARY KEY,
    client_id TEXT NOT NULL,
    client_name TEXT NOT NULL,
    login TEXT NOT NULL,
    environment TEXT NOT NULL,
    created_at REAL NOT NULL,
    revoked_at REAL
);
CREATE TABLE IF NOT EXISTS oauth_tokens (
    token_hash TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    family_id TEXT NOT NULL,
    client_id TEXT NOT NULL,
    scopes TEXT NOT NULL,
    resource TEXT,
    expires_at REAL NOT NULL,
    created_at REAL NOT NULL,
    used_at REAL,
    revoked_at REAL
);
CREATE INDEX IF NOT EXISTS oauth_tokens_family ON oauth_tokens(family_id);
-- elevation: requests (the approval link only as its SHA-256) and owner-approved grants (the grant value only
-- as its SHA-256; grant_id is public: listings, audit rows and trailers name it). A request carries the hash of
-- the grant it turns into, so the model holds its grant from the start and it counts once the owner approves.
CREATE TABLE IF NOT EXISTS elevation_requests (
    link_hash TEXT PRIMARY KEY,
    grant_id TEXT NOT NULL UNIQUE,
    grant_hash TEXT NOT NULL UNIQUE,
    code TEXT NOT NULL,
    reason TEXT NOT NULL,
    connector TEXT NOT NULL,
    login TEXT NOT NULL,
    client TEXT NOT NULL,
    client_class TEXT NOT NULL,
    environment TEXT,
    conversation TEXT,
    created_at REAL NOT NULL,
    expires_at REAL NOT NULL,
    answered_at REAL,
    outcome TEXT
);
CREATE INDEX IF NOT EXISTS elevation_requests_connector ON elevation_requests(connector);
CREATE TABLE IF NOT EXISTS elevation_grants (
    grant_id TEXT PRIMARY KEY,
    grant_hash TEXT NOT NULL UNIQUE,
    connector TEXT NOT NULL,
    login TEXT NOT NULL,
    client TEXT NOT NULL,
    environment TEXT,
    conversation TEXT,
    approved_by TEXT NOT NULL,
    created_at REAL NOT NULL,
    expires_at REAL NOT NULL,
    revoked_at REAL,
    expiry_audited INTEGER NOT NULL DEFAULT 0
);
"""


# -- persons and passkeys (schema; the methods are the last section of StateDB) ---------------------------
# No password column anywhere: a person proves who they are with a passkey only. Enrol links and web
# sessions are stored as SHA-256 of their random secret, never the secret itself.
PERSONS_SCHEMA = """
CREATE TABLE IF NOT EXISTS passkeys (
    id TEXT PRIMARY KEY,
    login TEXT NOT NULL,
    credential_id BLOB NOT NULL UNIQUE,
    public_key BLOB NOT NULL,
    user_handle BLOB NOT NULL,
    sign_count INTEGER NOT NULL,
    name TEXT NOT NULL,
    created_at REAL NOT NULL,
    last_used_at REAL,
    revoked_at REAL
);
CREATE INDEX IF NOT EXISTS passkeys_login ON passkeys(login);
CREATE TABLE IF NOT EXISTS enrol_links (
    token_hash TEXT PRIMARY KEY,
    login TEXT NOT NULL,
    created_at REAL NOT NULL,
    expires_at REAL NOT NULL,
    used_at REAL
);
CREATE TABLE IF NOT EXISTS web_sessions (
    token_hash TEXT PRIMARY KEY,
    login TEXT NOT NULL,
    passkey_id TEXT NOT NULL,
    created_at REAL NOT NULL,
    expires_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS web_challenges (
    binding_hash TEXT NOT NULL,
    purpose TEXT NOT NULL,
    challenge BLOB NOT NULL,
    login TEXT,
    user_handle BLOB,
    expires_at REAL NOT NULL,
    PRIMARY KEY (binding_hash, purpose)
);
"""
# -- end of persons and passkeys (schema) -------------------------------------------------------------

# -- commit provenance (migration 4) ------------------------------------------------------------------------
#: Who made each commit the server made: written before the commit is pushed (VaultStore.record), so the
#: origin's hook and the other replicas' fetches find it when the commit reaches them. The only source of a
#: commit's author, tier and reviewer: a commit without a row came by push (docs/security-model.md, "Where
#: provenance comes from"). Values are what the server put in its own trailers (names and ids, never a note).
PROVENANCE_SCHEMA = """
CREATE TABLE IF NOT EXISTS commit_provenance (
    environment TEXT NOT NULL,
    commit_id TEXT NOT NULL,
    author TEXT NOT NULL,
    login TEXT NOT NULL,
    client TEXT,
    connector TEXT,
    session TEXT,
    tier TEXT,
    grant_id TEXT,
    reviewed_by TEXT,
    authors TEXT,
    contract TEXT,
    at REAL NOT NULL,
    PRIMARY KEY (environment, commit_id)
);
"""

MIGRATIONS_SCHEMA = """
CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at REAL NOT NULL);
"""

#: Every migration, by version: what it brings. Each is idempotent and both dialects run it at open.
MIGRATIONS: dict[int, str] = {
    1: "the tables above (SCHEMA and PERSONS_SCHEMA)",
    2: "inbox_parts.connector, oauth_clients.secret_hash, tokens.contracts on tables made before them",
    3: "contract_calls keyed per connector login (a new primary key; every old row already names its connector, "
    "so it stays the record of the connector that made it); tasks.connector, tasks.client, tasks.login",
    4: "commit_provenance: who made each commit the server made (PROVENANCE_SCHEMA)",
}

#: Migration 2 on PostgreSQL (SQLite has no ADD COLUMN IF NOT EXISTS: _sqlite_columns reads PRAGMA instead).
POSTGRES_COLUMNS = (
    "ALTER TABLE inbox_parts ADD COLUMN IF NOT EXISTS connector TEXT NOT NULL DEFAULT ''",
    "ALTER TABLE oauth_clients ADD COLUMN IF NOT EXISTS secret_hash TEXT",
    "ALTER TABLE tokens ADD COLUMN IF NOT EXISTS contracts TEXT NOT NULL DEFAULT ''",
)

#: Migration 3 on PostgreSQL: the idempotency records' key gains the connector login (the constraint is
#: replaced whole, so a database made by migration 1's newer schema ends the same), the tasks' author columns.
POSTGRES_CONNECTOR_SCOPES = (
    "ALTER TABLE contract_calls DROP CONSTRAINT IF EXISTS contract_calls_pkey",
    "ALTER TABLE contract_calls ADD PRIMARY KEY (environment, contract, connector, key)",
    "ALTER TABLE tasks ADD COLUMN IF NOT EXISTS connector TEXT NOT NULL DEFAULT ''",
    "ALTER TABLE tasks ADD COLUMN IF NOT EXISTS client TEXT NOT NULL DEFAULT ''",
    "ALTER TABLE tasks ADD COLUMN IF NOT EXISTS login TEXT NOT NULL DEFAULT ''",
)


def postgres_ddl(script: str) -> list[str]:
    from notegate.postgres import translate_ddl

    return translate_ddl(script)


def postgres_migrations() -> dict[int, list[str]]:
    """MIGRATIONS as PostgreSQL statements: one schema, translated (notegate.postgres.translate_ddl)."""
    return {
        1: postgres_ddl(SCHEMA + PERSONS_SCHEMA),
        2: list(POSTGRES_COLUMNS),
        3: list(POSTGRES_CONNECTOR_SCOPES),
        4: postgres_ddl(PROVENANCE_SCHEMA),
    }


def schema_digest() -> str:
    """SHA-256 of the schema both dialects create (pure): SQLite's DDL and what PostgreSQL runs (its
    translation and the column migrations), comments dropped and whitespace collapsed, so only a change
    of what the database holds changes it."""

    def canonical(statement: str) -> str:
        return " ".join(re.sub(r"--[^\n]*", "", statement).split())

    sqlite_script = MIGRATIONS_SCHEMA + SCHEMA + PERSONS_SCHEMA + PROVENANCE_SCHEMA
    sqlite_ddl = [canonical(s) for s in sqlite_script.split(";") if canonical(s)]
    postgres = [canonical(s) for _v, statements in sorted(postgres_migrations().items()) for s in statements]
    lines = ["sqlite", *sqlite_ddl, "postgres", *(canonical(s) for s in postgres_ddl(MIGRATIONS_SCHEMA)), *postgres]
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()


@dataclass(frozen=True)
class Reservation:
    """A write reserved against a quota (``id``), or refused (``id`` None) with the usage that refused it."""

    id: int | None
    writes: int
    bytes: int
    retry_at: float | None  # when the oldest write in the window leaves it


def _storable(value: str | None) -> str | None:
    """A caller's text as SQLite can store it: a lone surrogate (a path that was not UTF-8, refused by the
    path rules) is kept as its escape, so the refusal is still audited instead of failing the call."""
    if value is None or value.isascii():
        return value
    return value.encode("utf-8", "backslashreplace").decode("utf-8")


#: The contract_calls table as SCHEMA creates it (the SQLite side of migration 3 rebuilds it from this).
_CONTRACT_CALLS_DDL = re.search(r"CREATE TABLE IF NOT EXISTS contract_calls \(.*?\n\)", SCHEMA, re.DOTALL)[0]


class StateDB:
    """Thin, typed access to the state database: SQLite in ``path`` by default, PostgreSQL when ``url`` names
    one (``[state] url``: several replicas share it). Every statement below is written once, in SQLite's
    dialect; notegate.postgres translates it for PostgreSQL."""

    def __init__(self, path: Path, *, url: str = "", durable: bool = True) -> None:
        """``durable``: SQLite syncs each transaction (``synchronous=FULL``, see :mod:`notegate.sqlite`);
        PostgreSQL keeps its own default, ``synchronous_commit = on``, which notegate never turns off."""
        self.path = path
        self.dialect = "postgres" if url else "sqlite"
        if url:
            from notegate.postgres import LocalPostgres

            self._pg = LocalPostgres(url)
            self.query = self._pg.query  # type: ignore[method-assign]
        else:
            self._db = LocalSQLite(path, named_rows=True, durable=durable)
            self._conn = self._db.conn
        self._migrate()

    @classmethod
    def for_config(cls, config) -> StateDB:
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
        self._conn().executescript(MIGRATIONS_SCHEMA + SCHEMA + PERSONS_SCHEMA + PROVENANCE_SCHEMA)
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
        copy = StateDB(path)
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

    def load_from(self, source: StateDB) -> None:
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
        values = (environment, login, client, client_class, tier, session, tool, path, outcome, commit_id)
        with self.tx() as db:
            db.execute(
                "INSERT INTO audit (at, environment, login, client, client_class, tier, session, tool, path,"
                " outcome, commit_id) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                (now, *(_storable(v) for v in values)),
            )

    def audit_rows(
        self,
        *,
        since: float | None = None,
        connector: str | None = None,
        path: str | None = None,
        tool: str | None = None,
        outcome: str | None = None,
        limit: int = 200,
        environment: str | None = None,
        until: float | None = None,
        before_id: int | None = None,
        without_client: tuple[str, tuple[str, ...]] | None = None,
    ) -> list[sqlite3.Row]:
        """The newest ``limit`` audit rows that match, oldest first (read-only). ``connector`` matches a row's
        client name or login; ``path`` the note itself or anything under it as a folder; ``until`` is an
        exclusive upper bound on the time; ``before_id`` pages back: the rows after that row in this order
        (older, or as old with a smaller id), so pages neither skip nor repeat a row when clocks step back;
        ``without_client`` (client, tools) leaves out that client's calls of those tools."""
        folder = path.rstrip("/") + "/" if path else None
        hidden_client, hidden_tools = without_client if without_client else (None, ("",))
        # a fixed number of placeholders (the statement stays one text): the list is cut or padded to it
        tools = (*hidden_tools[:AUDIT_HIDDEN_TOOLS], *[hidden_tools[0]] * (AUDIT_HIDDEN_TOOLS - len(hidden_tools)))
        rows = self.query(
            "SELECT id, at, environment, login, client, client_class, tier, session, tool, path, outcome,"
            " commit_id FROM audit WHERE (? IS NULL OR at >= ?) AND (? IS NULL OR at < ?)"
            " AND (? IS NULL OR client = ? OR login = ?)"
            " AND (? IS NULL OR path = ? OR substr(path, 1, length(?)) = ?)"
            " AND (? IS NULL OR tool = ?) AND (? IS NULL OR outcome = ?)"
            " AND (? IS NULL OR environment = ?)"
            " AND (? IS NULL OR (at, id) < (SELECT at, id FROM audit WHERE id = ?))"
            " AND (? IS NULL OR client IS NULL OR client <> ? OR tool NOT IN (?, ?, ?, ?, ?, ?, ?, ?))"
            " ORDER BY at DESC, id DESC LIMIT ?",
            (
                *(since, since),
                *(until, until),
                *(connector, connector, connector),
                *(path, path, folder, folder),
                *(tool, tool),
                *(outcome, outcome),
                *(environment, environment),
                *(before_id, before_id),
                *(hidden_client, hidden_client, *tools),
                limit,
            ),
        )
        return list(reversed(rows))

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

    # -------------------------------------------------------- inbox parts
    def record_inbox_part(
        self,
        *,
        environment: str,
        path: str,
        login: str,
        client: str,
        connector: str,
        at: float,
        commit_id: str,
        op: str,
    ) -> None:
        """Which connector login wrote which part of an inbox item (the authors that may not promote it)."""
        with self.tx() as db:
            db.execute(
                "INSERT INTO inbox_parts (environment, path, login, client, connector, at, commit_id, op)"
                " VALUES (?,?,?,?,?,?,?,?)",
                (environment, path, login, client, connector, at, commit_id, op),
            )

    def inbox_parts(self, environment: str, path: str) -> list[sqlite3.Row]:
        return self.query(
            "SELECT * FROM inbox_parts WHERE environment = ? AND path = ? ORDER BY id", (environment, path)
        )

    def copy_inbox_parts(self, environment: str, source: str, target: str) -> None:
        with self.tx() as db:
            db.execute(
                "INSERT INTO inbox_parts (environment, path, login, client, connector, at, commit_id, op) "
                "SELECT environment, ?, login, client, connector, at, commit_id, op FROM inbox_parts "
                "WHERE environment = ? AND path = ?",
                (target, environment, source),
            )

    def forget_inbox_item(self, environment: str, path: str) -> None:
        """The item left the inbox (promoted or deleted): a new item at that path starts a new author list."""
        with self.tx() as db:
            db.execute("DELETE FROM inbox_parts WHERE environment = ? AND path = ?", (environment, path))
            db.execute("DELETE FROM inbox_holds WHERE environment = ? AND path = ?", (environment, path))

    # --------------------------------------------------- commit provenance
    def record_provenance(self, rows: list[dict[str, object]]) -> None:
        """Who made each of a group's commits (PROVENANCE_SCHEMA), in one transaction, before the push.
        A row for a commit whose push then lost the race names an id no history holds: it is never read."""
        if not rows:
            return
        columns = tuple(rows[0])
        marks = ", ".join("?" * len(columns))
        with self.tx() as db:
            db.executemany(
                f"INSERT INTO commit_provenance ({', '.join(columns)}) VALUES ({marks})"  # noqa: S608 - fixed names
                " ON CONFLICT (environment, commit_id) DO NOTHING",
                [tuple(row[c] for c in columns) for row in rows],
            )

    def provenance(self, environment: str, commit_ids: list[str]) -> dict[str, sqlite3.Row]:
        """The recorded rows of these commits (commit id -> row); a commit without one was not made here."""
        out: dict[str, sqlite3.Row] = {}
        for start in range(0, len(commit_ids), 500):
            chunk = commit_ids[start : start + 500]
            marks = ", ".join("?" * len(chunk))
            for row in self.query(
                f"SELECT * FROM commit_provenance WHERE environment = ? AND commit_id IN ({marks})",  # noqa: S608
                (environment, *chunk),
            ):
                out[row["commit_id"]] = row
        return out

    # -------------------------------------------------------------- holds
    def set_hold(self, *, environment: str, path: str, version: str, reason: str, reviewer: str, at: float) -> None:
        with self.tx() as db:
            db.execute(
                "INSERT OR REPLACE INTO inbox_holds (environment, path, version, reason, reviewer, at)"
                " VALUES (?,?,?,?,?,?)",
                (environment, path, version, reason, reviewer, at),
            )

    def holds(self, environment: str) -> dict[str, sqlite3.Row]:
        rows = self.query("SELECT * FROM inbox_holds WHERE environment = ? ORDER BY path", (environment,))
        return {r["path"]: r for r in rows}

    def drop_hold(self, environment: str, path: str) -> None:
        with self.tx() as db:
            db.execute("DELETE FROM inbox_holds WHERE environment = ? AND path = ?", (environment, path))

    # -------------------------------------------------------------- tokens
    def insert_token(self, row: dict[str, object]) -> None:
        """A new token row (its secret only as a hash)."""
        with self.tx() as db:
            db.execute(
                "INSERT INTO tokens (id, name, login, display_name, client_class, tier, environment, secret_hash,"
                " created_at, contracts) VALUES (:id, :name, :login, :display_name, :client_class, :tier,"
                " :environment, :secret_hash, :created_at, :contracts)",
                row,
            )

    def insert_token_checked(self, row: dict[str, object], decide) -> object:
        """Insert a token row only if ``decide(live names of its environment)`` allows it; reading the names
        and inserting are one transaction, so two concurrent creates cannot both take one name. Returns the
        decision."""
        with self.tx(claim=f"tokens:{row['environment']}") as db:
            names = [
                r[0]
                for r in db.execute(
                    "SELECT name FROM tokens WHERE environment IS ? AND revoked_at IS NULL", (row["environment"],)
                )
            ]
            decision = decide(names)
            if decision.allowed:
                db.execute(
                    "INSERT INTO tokens (id, name, login, display_name, client_class, tier, environment,"
                    " secret_hash, created_at, contracts) VALUES (:id, :name, :login, :display_name,"
                    " :client_class, :tier, :environment, :secret_hash, :created_at, :contracts)",
                    row,
                )
        return decision

    def token(self, token_id: str) -> sqlite3.Row | None:
        rows = self.query("SELECT * FROM tokens WHERE id = ?", (token_id,))
        return rows[0] if rows else None

    def tokens(self) -> list[sqlite3.Row]:
        return self.query("SELECT * FROM tokens ORDER BY created_at")

    def set_token_tier(self, token_id_or_name: str, tier: str) -> int:
        """A live conversation token's new tier; machine tokens keep theirs."""
        with self.tx() as db:
            cur = db.execute(
                "UPDATE tokens SET tier = ? WHERE (id = ? OR name = ?) AND revoked_at IS NULL"
                " AND client_class != 'machine'",
                (tier, token_id_or_name, token_id_or_name),
            )
            return cur.rowcount

    def revoke_tokens(self, token_id_or_name: str, now: float) -> int:
        with self.tx() as db:
            cur = db.execute(
                "UPDATE tokens SET revoked_at = ? WHERE (id = ? OR name = ?) AND revoked_at IS NULL",
                (now, token_id_or_name, token_id_or_name),
            )
            return cur.rowcount

    def revoke_token_id(self, token_id: str, now: float) -> int:
        """Revoke exactly the token with this id (never a name that happens to look like one)."""
        with self.tx() as db:
            cur = db.execute("UPDATE tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL", (now, token_id))
            return cur.rowcount

    # ----------------------------------------------------------- reflector
    def reflect_seen(self) -> dict[str, tuple[int, float]]:
        """Transcript files the reflector already read: path -> (size, mtime)."""
        return {r["path"]: (r["size"], r["mtime"]) for r in self.query("SELECT * FROM reflect_files")}

    def reflect_remember(self, files: list[tuple[str, int, float]]) -> None:
        with self.tx() as db:
            db.executemany("INSERT OR REPLACE INTO reflect_files (path, size, mtime) VALUES (?,?,?)", files)

    def last_audit_at(self, client: str) -> float | None:
        """When ``client`` (a fixed connector's client name, e.g. notegate-review) last left an audit row."""
        rows = self.query("SELECT MAX(at) AS at FROM audit WHERE client = ?", (client,))
        return rows[0]["at"] if rows else None

    def reflect_last_start(self) -> float | None:
        rows = self.query("SELECT started_at FROM reflect_runs ORDER BY id DESC LIMIT 1")
        return rows[0]["started_at"] if rows else None

    def record_job_run(self, *, job: str, environment: str | None, at: float, line: str) -> None:
        """A scheduled job's one-line result (its summary's ``line()``); the newest per job is kept."""
        with self.tx(claim=f"job_runs:{job}:{environment}") as db:
            db.execute("DELETE FROM job_runs WHERE job = ? AND environment IS ?", (job, environment))
            db.execute(
                "INSERT INTO job_runs (job, environment, at, line) VALUES (?,?,?,?)",
                (job, environment, at, _storable(line[:300])),
            )

    def last_job_run(self, job: str, environment: str | None = None) -> sqlite3.Row | None:
        """The newest result of ``job`` (in ``environment``, or in any when None)."""
        rows = self.query(
            "SELECT job, environment, at, line FROM job_runs WHERE job = ? AND (? IS NULL OR environment = ?)"
            " ORDER BY at DESC, id DESC LIMIT 1",
            (job, environment, environment),
        )
        return rows[0] if rows else None

    def reflect_started(self, now: float) -> None:
        with self.tx() as db:
            db.execute("INSERT INTO reflect_runs (started_at, status) VALUES (?, 'running')", (now,))

    # --------------------------------------------------------- write quota
    def reserve_write(
        self, *, connector: str, now: float, window: float, size: int, fits: Callable[[int, int], bool]
    ) -> Reservation:
        """Count ``connector``'s writes in the window and, if ``fits(writes, bytes)``, reserve one more.

        One immediate transaction: two writers of one connector cannot both take the last slot.
        """
        with self.tx(claim=f"write_usage:{connector}") as db:
            db.execute("DELETE FROM write_usage WHERE at < ?", (now - window,))
            row = db.execute(
                "SELECT COUNT(*), COALESCE(SUM(bytes), 0), MIN(at) FROM write_usage WHERE connector = ?", (connector,)
            ).fetchone()
            writes, used, oldest = int(row[0]), int(row[1]), row[2]
            if not fits(writes, used):
                return Reservation(None, writes, used, oldest + window if oldest is not None else None)
            cur = db.execute(
                "INSERT INTO write_usage (connector, at, bytes) VALUES (?,?,?) RETURNING id", (connector, now, size)
            )
            return Reservation(int(cur.fetchone()[0]), writes, used, None)

    def release_write(self, reservation_id: int) -> None:
        """A reserved write did not happen (refused or failed): it does not count."""
        with self.tx() as db:
            db.execute("DELETE FROM write_usage WHERE id = ?", (reservation_id,))

    # -------------------------------------------------------------- tasks
    def open_task(
        self,
        *,
        environment: str,
        kind: str,
        key: str,
        text: str,
        now: float,
        connector: str = "",
        client: str = "",
        login: str = "",
        fits: Callable[[int], bool] | None = None,
    ) -> int | None:
        """The open task of ``kind`` for ``key``, created once (a refused tip seen again adds nothing).

        ``connector`` (``client``, ``login``): the connector login whose input opened it ('' = the server's
        own). With ``fits``, a new task is added only if ``fits(open tasks of this kind from this connector)``,
        counted and added in one transaction; None when it was not added."""
        claim = f"tasks:{environment}:{kind}:" + (f"connector:{connector}" if connector else key)
        with self.tx(claim=claim) as db:
            row = db.execute(
                "SELECT id FROM tasks WHERE environment = ? AND kind = ? AND key = ? AND connector = ?"
                " AND resolved_at IS NULL",
                (environment, kind, key, connector),
            ).fetchone()
            if row is not None:
                return int(row[0])
            if fits is not None:
                (count,) = db.execute(
                    "SELECT COUNT(*) FROM tasks WHERE environment = ? AND kind = ? AND connector = ?"
                    " AND resolved_at IS NULL",
                    (environment, kind, connector),
                ).fetchone()
                if not fits(int(count)):
                    return None
            cursor = db.execute(
                "INSERT INTO tasks (environment, kind, key, text, created_at, connector, client, login)"
                " VALUES (?,?,?,?,?,?,?,?) RETURNING id",
                (environment, kind, key, text, now, connector, client, login),
            )
            return int(cursor.fetchone()[0])

    def resolve_tasks(self, *, environment: str, kind: str, now: float, keep: str | None = None) -> int:
        """Mark the open tasks of ``kind`` resolved (all but the one for ``keep``); how many were open."""
        rows = self.query(
            "SELECT id, key FROM tasks WHERE environment = ? AND kind = ? AND resolved_at IS NULL",
            (environment, kind),
        )
        ids = [r["id"] for r in rows if r["key"] != keep]
        if not ids:
            return 0
        with self.tx() as db:
            db.executemany("UPDATE tasks SET resolved_at = ? WHERE id = ?", [(now, i) for i in ids])
        return len(ids)

    def tasks(self, environment: str, *, resolved: bool = False) -> list[sqlite3.Row]:
        """Open tasks of an environment, oldest first (with ``resolved``: the resolved ones too)."""
        return self.query(
            "SELECT * FROM tasks WHERE environment = ? AND (? OR resolved_at IS NULL) ORDER BY id",
            (environment, resolved),
        )

    # ---------------------------------------------------------- contracts
    def contract_call(self, *, environment: str, contract: str, connector: str, key: str) -> sqlite3.Row | None:
        """The record of an idempotency key ``connector`` already used, or None (another connector login's use
        of the same key is its own record, never seen here)."""
        rows = self.query(
            "SELECT * FROM contract_calls WHERE environment = ? AND contract = ? AND connector = ? AND key = ?",
            (environment, contract, connector, key),
        )
        return rows[0] if rows else None

    def record_contract_call(
        self,
        *,
        environment: str,
        contract: str,
        key: str,
        input_hash: str,
        fields: dict[str, str],
        commit_id: str | None,
        connector: str,
        now: float,
    ) -> bool:
        """Record a key's first use; False if it was recorded already (the first record stands)."""
        with self.tx() as db:
            cur = db.execute(
                "INSERT OR IGNORE INTO contract_calls (environment, contract, key, input_hash, fields, commit_id,"
                " connector, at) VALUES (?,?,?,?,?,?,?,?)",
                (environment, contract, key, input_hash, json.dumps(fields, sort_keys=True), commit_id, connector, now),
            )
            return cur.rowcount == 1

    # ------------------------------------------------------------ notices
    def notice_due(self, *, environment: str, login: str, client: str, count: int, now: float, interval: float) -> bool:
        """True when the caller should be told about ``count`` waiting items now (and remember that we did)."""
        rows = self.query(
            "SELECT last_count, last_at FROM notices WHERE environment = ? AND login = ? AND client = ?",
            (environment, login, client),
        )
        row = rows[0] if rows else None
        if row is not None and row["last_count"] == count and (count == 0 or now - row["last_at"] < interval):
            return False  # the common case, answered without taking the write lock
        with self.tx(claim=f"notices:{environment}:{login}:{client}") as db:
            row = db.execute(
                "SELECT last_count, last_at FROM notices WHERE environment = ? AND login = ? AND client = ?",
                (environment, login, client),
            ).fetchone()
            due = count > 0 and (row is None or row["last_count"] != count or now - row["last_at"] >= interval)
            if due or row is None or row["last_count"] != count:
                db.execute(
                    "INSERT OR REPLACE INTO notices (environment, login, client, last_count, last_at)"
                    " VALUES (?,?,?,?,?)",
                    (environment, login, client, count, now if due or row is None else row["last_at"]),
                )
            return due

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
        rows = self.query("SELECT * FROM oauth_clients WHERE client_id = ?", (client_id,))
        return rows[0] if rows else None

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
        rows = self.query("SELECT * FROM oauth_pending WHERE request_hash = ?", (request_hash,))
        return rows[0] if rows else None

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
        rows = self.query("SELECT * FROM oauth_families WHERE family_id = ?", (family_id,))
        return rows[0] if rows else None

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
        rows = self.query("SELECT * FROM oauth_codes WHERE code_hash = ?", (code_hash,))
        return rows[0] if rows else None

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
        rows = self.query(
            "SELECT t.*, f.login, f.environment, f.client_name, f.revoked_at AS family_revoked_at"
            " FROM oauth_tokens t JOIN oauth_families f ON f.family_id = t.family_id WHERE t.token_hash = ?",
            (token_hash,),
        )
        return rows[0] if rows else None

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
        rows = self.query("SELECT * FROM elevation_requests WHERE link_hash = ?", (link_hash,))
        return rows[0] if rows else None

    def elevation_requests_open(self, now: float) -> list[sqlite3.Row]:
        """Live, unanswered requests, oldest first (the owner's elevations page)."""
        return self.query(
            "SELECT * FROM elevation_requests WHERE answered_at IS NULL AND expires_at > ? ORDER BY created_at",
            (now,),
        )

    def elevation_request_by_id(self, grant_id: str) -> sqlite3.Row | None:
        rows = self.query("SELECT * FROM elevation_requests WHERE grant_id = ?", (grant_id,))
        return rows[0] if rows else None

    def elevation_request_by_grant(self, grant_hash: str) -> sqlite3.Row | None:
        rows = self.query("SELECT * FROM elevation_requests WHERE grant_hash = ?", (grant_hash,))
        return rows[0] if rows else None

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
        rows = self.query("SELECT * FROM elevation_grants WHERE grant_hash = ?", (grant_hash,))
        return rows[0] if rows else None

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
        rows = self.query("SELECT * FROM passkeys WHERE credential_id = ?", (credential_id,))
        return rows[0] if rows else None

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
        rows = self.query("SELECT * FROM enrol_links WHERE token_hash = ?", (token_hash,))
        return rows[0] if rows else None

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
        """A live session whose passkey is still live, else None."""
        rows = self.query(
            "SELECT s.* FROM web_sessions s JOIN passkeys p ON p.id = s.passkey_id"
            " WHERE s.token_hash = ? AND s.expires_at > ? AND p.revoked_at IS NULL",
            (token_hash, now),
        )
        return rows[0] if rows else None

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


def recorded_commits(path: Path, url: str, environment: str, commit_ids: list[str]) -> set[str]:
    """Which of ``commit_ids`` the server recorded as its own (``commit_provenance``), read without opening
    the database for writing: the origin's pre-receive hook asks, as whatever user git runs it as, and must
    never create, migrate or lock the server's state. A database it cannot read answers "none"."""
    if not commit_ids:
        return set()
    marks = ", ".join("?" * len(commit_ids))
    sql = f"SELECT commit_id FROM commit_provenance WHERE environment = ? AND commit_id IN ({marks})"  # noqa: S608
    params = (environment, *commit_ids)
    if url:
        from notegate.postgres import LocalPostgres

        db = LocalPostgres(url)
        try:
            return {str(row[0]) for row in db.query(sql, params)}
        finally:
            db.close()
    if not path.is_file():
        return set()
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    try:
        return {str(row[0]) for row in conn.execute(sql, params)}
    except sqlite3.OperationalError:  # no such table yet (a database from before migration 4)
        return set()
    finally:
        conn.close()


def expected_columns() -> dict[str, tuple[str, ...]]:
    """{table: its columns} of the schema this notegate creates, read from an in-memory SQLite made from it
    (both dialects create the same tables and columns)."""
    conn = sqlite3.connect(":memory:")
    try:
        conn.executescript(
            MIGRATIONS_SCHEMA + SCHEMA + PERSONS_SCHEMA + PROVENANCE_SCHEMA
        )  # the columns of every migration
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
