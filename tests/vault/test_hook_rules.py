"""What a refused push over a real transport tells the writer: only the rule names notegate's hook printed."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from notegate.vault.store import _hook_rules, _origin_moved


def test_the_rule_names_of_our_hook_are_kept_and_nothing_else() -> None:
    said = (
        "handoffs/x.md: Refused [push-protected-path]: private path handoffs/x.md secret-ish text\n"
        "What to do instead [push-protected-path]: ask the owner.\n"
        "push refused: 1 finding(s) (unidentified pusher, not the owner); nothing was updated.\n"
    )
    assert _hook_rules(said) == ["push-protected-path"]
    assert _hook_rules("What to do instead [Bad Rule]: x\nWhat to do instead []: y") == []


@given(st.text(max_size=2000))
def test_only_rule_shaped_names_ever_come_out(text: str) -> None:
    rules = _hook_rules(text)
    assert len(rules) <= 8 and rules == sorted(set(rules))
    assert all(r and len(r) <= 64 and set(r) <= set("abcdefghijklmnopqrstuvwxyz0123456789-") for r in rules)


def test_a_lost_ref_race_over_git_protocol_is_a_moved_origin() -> None:
    assert _origin_moved("failed to update ref")  # git receive-pack, when another push took the ref first
    assert not _origin_moved("pre-receive hook declined")
