"""The elevation approval page in a real chromium over the real Grants backend: the code on both sides, a
fresh user-verified passkey assertion to approve, stale and non-UV assertions refused by the backend's own
rule (and the page offers a fresh one), deny always offered. Every refusal is asserted by its exact rule."""

from __future__ import annotations

import subprocess
from pathlib import Path
from urllib.parse import urlsplit

from notegate.auth.grants import Grants, Ticket
from notegate.config import load_config
from notegate.policy import Caller
from support import assert_refused, mint, text_of
from support.web_flows import sdk_client, write_with_grant
from support.web_harness import FETCH, Console, Device, enrolled, serve_console, sign_assertion

PHONE = Caller("owner", "Owner", "claude.ai", "hosted", "restricted", session="s1", connector="oauth:fam-a")


def _ask(console: Console, reason: str = "edit the <b>rules</b> note") -> tuple[Grants, Ticket]:
    """A request as the request_elevation tool makes it, through the same database the server uses."""
    grants = Grants(console.runtime.state, console.runtime.policy)
    ticket = grants.request(PHONE, reason=reason, conversation=None, base=console.url, now=console.clock())
    return grants, ticket


def _rule(device: Device) -> str | None:
    return device.page.locator("#refusal").get_attribute("data-rule")


def test_not_logged_in_logs_in_first_and_the_page_shows_the_code(console: Console, devices) -> None:
    credentials = enrolled(console, devices()).credentials()
    _, ticket = _ask(console)
    phone = devices(credentials=credentials)
    phone.page.goto(ticket.link)
    path = urlsplit(ticket.link).path
    assert phone.page.url == f"{console.url}/login?next={path.replace('/', '%2F')}"
    assert phone.ceremony() == "ok"
    assert phone.page.url == ticket.link
    page = phone.page
    assert page.locator("#code").text_content() == ticket.code
    assert page.locator("#reason").text_content() == "edit the <b>rules</b> note"  # escaped, not markup
    assert page.locator("#connector").text_content() == "oauth:fam-a"
    assert page.locator("#client").text_content() == "claude.ai"
    assert page.locator("#asked-at").text_content().endswith("UTC")
    assert page.locator("#deny").count() == 1


def test_approve_with_a_fresh_uv_assertion_makes_the_grant_trusted(console: Console, device: Device) -> None:
    enrolled(console, device)
    grants, ticket = _ask(console)
    assert grants.tier_for(PHONE, ticket.grant, None, console.clock())[1].rule == "grant-pending"
    device.page.goto(ticket.link)
    assert device.page.locator("#approve").count() == 0  # no bare approve button: only "Approve with passkey"
    assert device.page.locator("#go").text_content() == "Approve with passkey"
    assert device.ceremony() == "ok"  # one action: the fresh, user-verified check is the approval
    assert device.page.url == ticket.link
    device.page.wait_for_selector("#outcome")
    assert device.page.locator("#outcome").get_attribute("data-decision") == "approve"
    assert device.page.locator("#code").text_content() == ticket.code
    caller, decision = grants.tier_for(PHONE, ticket.grant, None, console.clock())
    assert decision.allowed and caller.tier == "trusted"
    # the link is single use
    device.page.goto(ticket.link)
    assert _rule(device) == "elevation-unknown"


def test_approval_is_one_action_and_a_bare_approve_post_is_refused(console: Console, device: Device) -> None:
    """Issue 30: "Approve with passkey" performs the check and the approval together, so an approval can no
    longer sit on a check that went stale; a form post claiming "approve" with no check is refused."""
    enrolled(console, device)
    grants, ticket = _ask(console)
    device.page.goto(ticket.link)
    device.page.evaluate(
        """() => { const f = document.getElementById('deny-form');
                   const d = document.createElement('input'); d.type = 'hidden'; d.name = 'decision';
                   d.value = 'approve'; f.appendChild(d); f.querySelector('button').remove(); f.submit(); }"""
    )
    device.page.wait_for_selector("#refusal")
    assert _rule(device) == "elevation-assertion-unverified"
    assert grants.tier_for(PHONE, ticket.grant, None, console.clock())[1].rule == "grant-pending"
    assert device.ceremony() == "ok"  # the passkey check is the approval
    device.page.wait_for_selector("#outcome")
    assert grants.tier_for(PHONE, ticket.grant, None, console.clock())[0].tier == "trusted"
    deny = device.page.evaluate("() => document.querySelector('section.deny-apart #deny') !== null")
    assert deny is False  # the outcome page: no more buttons


def test_an_assertion_without_user_verification_is_refused(console: Console, device: Device) -> None:
    enrolled(console, device)
    grants, ticket = _ask(console)
    path = urlsplit(ticket.link).path
    device.page.goto(ticket.link)
    (credential,) = device.credentials()
    options = device.page.evaluate(FETCH, [f"{path}/options", {}])
    assertion = sign_assertion(credential, options, console.url, user_verified=False)
    refused = device.page.evaluate(FETCH, [f"{path}/verify", {"credential": assertion}])
    assert refused["rule"] == "elevation-assertion-unverified"
    assert grants.tier_for(PHONE, ticket.grant, None, console.clock())[1].rule == "grant-pending"
    # the same flow with UV set is accepted: the flag alone was refused
    options = device.page.evaluate(FETCH, [f"{path}/options", {}])
    assertion = sign_assertion(credential, options, console.url, user_verified=True)
    assert device.page.evaluate(FETCH, [f"{path}/verify", {"credential": assertion}]) == {"redirect": path}


def test_deny_refuses_the_grant(console: Console, device: Device) -> None:
    enrolled(console, device)
    grants, ticket = _ask(console)
    device.page.goto(ticket.link)
    device.page.click("#deny")
    device.page.wait_for_selector("#outcome")
    assert device.page.locator("#outcome").get_attribute("data-decision") == "deny"
    assert grants.tier_for(PHONE, ticket.grant, None, console.clock())[1].rule == "grant-unknown"


def test_an_unknown_link_is_refused(console: Console, device: Device) -> None:
    enrolled(console, device)
    device.page.goto(f"{console.url}/elevate/{'x' * 32}")
    assert _rule(device) == "elevation-unknown"


def _member_config(vault: Path) -> None:
    vault.write_text(vault.read_text().replace("members = []", 'members = ["member"]', 1))


def test_a_member_can_neither_approve_nor_deny_the_owners_request(vault: Path, browser, devices) -> None:
    _member_config(vault)
    with serve_console(vault) as console:
        enrolled(console, devices())  # the owner has a passkey too (their phone)
        member = enrolled(console, devices(), "member")
        grants, ticket = _ask(console)  # the owner's phone connector asks
        member.page.goto(ticket.link)
        assert member.page.locator("#code").text_content() == ticket.code
        # a valid, fresh, user-verified assertion: of the wrong person, so nothing is approved
        assert member.ceremony() == "elevation-approver-not-owner"
        assert "Refused [elevation-approver-not-owner]" in (member.page.locator("#status").text_content() or "")
        member.page.click("#deny")
        member.page.wait_for_selector("#refusal")
        assert _rule(member) == "elevation-deny-wrong-person"
        assert "Refused [elevation-deny-wrong-person]" in (member.page.locator("#refusal").text_content() or "")
        assert member.page.locator("#outcome").count() == 0
        # neither answer consumed the request: the owner's session is still waiting for the owner
        assert grants.tier_for(PHONE, ticket.grant, None, console.clock())[1].rule == "grant-pending"
        assert grants.pending(urlsplit(ticket.link).path.rsplit("/", 1)[1], now=console.clock()) is not None
        outcomes = [
            r["outcome"]
            for r in console.runtime.state.query("SELECT outcome FROM audit WHERE tool = 'elevation' ORDER BY id")
        ]
        assert outcomes[-2:] == [
            "elevation-approval-refused:elevation-approver-not-owner by=member",
            "elevation-denial-refused:elevation-deny-wrong-person by=member",
        ]


def test_from_the_real_tool_to_a_trusted_write(vault: Path, browser, device: Device) -> None:
    """request_elevation over MCP -> the owner sees the same code in chromium and approves with a passkey ->
    the session's next call with grant writes outside the inbox; another connector login with it gets nothing."""
    phone, laptop = mint(vault, name="phone", tier="restricted"), mint(vault, name="laptop", tier="restricted")
    with serve_console(vault) as console:
        enrolled(console, device)
        with sdk_client(console.url, phone) as call:
            asked = call("request_elevation", {"reason": "fix the <i>design</i> note"})
            assert not asked.is_error, text_of(asked)
            ticket = asked.structured_content
            assert ticket["link"].startswith(f"{console.url}/elevate/")
            assert_refused("grant-pending", write_with_grant(call, "projects/elevated.md", ticket["grant"]))

            device.page.goto(ticket["link"])
            assert device.page.locator("#code").text_content() == ticket["code"]
            assert device.page.locator("#reason").text_content() == "fix the <i>design</i> note"
            assert device.ceremony() == "ok"  # the passkey check is the approval
            device.page.wait_for_selector("#outcome")
            assert device.page.locator("#outcome").get_attribute("data-decision") == "approve"

            done = write_with_grant(call, "projects/elevated.md", ticket["grant"])
            assert not done.is_error, text_of(done)
            assert done.structured_content["status"] == "committed", done.structured_content
            assert_refused(
                "restricted-outside-inbox", write_with_grant(call, "projects/without.md")
            )  # no grant, no trust
        origin = load_config(vault).environment(None).origin_url
        message = subprocess.run(
            ["git", "-C", str(origin), "log", "-1", "--format=%B"], capture_output=True, text=True, check=True
        ).stdout
        assert f"Notegate-Grant: {ticket['grant_id']}" in message and "Notegate-Tier: trusted" in message
        assert ticket["grant"] not in message
        with sdk_client(console.url, laptop) as call:
            assert_refused("grant-other-connector", write_with_grant(call, "projects/stolen.md", ticket["grant"]))


def test_a_member_cannot_elevate_their_own_connector_in_the_owners_environment(vault: Path, browser, devices) -> None:
    """Issue 27: a member's restricted connector asked, the member approved with their own passkey, and the
    grant wrote rules/digest.md, which the owner's next session was served. Now the member's approval is
    refused [elevation-approver-not-owner] and the grant counts for nothing; the owner's approval works."""
    _member_config(vault)
    kid_phone = mint(vault, name="kid-phone", tier="restricted", login="member")
    with serve_console(vault) as console:
        owner = enrolled(console, devices())
        member = enrolled(console, devices(), "member")
        with sdk_client(console.url, kid_phone) as call:
            asked = call("request_elevation", {"reason": "update the house rules"})
            assert not asked.is_error, text_of(asked)
            ticket = asked.structured_content

            member.page.goto(ticket["link"])
            # a valid, fresh, user-verified assertion: of the wrong person, so nothing is approved
            assert member.ceremony() == "elevation-approver-not-owner"
            assert member.page.locator("#outcome").count() == 0
            assert_refused("grant-pending", write_with_grant(call, "rules/digest.md", ticket["grant"]))

            owner.page.goto(ticket["link"])
            assert owner.page.locator("#code").text_content() == ticket["code"]
            assert owner.ceremony() == "ok"  # the passkey check is the approval
            owner.page.wait_for_selector("#outcome")
            assert owner.page.locator("#outcome").get_attribute("data-decision") == "approve"
            done = write_with_grant(call, "projects/approved.md", ticket["grant"])
            assert not done.is_error and done.structured_content["status"] == "committed", text_of(done)
        outcomes = [
            r["outcome"]
            for r in console.runtime.state.query("SELECT outcome FROM audit WHERE tool = 'elevation' ORDER BY id")
        ]
        assert "elevation-approval-refused:elevation-approver-not-owner by=member" in outcomes
        assert "elevation-approved by=owner" in outcomes
