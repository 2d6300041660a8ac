"""A machine token's contracts are given at creation by the real CLI and shown by `token list`; the policy
decides who may call which contract, and what range a health value may have, each with its exact rule."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from notegate.policy import decide_contract, decide_health_value
from support import notegate
from support.callers import make_caller

KNOWN = ("health-daily", "capture", "session-state")


def test_token_create_with_contracts_and_list(vault: Path) -> None:
    created = notegate(
        "token", "create", "--config", str(vault), "--name", "phone", "--class", "machine",
        "--contract", "health-daily", "--contract", "capture",
    )  # fmt: skip
    assert created.returncode == 0, created.stderr
    listed = notegate("token", "list", "--config", str(vault))
    assert "contracts: health-daily,capture" in listed.stdout
    rows = json.loads(notegate("token", "list", "--config", str(vault), "--json").stdout)
    assert rows[0]["contracts"] == ["health-daily", "capture"]
    unknown = notegate(
        "token", "create", "--config", str(vault), "--name", "x", "--class", "machine", "--contract", "nope"
    )
    assert unknown.returncode == 2 and "no such contract 'nope'" in unknown.stderr
    conversation = notegate(
        "token", "create", "--config", str(vault), "--name", "y", "--class", "workstation", "--contract", "capture"
    )
    assert conversation.returncode != 0 and "[bad-argument]" in conversation.stderr


MACHINE = make_caller(tier="machine", client_class="machine", client="phone")


@pytest.mark.parametrize(
    ("caller", "granted", "name", "rule"),
    [
        (MACHINE, ("health-daily",), "health-daily", "contract-granted"),
        (MACHINE, ("health-daily",), "capture", "no-such-contract"),  # not given
        (MACHINE, ("made-up",), "made-up", "no-such-contract"),  # given, but no such contract ships
        (make_caller(), KNOWN, "capture", "contract-not-for-conversations"),  # a trusted workstation
        (make_caller(tier="restricted", client_class="hosted"), KNOWN, "capture", "contract-not-for-conversations"),
        (make_caller(tier="trusted", client_class="machine"), KNOWN, "capture", "contract-not-for-conversations"),
    ],
)
def test_decide_contract(caller, granted, name, rule) -> None:
    assert decide_contract(caller, granted, name, KNOWN).rule == rule


@pytest.mark.parametrize(
    ("metric", "value", "rule"),
    [
        ("weight", 72.4, "health-value"),
        ("weight", 72400, "health-implausible-value"),
        ("sleep", 25, "health-implausible-value"),
        ("steps", -1, "health-implausible-value"),
        ("steps", float("nan"), "health-implausible-value"),
        ("mood", 3, "health-unknown-metric"),
    ],
)
def test_decide_health_value(metric, value, rule) -> None:
    assert decide_health_value(metric, value).rule == rule
