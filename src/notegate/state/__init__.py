"""The server's own state in SQLite (WAL): tokens, previews, audit — never note contents or tokens.

One connection per thread (SQLite connections are not shared across threads); WAL lets the server and
CLI commands use the same file at once.  Every timestamp is passed in by the caller (``now``) so tests
inject time instead of sleeping.

The package (issue 29 §4): ``db.py`` is the database (connection, dialects, ``tx``, migrations, backups,
integrity), ``schema.py`` what it holds (the DDL, MIGRATIONS, SCHEMA_VERSION, the digest), and one module per
table family holds that family's statements as the methods of a class over ``db.StateCore``. StateDB below
combines those classes. Mixins rather than composition (``state.oauth.client(...)``): callers in every layer
hold one StateDB and call its methods by name, and the families share one connection and one ``tx``; mixins
keep every name and signature, so no caller changes, while each family reads alone in its own module. The
family classes hold methods only (no ``__init__``, no attributes of their own), so their order does not
matter. Every SQL statement of the server's state lives in this package.

Callers import from here; a test patches a constant in the module that reads it
(``notegate.state.schema.SCHEMA``, ``notegate.state.db.PUSH_LOCK_WAIT_SECONDS``).
"""

from __future__ import annotations

from notegate.state.audit import AUDIT_HIDDEN_TOOLS, AuditTables
from notegate.state.contracts import ContractTables, Reservation
from notegate.state.db import PostgresStatus, StateCore, expected_columns, inspect_postgres, integrity_problems
from notegate.state.elevation import ElevationTables
from notegate.state.inbox import InboxTables
from notegate.state.jobs import JobTables
from notegate.state.livesync import LiveSyncDevice, LiveSyncTables
from notegate.state.members import MemberTables
from notegate.state.oauth import OAuthTables
from notegate.state.persons import PersonTables
from notegate.state.provenance import ProvenanceTables, recorded_commits
from notegate.state.schema import (
    LIVESYNC_SCHEMA,
    MEMBERS_SCHEMA,
    MIGRATIONS,
    MIGRATIONS_SCHEMA,
    PERSONS_SCHEMA,
    POSTGRES_COLUMNS,
    POSTGRES_CONNECTOR_SCOPES,
    PROVENANCE_SCHEMA,
    SCHEMA,
    SCHEMA_VERSION,
    TOOLS_SCHEMA,
    postgres_ddl,
    postgres_migrations,
    schema_digest,
)
from notegate.state.sessions import SessionTables
from notegate.state.tokens import TokenTables
from notegate.state.tools import ToolsTables

__all__ = [
    "AUDIT_HIDDEN_TOOLS",
    "LIVESYNC_SCHEMA",
    "MEMBERS_SCHEMA",
    "MIGRATIONS",
    "MIGRATIONS_SCHEMA",
    "PERSONS_SCHEMA",
    "POSTGRES_COLUMNS",
    "POSTGRES_CONNECTOR_SCOPES",
    "PROVENANCE_SCHEMA",
    "SCHEMA",
    "SCHEMA_VERSION",
    "TOOLS_SCHEMA",
    "LiveSyncDevice",
    "PostgresStatus",
    "Reservation",
    "StateCore",
    "StateDB",
    "expected_columns",
    "inspect_postgres",
    "integrity_problems",
    "postgres_ddl",
    "postgres_migrations",
    "recorded_commits",
    "schema_digest",
]


class StateDB(
    TokenTables,
    AuditTables,
    InboxTables,
    ProvenanceTables,
    JobTables,
    ContractTables,
    SessionTables,
    OAuthTables,
    ElevationTables,
    PersonTables,
    LiveSyncTables,
    ToolsTables,
    MemberTables,
):
    """Thin, typed access to the state database: SQLite in ``path`` by default, PostgreSQL when ``url`` names
    one (``[state] url``: several replicas share it). Every statement of its table families is written once, in
    SQLite's dialect; notegate.postgres translates it for PostgreSQL."""
