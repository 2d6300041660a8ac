"""The owner's inbox review and elevations pages in a real chromium with a virtual authenticator: a review of
four items (promote, hold with a reason, delete, the floor-held one refused by its rule) checked in the
origin's commits; a hostile item reviewed without any script running (a CSP-violation listener and a
page-side flag); an elevation approved from the list with a fresh passkey and used over MCP, then revoked;
CSRF and a member refused by their exact rules; screenshots at 360 and 1280 px under tests/artifacts/."""

from __future__ import annotations

from pathlib import Path

from notegate.services.container import Services
from support import assert_refused, mint, text_of
from support.web_flows import PHONE, _item, _rule, _shot, git_log, review_four, sdk_client, write_with_grant
from support.web_harness import Console, Device, enrolled, serve_console

#: Records every CSP violation and watches for the payloads' flag, before any page script runs.
LISTENER = """
window.__violations = [];
document.addEventListener('securitypolicyviolation',
  (e) => window.__violations.push(e.violatedDirective + ' ' + e.blockedURI));
"""
HOSTILE = "\n".join(
    [
        "<script>window.__pwned = 'script'</script>",
        '<img src="x" onerror="window.__pwned = \'img\'">',
        '<a href="javascript:window.__pwned=\'js\'" id="evil-link">click me</a>',
        "[data link](data:text/html;base64,PHNjcmlwdD53aW5kb3cuX19wd25lZD0nZGF0YSc8L3NjcmlwdD4=)",
        '<svg xmlns="http://www.w3.org/2000/svg" onload="window.__pwned=\'svg\'">'
        "<script>window.__pwned='svg2'</script></svg>",
    ]
)


def test_review_four_items_in_the_browser(console: Console, device: Device) -> None:
    enrolled(console, device)
    inbox = Services.build(console.runtime).inbox
    log = inbox.inbox_write(PHONE, "log", "Shipped the console.", project="notegate").path
    handoff = inbox.inbox_write(PHONE, "handoff", "Stopped at the review page.", project="notegate").path
    capture = inbox.inbox_write(PHONE, "capture", "A link worth keeping.", title="later").path
    floor = inbox.inbox_write(PHONE, "decision", "looks fine\u202eevil", project="notegate").path
    page = device.page
    page.goto(f"{console.url}/inbox")
    assert page.locator("#waiting-count").text_content() == "4"
    assert page.locator(f'section.item[data-path="{log}"] .target').text_content() == "log/notegate.md"
    assert "+Shipped the console." in (page.locator(f'section.item[data-path="{log}"] pre.diff').text_content() or "")
    assert "U+202E" in (page.locator(f'section.item[data-path="{floor}"] .floor-reasons').text_content() or "")
    assert page.locator(f'section.item[data-path="{log}"] .authors').text_content() == "phone (owner)"
    # the override that would make "evil" read "live" is shown as a marker, not obeyed
    assert "fine⟨U+202E⟩evil" in (page.locator(f'section.item[data-path="{floor}"] pre.diff').text_content() or "")
    _shot(device, "inbox")
    page.set_viewport_size({"width": 360, "height": 900})  # the review itself on a phone-sized screen

    review_four(device, console.url, log=log, handoff=handoff, capture=capture, floor=floor)
    assert page.locator(f'li.held-item[data-path="{handoff}"] .held-reason').text_content() == (
        "not yet: waits for the design"
    )

    store = console.runtime.environment(None).store
    assert store.blob_id(log) == "absent" and store.blob_id(capture) == "absent"
    assert "Shipped the console." in store.read("log/notegate.md")[0].decode()
    history = git_log(console.config_path, 3)
    assert f"|delete {capture}" in history and f"|hold {handoff}" in history
    assert f"|promote {log} to log/notegate.md" in history
    assert history.count("Notegate-Connector: web:console") == 3
    assert "Notegate-Reviewed-By: notegate-console (owner)" in history
    outcomes = [
        r["outcome"] for r in console.runtime.state.query("SELECT outcome FROM audit WHERE tool LIKE 'web:inbox-%'")
    ]
    assert outcomes[0] == "refused:floor-hold" and len([o for o in outcomes if o.startswith("ok:")]) == 3


def test_a_hostile_item_runs_no_script(console: Console, device: Device) -> None:
    enrolled(console, device)
    path = Services.build(console.runtime).inbox.inbox_write(PHONE, "handoff", HOSTILE, project="evil").path
    device.context.add_init_script(LISTENER)
    page = device.page
    page.goto(f"{console.url}/inbox")
    diff = page.locator(f'section.item[data-path="{path}"] pre.diff')
    assert "<script>window.__pwned = 'script'</script>" in (diff.text_content() or "")  # shown as text
    assert page.locator("#evil-link").count() == 0 and page.locator("main svg, main img").count() == 0
    page.wait_for_timeout(300)  # let an image error or an SVG load fire, if anything had made one
    assert page.evaluate("() => window.__pwned") is None
    assert page.evaluate("() => window.__violations") == []
    _shot(device, "inbox-hostile")
    # the listener is live: an inline script injected now is blocked by the CSP and recorded
    page.evaluate(
        "() => { const s = document.createElement('script'); s.textContent = 'window.__pwned = 1';"
        " document.body.appendChild(s); }"
    )
    page.wait_for_function("() => window.__violations.length > 0")
    assert page.evaluate("() => window.__pwned") is None
    assert page.evaluate("() => window.__violations")[0].startswith("script-src")


def test_a_form_without_the_csrf_token_is_refused(console: Console, device: Device) -> None:
    enrolled(console, device)
    path = Services.build(console.runtime).inbox.inbox_write(PHONE, "log", "keep me", project="p").path
    page = device.page
    page.goto(f"{console.url}/inbox")
    page.evaluate("() => document.querySelectorAll('input[name=csrf]').forEach((i) => i.remove())")
    _item(device, path, "promote")
    assert _rule(device) == "csrf-missing"
    assert console.runtime.environment(None).store.blob_id(path) != "absent"


def test_approve_an_elevation_from_the_list_and_use_it_over_mcp(vault: Path, browser, device: Device) -> None:
    phone = mint(vault, name="phone", tier="restricted")
    with serve_console(vault) as console:
        enrolled(console, device)
        with sdk_client(console.url, phone) as call:
            asked = call("request_elevation", {"reason": "fix the <i>design</i> note"})
            assert not asked.is_error, text_of(asked)
            ticket = asked.structured_content
            page = device.page
            page.goto(f"{console.url}/elevations")
            row = page.locator(f'tr.request[data-request="{ticket["grant_id"]}"]')
            assert row.locator(".code").text_content() == ticket["code"]
            assert row.locator(".reason").text_content() == "fix the <i>design</i> note"
            assert row.locator(".expires").text_content().endswith("UTC")
            _shot(device, "elevations")
            row.locator("a.approve").click()
            page.wait_for_load_state()
            assert page.locator("#code").text_content() == ticket["code"]
            assert device.ceremony() == "ok"  # a fresh, user-verified passkey assertion: the approval itself
            page.wait_for_selector("#outcome")
            assert page.locator("#outcome").get_attribute("data-decision") == "approve"
            done = write_with_grant(call, "projects/elevated.md", ticket["grant"])
            assert not done.is_error and done.structured_content["status"] == "committed", text_of(done)

            page.goto(f"{console.url}/elevations")
            grant = page.locator(f'tr.grant[data-grant="{ticket["grant_id"]}"]')
            assert grant.locator(".expires").text_content().endswith("UTC")
            _shot(device, "elevations-grant")
            grant.locator("button.revoke").click()
            page.wait_for_load_state()
            assert page.locator("#done").get_attribute("data-action") == "revoke"
            assert page.locator("#grant-count").text_content() == "0"
            assert_refused("grant-revoked", write_with_grant(call, "projects/after.md", ticket["grant"]))
        assert "Notegate-Grant: " + ticket["grant_id"] in git_log(vault, 1)


def test_a_member_is_refused_the_owner_pages(vault: Path, browser, devices) -> None:
    vault.write_text(vault.read_text().replace("members = []", 'members = ["member"]', 1))
    with serve_console(vault) as console:
        member = enrolled(console, devices(), "member")
        for path in ("/inbox", "/elevations"):
            member.page.goto(f"{console.url}{path}")
            assert _rule(member) == "console-not-owner"
