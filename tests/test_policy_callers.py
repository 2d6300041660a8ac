"""The decisions about a credential (issue 29 §2): what its claims make a caller, what a lifted caller is,
which class and tier a token may have, who may re-tier one, who may use a session handle, who belongs to an
environment, and what a presented grant is told.  Pure: no state database, no clock."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from hypothesis import given
from hypothesis import strategies as st

from notegate.policy import (
    OAUTH_STANDING,
    ClientClass,
    Tier,
    caller_of,
    console_caller,
    decide_member_use,
    decide_presented_grant,
    decide_reader,
    decide_session_handle,
    decide_token_standing,
    decide_token_tier_change,
    lifted,
)

CLAIMS = {
    "login": "owner",
    "display_name": "Owner",
    "client_class": "workstation",
    "tier": "restricted",
    "environment": "personal",
    "connector": "token:abc",
}


def test_claims_become_the_caller_they_name() -> None:
    caller = caller_of(CLAIMS, client="laptop", session="s1")
    assert (caller.login, caller.display_name, caller.client, caller.session) == ("owner", "Owner", "laptop", "s1")
    assert caller.client_class is ClientClass.WORKSTATION and caller.tier is Tier.RESTRICTED
    assert (caller.environment, caller.connector_id) == ("personal", "token:abc")


@pytest.mark.parametrize(
    ("missing", "client_class", "tier"),
    [
        (("client_class", "tier"), ClientClass.HOSTED, Tier.RESTRICTED),
        (("tier",), ClientClass.WORKSTATION, Tier.RESTRICTED),
    ],
)
def test_a_missing_claim_is_the_least_a_credential_can_be(missing, client_class, tier) -> None:
    caller = caller_of({k: v for k, v in CLAIMS.items() if k not in missing}, client="x")
    assert (caller.client_class, caller.tier) == (client_class, tier)


def test_a_machine_without_a_tier_claim_is_a_machine() -> None:
    assert caller_of({**CLAIMS, "client_class": "machine", "tier": None}, client="cron").tier is Tier.MACHINE


@given(tier=st.text(max_size=12), client_class=st.sampled_from([*ClientClass]))
def test_a_tier_outside_the_vocabulary_is_kept_and_refused_never_trusted(tier: str, client_class: str) -> None:
    caller = caller_of({**CLAIMS, "client_class": client_class, "tier": tier}, client="x")
    if tier in tuple(Tier):
        assert caller.tier is Tier(tier)
    elif tier:
        assert caller.tier == tier and decide_reader(caller).rule in ("unknown-tier", "machine-no-mcp")
    assert caller.tier != Tier.TRUSTED or tier == "trusted"


def test_an_oauth_credential_is_a_restricted_hosted_client() -> None:
    assert OAUTH_STANDING == (ClientClass.HOSTED, Tier.RESTRICTED)


def test_lifting_changes_the_tier_only() -> None:
    caller = caller_of(CLAIMS, client="phone")
    up = lifted(caller, grant_id="g-1")
    assert up.tier is Tier.TRUSTED and up.grant_id == "g-1"
    assert (up.login, up.client_class, up.connector_id) == (caller.login, caller.client_class, caller.connector_id)
    assert lifted(caller).grant_id == ""


@pytest.mark.parametrize(
    ("client_class", "tier", "contracts", "allowed"),
    [
        ("hosted", "restricted", False, True),
        ("workstation", "trusted", False, True),
        ("machine", "machine", True, True),
        ("machine", "trusted", False, False),
        ("hosted", "machine", False, False),
        ("browser", "restricted", False, False),
        ("hosted", "admin", False, False),
        ("workstation", "trusted", True, False),
    ],
)
def test_token_standing(client_class: str, tier: str, contracts: bool, allowed: bool) -> None:
    decision = decide_token_standing(client_class, tier, contracts=contracts)
    assert decision.allowed is allowed
    assert decision.rule == ("token-standing" if allowed else "bad-argument")


@pytest.mark.parametrize(
    ("client_class", "tier", "rule"),
    [
        ("hosted", "trusted", "token-tier"),
        ("workstation", "restricted", "token-tier"),
        ("machine", "trusted", "token-machine-tier"),
        ("hosted", "machine", "bad-argument"),
        ("hosted", "Trusted", "bad-argument"),
    ],
)
def test_token_tier_change(client_class: str, tier: str, rule: str) -> None:
    assert decide_token_tier_change(client_class, tier).rule == rule


def test_a_session_handle_is_its_own_login_and_client_only() -> None:
    caller = caller_of(CLAIMS, client="laptop")
    assert decide_session_handle(caller, login="owner", client="laptop").allowed
    assert decide_session_handle(caller, login="owner", client="phone").rule == "session-handle-foreign"
    assert decide_session_handle(caller, login="sam", client="laptop").rule == "session-handle-foreign"


def test_membership_is_the_owner_or_a_member() -> None:
    assert decide_member_use("owner", ("sam",), "owner").allowed
    assert decide_member_use("owner", ("sam",), "sam").allowed
    assert decide_member_use("owner", ("sam",), "eve").rule == "member-unknown"


def test_the_console_caller_is_the_fixed_connector_in_its_environment() -> None:
    caller = console_caller("owner", "household")
    assert (caller.connector, caller.environment, caller.tier) == ("web:console", "household", Tier.TRUSTED)


@dataclass(frozen=True)
class Stored:
    connector: str = "token:abc"
    conversation: str | None = None
    expires_at: float = 100.0
    revoked_at: float | None = None
    answered_at: float | None = None


@pytest.mark.parametrize(
    ("grant", "request_", "connector", "now", "rule"),
    [
        (Stored(), None, "token:abc", 50.0, "grant-trusted"),
        (Stored(), None, "token:other", 50.0, "grant-other-connector"),
        (Stored(), None, "token:abc", 100.0, "grant-expired"),
        (None, Stored(), "token:abc", 50.0, "grant-pending"),
        (None, Stored(), "token:other", 50.0, "grant-other-connector"),  # told what it would be told later
        (None, Stored(answered_at=10.0), "token:abc", 50.0, "grant-unknown"),
        (None, Stored(), "token:abc", 100.0, "grant-unknown"),  # expired unanswered
        (None, None, "token:abc", 50.0, "grant-unknown"),
    ],
)
def test_a_presented_grant(grant, request_, connector: str, now: float, rule: str) -> None:
    caller = caller_of({**CLAIMS, "connector": connector}, client="phone")
    assert decide_presented_grant(grant, request_, caller, None, now).rule == rule
