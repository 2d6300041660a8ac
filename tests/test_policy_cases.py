"""The case table (tests/support/policy_cases.py) against the pure decisions: every row's exact rule."""

from __future__ import annotations

import pytest

from notegate.policy import Action, Policy, decide
from notegate.vault.paths import NotePath
from support.policy_cases import CALLERS, TABLE, cases

POLICY = Policy()
ALLOWING = {"visible", "trusted-write", "protected-trusted", "inbox-write"}


@pytest.mark.parametrize(("path", "who", "action", "rule"), cases())
def test_each_case_is_decided_by_its_exact_rule(path: str, who: str, action: Action, rule: str) -> None:
    decision = decide(POLICY, CALLERS[who], action, NotePath.parse(path))
    assert decision.rule == rule
    assert decision.allowed is (rule in ALLOWING)
    if not decision.allowed:
        assert decision.reason  # every refusal says why


def test_the_table_covers_every_rule_decide_can_give() -> None:
    """A rule no row names is a rule no test pins."""
    named = {rule for *_, rule in cases()}
    assert named == ALLOWING | {
        "restricted-outside-inbox",
        "inbox-append-only",
        "inbox-reserved",
        "instruction-file-name",
        "no-such-note",
        "machine-no-mcp",
        "unknown-tier",
    }


def test_the_table_covers_every_caller_and_action() -> None:
    assert {who for _, who, _, _ in TABLE} == set(CALLERS)
    assert {action for _, _, action, _ in cases()} == set(Action)


@pytest.mark.parametrize(
    ("who", "insisted", "rule"),
    [
        ("R", False, "credential-found"),
        ("R", True, "credential-found"),  # a restricted caller cannot insist
        ("W", True, "credential-found"),
        ("H", True, "credential-found"),  # nor a hosted one, even trusted: its prompt could be anyone's
        ("T", False, "credential-warning"),
        ("T", True, "credential-insisted"),
    ],
)
def test_who_may_commit_what_looks_like_a_credential(who: str, insisted: bool, rule: str) -> None:
    from notegate.policy import decide_credential

    decision = decide_credential(CALLERS[who], insisted)
    assert decision.rule == rule and decision.allowed is (rule == "credential-insisted")


@pytest.mark.parametrize(
    ("who", "sees_private", "handle", "inbox_preview", "tier_by_default"),
    [
        ("R", False, True, False, "restricted"),
        ("W", False, False, False, "restricted"),
        ("T", True, False, False, "restricted"),
        ("H", True, True, False, "restricted"),
        ("M", False, False, False, "machine"),
    ],
)
def test_the_small_decisions(who, sees_private, handle, inbox_preview, tier_by_default) -> None:
    from dataclasses import replace

    from notegate import policy as p

    caller = CALLERS[who]
    assert p.sees_private(caller) is sees_private
    assert p.needs_session_handle(POLICY, caller) is handle
    assert p.inbox_write_needs_preview(POLICY, caller) is inbox_preview
    assert p.inbox_write_needs_preview(replace(POLICY, two_step_inbox=True), caller) is (
        caller.client_class == "hosted"
    )
    assert p.default_tier(caller.client_class) == tier_by_default
