"""Who may get a LiveSync device: `notegate livesync device add` asks the membership every door asks (the state
database, seeded from the config file), not the file: a member the owner removed gets no new device though the
file still lists them, and a member added in the console (not in the file) gets one."""

from __future__ import annotations

import json
import re
import time
from urllib.parse import unquote

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from notegate.auth.members import Membership, seed_members
from notegate.config import load_config
from notegate.errors import NotegateError
from notegate.livesync import keys
from notegate.livesync.enrol import enrol_device
from notegate.livesync.settings import livesync_from_table
from notegate.state import StateDB
from support import notegate


def _vault(tmp_path, members: str):
    assert notegate("init", str(tmp_path / "vault")).returncode == 0
    path = tmp_path / "vault" / "notegate.toml"
    text = path.read_text(encoding="utf-8")
    assert "\nmembers = []" in text
    path.write_text(text.replace("\nmembers = []", f"\nmembers = {members}", 1) + "\n[livesync]\n", encoding="utf-8")
    return path


def test_a_removed_member_gets_no_new_device_though_the_file_lists_them(tmp_path) -> None:
    path = _vault(tmp_path, '["bob"]')
    config = load_config(path)
    state = StateDB.for_config(config)
    try:
        seed_members(state, config, now=time.time())
        env = config.default_environment
        assert (
            notegate("livesync", "device", "add", "bobs-phone", "--person", "bob", "--config", str(path)).returncode
            == 0
        )
        Membership(state, lambda: config).remove(env, "bob", by="owner", now=time.time())
        Membership(state, lambda: config).invite(env, "carol", by="owner", now=time.time())
        state.member_add(env, "dave", by="owner", source="invite", now=time.time())
    finally:
        state.close()
    done = notegate("livesync", "device", "add", "bobs-tablet", "--person", "bob", "--config", str(path))
    assert done.returncode == 1 and "Refused [livesync-person-not-member]" in done.stderr, done.stderr
    assert "bob" in load_config(path).environment(None).members  # the file still lists bob
    done = notegate("livesync", "device", "add", "daves-phone", "--person", "dave", "--config", str(path))
    assert done.returncode == 0, done.stderr  # a member recorded in the database only
    done = notegate("livesync", "device", "add", "carols-phone", "--person", "carol", "--config", str(path))
    assert "Refused [livesync-person-not-member]" in done.stderr  # invited is not yet a member
    listed = json.loads(notegate("livesync", "device", "list", "--all", "--json", "--config", str(path)).stdout)
    assert sorted((d["name"], d["revoked"]) for d in listed) == [("bobs-phone", True), ("daves-phone", False)]


NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,39}")
names = st.one_of(st.from_regex(NAME, fullmatch=True), st.text(max_size=50))
persons = st.sampled_from(["owner", "bob", "gone", "stranger", "", "OWNER", "bob "])


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=names, person=persons)
def test_enrolment_takes_exactly_a_device_name_and_a_live_person(vault, name: str, person: str) -> None:
    """Any name and person the CLI or the console pass: enrolled exactly when the name is a device name, the
    person the owner or a live member (the database's) and the name free; else refused by that exact rule."""
    config = load_config(vault)
    state = StateDB.for_config(config)
    try:
        env = config.default_environment
        state.member_add(env, "bob", by="owner", source="invite", now=1.0)
        state.member_add(env, "gone", by="owner", source="invite", now=1.0)
        state.member_remove(env, "gone", by="owner", now=2.0, default_environment=True)
        taken = {d.name for d in state.livesync_devices(env)}
        membership = Membership(state, lambda: config)
        try:
            done = enrol_device(
                state,
                membership,
                livesync_from_table({}),
                environment=env,
                owner="owner",
                name=name,
                person=person or None,
                algorithm="ES256",
                url=None,
                now=3.0,
            )
        except NotegateError as exc:
            if not NAME.fullmatch(name):
                assert exc.rule == "livesync-device-name-invalid"
            elif (person or "owner") not in ("owner", "bob"):
                assert exc.rule == "livesync-person-not-member"
            else:
                assert exc.rule == "livesync-device-exists" and name in taken
            return
        assert NAME.fullmatch(name) and done.person in ("owner", "bob") and name not in taken
        row = state.livesync_device(done.kid)
        assert row.name == name and row.person == done.person and "PRIVATE" not in row.public_key
        opened = json.loads(keys.decrypt_setting_string(unquote(done.setup_uri.partition("=")[2]), done.passphrase))
        assert opened == done.settings and opened["jwtKid"] == done.kid
    finally:
        state.close()
