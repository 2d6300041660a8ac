"""The owner's LiveSync page (issue 31): enrol an Obsidian device from the console, see it, revoke it.

Over HTTP against the real console server with real session cookies: the Setup URI and passphrase are shown
once (no-store) with a QR code of the URI as inline SVG, the URI opens with the passphrase into the settings
the CLI gives, the state database keeps only the public key, every action leaves its audit row; a member (not
the owner) is refused, a removed member gets no device, a revoked device's key is deleted. In a real chromium
at a phone's 390 px: enrol after a real passkey login, the QR code fits the screen, revoke."""

from __future__ import annotations

import html
import json
import re
import time
from pathlib import Path
from urllib.parse import unquote

import pytest

from notegate.livesync import keys
from support.web_harness import Console, Device, enrolled, serve_console
from support.web_notes import sign_in

GATE = "https://gate.example"


@pytest.fixture
def console(vault: Path):
    with vault.open("a", encoding="utf-8") as handle:
        handle.write(f'\n[livesync]\ndatabase = "notes"\npublic_url = "{GATE}"\n')
    with serve_console(vault) as served:
        yield served


def _code(page: str, element: str) -> str:
    found = re.search(rf'id="{element}"[^>]*>([^<]*)<', page)
    assert found, page[:2000]
    return html.unescape(found.group(1))


def _rule(page: str) -> str | None:
    found = re.search(r'id="refusal" data-rule="([^"]+)"', page)
    return found.group(1) if found else None


def _audit(console: Console, tool: str) -> list[str]:
    rows = console.runtime.state.query("SELECT outcome FROM audit WHERE tool = ? ORDER BY id", (tool,))
    return [r["outcome"] for r in rows]


def test_the_owner_enrols_a_device_sees_its_setup_uri_once_and_revokes_it(console: Console) -> None:
    owner = sign_in(console)
    page = owner.client.get("/livesync?env=personal")
    assert page.status_code == 200 and 'id="enrol-form"' in page.text and GATE in page.text
    done = owner.post("/livesync/devices", {"env": "personal", "name": "phone", "algorithm": "ES512"})
    assert done.status_code == 200, done.text[:500]
    assert done.headers["cache-control"] == "no-store"
    uri, passphrase, kid = _code(done.text, "setup-uri"), _code(done.text, "passphrase"), _code(done.text, "kid")
    assert uri.startswith(keys.SETUP_URI_BASE)
    settings = json.loads(keys.decrypt_setting_string(unquote(uri.partition("=")[2]), passphrase))
    assert (settings["couchDB_URI"], settings["jwtKid"], settings["jwtAlgorithm"]) == (GATE, kid, "ES512")
    svg = done.text[done.text.index('<figure id="qr"') : done.text.index("</figure>")]
    assert "<svg" in svg and "<script" not in svg and "href" not in svg and passphrase not in svg
    assert "BEGIN PRIVATE KEY" not in done.text  # only inside the sealed URI
    device = console.runtime.state.livesync_device(kid)
    assert device.person == "owner" and "BEGIN PUBLIC KEY" in device.public_key
    listed = owner.client.get("/livesync?env=personal").text
    assert 'data-device="phone"' in listed and uri not in listed and passphrase not in listed
    again = owner.post("/livesync/devices", {"env": "personal", "name": "phone"})
    assert _rule(again.text) == "livesync-device-exists"
    assert _rule(owner.post("/livesync/devices", {"env": "personal", "name": "Phone!"}).text) == (
        "livesync-device-name-invalid"
    )
    gone = owner.post("/livesync/devices/phone/revoke", {"env": "personal"})
    assert gone.status_code == 303 and gone.headers["location"].startswith("/livesync?")
    assert console.runtime.state.livesync_device(kid).public_key is None
    assert _rule(owner.post("/livesync/devices/phone/revoke", {"env": "personal"}).text) == (
        "livesync-device-not-found"
    )
    assert _audit(console, "web:livesync-device-add") == [
        f"ok:{kid}:owner",
        "refused:livesync-device-exists",
        "refused:livesync-device-name-invalid",
    ]
    assert _audit(console, "web:livesync-device-revoke") == [f"ok:{kid}", "refused:livesync-device-not-found"]
    rows = console.runtime.state.query("SELECT outcome FROM audit WHERE tool LIKE 'web:livesync%'")
    assert not any(passphrase in r["outcome"] or "PRIVATE" in r["outcome"] for r in rows)


def test_only_the_owner_enrols_and_only_for_a_live_member(console: Console) -> None:
    members = console.runtime.members
    members.state.member_add("personal", "bob", by="owner", source="invite", now=time.time())
    owner = sign_in(console)
    done = owner.post("/livesync/devices", {"env": "personal", "name": "bobs-phone", "person": "bob"})
    assert done.status_code == 200 and _code(done.text, "kid").startswith("bobs-phone-")
    bob = sign_in(console, "bob")
    assert _rule(bob.client.get("/livesync?env=personal").text) == "console-not-owner"
    refused = bob.post("/livesync/devices", {"env": "personal", "name": "bobs-tablet"})
    assert _rule(refused.text) == "console-not-owner"
    members.remove("personal", "bob", by="owner", now=time.time())
    refused = owner.post("/livesync/devices", {"env": "personal", "name": "bobs-tablet", "person": "bob"})
    assert _rule(refused.text) == "livesync-person-not-member"
    assert [d.name for d in console.runtime.state.livesync_devices("personal")] == []  # bob's phone ended too


def test_the_page_says_when_livesync_is_not_configured(vault: Path) -> None:
    with serve_console(vault) as served:
        owner = sign_in(served)
        assert _rule(owner.client.get("/livesync?env=personal").text) == "livesync-not-configured"


def test_a_phone_enrols_a_device_and_scans_its_code_at_390_px(console: Console, device: Device) -> None:
    violations: list[str] = []
    device.page.on("console", lambda m: violations.append(m.text) if "Content Security Policy" in m.text else None)
    enrolled(console, device)
    page = device.page
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(f"{console.url}/livesync")
    page.fill("#device-name", "phone")
    page.click("#enrol")
    page.wait_for_selector("#qr svg")
    box = page.locator("#qr svg").bounding_box()
    assert box is not None and box["width"] >= 150 and box["x"] + box["width"] <= 390  # scannable, on screen
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    assert page.locator("#passphrase").text_content()
    page.click("#back")
    page.wait_for_selector('tr[data-device="phone"]')
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    page.click('tr[data-device="phone"] button.remove')
    page.wait_for_selector("#done")
    assert page.locator('tr[data-device="phone"]').count() == 0
    assert not violations, violations
