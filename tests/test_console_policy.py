"""The console's step-up decision and the elevation approver (pure): every action is classified, an action
that grants trust or writes what sessions load needs a user-verified passkey check at most
``elevation_assertion_seconds`` old, and only an environment's owner approves an elevation there."""

from __future__ import annotations

from hypothesis import example, given
from hypothesis import strategies as st

from notegate.policy import (
    CONSOLE_ACTIONS,
    Policy,
    StepUp,
    decide_console_action,
    decide_elevation_approval,
    guarded_note,
)

POLICY = Policy()
LIMIT = POLICY.elevation_assertion_seconds
AGES = st.one_of(st.none(), st.floats(allow_nan=False, allow_infinity=True), st.integers(-(10**6), 10**6).map(float))


@given(st.sampled_from(sorted(CONSOLE_ACTIONS)), AGES, st.booleans())
@example(action="device-key", age=float("inf"), guarded=False)  # found by make test: int(inf) raised
def test_a_step_up_action_is_allowed_exactly_within_the_window(action: str, age: float | None, guarded: bool) -> None:
    decision = decide_console_action(POLICY, action, step_up_age=age, guarded=guarded)
    need = CONSOLE_ACTIONS[action]
    needs = need is StepUp.ALWAYS or (need is StepUp.GUARDED_PATH and guarded)
    fresh = age is not None and 0 <= age <= LIMIT
    assert decision.allowed == (fresh or not needs)
    if not decision.allowed:
        assert decision.rule == "step-up-required"


@given(st.text(max_size=30).filter(lambda a: a not in CONSOLE_ACTIONS), AGES)
def test_an_unclassified_action_is_refused(action: str, age: float | None) -> None:
    decision = decide_console_action(POLICY, action, step_up_age=age)
    assert not decision.allowed and decision.rule == "console-action-unknown"


def test_the_actions_the_issue_names_need_the_step_up() -> None:
    for action in ("token-create", "passkey-add", "device-key", "inbox-promote"):
        assert CONSOLE_ACTIONS[action] is StepUp.ALWAYS, action
    for action in ("note-edit", "note-restore"):
        assert CONSOLE_ACTIONS[action] is StepUp.GUARDED_PATH, action
    assert not decide_console_action(POLICY, "token-create", step_up_age=LIMIT + 1).allowed
    assert decide_console_action(POLICY, "token-create", step_up_age=LIMIT).allowed


def test_guarded_notes_are_the_protected_and_session_loaded_ones() -> None:
    for path in ("rules/digest.md", "RULES/house.md", "handoffs/x.md", "log/x.md", "design/x.md", "projects/x.md"):
        assert guarded_note(POLICY, path), path
    assert guarded_note(POLICY, None)  # a path that did not parse
    assert not guarded_note(POLICY, "notes/idea.md")


@given(
    st.sampled_from(["owner", "member", "other"]),
    st.sampled_from(["owner", None]),
    st.one_of(st.none(), st.floats(-1000, 1000)),
    st.booleans(),
)
def test_only_the_environment_owner_approves(
    person: str, owner: str | None, offset: float | None, user_verified: bool
) -> None:
    now = 1_800_000_000.0
    assertion_at = None if offset is None else now - offset
    decision = decide_elevation_approval(
        POLICY,
        environment_owner=owner,
        person=person,
        assertion_at=assertion_at,
        user_verified=user_verified,
        now=now,
    )
    if owner is None or person != owner:
        assert decision.rule == "elevation-approver-not-owner" and not decision.allowed
    else:
        fresh = assertion_at is not None and user_verified and 0 <= now - assertion_at <= LIMIT
        assert decision.allowed == fresh
