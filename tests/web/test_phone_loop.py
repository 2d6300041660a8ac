"""Issue 13's Done-when: the owner's whole review-and-approve loop from a phone-sized browser (chromium at
360 px, a virtual authenticator) against a server on `make run`'s defaults (tests/support/web_harness.py serves like
that: no public_url, http://localhost:PORT). Enrol through the link the printed command prints, log in, see
what waits on the home page, review an inbox of four items (promote one, hold one with a reason, delete
one, the floor-held one refused by its rule), approve an elevation a real MCP client asked for with its
code and see the grant work over MCP, restore a deleted note from the deleted-notes list, and find the write
in /audit. Every page is checked for horizontal overflow at 360 px and kept as a screenshot under
tests/artifacts/."""

from __future__ import annotations

import re
import shlex
import subprocess
from pathlib import Path

from notegate.cli import _console_hint
from notegate.config import load_config
from notegate.services.container import Services
from support import mint, text_of
from support.web_flows import ARTIFACTS, PHONE, git_log, review_four, sdk_client, write_with_grant
from support.web_harness import Console, Device, serve_console
from support.web_notes import delete, write

WIDTH = 360


def _phone(device: Device, name: str, nav: str | None = None) -> None:
    """The page as a phone shows it: nothing wider than the screen; the nav marks where we are."""
    page = device.page
    page.wait_for_load_state()
    wide = page.evaluate("() => document.documentElement.scrollWidth")
    assert wide <= WIDTH, (name, page.url, wide)
    if nav is not None:
        assert page.locator("#nav a.current").get_attribute("id") == f"nav-{nav}", (name, page.url)
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"phone-{name}-{WIDTH}.png"), full_page=True)


def _printed_enrol_command(console: Console) -> list[str]:
    """What `make run` prints to get the enrol link, as the owner would paste it (absolute paths)."""
    config = load_config(console.config_path)
    hint = _console_hint(config, console.port)
    assert f"Console (passkey login): {console.url}/" in hint
    found = re.search(r"first passkey: (.+)", hint)
    assert found, hint
    return shlex.split(found.group(1))


def test_the_owner_does_the_whole_loop_on_a_phone(vault: Path, browser, device: Device) -> None:
    phone_token = mint(vault, name="phone", tier="restricted")
    with serve_console(vault) as console:
        page = device.page
        page.set_viewport_size({"width": WIDTH, "height": 800})

        # -- enrol through the printed command's link, then log in again
        done = subprocess.run(
            _printed_enrol_command(console), capture_output=True, text=True, cwd="/", timeout=60, check=False
        )
        assert done.returncode == 0, done.stderr
        link = done.stdout.strip()
        assert link.startswith(f"{console.url}/enroll/")
        assert device.enrol(link, "phone") == "ok"
        _phone(device, "passkeys", "passkeys")
        page.click("#logout")
        page.wait_for_url(f"{console.url}/login")
        _phone(device, "login")
        assert device.login(console) == "ok"

        # -- what waits: four inbox items a restricted connector wrote, an elevation a real MCP client asked for
        inbox = console.runtime.environment(None)
        services_inbox = Services.build(console.runtime).inbox
        log = services_inbox.inbox_write(PHONE, "log", "Shipped the console.", project="notegate").path
        handoff = services_inbox.inbox_write(PHONE, "handoff", "Stopped at the review page.", project="notegate").path
        capture = services_inbox.inbox_write(PHONE, "capture", "A link worth keeping.", title="later").path
        floor = services_inbox.inbox_write(PHONE, "decision", "looks fine\u202eevil", project="notegate").path
        write(console, "notes/gone.md", "A note deleted by mistake.\n")
        delete(console, "notes/gone.md")

        with sdk_client(console.url, phone_token) as call:
            asked = call("request_elevation", {"reason": "fix the design note"})
            assert not asked.is_error, text_of(asked)
            ticket = asked.structured_content

            page.goto(f"{console.url}/")
            _phone(device, "home", "home")
            waiting = page.locator('section.waiting[data-env="personal"]')
            assert waiting.locator("a.inbox b.count").text_content() == "4"
            assert waiting.locator("a.elevations b.count").text_content() == "1"

            # -- the review: four items
            waiting.locator("a.inbox").click()
            _phone(device, "inbox", "inbox")
            assert page.locator("#waiting-count").text_content() == "4"
            review_four(
                device,
                console.url,
                log=log,
                handoff=handoff,
                capture=capture,
                floor=floor,
                seen=lambda name: _phone(device, name, None if name == "refused-floor" else "inbox"),
            )
            store = inbox.store
            assert store.blob_id(log) == "absent" and store.blob_id(capture) == "absent"
            assert store.blob_id(floor) != "absent"
            history = git_log(console.config_path, 3)
            assert f"|promote {log} to log/notegate.md" in history and f"|hold {handoff}" in history
            assert f"|delete {capture}" in history

            # -- the elevation: the same code on the phone, a fresh passkey, then the grant works over MCP
            page.click("#nav-elevations")
            _phone(device, "elevations", "elevations")
            row = page.locator(f'tr.request[data-request="{ticket["grant_id"]}"]')
            assert row.locator(".code").text_content() == ticket["code"]
            row.locator("a.approve").click()
            page.wait_for_load_state()
            assert page.locator("#code").text_content() == ticket["code"]
            _phone(device, "approve")
            assert device.ceremony() == "ok"  # "Approve with passkey": the check is the approval
            page.wait_for_selector("#outcome")
            assert page.locator("#outcome").get_attribute("data-decision") == "approve"
            _phone(device, "approved")
            wrote = write_with_grant(call, "projects/elevated.md", ticket["grant"])
            assert not wrote.is_error and wrote.structured_content["status"] == "committed", text_of(wrote)
        assert "Notegate-Grant: " + ticket["grant_id"] in git_log(console.config_path, 1)

        # -- restore the deleted note: the list, its history, the diff, then the commit
        page.click("#nav-notes")
        _phone(device, "notes", "notes")
        page.click("#deleted-link")
        _phone(device, "deleted", "notes")
        page.locator('li[data-path="notes/gone.md"] a.history').click()
        page.wait_for_load_state()
        _phone(device, "history", "notes")
        page.locator("button.restore").first.click()
        page.wait_for_load_state()
        assert "+A note deleted by mistake." in (page.locator("pre.diff").first.text_content() or "")
        _phone(device, "restore-preview", "notes")
        page.click("#confirm")
        page.wait_for_selector("#committed")
        _phone(device, "restored", "notes")
        assert store.read("notes/gone.md")[0] == b"A note deleted by mistake.\n"
        assert page.locator("#deleted-link").count() == 0  # a note page, not the folder
        page.goto(f"{console.url}/deleted")
        assert page.locator('li[data-path="notes/gone.md"]').count() == 0

        # -- the write in the audit: who, which tool, which path, its commit
        page.click("#nav-audit")
        page.fill('input[name="path"]', "projects/elevated.md")
        page.fill('input[name="tool"]', "write_note")
        page.click("#filter")
        page.wait_for_load_state()
        _phone(device, "audit", "audit")
        rows = page.locator("tr[data-id]")
        outcomes = [rows.nth(i).locator("td.outcome").text_content() for i in range(rows.count())]
        assert rows.count() >= 1 and any(o and o.startswith("ok") for o in outcomes), outcomes
        assert all(rows.nth(i).locator("td.path").text_content() == "projects/elevated.md" for i in range(rows.count()))
        assert "elevated\n" not in page.content()  # never a note's contents
