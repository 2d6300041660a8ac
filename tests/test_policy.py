"""Decisions are values, the last branch denies, globs match segment-wise (purity: tests/test_layering.py)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from notegate.errors import ConfigError
from notegate.policy import (
    CAPTURE_NUMBERED,
    Action,
    InboxKeys,
    Policy,
    can_see,
    capture_keys,
    decide,
    fixed_caller,
    glob_match,
    is_slug,
    policy_from_table,
    requires_two_step,
    two_step_reason,
)
from notegate.vault.paths import NotePath
from support.callers import make_caller

POLICY = Policy()


@pytest.mark.parametrize(
    ("glob", "path", "expected"),
    [
        ("private/**", "private/a.md", True),
        ("private/**", "private/deep/er/a.md", True),
        ("private/**", "PRIVATE/a.md", True),  # case-insensitive: a case variant is just as private
        ("private/**", "privateer/a.md", False),  # segment-wise, never a substring
        ("private/**", "x/private/a.md", False),
        ("**/secret.md", "secret.md", True),
        ("**/secret.md", "a/b/secret.md", True),
        ("rules/*.md", "rules/a.md", True),
        ("rules/*.md", "rules/x/a.md", False),
        ("a?.md", "ab.md", True),
        ("a?.md", "a/.md", False),
    ],
)
def test_glob_match(glob: str, path: str, expected: bool) -> None:
    assert glob_match(glob, path) is expected


@given(st.text(min_size=1, max_size=30).filter(lambda s: "/" not in s))
def test_double_star_covers_any_name(name: str) -> None:
    assert glob_match("private/**", f"private/{name}")
    assert not glob_match("private/**", name)


RESTRICTED = make_caller(tier="restricted", client_class="hosted")
TRUSTED = make_caller()
MACHINE = make_caller(tier="machine", client_class="machine")


@pytest.mark.parametrize("action", list(Action))
def test_machine_never_uses_knowledge_tools(action: Action) -> None:
    decision = decide(POLICY, MACHINE, action, NotePath.parse("notes/a.md"))
    assert not decision.allowed and decision.rule == "machine-no-mcp"


WRITES = [a for a in Action if a.value not in ("read", "list", "search", "history")]


@pytest.mark.parametrize("action", WRITES)
@pytest.mark.parametrize("path", ["notes/a.md", "rules/digest.md", "handoffs/x.md", "inbox/_held.md", "inbox/x.md"])
def test_restricted_may_not_write_outside_typed_inbox_items(action: Action, path: str) -> None:
    decision = decide(POLICY, RESTRICTED, action, NotePath.parse(path))
    assert not decision.allowed and decision.reason


@pytest.mark.parametrize("action", WRITES)
def test_restricted_inbox_items_are_create_and_append_only(action: Action) -> None:
    decision = decide(POLICY, RESTRICTED, action, NotePath.parse("inbox/log/notegate.md"))
    assert decision.allowed is (action in (Action.CREATE, Action.APPEND))


def test_private_reads_say_no_such_note() -> None:
    decision = decide(POLICY, RESTRICTED, Action.READ, NotePath.parse("private/x.md"))
    assert not decision.allowed and decision.rule == "no-such-note"
    assert can_see(POLICY, TRUSTED, "private/x.md")


def test_unknown_tier_denied() -> None:
    odd = make_caller(tier="root")
    assert not decide(POLICY, odd, Action.READ, NotePath.parse("a.md")).allowed
    assert not decide(POLICY, odd, Action.CREATE, NotePath.parse("a.md")).allowed


def test_two_step_for_hosted_and_protected() -> None:
    assert requires_two_step(POLICY, RESTRICTED, "a.md")
    assert not requires_two_step(POLICY, TRUSTED, "a.md")
    assert requires_two_step(POLICY, TRUSTED, "rules/digest.md")
    assert requires_two_step(POLICY, TRUSTED, "Rules/Other.md")


@pytest.mark.parametrize(
    "table",
    [
        {"private": "private/**"},  # not a list
        {"private": [""]},
        {"max_note_bytes": 0},
        {"fetch_interval_seconds": -1},
        {"unknown": 1},
    ],
)
def test_policy_table_rejects_bad_values(table: dict) -> None:
    with pytest.raises(ConfigError):
        policy_from_table(table)


def test_globs_match_any_normal_form() -> None:
    assert glob_match("tagebücher/**", "tagebu\u0308cher/x.md")
    assert glob_match("tagebu\u0308cher/**", "TAGEBÜCHER/x.md")


def test_the_inbox_is_recognised_in_any_case() -> None:
    """INBOX/x.md is as much the inbox as inbox/x.md: quarantine marks, the index and routes rely on it."""
    assert POLICY.is_inbox("INBOX/log/x.md") and POLICY.is_inbox("Inbox/captures/y.md")
    assert not POLICY.is_inbox("іnbox/log/x.md")  # a Cyrillic і is another folder


def test_no_route_reaches_the_inbox_even_without_the_guard_globs() -> None:
    """route_target re-checks every promotion itself, whatever the configured guard globs say."""
    from dataclasses import replace

    bare = replace(POLICY, protected_from_routes=(), routes=(("log", "INBOX/log/{project}.md"),))
    decision = bare.route_target("log", "p")
    assert not decision.allowed and decision.rule == "route-protected"


def test_parts_recorded_before_connector_logins_count_for_every_connector_of_the_person() -> None:
    from notegate.policy import Author, decide_author

    legacy = [Author("", "phone", "owner")]
    for caller in (make_caller(login="owner", client="laptop"), make_caller(login="owner", client="desktop")):
        decision = decide_author(caller, legacy)
        assert not decision.allowed and decision.rule == "author-cannot-promote"
    assert decide_author(make_caller(login="bob", client="laptop"), legacy).allowed
    own = [Author("token:abc", "phone", "owner")]
    assert decide_author(make_caller(login="owner", client="laptop"), own).allowed


@pytest.mark.parametrize(
    ("connector", "person", "client", "display_name", "session"),
    [  # the values each caller was built with by hand before issue 9: authorship and trailers name them
        ("job:review", "reviewer", "notegate-review", "notegate reviewer", "scheduled-review"),
        ("job:reflect", "reflector", "notegate-reflect", "notegate reflector", "reflect"),
        ("cli:import", "owner", "notegate-import", "owner", "-"),
        ("cli:init", "owner", "notegate-init", "notegate init", "-"),
        ("web:console", "owner", "notegate-console", "owner", "console"),
    ],
)
def test_fixed_callers_come_from_one_helper(
    connector: str, person: str, client: str, display_name: str, session: str
) -> None:
    from notegate.policy import Caller, fixed_caller

    expected = Caller(person, display_name, client, "workstation", "trusted", session, None, connector)
    assert fixed_caller(connector, person) == expected
    assert fixed_caller(connector, person).connector_id == connector


def test_an_unknown_fixed_connector_is_a_bug() -> None:
    from notegate.policy import fixed_caller

    with pytest.raises(ValueError, match="not a fixed connector"):
        fixed_caller("token:abc", "owner")  # a credential's connector is never fixed


def test_no_fixed_caller_is_built_by_hand() -> None:
    """Outside the policy package, a fixed connector's name appears only as fixed_caller's (or fixed_client's) first
    argument."""
    import re
    from pathlib import Path

    from notegate.policy import FIXED_CONNECTORS

    names = "|".join(re.escape(name) for name in FIXED_CONNECTORS)
    mention = re.compile(rf"""(.{{0,14}})["']({names})["']""")
    src = Path(__file__).parents[1] / "src" / "notegate"
    stray = [
        f"{path.relative_to(src)}: {m.group(0)}"
        for path in src.rglob("*.py")
        if path.relative_to(src).parts[0] != "policy"
        for m in mention.finditer(path.read_text(encoding="utf-8"))
        if not m.group(1).endswith(("fixed_caller(", "fixed_client("))
    ]
    assert stray == []


def test_a_credential_opens_the_door_only_for_an_environment_served_here() -> None:
    from notegate.policy import decide_token_environment

    assert decide_token_environment(None, {"personal"}).allowed  # bound to the default
    assert decide_token_environment("personal", {"personal", "household"}).allowed
    refused = decide_token_environment("household", {"personal"})
    assert not refused.allowed and refused.rule == "wrong-environment"
    assert decide_token_environment("Personal", {"personal"}).rule == "wrong-environment"  # names are exact


def test_only_the_environment_owner_uses_its_console_pages() -> None:
    from notegate.policy import decide_console_owner

    assert decide_console_owner("alice", "home", "alice").rule == "console-owner"
    assert decide_console_owner("bob", "home", "alice").rule == "console-not-owner"
    assert decide_console_owner("alice", "gone", None).rule == "console-not-owner"
    assert decide_console_owner("Alice", "home", "alice").rule == "console-not-owner"  # logins are exact


@pytest.mark.parametrize(
    ("loopback_peer", "behind_proxy", "client_class", "rule"),
    [
        (True, False, None, "metrics-loopback"),
        (True, True, None, "metrics-unauthenticated"),  # a proxy on this machine makes everyone look local
        (False, False, None, "metrics-unauthenticated"),
        (False, True, "machine", "metrics-machine"),
        (True, True, "machine", "metrics-machine"),
        (False, False, "hosted", "metrics-not-machine"),
        (False, False, "workstation", "metrics-not-machine"),
    ],
)
def test_who_reads_the_metrics(loopback_peer: bool, behind_proxy: bool, client_class: str | None, rule: str) -> None:
    from notegate.policy import decide_metrics_reader

    decision = decide_metrics_reader(loopback_peer=loopback_peer, behind_proxy=behind_proxy, client_class=client_class)
    assert decision.rule == rule
    assert decision.allowed == (rule in ("metrics-loopback", "metrics-machine"))


def test_the_owners_console_previews_every_write_and_other_workstations_need_not() -> None:
    policy = policy_from_table({})
    assert two_step_reason(policy, fixed_caller("web:console", "owner"), "notes/a.md") is not None
    assert two_step_reason(policy, fixed_caller("cli:import", "owner"), "notes/a.md") is None


# ------------------------------------------------------------- capture keys
def test_a_titled_capture_names_its_topic_and_appends() -> None:
    assert capture_keys("cafe-ideas", 1_800_000_000.0) == InboxKeys(keys=("cafe-ideas",), appends=True)


def test_an_untitled_capture_takes_its_second_then_numbered_keys_and_never_appends() -> None:
    keys = capture_keys("", 1_800_000_000.0)  # 2027-01-15 08:00:00 UTC
    assert not keys.appends
    assert keys.keys[:3] == ("capture-20270115-080000", "capture-20270115-080000-2", "capture-20270115-080000-3")
    assert len(keys.keys) == CAPTURE_NUMBERED + 1


@given(now=st.floats(min_value=0, max_value=4_000_000_000, allow_nan=False))
def test_untitled_capture_keys_are_distinct_slugs_of_that_second(now: float) -> None:
    keys = capture_keys("", now).keys
    assert len(set(keys)) == len(keys) and all(is_slug(k) for k in keys)
    assert all(k.startswith(keys[0]) for k in keys)
    assert all(POLICY.inbox_item(POLICY.inbox_path("capture", k)).key == k for k in keys)
