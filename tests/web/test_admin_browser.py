"""The owner's audit, connections and status pages in a real chromium (Debian's), after a real passkey login:
create a token (shown once; a reload does not show it again), revoke it and see the MCP door refuse it, find a
write in the audit by filter; every page at 360 px without horizontal overflow and at 1280 px, with
screenshots under tests/artifacts/ (git-ignored), and no CSP violation anywhere."""

from __future__ import annotations

from pathlib import Path

import httpx2
from anyio.from_thread import start_blocking_portal

from support import mcp_http, mint, text_of, token_secret
from support.web_harness import Console, Device, enrolled

ARTIFACTS = Path(__file__).parents[1] / "artifacts"
PING = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def _ping(console: Console, token: str) -> int:
    headers = {**MCP_HEADERS, "Authorization": f"Bearer {token}"}
    return httpx2.post(f"{console.url}/mcp", json=PING, headers=headers).status_code


def _write_over_mcp(console: Console, path: str) -> None:
    token = mint(console.config_path, name="laptop", tier="trusted", environment="personal")
    with start_blocking_portal() as portal, portal.wrap_async_context_manager(mcp_http(console.url, token)) as client:
        args = {"path": path, "content": "found by filter\n", "base_revision": "absent", "confirmed": True}
        done = portal.call(client.call_tool, "write_note", args)
        assert not done.is_error, text_of(done)


def test_the_owner_manages_tokens_and_reads_the_audit_in_a_browser(console: Console, device: Device) -> None:
    violations: list[str] = []
    device.page.on("console", lambda m: violations.append(m.text) if "Content Security Policy" in m.text else None)
    enrolled(console, device)
    page = device.page

    # create a token: shown once
    page.goto(f"{console.url}/connections")
    page.fill("#token-name", "phone")
    page.select_option("#token-class", "hosted")
    page.click("#create")
    page.wait_for_selector("#secret")
    token = page.locator("#secret").text_content()
    token_id = page.locator("#created-id").text_content()
    assert token.startswith(f"ngt_{token_id}_")
    assert _ping(console, token) == 200
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "admin-token-created-1280.png"))

    # a reload re-sends the form: the name is taken now, and the secret is not shown again
    page.reload()
    assert token not in page.content()
    assert page.locator("#refusal").get_attribute("data-rule") == "token-name-taken"
    page.goto(f"{console.url}/connections")
    assert token not in page.content() and token_secret(token) not in page.content()
    row = page.locator(f'tr[data-token="{token_id}"]')
    assert row.locator(".name").text_content() == "phone"

    # revoke it: the MCP door refuses it at once
    row.locator("button.revoke").click()
    page.wait_for_selector("#done")
    assert page.locator("#done").get_attribute("data-done") == "token-revoked"
    assert page.locator(f'tr[data-token="{token_id}"]').count() == 0
    assert _ping(console, token) == 401

    # find a write in the audit by filter
    _write_over_mcp(console, "notes/found.md")
    page.goto(f"{console.url}/audit")
    page.fill("input[name=path]", "notes/found.md")
    page.fill("input[name=tool]", "write_note")
    page.fill("input[name=since]", "1h")
    page.click("#filter")
    page.wait_for_selector("#audit tbody tr")
    cells = page.locator("#audit tbody tr").first.locator("td").all_text_contents()
    assert cells[2:5] == ["write_note", "notes/found.md", "ok"] and cells[1].startswith("laptop")
    assert page.locator("#audit tbody tr").count() == 1
    assert token not in page.content()
    page.goto(f"{console.url}/audit?tool=web:token-revoke")
    assert f"ok:token:{token_id}" in page.locator("#audit").text_content()

    # every page at a phone's width and a laptop's, screenshots kept
    for width in (360, 1280):
        page.set_viewport_size({"width": width, "height": 800})
        for name in ("audit", "connections", "status"):
            page.goto(f"{console.url}/{name}")
            assert page.locator("#refusal").count() == 0, name
            page.screenshot(path=str(ARTIFACTS / f"admin-{name}-{width}.png"), full_page=True)
            if width == 360:
                overflow = page.evaluate("() => document.documentElement.scrollWidth")
                assert overflow <= 360, (name, overflow)
                buttons = page.locator("button.revoke")
                for i in range(buttons.count()):  # stacked rows: every action in reach, not scrolled away
                    box = buttons.nth(i).bounding_box()
                    assert box is not None and box["x"] + box["width"] <= 360, (name, box)
    assert violations == []


def test_the_csrf_token_is_needed_from_the_browser_too(console: Console, device: Device) -> None:
    enrolled(console, device)
    page = device.page
    page.goto(f"{console.url}/connections")
    page.evaluate("() => document.querySelector('#create-token input[name=csrf]').remove()")
    page.fill("#token-name", "no-csrf")
    page.click("#create")
    page.wait_for_selector("#refusal")
    assert page.locator("#refusal").get_attribute("data-rule") == "csrf-missing"
    assert not [r for r in console.runtime.state.tokens() if r["name"] == "no-csrf"]
