"""Property: whatever string is passed as ``grant``, the caller is exactly as its token made it, or the one
approved grant's trusted caller; never an exception (lone surrogates, NULs, huge values, near-misses)."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from notegate.auth.grants import Grants
from notegate.policy import Caller, Policy
from notegate.state import StateDB

T0 = 1_800_000_000.0
PHONE = Caller("owner", "Owner", "claude.ai", "hosted", "restricted", session="s1", connector="oauth:fam-a")


def _values(real: str) -> st.SearchStrategy[object]:
    near = st.integers(0, len(real) - 1).flatmap(lambda i: st.characters().map(lambda c: real[:i] + c + real[i + 1 :]))
    return st.one_of(
        st.text(),
        st.text(alphabet=st.characters(codec=None), max_size=5000),  # surrogates included
        st.from_regex(r"ngg_[A-Za-z0-9_-]{43}", fullmatch=True),
        near,
        st.just(real),
        st.just(real + "\n"),
        st.none(),
        st.integers(),
        st.binary(),
    )


def test_any_grant_value_gives_the_token_caller_or_the_grant_caller(tmp_path: Path):
    state = StateDB(tmp_path / "state.sqlite")
    grants = Grants(state, Policy(), owner_of=lambda _environment: "owner")
    ticket = grants.request(PHONE, reason="r", conversation=None, base="http://x", now=T0)
    link = ticket.link.rsplit("/", 1)[1]
    grants.approve(link, person="owner", assertion_at=T0, user_verified=True, now=T0)

    @settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(_values(ticket.grant), st.sampled_from([None, "conv"]))
    def check(value: object, conversation: str | None) -> None:
        caller, decision = grants.tier_for(PHONE, value, conversation, T0 + 1)
        if decision.allowed:
            assert value == ticket.grant
            assert caller.tier == "trusted" and caller.grant_id == ticket.grant_id
            assert caller.connector == PHONE.connector
        else:
            assert caller == PHONE
            assert decision.rule.startswith("grant-")

    try:
        check()
    finally:
        state.close()
