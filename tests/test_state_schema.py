"""The state schema is versioned: every change of what either dialect creates raises state.SCHEMA_VERSION.

SCHEMA_DIGESTS holds, for each schema version since digests were kept, the digest of the schema that
version creates (state.schema_digest: SQLite's DDL and PostgreSQL's statements). Changing a table or a
column without a new migration and a new version fails here; the fix is to add the migration, raise
SCHEMA_VERSION and record the new digest under it (never to edit an old one: a backup's manifest names
its version, and a restore trusts that version to mean one schema).
"""

from __future__ import annotations

from notegate.state import MIGRATIONS, SCHEMA_VERSION, schema_digest
from notegate.state import schema as state  # where schema_digest reads SCHEMA and POSTGRES_COLUMNS

#: version -> state.schema_digest() of that version's schema. Append only.
SCHEMA_DIGESTS = {
    2: "02520f7da4fbaf9b7af7d1598279d2390034800a86722608083e39f611fb97ac",
    3: "5740feeac29d0aaca95b9d940c0a331cb47e3fd043ed5eb12ac9b00a920a3587",
    4: "de941a1c53c222520f966035932895b39376d01ac330e521be741af5093b0c85",
    5: "730a649b7f5fef1b1e0a2ca93d47ebec791ff6a24d3de1d030cbd2e1b2083487",
    6: "c0bc325fadf15897a3bdd335684f1b0c3ae820b569094ef1fd02ef94ac3a65af",
    7: "3e64f6a7afa2b5e3aa9ca2cc6b9b94b50d90bc656e156cd0df016acebd21fdaa",
}


def test_the_schema_has_not_changed_without_a_new_version() -> None:
    assert SCHEMA_VERSION in SCHEMA_DIGESTS, "record schema_digest() for the new SCHEMA_VERSION here"
    assert schema_digest() == SCHEMA_DIGESTS[SCHEMA_VERSION], (
        "the state schema changed: add a migration, raise state.SCHEMA_VERSION and record "
        f"{schema_digest()} under it in SCHEMA_DIGESTS"
    )


def test_the_version_is_the_newest_migration_and_each_version_has_its_own_schema() -> None:
    assert max(MIGRATIONS) == SCHEMA_VERSION == max(SCHEMA_DIGESTS)
    assert sorted(MIGRATIONS) == list(range(1, SCHEMA_VERSION + 1))
    assert len(set(SCHEMA_DIGESTS.values())) == len(SCHEMA_DIGESTS)
    assert set(state.postgres_migrations()) == set(MIGRATIONS)  # PostgreSQL runs every migration too


def test_the_digest_sees_a_column_in_either_dialect_and_ignores_comments(monkeypatch) -> None:
    before = schema_digest()
    monkeypatch.setattr(state, "SCHEMA", state.SCHEMA + "\n-- a comment only\n")
    assert schema_digest() == before
    monkeypatch.setattr(state, "SCHEMA", state.SCHEMA.replace("name TEXT NOT NULL,", "name TEXT,", 1))
    assert schema_digest() != before
    monkeypatch.undo()
    columns = (*state.POSTGRES_COLUMNS, "ALTER TABLE tokens ADD COLUMN IF NOT EXISTS extra TEXT")
    monkeypatch.setattr(state, "POSTGRES_COLUMNS", columns)
    assert schema_digest() != before
