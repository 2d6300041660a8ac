"""Operating a deployment whose state is on PostgreSQL (`[state] url`): `notegate init --state-url` and the
doctor's state check, as the owner meets them (real CLI processes, a real PostgreSQL from tests/support/pgcluster.py),
and the pure decisions behind them. Every refusal is asserted by its exact rule; no output ever holds a
password."""

from __future__ import annotations

import json
import os
import tomllib
from pathlib import Path

import psycopg
import pytest
from hypothesis import given
from hypothesis import strategies as st

from notegate.config import load_config
from notegate.doctor.integrity import check_state_url
from notegate.doctor.result import Status
from notegate.policy import decide_new_state_database, decide_state_url_stored
from notegate.state import MIGRATIONS, SCHEMA_VERSION, StateDB, inspect_postgres
from support import assert_refused, mint, notegate


# ------------------------------------------------------------------ the decisions (policy.py)
@pytest.mark.parametrize(
    ("url", "rule"),
    [
        ("postgresql://notegate@db.example/notegate", "state-url"),
        ("postgres://db.example:5433/notegate?sslmode=require", "state-url"),
        ("postgresql://[::1]:5432/notegate", "state-url"),  # a colon in the host is not a password
        ("postgresql://notegate:hunter2@db.example/notegate", "state-url-password"),
        ("postgresql://notegate:@db.example/notegate", "state-url-password"),  # an empty one is still one
        ("postgresql://db.example/notegate?password=hunter2", "state-url-password"),
        ("postgresql://db.example/notegate?sslmode=require&PASSWORD=x", "state-url-password"),
        ("postgresql://db.example/notegate?pass%77ord=x", "state-url-password"),  # libpq decodes the key
        ("host=db.example password=x", "config-invalid"),  # not a URL: [state] url takes URLs only
        ("mysql://db.example/notegate", "config-invalid"),
    ],
)
def test_a_state_url_written_into_a_config_holds_no_password(url: str, rule: str) -> None:
    decision = decide_state_url_stored(url)
    assert (decision.rule, decision.allowed) == (rule, rule == "state-url")
    assert "hunter2" not in decision.reason


_TEXT = st.text(st.characters(blacklist_characters="@/?#:", blacklist_categories=("Cs",)), min_size=1, max_size=20)


@given(user=_TEXT, password=_TEXT, host=st.from_regex(r"[a-z][a-z0-9.-]{0,20}", fullmatch=True))
def test_any_url_with_a_password_is_refused_and_without_it_allowed(user: str, password: str, host: str) -> None:
    assert decide_state_url_stored(f"postgresql://{user}:{password}@{host}/db").rule == "state-url-password"
    assert decide_state_url_stored(f"postgresql://{user}@{host}/db").rule == "state-url"


@pytest.mark.parametrize(("rows", "rule"), [(0, "new-state-database"), (1, "state-database-not-empty")])
def test_init_and_restore_take_only_an_empty_state_database(rows: int, rule: str) -> None:
    decision = decide_new_state_database(rows)
    assert (decision.rule, decision.allowed) == (rule, rows == 0)


# ------------------------------------------------------------------ notegate init --state-url
def test_init_with_a_state_url_keeps_the_state_in_postgresql(pg_cluster, tmp_path: Path) -> None:
    url = pg_cluster.new_database()
    done = notegate("init", str(tmp_path / "vault"), "--state-url", url)
    assert done.returncode == 0, done.stderr
    config_path = tmp_path / "vault" / "notegate.toml"
    assert tomllib.loads(config_path.read_text())["state"] == {"url": url}
    config = load_config(config_path)
    assert config.state_url == url
    mint(config_path, name="laptop")  # through StateDB.for_config: lands in PostgreSQL
    status = inspect_postgres(url)
    assert status.migrations == tuple(sorted(MIGRATIONS)) and status.problems() == []
    assert status.rows >= 1
    assert not (config.state_dir / "state.sqlite").exists()
    again = notegate("init", str(tmp_path / "other"), "--state-url", url)  # the same database again
    assert_refused("state-database-not-empty", again)
    assert not (tmp_path / "other").exists()  # checked before anything was made


def test_init_refuses_a_password_in_the_url_and_an_unreachable_database(pg_cluster, tmp_path: Path) -> None:
    with_password = pg_cluster.new_database().replace("postgresql://postgres@", "postgresql://postgres:hunter2@")
    done = notegate("init", str(tmp_path / "a"), "--state-url", with_password)
    assert "hunter2" not in assert_refused("state-url-password", done) + done.stdout
    assert not (tmp_path / "a").exists()
    nowhere = f"postgresql://postgres@/postgres?host={tmp_path}/no-such-socket-dir"
    done = notegate("init", str(tmp_path / "b"), "--state-url", nowhere)
    assert_refused("state-unavailable", done)
    assert not (tmp_path / "b").exists()


# ------------------------------------------------------------------ the doctor's state check
def test_the_doctor_checks_a_postgresql_state_database(pg_cluster, tmp_path: Path) -> None:
    url = pg_cluster.new_database()
    empty = check_state_url(url)
    assert (empty.check, empty.status) == ("state.integrity", Status.WARN) and "no notegate state" in empty.found
    StateDB(tmp_path / "unused.sqlite", url=url).close()  # what the first start does
    green = check_state_url(url)
    assert green.status is Status.OK, green
    assert f"schema {SCHEMA_VERSION}, every table present" in green.found
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("ALTER TABLE tokens DROP COLUMN contracts")
        conn.execute("DROP TABLE passkeys")
        conn.execute("INSERT INTO schema_migrations (version, applied_at) VALUES (%s, 0)", (SCHEMA_VERSION + 1,))
    broken = check_state_url(url)
    assert broken.status is Status.FAIL
    assert f"schema {SCHEMA_VERSION + 1} is newer than this notegate's ({SCHEMA_VERSION})" in broken.found
    assert "passkeys" in broken.found and "tokens.contracts" in broken.found
    assert inspect_postgres(url).migrations[-1] == SCHEMA_VERSION + 1  # the doctor changed nothing


def test_the_doctor_never_prints_the_password_of_an_unreachable_database(tmp_path: Path) -> None:
    url = "postgresql://notegate:hunter2@127.0.0.1:1/notegate?connect_timeout=1"
    result = check_state_url(url)
    assert (result.check, result.status) == ("state.integrity", Status.FAIL)
    assert "cannot connect" in result.found and "database notegate on 127.0.0.1:1 as notegate" in result.found
    assert "hunter2" not in json.dumps(result.to_json())


def test_notegate_doctor_on_a_deployment_on_postgresql(pg_cluster, tmp_path: Path) -> None:
    url = pg_cluster.new_database()
    assert notegate("init", str(tmp_path / "vault"), "--state-url", url).returncode == 0
    done = notegate("doctor", "--config", str(tmp_path / "vault" / "notegate.toml"), "--json")
    states = [r for r in json.loads(done.stdout) if r["check"] == "state.integrity"]
    assert [r["status"] for r in states] == ["ok"], states
    assert "connected, schema" in states[0]["found"]


def test_the_password_comes_from_pgpassfile_never_from_the_url(pg_cluster, tmp_path: Path) -> None:
    """A role that must give a password (scram-sha-256 in pg_hba.conf), a URL without one: the doctor (a real
    `notegate doctor` process) connects when PGPASSFILE names a file holding it, fails without, and the
    password is in no output either way."""
    secret = "pw-" + tmp_path.name[-8:]
    url = pg_cluster.new_database().replace("postgresql://postgres@", "postgresql://pwuser@")
    with psycopg.connect(pg_cluster.url(), autocommit=True) as conn:
        conn.execute("SET password_encryption = 'scram-sha-256'")
        if not conn.execute("SELECT 1 FROM pg_roles WHERE rolname = 'pwuser'").fetchone():
            conn.execute("CREATE ROLE pwuser LOGIN")
        conn.execute(f"ALTER ROLE pwuser PASSWORD '{secret}'")
        conn.execute("GRANT ALL ON ALL TABLES IN SCHEMA public TO pwuser")
    schema = url.rpartition("%3D")[2]
    with psycopg.connect(pg_cluster.url(), autocommit=True) as conn:
        conn.execute(f'GRANT ALL ON SCHEMA "{schema}" TO pwuser')
    hba = pg_cluster.data / "pg_hba.conf"
    if "pwuser" not in hba.read_text():
        hba.write_text("local all pwuser scram-sha-256\n" + hba.read_text())
        pg_cluster._run("pg_ctl", "-D", str(pg_cluster.data), "-s", "reload")
    passfile = tmp_path / "pgpass"
    passfile.write_text(f"*:*:*:pwuser:{secret}\n")
    passfile.chmod(0o600)
    base = {k: v for k, v in os.environ.items() if k not in ("PGPASSWORD", "PGPASSFILE")}
    env = {**base, "PGPASSFILE": str(passfile)}
    made = notegate("init", str(tmp_path / "vault"), "--state-url", url, env=env)
    assert made.returncode == 0, made.stderr
    config = str(tmp_path / "vault" / "notegate.toml")
    green = notegate("doctor", "--config", config, "--json", env=env)
    without = notegate("doctor", "--config", config, "--json", env={**base, "PGPASSFILE": str(tmp_path / "none")})
    for done, status in ((green, "ok"), (without, "fail")):
        states = [r for r in json.loads(done.stdout) if r["check"] == "state.integrity"]
        assert [r["status"] for r in states] == [status], states
        assert secret not in done.stdout + done.stderr
    assert secret not in (tmp_path / "vault" / "notegate.toml").read_text()
