"""The elevation approval page in a real chromium over the real Grants backend: the code on both sides, a
fresh user-verified passkey assertion to approve, stale and non-UV assertions refused by the backend's own
rule (and the page offers a fresh one), deny always offered. Every refusal is asserted by its exact rule."""

from __future__ import annotations

from urllib.parse import urlsplit

from notegate.auth.grants import Grants, Ticket
from notegate.policy import Caller
from web.conftest import enrolled
from web.harness import FETCH, Console, Device, sign_assertion

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
    assert device.page.locator("#approve").count() == 0  # no approve button before a fresh passkey check
    assert device.ceremony() == "ok"
    assert device.page.url == ticket.link
    device.page.click("#approve")
    device.page.wait_for_selector("#outcome")
    assert device.page.locator("#outcome").get_attribute("data-decision") == "approve"
    assert device.page.locator("#code").text_content() == ticket.code
    caller, decision = grants.tier_for(PHONE, ticket.grant, None, console.clock())
    assert decision.allowed and caller.tier == "trusted"
    # the link is single use
    device.page.goto(ticket.link)
    assert _rule(device) == "elevation-unknown"


def test_a_stale_assertion_is_refused_and_a_fresh_one_approves(console: Console, device: Device) -> None:
    enrolled(console, device)
    grants, ticket = _ask(console)
    device.page.goto(ticket.link)
    assert device.ceremony() == "ok"
    console.clock.advance(5 * 60 + 1)
    device.page.click("#approve")
    device.page.wait_for_selector("#refusal")
    assert _rule(device) == "elevation-assertion-stale"
    assert grants.tier_for(PHONE, ticket.grant, None, console.clock())[1].rule == "grant-pending"
    # the page asks for a fresh assertion (the stale one is spent), and that one approves
    assert device.page.locator("#approve").count() == 0
    assert device.ceremony() == "ok"
    device.page.click("#approve")
    device.page.wait_for_selector("#outcome")
    assert grants.tier_for(PHONE, ticket.grant, None, console.clock())[0].tier == "trusted"


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
