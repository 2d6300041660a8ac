"""Elevation over a real state DB with an injected clock: request -> link + code, the pending cap, approval
with a fresh user-verified assertion, the grant's bindings (connector login, conversation, expiry,
revocation), the restart, the audit row of every step, and that a granted caller still cannot promote what
its own connector login wrote."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from notegate.auth.grants import CODE_ALPHABET, Grants, conversation_key
from notegate.policy import Author, Caller, Policy, decide_author, decide_review
from notegate.state import StateDB
from support import assert_refused
from support.pgcluster import stored_bytes

T0 = 1_800_000_000.0
BASE = "https://notes.example"
PHONE = Caller("owner", "Owner", "claude.ai", "hosted", "restricted", session="s1", connector="oauth:fam-a")
# Another OAuth login of the same client and person: another grant family, another connector login.
PHONE_AGAIN = Caller("owner", "Owner", "claude.ai", "hosted", "restricted", session="s1", connector="oauth:fam-b")


@pytest.fixture
def state(tmp_path: Path, state_url: str):
    db = StateDB(tmp_path / "state.sqlite", url=state_url)
    yield db
    db.close()


@pytest.fixture
def grants(state: StateDB) -> Grants:
    return Grants(state, Policy(), owner_of=lambda _environment: "owner")


def _link_id(link: str) -> str:
    return link.rsplit("/", 1)[1]


def _approved(grants: Grants, caller: Caller = PHONE, conversation: str | None = None, now: float = T0):
    ticket = grants.request(caller, reason="fix the design note", conversation=conversation, base=BASE, now=now)
    grants.approve(_link_id(ticket.link), person="owner", assertion_at=now + 5, user_verified=True, now=now + 10)
    return ticket


def _outcomes(state: StateDB) -> list[str]:
    return [r["outcome"] for r in state.query("SELECT outcome FROM audit WHERE tool = 'elevation' ORDER BY id")]


def test_a_request_gives_a_link_a_code_and_a_grant_stored_only_hashed(grants: Grants, state: StateDB, tmp_path):
    ticket = grants.request(PHONE, reason="edit rules", conversation=None, base=BASE + "/", now=T0)
    assert re.fullmatch(r"https://notes\.example/elevate/[A-Za-z0-9_-]{32}", ticket.link)  # 192 bits
    assert len(ticket.code) == 4 and set(ticket.code) <= set(CODE_ALPHABET)
    assert not set(CODE_ALPHABET) & set("0O1IL2Z5S8B")
    assert ticket.expires_at == T0 + 600
    raw = stored_bytes(state)
    assert _link_id(ticket.link).encode() not in raw and ticket.grant.encode() not in raw
    assert ticket.grant_id.encode() in raw


def test_the_page_sees_code_reason_connector_and_time_but_never_the_grant(grants: Grants):
    ticket = grants.request(PHONE, reason="  edit\n<b>rules</b> ", conversation=None, base=BASE, now=T0)
    pending = grants.pending(_link_id(ticket.link), now=T0 + 1)
    assert pending is not None
    assert (pending.code, pending.reason, pending.connector, pending.asked_at) == (
        ticket.code,
        "edit <b>rules</b>",
        "oauth:fam-a",
        T0,
    )
    assert ticket.grant not in repr(pending)
    assert grants.pending(_link_id(ticket.link), now=T0 + 600) is None  # the link lives 10 minutes
    assert grants.pending("x" * 32, now=T0) is None


def test_the_sixth_pending_request_is_refused(grants: Grants, state: StateDB):
    for i in range(5):
        grants.request(PHONE, reason=f"r{i}", conversation=None, base=BASE, now=T0 + i)
    assert_refused(
        "elevation-pending-cap", grants.request, PHONE, reason="r5", conversation=None, base=BASE, now=T0 + 5
    )
    grants.request(PHONE_AGAIN, reason="other login", conversation=None, base=BASE, now=T0 + 5)  # its own five
    grants.request(PHONE, reason="later", conversation=None, base=BASE, now=T0 + 601)  # the first ones expired
    assert _outcomes(state).count("elevation-refused:elevation-pending-cap") == 1


def test_a_reason_is_required_and_trusted_callers_need_no_grant(grants: Grants):
    assert_refused(
        "elevation-reason-invalid", grants.request, PHONE, reason=" \n", conversation=None, base=BASE, now=T0
    )
    assert_refused(
        "elevation-reason-invalid", grants.request, PHONE, reason="x" * 501, conversation=None, base=BASE, now=T0
    )
    trusted = Caller("owner", "Owner", "laptop", "workstation", "trusted", connector="token:t1")
    assert_refused("elevation-not-needed", grants.request, trusted, reason="x", conversation=None, base=BASE, now=T0)
    machine = Caller("owner", "cron", "cron", "machine", "machine", connector="token:m1")
    assert_refused("machine-no-mcp", grants.request, machine, reason="x", conversation=None, base=BASE, now=T0)


def test_approved_grant_makes_the_same_connector_trusted_and_survives_a_restart(
    grants: Grants, tmp_path, state_url: str
):
    ticket = grants.request(PHONE, reason="edit rules", conversation=None, base=BASE, now=T0)
    caller, decision = grants.tier_for(PHONE, ticket.grant, None, T0 + 1)
    assert (caller, decision.rule) == (PHONE, "grant-pending")
    grant = grants.approve(_link_id(ticket.link), person="owner", assertion_at=T0 + 2, user_verified=True, now=T0 + 3)
    assert grant.expires_at == T0 + 3 + 4 * 3600
    caller, decision = grants.tier_for(PHONE, ticket.grant, None, T0 + 4)
    assert decision.allowed and caller.tier == "trusted" and caller.grant_id == ticket.grant_id
    assert caller.connector == PHONE.connector and caller.login == PHONE.login
    grants.state.close()
    reopened = Grants(
        StateDB(tmp_path / "state.sqlite", url=state_url), Policy(), owner_of=lambda _environment: "owner"
    )
    caller, decision = reopened.tier_for(PHONE, ticket.grant, None, T0 + 3600)
    assert decision.allowed and caller.tier == "trusted"
    reopened.state.close()


def test_a_grant_from_another_connector_login_is_refused(grants: Grants):
    ticket = _approved(grants)
    caller, decision = grants.tier_for(PHONE_AGAIN, ticket.grant, None, T0 + 20)
    assert (caller, decision.rule) == (PHONE_AGAIN, "grant-other-connector")
    workstation = Caller("owner", "Owner", "laptop", "workstation", "restricted", connector="token:t1")
    assert grants.tier_for(workstation, ticket.grant, None, T0 + 20)[1].rule == "grant-other-connector"


def test_a_grant_bound_to_a_conversation_counts_only_there(grants: Grants):
    ticket = _approved(grants, conversation=conversation_key("v1/conv-a"))
    assert grants.tier_for(PHONE, ticket.grant, conversation_key("v1/conv-a"), T0 + 20)[1].allowed
    assert grants.tier_for(PHONE, ticket.grant, conversation_key("v1/conv-b"), T0 + 20)[1].rule == (
        "grant-other-conversation"
    )
    assert grants.tier_for(PHONE, ticket.grant, None, T0 + 20)[1].rule == "grant-other-conversation"


def test_an_expired_grant_is_refused_and_its_expiry_audited_once(grants: Grants, state: StateDB):
    ticket = _approved(grants)
    end = T0 + 10 + 4 * 3600
    assert grants.tier_for(PHONE, ticket.grant, None, end - 1)[1].allowed
    for _ in range(3):
        caller, decision = grants.tier_for(PHONE, ticket.grant, None, end)
        assert (caller, decision.rule) == (PHONE, "grant-expired")
    assert _outcomes(state).count("grant-expired") == 1


def test_a_revoked_grant_is_refused(grants: Grants, state: StateDB):
    ticket = _approved(grants)
    assert grants.revoke(ticket.grant_id, person="owner", now=T0 + 30)
    assert not grants.revoke(ticket.grant_id, person="owner", now=T0 + 31)
    assert grants.tier_for(PHONE, ticket.grant, None, T0 + 40)[1].rule == "grant-revoked"
    assert [g.revoked_at for g in grants.list()] == [T0 + 30]


def test_approval_needs_a_fresh_user_verified_assertion_of_the_same_person(grants: Grants):
    ticket = grants.request(PHONE, reason="edit rules", conversation=None, base=BASE, now=T0)
    link = _link_id(ticket.link)
    now = T0 + 60
    assert_refused(
        "elevation-assertion-stale",
        grants.approve,
        link,
        person="owner",
        assertion_at=now - 301,
        user_verified=True,
        now=now,
    )
    assert_refused(
        "elevation-assertion-stale",
        grants.approve,
        link,
        person="owner",
        assertion_at=now + 5,
        user_verified=True,
        now=now,
    )
    assert_refused(
        "elevation-assertion-unverified",
        grants.approve,
        link,
        person="owner",
        assertion_at=now,
        user_verified=False,
        now=now,
    )
    assert_refused(
        "elevation-assertion-unverified",
        grants.approve,
        link,
        person="owner",
        assertion_at=None,
        user_verified=True,
        now=now,
    )
    assert_refused(
        "elevation-approver-not-owner",
        grants.approve,
        link,
        person="member",
        assertion_at=now,
        user_verified=True,
        now=now,
    )
    assert grants.pending(link, now=now) is not None  # refused approvals do not consume the request
    grants.approve(link, person="owner", assertion_at=now - 300, user_verified=True, now=now)  # 5 min exactly
    assert_refused(
        "elevation-unknown", grants.approve, link, person="owner", assertion_at=now, user_verified=True, now=now
    )
    assert_refused("elevation-unknown", grants.deny, link, person="owner", now=now)


def test_a_denied_request_never_becomes_a_grant(grants: Grants):
    ticket = grants.request(PHONE, reason="edit rules", conversation=None, base=BASE, now=T0)
    grants.deny(_link_id(ticket.link), person="owner", now=T0 + 5)
    assert grants.tier_for(PHONE, ticket.grant, None, T0 + 6)[1].rule == "grant-unknown"
    assert_refused(
        "elevation-unknown",
        grants.approve,
        _link_id(ticket.link),
        person="owner",
        assertion_at=T0 + 6,
        user_verified=True,
        now=T0 + 6,
    )


def test_an_expired_link_cannot_be_approved(grants: Grants):
    ticket = grants.request(PHONE, reason="edit rules", conversation=None, base=BASE, now=T0)
    now = T0 + 600
    assert_refused(
        "elevation-unknown",
        grants.approve,
        _link_id(ticket.link),
        person="owner",
        assertion_at=now,
        user_verified=True,
        now=now,
    )
    assert grants.tier_for(PHONE, ticket.grant, None, now)[1].rule == "grant-unknown"


def test_every_step_is_an_audit_row_naming_person_and_connector(grants: Grants, state: StateDB):
    ticket = _approved(grants)
    grants.tier_for(PHONE, ticket.grant, None, T0 + 20)
    grants.tier_for(PHONE, ticket.grant, None, T0 + 21)  # the same session's second use: no second row
    grants.tier_for(PHONE_AGAIN, ticket.grant, None, T0 + 22)
    denied = grants.request(PHONE, reason="another", conversation=None, base=BASE, now=T0 + 23)
    grants.deny(_link_id(denied.link), person="owner", now=T0 + 24)
    grants.tier_for(PHONE, ticket.grant, None, T0 + 10 + 4 * 3600)
    grants.revoke(ticket.grant_id, person="owner", now=T0 + 5 * 3600)
    rows = state.query("SELECT * FROM audit WHERE tool = 'elevation' ORDER BY id")
    assert [r["outcome"] for r in rows] == [
        "elevation-requested",
        "elevation-approved by=owner",
        "grant-used",
        "grant-refused:grant-other-connector",
        "elevation-requested",
        "elevation-denied by=owner",
        "grant-expired",
        "grant-revoked by=owner",
    ]
    assert all(r["login"] == "owner" and r["client"] == "claude.ai" for r in rows)
    assert all("connector:oauth:fam-" in r["path"] and "grant:g-" in r["path"] for r in rows)
    assert all(ticket.grant not in " ".join(map(str, tuple(r))) for r in rows)


def test_a_granted_caller_reviews_but_never_promotes_what_its_connector_wrote(grants: Grants):
    ticket = _approved(grants)
    granted, _ = grants.tier_for(PHONE, ticket.grant, None, T0 + 20)
    policy = Policy()
    assert decide_review(policy, granted).allowed
    assert decide_author(granted, [Author.of(PHONE)]).rule == "author-cannot-promote"
    assert decide_author(granted, [Author.of(PHONE_AGAIN)]).allowed


def test_the_state_db_keeps_no_secret_columns_in_clear(state: StateDB):
    columns = {table: set(state.columns(table)) for table in ("elevation_requests", "elevation_grants")}
    assert "link_hash" in columns["elevation_requests"] and "grant_hash" in columns["elevation_grants"]
    assert not any(c in ("link", "grant", "grant_value", "link_id") for cs in columns.values() for c in cs)


def test_two_answers_racing_cannot_both_win(grants: Grants, state: StateDB, tmp_path: Path, state_url: str):
    ticket = grants.request(PHONE, reason="edit rules", conversation=None, base=BASE, now=T0)
    other = Grants(StateDB(tmp_path / "state.sqlite", url=state_url), Policy(), owner_of=lambda _environment: "owner")
    other.deny(_link_id(ticket.link), person="owner", now=T0 + 1)
    assert_refused(
        "elevation-unknown",
        grants.approve,
        _link_id(ticket.link),
        person="owner",
        assertion_at=T0 + 1,
        user_verified=True,
        now=T0 + 1,
    )
    other.state.close()
    assert tuple(state.query("SELECT COUNT(*) FROM elevation_grants")[0]) == (0,)
