"""Removing a member ends their LiveSync devices at once, against the real gate (`notegate livesync gate`) and a
real CouchDB-protocol server: the console's removal revokes the devices in the same transaction (one audit row
names them), and the gate asks the membership the MCP door asks at every request, so a device row that outlived
the removal (a restore, a hand edit, another replica) is refused by its person's rule all the same."""

from __future__ import annotations

import json
import re
import time

from notegate.auth.members import Membership, seed_members
from notegate.config import load_config
from notegate.state import StateDB
from support import notegate
from support.livesync import DB, Device, Lab


def _member(lab: Lab, login: str) -> None:
    """``login`` becomes a member: listed in the config file (the seed) and recorded in the state database,
    which the enrolment and the gate ask (the file the gate read at start does not list them)."""
    text = lab.config.read_text(encoding="utf-8")
    listed = re.sub(
        r"^members = \[(.*)\]$",
        lambda m: f'members = [{m[1]}{", " if m[1] else ""}"{login}"]',
        text,
        count=1,
        flags=re.M,
    )
    lab.config.write_text(listed, encoding="utf-8")
    config = load_config(lab.config)
    state = StateDB.for_config(config)
    try:
        seed_members(state, config, now=time.time())
    finally:
        state.close()


def _enrol(lab: Lab, name: str, person: str):
    done = notegate("livesync", "device", "add", name, "--person", person, "--json", "--config", str(lab.config))
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    return Device(name, out["kid"], "ES256", out["settings"]["jwtKey"], out["setup_uri"], out["passphrase"])


def test_removing_a_member_revokes_their_devices_in_the_same_action(lab: Lab) -> None:
    _member(lab, "bob")
    phone = _enrol(lab, "bobs-phone", "bob")
    token = phone.token()
    assert lab.request("GET", f"/{DB}", token=token).status == 200
    config = load_config(lab.config)
    state = StateDB.for_config(config)
    try:
        ended = Membership(state, lambda: config).remove("personal", "bob", by="owner", now=time.time())
        assert ended["livesync_devices"] == [phone.kid]
        assert state.livesync_device(phone.kid).public_key is None
    finally:
        state.close()
    answer = lab.request("GET", f"/{DB}", token=token)  # the same, still unexpired token
    assert answer.status == 401 and answer.body["rule"] == "livesync-device-revoked"
    assert lab.request("GET", f"/{DB}", token=lab.devices["phone"].token()).status == 200  # the owner's stays


def test_a_device_row_that_outlived_its_members_removal_is_refused(lab: Lab) -> None:
    _member(lab, "carol")
    tablet = _enrol(lab, "carols-tablet", "carol")
    assert lab.request("GET", f"/{DB}", token=tablet.token()).status == 200
    state = StateDB.for_config(load_config(lab.config))
    try:  # the membership ends while the device row lives on
        with state.tx() as db:
            db.execute("UPDATE members SET removed_at = ?, removed_by = 'owner' WHERE login = 'carol'", (time.time(),))
    finally:
        state.close()
    answer = lab.request("GET", f"/{DB}", token=tablet.token())
    assert answer.status == 403 and answer.body["rule"] == "member-removed"
    done = notegate("audit", "--config", str(lab.config), "--connector", f"livesync:{tablet.kid}", "--json")
    assert any(r["outcome"] == "member-removed" and r["login"] == "carol" for r in json.loads(done.stdout))
