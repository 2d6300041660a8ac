"""`notegate backup` and `notegate restore` of a deployment whose state is on PostgreSQL (`[state] url`), with
real CLI processes and a real PostgreSQL (tests/support/pgcluster.py).

The state is taken through psycopg in one REPEATABLE READ, READ ONLY transaction into a SQLite file of the
same schema (StateDB.backup_to), not with pg_dump: one backup format for both backends, so the manifest,
the rehearsal's checks and a restore into either backend are the same code; no client binary whose major
version must match the server's; and the copy is one committed state while replicas go on writing.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from notegate.config import load_config
from notegate.state import StateDB, inspect_postgres
from support import mint
from support.backup import CHECKS, keypair, make_backup, refused_with, restore

pytestmark = pytest.mark.anyio


@pytest.fixture
def on_postgres(vault: Path, pg_cluster) -> tuple[Path, str]:
    """The vault's deployment with its state in a PostgreSQL database of its own, one token minted there."""
    url = pg_cluster.new_database()
    vault.write_text(vault.read_text() + f'\n[state]\nurl = "{url}"\n')
    mint(vault, name="laptop")
    db = StateDB.for_config(load_config(vault))
    try:  # rows with identity ids (audit), for the restore to carry over
        for _ in range(3):
            db.audit(**AUDIT_ROW)
    finally:
        db.close()
    return vault, url


AUDIT_ROW = dict(
    now=1.0,
    environment=None,
    login=None,
    client=None,
    client_class=None,
    tier=None,
    session=None,
    tool="t",
    path=None,
    outcome="ok",
)


@pytest.fixture
def pg_backup(on_postgres: tuple[Path, str], tmp_path: Path) -> tuple[Path, Path]:
    identity, recipient = keypair(tmp_path)
    return make_backup(on_postgres[0], tmp_path / "backups", recipient), identity


def _manifest(folder: Path) -> dict:
    return json.loads((folder / "manifest.json").read_text())


def test_a_backup_of_postgresql_state_rehearses_every_check(pg_backup: tuple[Path, Path]) -> None:
    folder, identity = pg_backup
    assert _manifest(folder)["state"]["tables"]["tokens"] == 1
    done = restore(folder, "--identity", str(identity), "--rehearse", "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    assert [(c["check"], c["status"]) for c in json.loads(done.stdout)] == [(name, "pass") for name in CHECKS]


def test_restore_into_an_empty_postgresql_database(pg_backup: tuple[Path, Path], pg_cluster, tmp_path: Path) -> None:
    folder, identity = pg_backup
    url = pg_cluster.new_database()
    target = tmp_path / "restored"
    done = restore(folder, "--identity", str(identity), "--to", str(target), "--state-url", url)
    assert done.returncode == 0, done.stderr
    assert tomllib.loads((target / "notegate.toml").read_text())["state"] == {"url": url}
    assert not list((target / "state").glob("state.sqlite*"))  # no second copy of the state left behind
    manifest = _manifest(folder)
    db = StateDB.for_config(load_config(target / "notegate.toml"))
    try:
        assert db.dialect == "postgres"
        assert db.table_counts() == manifest["state"]["tables"]
        assert db.secret_digests() == manifest["state"]["secret_digests"]
        assert [row["name"] for row in db.tokens()] == ["laptop"]
        before = len(db.audit_rows(limit=1000))
        assert before >= 3
        for _ in range(2):  # the identity columns moved past the copied ids: new rows insert
            db.audit(**AUDIT_ROW)
        assert len(db.audit_rows(limit=1000)) == before + 2
    finally:
        db.close()


def test_restore_refuses_a_database_that_holds_a_state(
    pg_backup: tuple[Path, Path], on_postgres: tuple[Path, str], tmp_path: Path
) -> None:
    folder, identity = pg_backup
    live = on_postgres[1]
    rows = inspect_postgres(live).rows
    target = tmp_path / "restored"
    refused_with(
        restore(folder, "--identity", str(identity), "--to", str(target), "--state-url", live),
        "state-database-not-empty",
    )
    assert not target.exists() and inspect_postgres(live).rows == rows  # nothing written anywhere
    with_password = live.replace("postgresql://postgres@", "postgresql://postgres:hunter2@")
    done = restore(folder, "--identity", str(identity), "--to", str(target), "--state-url", with_password)
    assert "hunter2" not in refused_with(done, "state-url-password")
    assert not target.exists()


def test_a_restore_without_a_state_url_never_points_at_the_backed_up_database(
    pg_backup: tuple[Path, Path], tmp_path: Path
) -> None:
    folder, identity = pg_backup
    target = tmp_path / "restored"
    done = restore(folder, "--identity", str(identity), "--to", str(target))
    assert done.returncode == 0, done.stderr
    assert "state" not in tomllib.loads((target / "notegate.toml").read_text())
    config = load_config(target / "notegate.toml")
    assert config.state_url == ""
    db = StateDB.for_config(config)
    try:
        assert db.dialect == "sqlite" and [row["name"] for row in db.tokens()] == ["laptop"]
    finally:
        db.close()


def test_a_rehearsal_takes_no_state_url(pg_backup: tuple[Path, Path], pg_cluster) -> None:
    folder, identity = pg_backup
    done = restore(folder, "--identity", str(identity), "--rehearse", "--state-url", pg_cluster.new_database())
    assert done.returncode == 2 and "--state-url goes with --to" in done.stderr
