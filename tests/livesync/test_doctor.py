"""`notegate doctor` looks at the LiveSync gate's CouchDB: admin party, anonymous reads, the gate's login."""

from __future__ import annotations

import json

import pytest

from notegate.doctor.livesync import Probe, judge
from notegate.doctor.result import Status
from support import free_port, notegate
from support.livesync import Lab


def _statuses(probe: Probe) -> dict[str, Status]:
    return {r.check: r.status for r in judge(probe, subject="couch/notes")}


@pytest.mark.parametrize(
    ("probe", "expected"),
    [
        (Probe(False, False, 0, 0, 0), {"livesync.couchdb": Status.FAIL}),
        (
            Probe(True, True, 200, 0, 0),
            {
                "livesync.couchdb": Status.OK,
                "livesync.admin-party": Status.FAIL,
                "livesync.anonymous": Status.FAIL,
                "livesync.gate-login": Status.WARN,
            },
        ),
        (
            Probe(True, False, 401, 200, 200),
            {
                "livesync.couchdb": Status.OK,
                "livesync.admin-party": Status.OK,
                "livesync.anonymous": Status.OK,
                "livesync.gate-login": Status.FAIL,  # the gate's login reads _config: an admin
            },
        ),
        (
            Probe(True, False, 401, 401, 403),
            {
                "livesync.couchdb": Status.OK,
                "livesync.admin-party": Status.OK,
                "livesync.anonymous": Status.OK,
                "livesync.gate-login": Status.FAIL,  # wrong password or not a member
            },
        ),
        (
            Probe(True, False, 401, 200, 403),
            {
                "livesync.couchdb": Status.OK,
                "livesync.admin-party": Status.OK,
                "livesync.anonymous": Status.OK,
                "livesync.gate-login": Status.OK,
            },
        ),
    ],
)
def test_judge(probe: Probe, expected: dict[str, Status]) -> None:
    assert _statuses(probe) == expected


def test_the_doctor_finds_the_test_servers_admin_party(lab: Lab) -> None:
    """pouchdb-server in memory is an admin party with anonymous reads: the doctor fails on both, by name."""
    done = notegate("doctor", "--config", str(lab.config), "--json")
    rows = {r["check"]: r for r in json.loads(done.stdout) if r["check"].startswith("livesync.")}
    assert rows["livesync.couchdb"]["status"] == "ok"
    assert rows["livesync.admin-party"]["status"] == "fail"
    assert rows["livesync.anonymous"]["status"] == "fail"
    assert done.returncode == 1


def test_the_doctor_says_when_couchdb_does_not_answer(tmp_path) -> None:
    assert notegate("init", str(tmp_path / "vault")).returncode == 0
    config = tmp_path / "vault" / "notegate.toml"
    with config.open("a", encoding="utf-8") as handle:
        handle.write(f'\n[livesync]\ncouchdb_url = "http://127.0.0.1:{free_port()}"\n')
    done = notegate("doctor", "--config", str(config), "--json")
    rows = [r for r in json.loads(done.stdout) if r["check"] == "livesync.couchdb"]
    assert rows and rows[0]["status"] == "fail"
