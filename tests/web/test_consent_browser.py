"""The consent page in a real chromium, with a fake ConsentBackend: login first, then approve or deny; the
browser lands exactly where the backend said."""

from __future__ import annotations

import httpx2

from support.web_harness import Console, Device, enrolled, serve_console

CALLBACK = "https://claude.ai/api/mcp/auth_callback"


def _catch_callback(device: Device) -> list[str]:
    """Answer the client's redirect URI inside the browser (no network), recording where it went."""
    landed: list[str] = []

    def fulfil(route) -> None:
        landed.append(route.request.url)
        route.fulfill(status=200, content_type="text/plain", body="callback reached")

    device.page.route("https://claude.ai/**", fulfil)
    return landed


def test_not_logged_in_logs_in_first_then_approves(console: Console, devices) -> None:
    laptop = enrolled(console, devices())
    credentials = laptop.credentials()
    console.consent.add("req-1", CALLBACK, client_name="Claude <b>official</b>")
    phone = devices(credentials=credentials)  # a fresh browser holding the same passkey, not logged in
    landed = _catch_callback(phone)
    phone.page.goto(f"{console.url}/oauth/consent?request=req-1")
    assert phone.page.url == f"{console.url}/login?next=%2Foauth%2Fconsent%3Frequest%3Dreq-1"
    assert phone.ceremony() == "ok"
    assert phone.page.url == f"{console.url}/oauth/consent?request=req-1"
    page = phone.page
    assert page.locator("#redirect-host").text_content() == "claude.ai"
    assert page.locator("#client-name").text_content() == "“Claude <b>official</b>”"  # escaped, not markup
    assert "unverified" in page.locator("#unverified").text_content()
    assert page.locator("#grants").text_content().startswith("restricted: reads everything but private notes")
    page.click("#approve")
    page.wait_for_url(f"{CALLBACK}?**")
    assert landed == [f"{CALLBACK}?code=fake-code&state=s1&iss=test"]
    assert console.consent.answers == [("req-1", "approve", "owner")]


def test_deny_redirects_where_the_backend_says(console: Console, device: Device) -> None:
    enrolled(console, device)
    console.consent.add("req-2", CALLBACK)
    landed = _catch_callback(device)
    device.page.goto(f"{console.url}/oauth/consent?request=req-2")
    device.page.click("#deny")
    device.page.wait_for_url(f"{CALLBACK}?**")
    assert landed == [f"{CALLBACK}?error=access_denied&state=s1&iss=test"]
    assert console.consent.answers == [("req-2", "deny", None)]


def test_an_unknown_or_answered_request_is_no_such_request(console: Console, device: Device) -> None:
    enrolled(console, device)
    device.page.goto(f"{console.url}/oauth/consent?request=nope")
    assert device.page.locator("#refusal").get_attribute("data-rule") == "consent-unknown"


def test_the_consent_csp_lets_the_form_reach_only_the_redirect_origin(console: Console, device: Device) -> None:
    enrolled(console, device)
    console.consent.add("req-3", CALLBACK)
    response = device.page.goto(f"{console.url}/oauth/consent?request=req-3")
    policy = response.headers["content-security-policy"]
    assert "form-action 'self' https://claude.ai;" in policy
    assert "frame-ancestors 'none'" in policy


def test_without_a_backend_every_request_is_no_such_request(vault, browser) -> None:
    with serve_console(vault, with_consent=False) as console:
        device = Device(browser)
        try:
            enrolled(console, device)
            device.page.goto(f"{console.url}/oauth/consent?request=req-1")
            assert device.page.locator("#refusal").get_attribute("data-rule") == "consent-unknown"
        finally:
            device.close()
        # and the POST answers the same, never reaching a backend
        assert httpx2.get(f"{console.url}/oauth/consent?request=x", follow_redirects=False).status_code == 303
