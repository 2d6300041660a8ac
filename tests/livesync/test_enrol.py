"""Who may get a LiveSync device: `notegate livesync device add` asks the membership every door asks (the state
database, seeded from the config file), not the file: a member the owner removed gets no new device though the
file still lists them, and a member added in the console (not in the file) gets one."""

from __future__ import annotations

import json
import time

from notegate.auth.members import Membership, seed_members
from notegate.config import load_config
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
