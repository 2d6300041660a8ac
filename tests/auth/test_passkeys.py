"""Enrol links and passkey records without a browser: one use, 15 minutes (injected clock), persons only,
the relying party, and the CLI. The ceremonies themselves are driven by chromium in tests/web."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from notegate.auth.passkeys import (
    ENROL_SECONDS,
    Passkeys,
    check_enrol_link,
    clean_name,
    create_enrol_link,
    parse_enrol_token,
    relying_party,
)
from notegate.auth.websession import hash_secret
from notegate.cli import main
from notegate.state import StateDB
from support import assert_refused
from support.pgcluster import stored_bytes

PERSONS = frozenset({"owner", "alice"})


@pytest.fixture
def db(tmp_path: Path, state_url: str):
    state = StateDB(tmp_path / "state.sqlite", url=state_url)
    yield state
    state.close()


def test_an_enrol_link_works_for_fifteen_minutes_and_once(db: StateDB) -> None:
    token = create_enrol_link(db, login="alice", known=PERSONS, now=100.0)
    assert parse_enrol_token(token) == token
    assert check_enrol_link(db, token, now=100.0 + ENROL_SECONDS - 1) == "alice"
    assert_refused("enrol-link-expired", check_enrol_link, db, token, now=100.0 + ENROL_SECONDS)
    assert db.use_enrol_link(hash_secret(token), now=200.0)
    assert not db.use_enrol_link(hash_secret(token), now=200.0)  # a second use never succeeds
    assert_refused("enrol-link-used", check_enrol_link, db, token, now=201.0)
    assert token.encode() not in stored_bytes(db)


def test_only_persons_get_links_and_unknown_links_are_refused(db: StateDB) -> None:
    assert_refused("person-unknown", create_enrol_link, db, login="mallory", known=PERSONS, now=0.0)
    assert_refused("enrol-link-unknown", check_enrol_link, db, "nge_" + "A" * 43, now=0.0)
    assert_refused("enrol-link-unknown", check_enrol_link, db, "../../etc", now=0.0)


@given(st.text(max_size=60))
def test_parse_enrol_token_never_raises(raw: str) -> None:
    assert parse_enrol_token(raw) in (None, raw)


@given(st.text(max_size=200))
def test_passkey_names_are_short_printable_lines(raw: str) -> None:
    name = clean_name(raw)
    assert 0 < len(name) <= 64 and name.isprintable() and name == name.strip()


def test_ceremonies_refuse_without_a_pending_challenge_or_a_person(db: StateDB) -> None:
    known = set(PERSONS)
    keys = Passkeys(db, relying_party("", 8765), lambda: frozenset(known))
    assert_refused("passkey-ceremony-expired", keys.authenticate, binding="ngp_" + "A" * 43, credential={}, now=0.0)
    options = keys.authentication_options(binding="ngp_" + "A" * 43, now=0.0)
    assert options["userVerification"] == "required" and options["allowCredentials"] == []
    assert_refused("passkey-ceremony-expired", keys.authenticate, binding="ngp_" + "A" * 43, credential={}, now=301.0)
    keys.authentication_options(binding="ngp_" + "B" * 43, now=0.0)
    assert_refused("passkey-invalid", keys.authenticate, binding="ngp_" + "B" * 43, credential={"id": 1}, now=1.0)
    created = keys.registration_options(login="alice", binding="ngp_" + "C" * 43, now=0.0)
    assert created["authenticatorSelection"]["residentKey"] == "required"
    assert created["authenticatorSelection"]["userVerification"] == "required"
    assert created["rp"] == {"id": "localhost", "name": "notegate"}
    known.discard("alice")  # removed from the config: no more ceremonies for her
    assert_refused("person-unknown", keys.registration_options, login="alice", binding="ngp_" + "C" * 43, now=0.0)


def test_the_relying_party_is_a_domain() -> None:
    assert relying_party("", 9000).rp_id == "localhost"
    assert relying_party("", 9000).origin == "http://localhost:9000"
    public = relying_party("https://Notes.Example.org", 8765)
    assert (public.rp_id, public.origin) == ("notes.example.org", "https://Notes.Example.org")


def _cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def test_owner_commands(vault: Path) -> None:
    code, out, _ = _cli("owner", "enroll", "--config", str(vault))
    assert code == 0 and out.startswith("http://localhost:8765/enroll/nge_")
    code, _, err = _cli("owner", "enroll", "--config", str(vault), "--login", "mallory")
    assert code == 1 and "Refused [person-unknown]" in err
    code, out, _ = _cli("owner", "list", "--config", str(vault), "--json")
    assert code == 0 and json.loads(out) == []
    code, _, err = _cli("owner", "revoke", "--config", str(vault), "pk_missing")
    assert code == 1 and "no active passkey" in err
