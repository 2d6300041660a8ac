"""The server's side of device keys: [devices.NAME] in a real deployment config, the policy's tier decision,
and DeviceVerifier.tier_for on a real state database (audit rows, injected clock, revocation by config)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from notegate.auth.devices import (
    DeviceVerdict,
    DeviceVerifier,
    Reason,
    generate_device_key,
    mint_device_header,
)
from notegate.config import Config, load_config
from notegate.errors import ConfigError
from notegate.policy import Caller, decide_device_tier
from notegate.services.vaultinit import init_directory
from notegate.state import StateDB

NOW = 1_800_000_000.0
PEM, PUBLIC = generate_device_key()
_, OTHER_PUBLIC = generate_device_key()


def workstation(login: str = "owner", tier: str = "restricted", client_class: str = "workstation") -> Caller:
    return Caller(
        login=login,
        display_name=login,
        client="laptop-token",
        client_class=client_class,
        tier=tier,
        session="s-1",
        environment="personal",
        connector="token:abc",
    )


def with_devices(config_path: Path, text: str) -> Config:
    config_path.write_text(config_path.read_text() + "\n" + text)
    return load_config(config_path)


@pytest.fixture
def config_path(tmp_path: Path) -> Path:
    path = init_directory(tmp_path / "vault")
    text = path.read_text().replace("members = []", 'members = ["ana"]', 1)
    assert text != path.read_text()
    path.write_text(text)
    return path


@pytest.fixture
def config(config_path: Path) -> Config:
    return with_devices(config_path, f'[devices.laptop]\npublic_key = "{PUBLIC}"\nperson = "owner"\n')


@pytest.fixture
def db(tmp_path: Path):
    state = StateDB(tmp_path / "state.sqlite")
    yield state
    state.close()


def header(now: float = NOW, url: str = "http://127.0.0.1:8765/mcp", **kw) -> str:
    return mint_device_header(PEM, "laptop", url, now=now, **kw)


# ------------------------------------------------------------------ config
def test_devices_are_loaded_from_the_deployment_config(config: Config) -> None:
    assert set(config.devices) == {"laptop"}
    assert (config.devices["laptop"].public_key, config.devices["laptop"].person) == (PUBLIC, "owner")


def test_a_config_without_devices_trusts_none(config_path: Path) -> None:
    assert dict(load_config(config_path).devices) == {}


@pytest.mark.parametrize(
    ("snippet", "needle"),
    [
        ('[devices.laptop]\npublic_key = "ed25519:short"\nperson = "owner"\n', "not an Ed25519 public key"),
        (f'[devices.laptop]\npublic_key = "{PUBLIC}"\n', "must name a person"),
        (f'[devices.laptop]\npublic_key = "{PUBLIC}"\nperson = "mallory"\n', "neither an owner nor a member"),
        (f'[devices.laptop]\npublic_key = "{PUBLIC}"\nperson = "owner"\nkid = "x"\n', "unknown key 'kid'"),
        (f'[devices.Laptop]\npublic_key = "{PUBLIC}"\nperson = "owner"\n', "device name 'Laptop'"),
        ('[devices]\nlaptop = "x"\n', "[devices.laptop] must be a table"),
        (f'[devices.laptop]\npublic_key = "{PUBLIC}"\nperson = 1\n', "wrong type"),
        (
            f'[devices.a]\npublic_key = "{PUBLIC}"\nperson = "owner"\n'
            f'[devices.b]\npublic_key = "{PUBLIC}"\nperson = "ana"\n',
            "same public key",
        ),
    ],
    ids=[
        "short-key",
        "no-person",
        "unknown-person",
        "unknown-key",
        "bad-name",
        "not-a-table",
        "person-type",
        "dup-key",
    ],
)
def test_a_bad_device_table_stops_start_up_naming_it(config_path: Path, snippet: str, needle: str) -> None:
    with pytest.raises(ConfigError) as info:
        with_devices(config_path, snippet)
    assert info.value.rule == "config-invalid" and needle in info.value.message


def test_a_member_may_have_a_device(config_path: Path) -> None:
    config = with_devices(config_path, f'[devices.ana-mac]\npublic_key = "{OTHER_PUBLIC}"\nperson = "ana"\n')
    assert config.devices["ana-mac"].person == "ana"


# ------------------------------------------------------------------ policy
TRUSTED = DeviceVerdict(Reason.TRUSTED, device="laptop", person="owner", jti="j")

# (case, caller, verdict, allowed, rule)
POLICY_CASES = [
    ("the owner's workstation", workstation(), TRUSTED, True, "device-trusted"),
    ("already trusted stays trusted", workstation(tier="trusted"), TRUSTED, True, "device-trusted"),
    ("no header", workstation(), DeviceVerdict(Reason.MISSING), False, "device-not-verified"),
    ("an expired header", workstation(), DeviceVerdict(Reason.EXPIRED, device="laptop"), False, "device-not-verified"),
    ("a hosted connector", workstation(client_class="hosted"), TRUSTED, False, "device-wrong-class"),
    ("a machine", workstation(client_class="machine", tier="machine"), TRUSTED, False, "device-wrong-class"),
    ("an unknown tier", workstation(tier="root"), TRUSTED, False, "device-wrong-class"),
    ("a member's workstation", workstation(login="ana"), TRUSTED, False, "device-wrong-person"),
    ("a verdict with no person", workstation(), replace(TRUSTED, person=None), False, "device-wrong-person"),
]


@pytest.mark.parametrize(
    ("case", "caller", "verdict", "allowed", "rule"), POLICY_CASES, ids=[c[0] for c in POLICY_CASES]
)
def test_the_policy_decides_the_device_tier(
    case: str, caller: Caller, verdict: DeviceVerdict, allowed: bool, rule: str
) -> None:
    decision = decide_device_tier(caller, verdict)
    assert (decision.allowed, decision.rule) == (allowed, rule), case


# ---------------------------------------------------------------- verifier
def test_the_owners_workstation_becomes_trusted(config: Config, db: StateDB) -> None:
    verifier = DeviceVerifier(config, lambda: NOW, state=db)
    caller, verdict = verifier.tier_for(workstation(), header())
    assert verdict.reason is Reason.TRUSTED and caller.tier == "trusted"
    assert caller == replace(workstation(), tier="trusted")  # nothing else about the caller changes


@pytest.mark.parametrize(
    ("case", "value", "reason"),
    [
        ("expired", header(now=NOW - 7200, lifetime=3600), Reason.EXPIRED),
        ("future-dated", header(now=NOW + 3600), Reason.ISSUED_IN_FUTURE),
        ("wrong audience", header(url="https://elsewhere.example.org/mcp"), Reason.WRONG_AUDIENCE),
        ("unknown key", mint_device_header(PEM, "desktop", "http://127.0.0.1:8765", now=NOW), Reason.UNKNOWN_KEY),
        ("garbage", "x" * 100, Reason.MALFORMED),
        ("a megabyte", "x" * (1 << 20), Reason.TOO_LARGE),
    ],
    ids=["expired", "future-dated", "wrong-audience", "unknown-key", "garbage", "a-megabyte"],  # headers are random
)
def test_a_header_that_does_not_count_leaves_the_caller_and_is_audited(
    config: Config, db: StateDB, case: str, value: str, reason: Reason
) -> None:
    verifier = DeviceVerifier(config, lambda: NOW, state=db)
    caller, verdict = verifier.tier_for(workstation(), value)
    assert verdict.reason is reason and caller == workstation(), case
    rows = db.query("SELECT tool, outcome, tier, login, client_class, at FROM audit")
    assert [tuple(r) for r in rows] == [
        ("device-key", f"device-{reason.value}:device-not-verified", "restricted", "owner", "workstation", NOW)
    ]


def test_no_header_is_not_an_audit_row(config: Config, db: StateDB) -> None:
    caller, verdict = DeviceVerifier(config, lambda: NOW, state=db).tier_for(workstation(), None)
    assert verdict.reason is Reason.MISSING and caller == workstation()
    assert db.query("SELECT count(*) FROM audit")[0][0] == 0


def test_a_valid_header_from_a_hosted_connector_lifts_nothing(config: Config, db: StateDB) -> None:
    hosted = workstation(client_class="hosted")
    caller, verdict = DeviceVerifier(config, lambda: NOW, state=db).tier_for(hosted, header())
    assert verdict.trusted and caller == hosted
    assert db.query("SELECT outcome FROM audit")[0][0] == "device-trusted:device-wrong-class"


def test_each_signed_header_is_audited_once_not_per_request(config: Config, db: StateDB) -> None:
    verifier = DeviceVerifier(config, lambda: NOW, state=db)
    value = header()
    for _ in range(5):
        assert verifier.tier_for(workstation(), value)[0].tier == "trusted"
    verifier.tier_for(workstation(), header())  # a new header: a new jti
    rows = db.query("SELECT outcome, path FROM audit")
    assert [tuple(r) for r in rows] == [("device-trusted", "device:laptop")] * 2


def test_the_clock_is_read_on_every_call(config: Config) -> None:
    now = [NOW]
    verifier = DeviceVerifier(config, lambda: now[0])
    value = header(lifetime=600)
    assert verifier.verify(value).trusted
    now[0] = NOW + 600
    assert verifier.verify(value).reason is Reason.EXPIRED


def test_removing_the_device_from_the_config_revokes_it_at_once(config_path: Path, config: Config) -> None:
    current = [config]
    verifier = DeviceVerifier(lambda: current[0], lambda: NOW)
    value = header()
    assert verifier.tier_for(workstation(), value)[0].tier == "trusted"
    text = config_path.read_text()
    config_path.write_text(text[: text.index("[devices.laptop]")])
    current[0] = load_config(config_path)  # the server's reloaded config
    caller, verdict = verifier.tier_for(workstation(), value)
    assert verdict.reason is Reason.UNKNOWN_KEY and caller.tier == "restricted"


def test_the_audience_follows_the_public_url(config_path: Path) -> None:
    text = config_path.read_text().replace('public_url = ""', 'public_url = "https://notes.example.org"', 1)
    assert "notes.example.org" in text
    config_path.write_text(text + f'\n[devices.laptop]\npublic_key = "{PUBLIC}"\nperson = "owner"\n')
    verifier = DeviceVerifier(load_config(config_path), lambda: NOW)
    assert verifier.verify(header(url="https://notes.example.org/mcp")).trusted
    assert verifier.verify(header()).reason is Reason.WRONG_AUDIENCE
    explicit = DeviceVerifier(load_config(config_path), lambda: NOW, audiences=["http://127.0.0.1:8765/mcp"])
    assert explicit.verify(header()).trusted


def test_the_serving_port_decides_the_audience(config: Config) -> None:
    assert DeviceVerifier(config, lambda: NOW, port=9000).verify(header()).reason is Reason.WRONG_AUDIENCE
    assert DeviceVerifier(config, lambda: NOW, port=9000).verify(header(url="http://localhost:9000")).trusted
