"""What the state database holds: every table's DDL in SQLite's dialect, the migrations that bring it,
their PostgreSQL statements, and the digest tests/test_state_schema.py pins (no connection is made here).

One text per migration, kept whole: the schema is the product of the migrations, not of the table families
(the family modules beside this one hold each table's statements). Tests patch SCHEMA and POSTGRES_COLUMNS
here, where schema_digest reads them."""

from __future__ import annotations

import hashlib
import re

#: The state database's schema generation, recorded in every backup's manifest: a restore refuses a manifest
#: from a newer generation (policy.decide_backup_manifest). It is the newest migration (MIGRATIONS below):
#: a table or column added is a new migration and a new version, and tests/test_state_schema.py holds the
#: digest of each version's schema (:func:`schema_digest`), so a schema changed without it fails there.
SCHEMA_VERSION = 7

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


# -- persons and passkeys (schema; the methods are in persons.py) ------------------------------------------
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
#: commit's author, tier and reviewer: a commit without a row came by push (docs/explanation/security-model.md, "Where
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

#: Migration 5: the LiveSync gate's devices (state/livesync.py). A device is a ``kid`` (what its tokens name)
#: bound to one person, one environment and one connector login, with the algorithm pinned at enrolment and
#: its public key only: the private key is shown once, inside the Setup URI, and kept by nobody here. Revoking
#: clears the key and stamps ``revoked_at``; the row stays, so the audit's connector login still resolves.
#: ``livesync_revisions``: which device wrote which revision of a note's document (LiveSync's documents name
#: no author), keyed by a hash of the document id and revision so the table holds no note path; the bridge
#: reads it to author each commit as the device's connector login.
LIVESYNC_SCHEMA = """
CREATE TABLE IF NOT EXISTS livesync_devices (
    kid TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    environment TEXT NOT NULL,
    person TEXT NOT NULL,
    connector TEXT NOT NULL,
    algorithm TEXT NOT NULL,
    public_key TEXT,
    created_at REAL NOT NULL,
    revoked_at REAL,
    last_used_at REAL
);
CREATE INDEX IF NOT EXISTS livesync_devices_env ON livesync_devices(environment, name);
CREATE TABLE IF NOT EXISTS livesync_revisions (
    key TEXT PRIMARY KEY,
    environment TEXT NOT NULL,
    kid TEXT NOT NULL,
    at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS livesync_revisions_at ON livesync_revisions(at);
"""

# -- the tools gateway (migration 6; the methods are in tools.py) ------------------------------------------
#: The tools process's rows (issue 32). No column holds a command line, a shell string or a credential in clear:
#: a catalog entry is a pin (kind, package, exact version, digest) and the name of the program the package
#: itself installs; a mount is typed fields (its catalog entry, the upstream account, the environment, the
#: names of the variables its credentials fill, the tools that write); a credential is sealed to the
#: ``tools_keys`` 'seal' recipient, which only the tools process can open. ``tools_keys`` holds public halves
#: only: 'seal' (the age recipient credentials are sealed to) and 'mint' (the knowledge service's Ed25519 key
#: that signs the per-call tokens, as a public JWK). ``tools_approvals`` holds, per mount and tool, the digest
#: of the tool's listing (name, description, schema) and whether the owner approved it: a tool is shown only
#: while its current digest is approved. ``tools_calls`` is the per-call audit: who (person, connector login,
#: client), the mount and tool, the outcome and duration, the names of what was redacted; never arguments'
#: values or results' contents.
TOOLS_SCHEMA = """
CREATE TABLE IF NOT EXISTS tools_keys (
    purpose TEXT PRIMARY KEY,
    public_key TEXT NOT NULL,
    created_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS tools_catalog (
    name TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    package TEXT NOT NULL,
    version TEXT NOT NULL,
    digest TEXT NOT NULL,
    program TEXT NOT NULL,
    created_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS tools_mounts (
    name TEXT PRIMARY KEY,
    catalog TEXT NOT NULL,
    account TEXT NOT NULL,
    environment TEXT NOT NULL,
    variables TEXT NOT NULL,
    write_tools TEXT NOT NULL,
    created_at REAL NOT NULL,
    removed_at REAL,
    UNIQUE (catalog, account, environment)
);
CREATE TABLE IF NOT EXISTS tools_credentials (
    mount TEXT NOT NULL,
    variable TEXT NOT NULL,
    sealed TEXT NOT NULL,
    created_at REAL NOT NULL,
    PRIMARY KEY (mount, variable)
);
CREATE TABLE IF NOT EXISTS tools_approvals (
    mount TEXT NOT NULL,
    tool TEXT NOT NULL,
    digest TEXT NOT NULL,
    listing TEXT NOT NULL,
    seen_at REAL NOT NULL,
    approved_at REAL,
    approved_by TEXT,
    PRIMARY KEY (mount, tool, digest)
);
CREATE TABLE IF NOT EXISTS tools_calls (
    id INTEGER PRIMARY KEY,
    at REAL NOT NULL,
    environment TEXT NOT NULL,
    login TEXT NOT NULL,
    connector TEXT NOT NULL,
    client TEXT NOT NULL,
    tier TEXT NOT NULL,
    mount TEXT NOT NULL,
    tool TEXT NOT NULL,
    outcome TEXT NOT NULL,
    duration_ms REAL NOT NULL,
    redacted TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS tools_calls_mount ON tools_calls(mount, at);
"""

# -- members, invitations and OpenID Connect identities (migration 7) ---------------------------------------
#: Membership lives here, the config file's ``members`` only its seed (auth/members.py): a row per person who
#: was ever a member of an environment; ``removed_at`` set when the owner removed them (a removed member is not
#: re-seeded from the file: the doctor reports the disagreement instead). Invitation links and OIDC login
#: states are kept only as the SHA-256 of their secret. An OIDC identity is (issuer, subject), never an e-mail.
#: oidc_seen remembers the ID tokens already used (their hash) until they expire: a replay is refused.
MEMBERS_SCHEMA = """
CREATE TABLE IF NOT EXISTS members (
    environment TEXT NOT NULL,
    login TEXT NOT NULL,
    source TEXT NOT NULL,
    added_by TEXT NOT NULL,
    added_at REAL NOT NULL,
    removed_by TEXT,
    removed_at REAL,
    PRIMARY KEY (environment, login)
);
CREATE TABLE IF NOT EXISTS member_invites (
    token_hash TEXT PRIMARY KEY,
    invite_id TEXT NOT NULL UNIQUE,
    environment TEXT NOT NULL,
    login TEXT NOT NULL,
    created_by TEXT NOT NULL,
    created_at REAL NOT NULL,
    expires_at REAL NOT NULL,
    used_at REAL,
    used_how TEXT
);
CREATE TABLE IF NOT EXISTS oidc_identities (
    id TEXT NOT NULL UNIQUE,
    provider TEXT NOT NULL,
    issuer TEXT NOT NULL,
    subject TEXT NOT NULL,
    login TEXT NOT NULL,
    created_at REAL NOT NULL,
    last_used_at REAL,
    revoked_at REAL,
    PRIMARY KEY (issuer, subject)
);
CREATE INDEX IF NOT EXISTS oidc_identities_login ON oidc_identities(login);
CREATE TABLE IF NOT EXISTS oidc_pending (
    state_hash TEXT PRIMARY KEY,
    binding_hash TEXT NOT NULL,
    provider TEXT NOT NULL,
    purpose TEXT NOT NULL,
    nonce TEXT NOT NULL,
    verifier TEXT NOT NULL,
    login TEXT,
    invite_hash TEXT,
    next TEXT,
    created_at REAL NOT NULL,
    expires_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS oidc_seen (
    token_hash TEXT PRIMARY KEY,
    expires_at REAL NOT NULL
);
"""

MIGRATIONS_SCHEMA = """
CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at REAL NOT NULL);
"""

#: Every table of every migration, in migration order: what a SQLite file runs at each open (each statement is
#: idempotent) and what the digest and the expected columns are read from. A new migration's DDL joins it here.
SQLITE_SCRIPT = (
    MIGRATIONS_SCHEMA + SCHEMA + PERSONS_SCHEMA + PROVENANCE_SCHEMA + LIVESYNC_SCHEMA + TOOLS_SCHEMA + MEMBERS_SCHEMA
)

#: Every migration, by version: what it brings. Each is idempotent and both dialects run it at open.
MIGRATIONS: dict[int, str] = {
    1: "the tables above (SCHEMA and PERSONS_SCHEMA)",
    2: "inbox_parts.connector, oauth_clients.secret_hash, tokens.contracts on tables made before them",
    3: "contract_calls keyed per connector login (a new primary key; every old row already names its connector, "
    "so it stays the record of the connector that made it); tasks.connector, tasks.client, tasks.login",
    4: "commit_provenance: who made each commit the server made (PROVENANCE_SCHEMA)",
    5: "livesync_devices, livesync_revisions: the LiveSync gate's enrolled devices and their public keys, and which "
    "device wrote which note revision (LIVESYNC_SCHEMA)",
    6: "the tools gateway: keys (public halves), catalog pins, mounts, sealed credentials, tool-list approvals, "
    "the per-call audit (TOOLS_SCHEMA)",
    7: "members, member_invites, oidc_identities, oidc_pending, oidc_seen (MEMBERS_SCHEMA)",
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
        5: postgres_ddl(LIVESYNC_SCHEMA),
        6: postgres_ddl(TOOLS_SCHEMA),
        7: postgres_ddl(MEMBERS_SCHEMA),
    }


def schema_digest() -> str:
    """SHA-256 of the schema both dialects create (pure): SQLite's DDL and what PostgreSQL runs (its
    translation and the column migrations), comments dropped and whitespace collapsed, so only a change
    of what the database holds changes it."""

    def canonical(statement: str) -> str:
        return " ".join(re.sub(r"--[^\n]*", "", statement).split())

    sqlite_script = SQLITE_SCRIPT
    sqlite_ddl = [canonical(s) for s in sqlite_script.split(";") if canonical(s)]
    postgres = [canonical(s) for _v, statements in sorted(postgres_migrations().items()) for s in statements]
    lines = ["sqlite", *sqlite_ddl, "postgres", *(canonical(s) for s in postgres_ddl(MIGRATIONS_SCHEMA)), *postgres]
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()
