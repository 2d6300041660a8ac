"""Membership in the state database (both backends), the config file as its seed, invitations, removal in one
transaction, and the doctor's report of where the two disagree."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from notegate.auth.members import INVITE_SECONDS, Membership, seed_members
from notegate.config import load_config
from notegate.doctor.members import check_members
from notegate.errors import NotegateError
from notegate.policy import decide_member_caller, effective_members
from notegate.state import LiveSyncDevice, StateDB
from support import notegate

NOW = 1_700_000_000.0


def with_members(config_path: Path, *members: str):
    config = load_config(config_path)
    env = config.environments["personal"]
    envs = {**config.environments, "personal": dataclasses.replace(env, members=tuple(members))}
    return dataclasses.replace(config, environments=envs)


@pytest.fixture
def db(tmp_path: Path, state_url: str):
    state = StateDB(tmp_path / "state.sqlite", url=state_url)
    yield state
    state.close()


def test_the_config_seeds_and_a_removed_member_stays_removed(vault: Path, db: StateDB) -> None:
    config = with_members(vault, "alice", "bob")
    assert seed_members(db, config, now=NOW) == {"personal": ["alice", "bob"]}
    assert seed_members(db, config, now=NOW) == {}  # idempotent
    members = Membership(db, lambda: config)
    assert members.members("personal") == ("alice", "bob")
    ended = members.remove("personal", "bob", by="owner", now=NOW + 1)
    assert ended["tokens"] == [] and ended["devices"] == []
    seed_members(db, config, now=NOW + 2)  # the file still lists bob: the database wins
    assert members.members("personal") == ("alice",)
    assert not members.may_use("bob", "personal") and members.may_use("owner", "personal")
    assert "bob" not in members.persons()


def test_an_invitation_is_spent_once_and_makes_a_member(vault: Path, db: StateDB) -> None:
    config = with_members(vault)
    members = Membership(db, lambda: config)
    invitation = members.invite("personal", "carol", by="owner", now=NOW)
    assert invitation.token.startswith("ngi_") and invitation.expires_at == NOW + INVITE_SECONDS
    assert invitation.token not in str(db.query("SELECT * FROM member_invites")[0].keys())
    assert members.check_invite(invitation.token, now=NOW + 1)["login"] == "carol"
    assert not members.may_use("carol", "personal")
    members.accept(invitation.token, how="passkey", now=NOW + 2)
    assert members.may_use("carol", "personal")
    for raw, now, rule in (
        (invitation.token, NOW + 3, "invite-used"),
        ("ngi_" + "A" * 43, NOW, "invite-unknown"),
        ("not-a-secret", NOW, "invite-unknown"),
    ):
        with pytest.raises(NotegateError) as refused:
            members.check_invite(raw, now=now)
        assert refused.value.rule == rule
    late = members.invite("personal", "dave", by="owner", now=NOW)
    with pytest.raises(NotegateError) as refused:
        members.accept(late.token, how="passkey", now=NOW + INVITE_SECONDS + 1)
    assert refused.value.rule == "invite-expired"
    for login, rule in (("owner", "member-is-owner"), ("carol", "member-exists"), ("Bad Name", "member-login-invalid")):
        with pytest.raises(NotegateError) as refused:
            members.invite("personal", login, by="owner", now=NOW)
        assert refused.value.rule == rule


def test_removal_ends_every_credential_in_one_transaction(vault: Path, db: StateDB) -> None:
    config = with_members(vault, "bob")
    seed_members(db, config, now=NOW)
    db.insert_token(
        {
            "id": "t1",
            "name": "bob-laptop",
            "login": "bob",
            "display_name": "bob",
            "client_class": "workstation",
            "tier": "restricted",
            "environment": "personal",
            "secret_hash": "x",
            "created_at": NOW,
            "contracts": "",
        }
    )
    db.oauth_insert_family(
        family_id="f1", client_id="c", client_name="Claude", login="bob", environment="personal", now=NOW
    )
    db.insert_web_session(token_hash="h", login="bob", passkey_id="pk_1", now=NOW, expires_at=NOW + 99)
    members = Membership(db, lambda: config)
    ended = members.remove("personal", "bob", by="owner", now=NOW + 1)
    assert ended["tokens"] == ["t1"] and ended["oauth_families"] == ["f1"] and ended["console_sessions"] == ["1"]
    assert db.token("t1")["revoked_at"] == NOW + 1
    with pytest.raises(NotegateError) as refused:
        members.remove("personal", "bob", by="owner", now=NOW + 2)
    assert refused.value.rule == "member-unknown"
    with pytest.raises(NotegateError) as refused:
        members.remove("personal", "owner", by="owner", now=NOW + 2)
    assert refused.value.rule == "member-is-owner"


def test_removal_revokes_the_members_livesync_devices_in_that_environment_only(vault: Path, db: StateDB) -> None:
    config = with_members(vault, "bob")
    seed_members(db, config, now=NOW)
    for kid, environment, person in (
        ("k-bob", "personal", "bob"),
        ("k-bob-other", "work", "bob"),
        ("k-own", "personal", "owner"),
    ):
        db.add_livesync_device(
            LiveSyncDevice(kid, kid, environment, person, f"livesync:{kid}", "ES256", "PEM", NOW, None, None)
        )
    ended = Membership(db, lambda: config).remove("personal", "bob", by="owner", now=NOW + 1)
    assert ended["livesync_devices"] == ["k-bob"]
    revoked = db.livesync_device("k-bob")
    assert revoked.public_key is None and revoked.revoked_at == NOW + 1
    assert db.livesync_device("k-bob-other").public_key == "PEM"  # another environment: not this removal's
    assert db.livesync_device("k-own").public_key == "PEM"


def test_the_doctor_names_the_device_table_of_a_removed_member(vault: Path) -> None:
    """A [devices.NAME] key of a person the console removed raises nothing any more (the MCP door refuses the
    person); `notegate doctor` names the table so the owner deletes it."""
    from notegate.auth.devices import generate_device_key

    _pem, public_key = generate_device_key()
    text = vault.read_text(encoding="utf-8").replace("members = []", 'members = ["bob"]', 1)
    vault.write_text(text + f'\n[devices.bobs-laptop]\npublic_key = "{public_key}"\nperson = "bob"\n', encoding="utf-8")
    config = load_config(vault)
    state = StateDB.for_config(config)
    try:
        seed_members(state, config, now=NOW)
        Membership(state, lambda: config).remove("personal", "bob", by="owner", now=NOW)
    finally:
        state.close()
    done = notegate("doctor", "--config", str(vault), "--json")
    [row] = [r for r in json.loads(done.stdout) if r["check"] == "members.config"]
    assert row["status"] == "warn"
    assert "[devices.bobs-laptop] belongs to 'bob', no longer a member" in row["found"]


def test_the_doctor_reports_where_the_database_and_the_file_disagree(vault: Path) -> None:
    config = with_members(vault, "bob")
    state = StateDB.for_config(config)
    try:
        members = Membership(state, lambda: config)
        seed_members(state, config, now=NOW)
        assert check_members(config).status == "ok"
        members.remove("personal", "bob", by="owner", now=NOW)
        members.accept(members.invite("personal", "carol", by="owner", now=NOW).token, how="passkey", now=NOW)
    finally:
        state.close()
    result = check_members(config)
    assert result.status == "warn"
    assert "the config lists 'bob', removed from the console by owner" in result.found
    assert "'carol' is a member (invite) the config does not list" in result.found


logins = st.sampled_from(["a", "b", "c", "d", "e"])


@given(st.lists(logins, max_size=5), st.dictionaries(logins, st.booleans(), max_size=5))
def test_effective_members_property(seed: list[str], rows: dict[str, bool]) -> None:
    """A live row is a member, a removed row never is (whatever the file says), a file login without a row is."""
    found = set(effective_members(seed, rows.items()))
    for login in {*seed, *rows}:
        expected = rows.get(login, login in seed)
        assert (login in found) == expected


@given(logins, st.sets(logins), st.sets(logins), st.sampled_from(["hosted", "workstation", "machine"]))
def test_a_caller_is_refused_only_once_its_person_was_removed(
    login: str, members: set[str], removed: set[str], client_class: str
) -> None:
    decision = decide_member_caller(members, "owner", login, client_class, removed)
    refused = client_class != "machine" and login not in members and login in removed
    assert decision.allowed == (not refused)
    assert decision.allowed or decision.rule == "member-removed"
