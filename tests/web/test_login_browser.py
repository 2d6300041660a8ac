"""Passkey-only login in a real chromium: enrol through the printed link, log in and out, more passkeys,
revocation, user verification, session expiry. Every refusal is asserted by its exact rule."""

from __future__ import annotations

import json
import re

from support.web_harness import FETCH, Console, Device, cli, enrolled, sign_assertion


def _who(device: Device) -> str | None:
    who = device.page.locator("#who")
    return who.text_content() if who.count() else None


def test_the_printed_link_enrols_a_first_passkey_once(console: Console, devices) -> None:
    link = console.enrol_link()
    assert re.fullmatch(rf"{console.url}/enroll/nge_[A-Za-z0-9_-]{{43}}", link)
    first = devices()
    assert first.enrol(link) == "ok"
    assert first.page.url == f"{console.url}/passkeys"
    assert _who(first) == "owner"
    # the same link again, from another browser: refused, and it enrols nothing
    second = devices()
    assert second.enrol(link) == "enrol-link-used"
    rows = json.loads(cli(console.config_path, "owner", "list", "--json"))
    assert [r["login"] for r in rows] == ["owner"]


def test_an_expired_link_is_refused(console: Console, device: Device) -> None:
    link = console.enrol_link()
    console.clock.advance(15 * 60 + 1)
    assert device.enrol(link) == "enrol-link-expired"


def test_a_link_that_expires_during_the_ceremony_is_refused_at_the_end(console: Console, device: Device) -> None:
    device.page.goto(console.enrol_link())
    console.clock.advance(15 * 60 + 1)
    assert device.ceremony() == "enrol-link-expired"


def test_a_member_enrols_with_their_own_link(vault, browser) -> None:
    text = vault.read_text().replace("members = []", 'members = ["alice"]')
    vault.write_text(text)
    from support.web_harness import serve_console

    with serve_console(vault) as console:
        device = Device(browser)
        try:
            enrolled(console, device, "alice")
            assert _who(device) == "alice"
        finally:
            device.close()


def test_the_passkey_button_waits_for_its_script(console: Console, device: Device) -> None:
    """A click on "Sign in with a passkey" before the page's script attached its handler would do nothing (a
    person clicks again; a driven browser waits for ever): the button is disabled until the script runs."""
    page = device.page
    page.route("**/static/web/passkeys.js", lambda route: route.abort())
    page.goto(f"{console.url}/login")
    assert page.locator("#go").is_disabled()
    page.unroute("**/static/web/passkeys.js")
    page.goto(f"{console.url}/login")
    page.wait_for_load_state("load")
    assert page.locator("#go").is_enabled()


def test_login_and_logout(console: Console, device: Device) -> None:
    enrolled(console, device)
    device.page.click("#logout")
    device.page.wait_for_url(f"{console.url}/login")
    device.page.goto(f"{console.url}/passkeys")
    assert device.page.url.startswith(f"{console.url}/login?next=")  # logged out: the page asks for a login
    assert device.login(console) == "ok"
    assert device.page.url == f"{console.url}/"  # a login lands on what is waiting, not on the passkeys page
    assert _who(device) == "owner"
    device.page.goto(f"{console.url}/login?next=/passkeys")  # already signed in: the login page forwards
    device.page.wait_for_url(f"{console.url}/passkeys")


def test_a_second_passkey_and_owner_revoke(console: Console, browser, devices) -> None:
    laptop = enrolled(console, devices())
    first_key = laptop.swap_authenticator()  # the laptop's passkey moves to "another device"
    assert laptop.page.url == f"{console.url}/passkeys"
    laptop.page.fill("#name", "phone")
    assert laptop.ceremony() == "ok"
    assert laptop.page.locator("#passkeys tbody tr").count() == 2
    rows = {r["name"]: r for r in json.loads(cli(console.config_path, "owner", "list", "--json"))}
    assert set(rows) == {"laptop", "phone"}
    # the new passkey logs in
    laptop.page.click("#logout")
    assert laptop.login(console) == "ok"
    # `notegate owner revoke` stops its logins at once and ends its session
    assert "revoked" in cli(console.config_path, "owner", "revoke", rows["phone"]["id"])
    laptop.page.goto(f"{console.url}/passkeys")
    assert laptop.page.url.startswith(f"{console.url}/login")
    assert laptop.login(console) == "passkey-unknown"
    # the first passkey still works from its own device
    other = devices(credentials=first_key)
    assert other.login(console) == "ok"
    assert _who(other) == "owner"


def test_revoking_from_the_page_and_never_the_last_passkey(console: Console, device: Device) -> None:
    enrolled(console, device)
    device.page.click("#passkeys .revoke")
    assert device.page.locator("#refusal").get_attribute("data-rule") == "passkey-last"
    device.swap_authenticator()
    device.page.goto(f"{console.url}/passkeys")
    device.page.fill("#name", "second")
    assert device.ceremony() == "ok"
    # revoking the passkey this session was opened with ends the session too
    device.page.locator("#passkeys tr", has_text="laptop").locator(".revoke").click()
    device.page.wait_for_url(f"{console.url}/login")
    assert device.login(console, next_path="/passkeys") == "ok"
    assert device.page.locator("#passkeys tbody tr").count() == 1
    assert device.page.locator("#passkeys tbody tr").text_content().count("second") == 1


def test_an_assertion_without_user_verification_is_refused(console: Console, device: Device) -> None:
    enrolled(console, device)
    device.page.click("#logout")
    device.page.wait_for_url(f"{console.url}/login")
    # chromium itself refuses to answer a UV-required request without verifying the user ...
    device.user_verified(False)
    assert device.login(console) == "browser:NotAllowedError"
    # ... so the server's own check is driven with the authenticator's key, as a hostile client would:
    # a correctly signed assertion whose UV flag is clear.
    (credential,) = device.credentials()
    options = device.page.evaluate(FETCH, ["/login/options", {}])
    assertion = sign_assertion(credential, options, console.url, user_verified=False)
    refused = device.page.evaluate(FETCH, ["/login/verify", {"credential": assertion}])
    assert refused["rule"] == "passkey-user-verification"
    # the very same assertion with UV set logs in: the flag alone was refused
    options = device.page.evaluate(FETCH, ["/login/options", {}])
    accepted = device.page.evaluate(
        FETCH, ["/login/verify", {"credential": sign_assertion(credential, options, console.url, user_verified=True)}]
    )
    assert accepted == {"redirect": "/"}  # a login without a destination lands on what is waiting


def test_the_session_ends_after_twelve_hours(console: Console, device: Device) -> None:
    enrolled(console, device)
    console.clock.advance(12 * 3600 - 60)
    device.page.goto(f"{console.url}/passkeys")
    assert _who(device) == "owner"
    console.clock.advance(61)
    device.page.goto(f"{console.url}/passkeys")
    assert device.page.url.startswith(f"{console.url}/login?next=")


def test_cookie_flags(console: Console, device: Device) -> None:
    enrolled(console, device)
    cookies = {c["name"]: c for c in device.context.cookies()}
    assert set(cookies) == {"notegate-session", "notegate-pre"}
    for cookie in cookies.values():
        assert cookie["httpOnly"] is True
        assert cookie["sameSite"] == "Strict"
        assert cookie["path"] == "/"
        assert cookie["secure"] is False  # loopback only; see tests/auth/test_websession.py for Secure
    session = cookies["notegate-session"]
    assert re.fullmatch(r"ngs_[A-Za-z0-9_-]{43}", session["value"])
    assert session["expires"] - console.clock() <= 12 * 3600 + 5
    # the database keeps only a hash of the session secret
    stored = console.runtime.state.query("SELECT token_hash FROM web_sessions")
    assert stored and all(session["value"] not in row["token_hash"] for row in stored)
    assert session["value"].encode() not in (console.config_path.parent / "state" / "state.sqlite").read_bytes()
