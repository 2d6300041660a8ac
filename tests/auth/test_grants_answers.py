"""Who may answer an elevation request, and what the hourly sweep does with requests and grants: over a real
state DB with an injected clock. Every refusal is asserted by its exact rule, every step by its audit row."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from notegate.auth.grants import KEEP_ENDED_GRANT_SECONDS, Grants, owners_in
from notegate.config import load_config
from notegate.policy import Caller, Policy, decide_elevation_denial
from notegate.state import StateDB
from support import assert_refused

T0 = 1_800_000_000.0
BASE = "https://notes.example"
OWNER_PHONE = Caller("owner", "Owner", "claude.ai", "hosted", "restricted", session="s1", connector="oauth:fam-o")
MEMBER_PHONE = Caller("member", "Member", "claude.ai", "hosted", "restricted", session="s2", connector="oauth:fam-m")
OWNERS = {None: "owner", "household": "owner"}


@pytest.fixture
def state(tmp_path: Path, state_url: str):
    db = StateDB(tmp_path / "state.sqlite", url=state_url)
    yield db
    db.close()


@pytest.fixture
def grants(state: StateDB) -> Grants:
    return Grants(state, Policy(), owner_of=OWNERS.get)


def _link_id(link: str) -> str:
    return link.rsplit("/", 1)[1]


def _ask(grants: Grants, caller: Caller, now: float = T0, conversation: str | None = None):
    return grants.request(caller, reason="edit the design note", conversation=conversation, base=BASE, now=now)


def _outcomes(state: StateDB) -> list[str]:
    return [r["outcome"] for r in state.query("SELECT outcome FROM audit WHERE tool = 'elevation' ORDER BY id")]


# ------------------------------------------------------------------ the decision itself (pure)
@pytest.mark.parametrize(
    ("asked_by", "person", "owner", "rule"),
    [
        ("owner", "owner", "owner", "elevation-denied"),  # the asker
        ("member", "member", "owner", "elevation-denied"),  # the asker, a member
        ("member", "owner", "owner", "elevation-denied"),  # the environment's owner, for a member's session
        ("owner", "member", "owner", "elevation-deny-wrong-person"),  # a member, for the owner's session
        ("member", "other", "owner", "elevation-deny-wrong-person"),  # another member
        ("member", "owner", None, "elevation-deny-wrong-person"),  # an environment nobody owns any more
    ],
)
def test_deny_decision_table(asked_by: str, person: str, owner: str | None, rule: str) -> None:
    assert decide_elevation_denial(asked_by=asked_by, person=person, environment_owner=owner).rule == rule


@given(asked_by=st.text(max_size=8), person=st.text(max_size=8), owner=st.none() | st.text(max_size=8))
def test_deny_is_allowed_exactly_for_the_asker_or_the_owner(asked_by: str, person: str, owner: str | None) -> None:
    decision = decide_elevation_denial(asked_by=asked_by, person=person, environment_owner=owner)
    assert decision.allowed == (person in (asked_by, owner))
    assert decision.rule == ("elevation-denied" if decision.allowed else "elevation-deny-wrong-person")


# ------------------------------------------------------------------ answering
def test_a_member_can_neither_approve_nor_deny_the_owners_request(grants: Grants, state: StateDB) -> None:
    ticket = _ask(grants, OWNER_PHONE)
    link = _link_id(ticket.link)
    assert_refused(
        "elevation-approver-not-owner",
        grants.approve,
        link,
        person="member",
        assertion_at=T0,
        user_verified=True,
        now=T0,
    )
    assert_refused("elevation-deny-wrong-person", grants.deny, link, person="member", now=T0 + 1)
    assert grants.pending(link, now=T0 + 2) is not None  # neither refusal consumed the request
    assert grants.tier_for(OWNER_PHONE, ticket.grant, None, T0 + 2)[1].rule == "grant-pending"
    grants.deny(link, person="owner", now=T0 + 3)
    assert grants.tier_for(OWNER_PHONE, ticket.grant, None, T0 + 4)[1].rule == "grant-unknown"
    assert _outcomes(state) == [
        "elevation-requested",
        "elevation-approval-refused:elevation-approver-not-owner by=member",
        "elevation-denial-refused:elevation-deny-wrong-person by=member",
        "elevation-denied by=owner",
    ]
    rows = state.query("SELECT login, path FROM audit WHERE tool = 'elevation'")
    assert all(r["login"] == "owner" and r["path"].endswith("connector:oauth:fam-o") for r in rows)


def test_only_the_environment_owner_approves_a_members_request(grants: Grants) -> None:
    """Issue 27: a member who approved their own connector's request could write the owner's rules/digest.md."""
    denied, approved = _ask(grants, MEMBER_PHONE), _ask(grants, MEMBER_PHONE, now=T0 + 1)
    assert_refused(
        "elevation-approver-not-owner",
        grants.approve,
        _link_id(approved.link),
        person="member",
        assertion_at=T0 + 1,
        user_verified=True,
        now=T0 + 2,
    )
    assert grants.tier_for(MEMBER_PHONE, approved.grant, None, T0 + 2)[1].rule == "grant-pending"
    grants.deny(_link_id(denied.link), person="member", now=T0 + 2)  # the asker may still withdraw
    grants.approve(_link_id(approved.link), person="owner", assertion_at=T0 + 2, user_verified=True, now=T0 + 3)
    granted, decision = grants.tier_for(MEMBER_PHONE, approved.grant, None, T0 + 4)
    assert granted.tier == "trusted" and decision.allowed


def test_the_environment_owner_may_deny_a_members_request(grants: Grants) -> None:
    ticket = _ask(grants, MEMBER_PHONE)
    link = _link_id(ticket.link)
    grants.deny(link, person="owner", now=T0 + 1)
    assert_refused("elevation-unknown", grants.deny, link, person="member", now=T0 + 2)


def test_without_an_owner_lookup_nobody_approves(state: StateDB) -> None:
    bare = Grants(state, Policy())
    ticket = _ask(bare, OWNER_PHONE)
    assert_refused(
        "elevation-approver-not-owner",
        bare.approve,
        _link_id(ticket.link),
        person="owner",
        assertion_at=T0,
        user_verified=True,
        now=T0 + 1,
    )


def test_without_an_owner_lookup_only_the_asker_may_deny(state: StateDB) -> None:
    bare = Grants(state, Policy())
    ticket = _ask(bare, MEMBER_PHONE)
    assert_refused("elevation-deny-wrong-person", bare.deny, _link_id(ticket.link), person="owner", now=T0 + 1)


def test_the_owner_lookup_reads_the_live_config(vault: Path) -> None:
    config = load_config(vault)
    owner_of = owners_in(lambda: config)
    assert owner_of(None) == config.environment(None).owner == "owner"
    assert owner_of("no-such-environment") is None


# ------------------------------------------------------------------ a pending grant keeps its bindings
def test_a_pending_grant_presented_by_another_connector_is_refused_as_after_approval(
    grants: Grants, state: StateDB
) -> None:
    ticket = _ask(grants, OWNER_PHONE)
    other = Caller("owner", "Owner", "claude.ai", "hosted", "restricted", session="s9", connector="oauth:fam-x")
    assert grants.tier_for(other, ticket.grant, None, T0 + 1)[1].rule == "grant-other-connector"
    assert grants.tier_for(OWNER_PHONE, ticket.grant, None, T0 + 1)[1].rule == "grant-pending"
    assert _outcomes(state)[-1] == "grant-refused:grant-other-connector"


def test_a_pending_grant_bound_to_a_conversation_says_so_before_approval(grants: Grants) -> None:
    ticket = _ask(grants, OWNER_PHONE, conversation="conv-hash-a")
    assert grants.tier_for(OWNER_PHONE, ticket.grant, "conv-hash-b", T0 + 1)[1].rule == "grant-other-conversation"
    assert grants.tier_for(OWNER_PHONE, ticket.grant, "conv-hash-a", T0 + 1)[1].rule == "grant-pending"


# ------------------------------------------------------------------ the sweep
def _counts(state: StateDB) -> tuple[int, int]:
    requests = state.query("SELECT COUNT(*) FROM elevation_requests")[0][0]
    grants = state.query("SELECT COUNT(*) FROM elevation_grants")[0][0]
    return requests, grants


def test_the_sweep_drops_answered_and_lapsed_requests_and_audits_the_lapse(grants: Grants, state: StateDB) -> None:
    approved, denied, lapsed, live = (_ask(grants, OWNER_PHONE, now=T0 + i) for i in range(4))
    grants.approve(_link_id(approved.link), person="owner", assertion_at=T0 + 5, user_verified=True, now=T0 + 6)
    grants.deny(_link_id(denied.link), person="owner", now=T0 + 7)
    swept = grants.sweep(now=T0 + 602.5)  # links live 600 s: the third lapsed unanswered, the fourth is live
    assert swept["requests"] == 3 and swept["links_expired"] == 1 and swept["grants"] == 0
    assert _counts(state) == (1, 1)
    assert grants.pending(_link_id(live.link), now=T0 + 602.5) is not None  # the live one stays answerable
    assert grants.tier_for(OWNER_PHONE, approved.grant, None, T0 + 601)[0].tier == "trusted"  # its grant stays
    assert grants.tier_for(OWNER_PHONE, lapsed.grant, None, T0 + 601)[1].rule == "grant-unknown"
    assert _outcomes(state).count("elevation-expired") == 1
    assert grants.sweep(now=T0 + 602.5)["links_expired"] == 0  # audited once


def test_an_expired_grant_stays_listed_and_refused_by_its_rule_then_goes(grants: Grants, state: StateDB) -> None:
    ticket = _ask(grants, OWNER_PHONE)
    grant = grants.approve(_link_id(ticket.link), person="owner", assertion_at=T0, user_verified=True, now=T0 + 1)
    before = grants.sweep(now=grant.expires_at - 1)
    assert before["grants_expired"] == 0 and [g.grant_id for g in grants.list()] == [ticket.grant_id]
    swept = grants.sweep(now=grant.expires_at)
    assert swept["grants_expired"] == 1 and swept["grants"] == 0
    assert [g.grant_id for g in grants.list()] == [ticket.grant_id]  # listed for the owner after expiry too
    assert grants.tier_for(OWNER_PHONE, ticket.grant, None, grant.expires_at + 10)[1].rule == "grant-expired"
    assert _outcomes(state).count("grant-expired") == 1  # the sweep audited it; presenting it adds none
    assert grants.sweep(now=grant.expires_at + KEEP_ENDED_GRANT_SECONDS)["grants"] == 0
    assert grants.sweep(now=grant.expires_at + KEEP_ENDED_GRANT_SECONDS + 1)["grants"] == 1
    assert grants.list() == []
    assert grants.tier_for(OWNER_PHONE, ticket.grant, None, grant.expires_at + 2 * 86400)[1].rule == "grant-unknown"
    expired = state.query("SELECT login, path FROM audit WHERE outcome = 'grant-expired'")
    assert [(r["login"], r["path"]) for r in expired] == [("owner", f"grant:{ticket.grant_id} connector:oauth:fam-o")]


def test_a_revoked_grant_goes_a_day_after_revocation_without_an_expiry_row(grants: Grants, state: StateDB) -> None:
    ticket = _ask(grants, OWNER_PHONE)
    grant = grants.approve(_link_id(ticket.link), person="owner", assertion_at=T0, user_verified=True, now=T0 + 1)
    grants.revoke(ticket.grant_id, person="owner", now=T0 + 10)
    assert grants.sweep(now=T0 + 10 + KEEP_ENDED_GRANT_SECONDS + 1)["grants"] == 1
    assert grants.sweep(now=grant.expires_at + 1)["grants_expired"] == 0
    assert "grant-expired" not in _outcomes(state)


def test_the_five_steps_each_leave_a_row_naming_person_and_connector(grants: Grants, state: StateDB) -> None:
    """request, approval, denial, use, expiry: each an audit row with the person and the connector login."""
    used = _ask(grants, MEMBER_PHONE)
    grant = grants.approve(_link_id(used.link), person="owner", assertion_at=T0, user_verified=True, now=T0 + 1)
    denied = _ask(grants, MEMBER_PHONE, now=T0 + 2)
    grants.deny(_link_id(denied.link), person="owner", now=T0 + 3)
    grants.tier_for(MEMBER_PHONE, used.grant, None, T0 + 4)
    grants.sweep(now=grant.expires_at)
    rows = state.query("SELECT outcome, login, client, path FROM audit WHERE tool = 'elevation' ORDER BY id")
    assert [r["outcome"] for r in rows] == [
        "elevation-requested",
        "elevation-approved by=owner",
        "elevation-requested",
        "elevation-denied by=owner",
        "grant-used",
        "grant-expired",
    ]
    assert {(r["login"], r["client"]) for r in rows} == {("member", "claude.ai")}
    assert all(r["path"].startswith("grant:g-") and r["path"].endswith(" connector:oauth:fam-m") for r in rows)


# ------------------------------------------------------------------ the grant value handed out early
def test_an_unapproved_grant_value_is_worth_nothing_to_anyone(grants: Grants, state: StateDB) -> None:
    """Why request_elevation may return the value at once: before approval it changes no caller, whoever
    presents it and however the request ends (docs/explanation/security-model.md, elevation)."""
    pending, denied, lapsed = (_ask(grants, OWNER_PHONE, now=T0 + i) for i in range(3))
    grants.deny(_link_id(denied.link), person="owner", now=T0 + 5)
    other = Caller("owner", "Owner", "claude.ai", "hosted", "restricted", session="s9", connector="oauth:fam-x")
    trusted = Caller("owner", "Owner", "laptop", "workstation", "trusted", connector="token:t1")
    seen = {}
    for name, ticket, now in (("pending", pending, T0 + 10), ("denied", denied, T0 + 10), ("lapsed", lapsed, T0 + 700)):
        for caller in (OWNER_PHONE, other, MEMBER_PHONE, trusted):
            got, decision = grants.tier_for(caller, ticket.grant, None, now)
            assert got == caller and not decision.allowed
            seen[name, caller.connector] = decision.rule
    assert seen["pending", "oauth:fam-o"] == "grant-pending"
    assert seen["pending", "oauth:fam-x"] == seen["pending", "oauth:fam-m"] == "grant-other-connector"
    assert {seen[k] for k in seen if k[0] != "pending"} == {"grant-unknown"}


def test_the_secret_gate_refuses_a_grant_value_in_a_note(grants: Grants) -> None:
    from notegate.safety.secrets import scan_credentials

    ticket = _ask(grants, OWNER_PHONE)
    text = f"Note to self: the grant is {ticket.grant} (keep it)."
    (finding,) = scan_credentials(text)
    assert finding.kind == "notegate-grant" and text[finding.start : finding.end] == ticket.grant
    assert ticket.grant not in repr(finding)


async def _sweep_once(vault: Path, tmp_path: Path) -> StateDB:
    """The server's hourly loop (doors/http.py) with a short interval, until it swept the grants once."""
    import anyio

    from notegate.auth.oauth import NotegateOAuthProvider
    from notegate.doors.http import oauth_sweep_loop

    state = StateDB(tmp_path / "loop.sqlite")
    config = load_config(vault)
    grants = Grants(state, config.policy, owner_of=owners_in(lambda: config))
    ticket = _ask(grants, OWNER_PHONE, now=T0)
    grants.approve(_link_id(ticket.link), person="owner", assertion_at=T0, user_verified=True, now=T0 + 1)
    _ask(grants, OWNER_PHONE, now=T0 + 2)  # lapses unanswered
    provider = NotegateOAuthProvider(
        state, config, issuer="http://x", resource="http://x/mcp", clock=lambda: T0 + 5 * 3600
    )
    with anyio.fail_after(20):
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(oauth_sweep_loop, provider, grants, 0.01)
            while "grant-expired" not in _outcomes(state):
                await anyio.sleep(0.01)  # polls for the loop's work; the clock is injected
            tasks.cancel_scope.cancel()
    return state


def test_the_servers_hourly_loop_runs_the_elevation_sweep(vault: Path, tmp_path: Path) -> None:
    import anyio

    state = anyio.run(_sweep_once, vault, tmp_path)
    try:
        assert _outcomes(state)[-2:] == ["grant-expired", "elevation-expired"]
        assert _counts(state) == (0, 1)  # both requests gone; the grant is listed for a day after expiry
    finally:
        state.close()
