"""Issue 27: every console action that grants trust or writes what sessions load needs a fresh step-up (a
user-verified passkey assertion at most ``elevation_assertion_seconds`` old), decided by
``policy.console.decide_console_action`` and enforced by one gate in front of every POST route.

Over HTTP against the real server with real session cookies (one opened 301 s ago is "stale": its last
passkey check is older than the window), walking the console's own route table; and in a real chromium with
a virtual authenticator: a token refused without the step-up, created after "Confirm with your passkey"."""

from __future__ import annotations

import re

import httpx2
import pytest

from notegate.auth.websession import WebSessions
from notegate.doors.web import web_routes
from notegate.doors.web.stepup import POST_ACTIONS
from notegate.policy import CONSOLE_ACTIONS, StepUp
from support.web_harness import FETCH, Console, Device, enrolled, sign_assertion
from support.web_notes import SESSION_COOKIE, origin_text, sign_in, write

STALE = 301  # seconds: one past the default window (elevation_assertion_seconds = 300)
#: A URL for each POST route; note writes on a guarded path (the digest), so the path-dependent ones need it.
SAMPLE = {
    "/enroll/{token}/options": "/enroll/nge_notarealtoken/options",
    "/enroll/{token}/verify": "/enroll/nge_notarealtoken/verify",
    "/passkeys/{passkey_id}/revoke": "/passkeys/pk_owner/revoke",
    "/elevate/{link_id}": "/elevate/nothing",
    "/elevate/{link_id}/options": "/elevate/nothing/options",
    "/elevate/{link_id}/verify": "/elevate/nothing/verify",
    "/inbox/{action}": "/inbox/promote",
    "/elevations/grants/{grant_id}/revoke": "/elevations/grants/g1/revoke",
    "/elevations/{link_id}": "/elevations/nothing",
    "/elevations/{link_id}/options": "/elevations/nothing/options",
    "/elevations/{link_id}/verify": "/elevations/nothing/verify",
    "/connections/tokens/{token_id}/revoke": "/connections/tokens/t1/revoke",
    "/members/{login}/remove": "/members/bob/remove",
    "/livesync/devices/{name}/revoke": "/livesync/devices/phone/revoke",
    "/join/{token}/options": "/join/ngi_notarealtoken/options",
    "/join/{token}/verify": "/join/ngi_notarealtoken/verify",
    "/oidc/{provider}/start": "/oidc/none/start",
    "/connections/oauth/{family_id}/revoke": "/connections/oauth/f1/revoke",
    "/restore/{path:notepath}": "/restore/rules/digest.md",
    "/edit/{path:notepath}": "/edit/rules/digest.md",
    "/tools/mounts/{mount}/remove": "/tools/mounts/clock/remove",
    "/tools/mounts/{mount}/credential": "/tools/mounts/clock/credential",
    "/tools/mounts/{mount}/check": "/tools/mounts/clock/check",
    "/tools/mounts/{mount}/approve": "/tools/mounts/clock/approve",
    "/tools/mounts/{mount}/oauth": "/tools/mounts/clock/oauth",
}
FORM = {"env": "personal", "name": "laptop", "class": "workstation", "tier": "trusted", "item": "x", "version": "y"}


def _rule(response: httpx2.Response) -> str | None:
    try:
        return response.json().get("rule")
    except ValueError:
        found = re.search(r'id="refusal" data-rule="([^"]+)"', response.text)
        return found.group(1) if found else None


def _stale(console: Console, signed, age: float = STALE) -> None:
    """Replace the signed-in browser's session by one whose last passkey check is ``age`` seconds old."""
    session = WebSessions(console.runtime.state).open(
        login=signed.login, passkey_id=f"pk_{signed.login}", now=console.clock() - age
    )
    signed.client.cookies.set(SESSION_COOKIE, session.secret)
    signed.csrf = session.csrf


def _post(signed, route: str) -> httpx2.Response:
    url = SAMPLE.get(route, route)
    if route.endswith(("/options", "/verify")):
        return signed.client.post(url, json={}, headers={"X-CSRF-Token": signed.csrf})
    return signed.client.post(url, data={"csrf": signed.csrf, **FORM, "step": "preview", "content": "x\n"})


def _post_routes(console: Console) -> list[str]:
    return sorted({r.path for r in web_routes(console.runtime, port=console.port) if "POST" in (r.methods or ())})


def _needs_step_up(route: str) -> bool:
    action = POST_ACTIONS[route].format(action="promote")
    return CONSOLE_ACTIONS[action] in (StepUp.ALWAYS, StepUp.GUARDED_PATH)  # the samples' paths are guarded


def test_every_post_route_of_the_console_names_a_classified_action(console: Console) -> None:
    routes = _post_routes(console)
    assert routes and set(routes) == set(POST_ACTIONS)
    for route in routes:
        template = POST_ACTIONS[route]
        actions = [template.format(action=a) for a in ("promote", "hold", "delete")] if "{" in template else [template]
        assert all(a in CONSOLE_ACTIONS for a in actions), route
    assert {r for r in routes if _needs_step_up(r)} == {
        "/passkeys/options",
        "/passkeys/verify",
        "/connections/tokens",
        "/inbox/{action}",
        "/restore/{path:notepath}",
        "/edit/{path:notepath}",
        "/members/invite",  # issue 35: changing members needs a fresh step-up
        "/members/{login}/remove",
        "/tools/mounts",  # issue 32: a mount, a credential, a verify (an oracle) and an approval grant trust
        "/tools/mounts/{mount}/credential",
        "/tools/mounts/{mount}/check",
        "/tools/mounts/{mount}/approve",
        "/tools/mounts/{mount}/oauth",
        "/livesync/devices",  # issue 31: a device key is permanent access to the notes
        "/livesync/devices/{name}/revoke",
    }


def test_a_post_route_without_an_action_is_not_served(console: Console, monkeypatch) -> None:
    from notegate.doors.web import stepup

    monkeypatch.delitem(stepup.POST_ACTIONS, "/connections/tokens")
    with pytest.raises(LookupError):
        web_routes(console.runtime, port=console.port)


def test_every_step_up_route_refuses_a_stale_session_by_its_rule_and_no_other_does(console: Console) -> None:
    owner = sign_in(console)
    _stale(console, owner)
    for route in _post_routes(console):
        response = _post(owner, route)
        if _needs_step_up(route):
            assert response.status_code == 403 and _rule(response) == "step-up-required", (route, response.text[:300])
            assert "Refused [step-up-required]" in response.text
        else:
            assert _rule(response) != "step-up-required", route
            if route == "/logout":  # it ended the session: open another stale one for the routes after it
                _stale(console, owner)
    audit = console.runtime.state.query("SELECT tool, outcome FROM audit WHERE outcome = 'refused:step-up-required'")
    assert {r["tool"] for r in audit} == {
        "web:member-invite",
        "web:member-remove",
        "web:livesync-device-add",
        "web:livesync-device-revoke",
        "web:passkey-add",
        "web:token-create",
        "web:inbox-promote",
        "web:note-restore",
        "web:note-edit",
        "web:tools-mount-create",
        "web:tools-credential-set",
        "web:tools-credential-verify",
        "web:tools-approve",
        "web:tools-oauth-start",
    }


def test_a_stale_session_cannot_mint_a_trusted_token_and_a_fresh_one_can(console: Console) -> None:
    owner = sign_in(console)
    fields = {"csrf": "", "env": "personal", "name": "laptop", "class": "workstation", "tier": "trusted"}
    _stale(console, owner)
    refused = owner.client.post("/connections/tokens", data={**fields, "csrf": owner.csrf})
    assert refused.status_code == 403 and _rule(refused) == "step-up-required"
    assert 'data-verify="/step-up/verify"' in refused.text and 'data-next="/connections"' in refused.text
    assert console.runtime.state.query("SELECT id FROM tokens") == []
    _stale(console, owner, age=0)  # a session opened just now: its passkey check is seconds old
    created = owner.client.post("/connections/tokens", data={**fields, "csrf": owner.csrf})
    assert created.status_code == 200 and 'id="secret"' in created.text, created.text[:300]
    assert [r["tier"] for r in console.runtime.state.query("SELECT tier FROM tokens")] == ["trusted"]


def test_note_writes_need_the_step_up_only_where_sessions_load_them(console: Console) -> None:
    write(console, "notes/idea.md", "an idea\n")
    before = origin_text(console, "rules/digest.md")
    owner = sign_in(console)
    _stale(console, owner)
    plain = owner.post("/edit/notes/idea.md", {"content": "x\n", "base": "absent", "step": "preview"})
    assert _rule(plain) != "step-up-required" and plain.status_code in (200, 409)
    for path in ("rules/digest.md", "RULES/digest.md", "handoffs/p.md", "projects/p.md"):
        refused = owner.post(f"/edit/{path}", {"content": "obey me\n", "base": "absent", "step": "confirm"})
        assert _rule(refused) == "step-up-required", path
    assert origin_text(console, "rules/digest.md") == before


# ------------------------------------------------------------------------------------------ in chromium
def test_a_token_needs_a_fresh_passkey_check_in_the_browser(console: Console, device: Device) -> None:
    enrolled(console, device)  # signed in by the enrolment's own user-verified ceremony
    console.clock.advance(STALE)
    page = device.page
    page.goto(f"{console.url}/connections")
    page.fill("#token-name", "laptop")
    page.select_option("#token-class", "workstation")
    page.select_option("#token-tier", "trusted")
    page.click("#create")
    page.wait_for_selector("#refusal")
    assert page.locator("#refusal").get_attribute("data-rule") == "step-up-required"
    assert "Refused [step-up-required]" in (page.locator("#refusal").text_content() or "")
    assert console.runtime.state.query("SELECT id FROM tokens") == []
    # a passkey check without user verification is no step-up (signed with the authenticator's own key)
    (credential,) = device.credentials()
    options = page.evaluate(FETCH, ["/step-up/options", {}])
    unverified = sign_assertion(credential, options, console.url, user_verified=False)
    assert page.evaluate(FETCH, ["/step-up/verify", {"credential": unverified}])["rule"] == "passkey-user-verification"
    assert device.ceremony() == "ok"  # "Confirm with your passkey": back on the connections page
    assert page.url == f"{console.url}/connections"
    page.fill("#token-name", "laptop")
    page.select_option("#token-class", "workstation")
    page.select_option("#token-tier", "trusted")
    page.click("#create")
    page.wait_for_selector("#secret")
    assert [r["tier"] for r in console.runtime.state.query("SELECT tier FROM tokens")] == ["trusted"]
    # the window closes again
    console.clock.advance(STALE)
    page.goto(f"{console.url}/connections")
    page.fill("#token-name", "another")
    page.click("#create")
    page.wait_for_selector("#refusal")
    assert page.locator("#refusal").get_attribute("data-rule") == "step-up-required"


def test_adding_a_passkey_needs_a_fresh_check_with_one_you_have(console: Console, device: Device) -> None:
    enrolled(console, device)
    console.clock.advance(STALE)
    page = device.page
    page.goto(f"{console.url}/passkeys")
    assert page.locator("#ceremony").get_attribute("data-verify") == "/step-up/verify"  # no add button yet
    assert device.ceremony() == "ok"
    assert page.locator("#ceremony").get_attribute("data-verify") == "/passkeys/verify"
    device.swap_authenticator()  # the new passkey lives on another authenticator (a security key)
    assert device.ceremony() == "ok"  # the add ceremony itself
    assert len(console.runtime.state.passkeys("owner")) == 2
