"""The notes pages in a real chromium (Debian's) against the real server: log in with a passkey, browse, read
a note with an embedded image shown, restore a deleted note in two steps, edit a note in two steps (both
checked at the origin), and hostile note content viewed with no script running (a CSP violation listener
and a page-side flag), with screenshots at 360 px and 1280 px under tests/artifacts/ (git-ignored)."""

from __future__ import annotations

from pathlib import Path

import pytest

from support.web_harness import Console, Device, enrolled
from support.web_notes import HOSTILE_NOTE, HOSTILE_SVG, attach, delete, origin_head, origin_text, plant, png, write

ARTIFACTS = Path(__file__).parents[1] / "artifacts"
#: Injected before any page script: records CSP violations, and a flag hostile content would have to set.
WATCH = """
window.__violations = [];
document.addEventListener('securitypolicyviolation',
  (e) => window.__violations.push(e.violatedDirective + ' ' + e.blockedURI));
"""


@pytest.fixture
def owner(console: Console, device: Device) -> Device:
    device.context.add_init_script(WATCH)
    return enrolled(console, device)


def _shots(device: Device, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    for width in (360, 1280):
        device.page.set_viewport_size({"width": width, "height": 900})
        device.page.screenshot(path=str(ARTIFACTS / f"notes-{name}-{width}.png"), full_page=True)
        wide = device.page.evaluate("() => document.documentElement.scrollWidth")
        assert wide <= width + 1, f"{name} scrolls sideways at {width} px ({wide} px wide)"


def _no_script_ran(device: Device) -> None:
    assert device.page.evaluate("() => window.__pwned") is None
    assert device.page.evaluate("() => window.__violations") == []
    assert device.page.title() != "svg-ran"


def test_browse_and_read_a_note_with_its_image(console: Console, owner: Device) -> None:
    attach(console, "img/diagram.png", png(40, 20))
    write(console, "projects/alpha.md", "# Alpha\n\n![[diagram.png]]\n\nSee [[beta]].\n")
    write(console, "projects/beta.md", "# Beta\n\nthe zanzibar plan\n")
    page = owner.page
    page.goto(f"{console.url}/passkeys")
    page.click("#nav-notes")
    page.click("text=projects/")
    _shots(owner, "folder")
    page.click("text=alpha.md")
    page.wait_for_selector("#note img.embed")
    loaded = page.evaluate("() => [...document.querySelectorAll('#note img')].map(i => i.complete && i.naturalWidth)")
    assert loaded == [40]
    _shots(owner, "read")
    page.click("a.wikilink")
    assert page.url.endswith("/notes/projects/beta.md")
    page.goto(f"{console.url}/notes")
    page.fill("#q", "zanzibar")
    page.click("#search")
    assert page.locator('#hits li[data-path="projects/beta.md"]').count() == 1
    _no_script_ran(owner)


def test_restore_a_deleted_note_in_two_steps(console: Console, owner: Device) -> None:
    made = write(console, "notes/gone.md", "# Gone\n\nkeep me\n")
    delete(console, "notes/gone.md")
    page = owner.page
    page.goto(f"{console.url}/notes/notes/gone.md")
    assert page.locator("#deleted").count() == 1
    page.click("#history-link")
    _shots(owner, "history")
    page.click(f'li[data-commit="{made}"] button.restore')
    page.wait_for_selector("#preview")
    assert "+keep me" in page.locator("pre.diff").text_content()
    assert origin_text(console, "notes/gone.md") is None  # step 1 wrote nothing
    _shots(owner, "restore-preview")
    page.click("#confirm")
    page.wait_for_selector("#committed")
    assert origin_text(console, "notes/gone.md") == "# Gone\n\nkeep me\n"
    head = origin_head(console)
    assert page.locator("#committed").get_attribute("data-commit") == str(head.id)[:12]
    assert "Notegate-Connector: web:console" in head.message
    _no_script_ran(owner)


def test_edit_a_note_in_two_steps(console: Console, owner: Device) -> None:
    write(console, "notes/e.md", "# E\n\nold line\n")
    page = owner.page
    page.goto(f"{console.url}/notes/notes/e.md")
    page.click("#edit-link")
    page.fill("#content", "# E\n\nnew line\n")
    _shots(owner, "edit")
    page.click("#preview-button")
    page.wait_for_selector("#preview")
    diff = page.locator("pre.diff").text_content()
    assert "-old line" in diff and "+new line" in diff
    assert origin_text(console, "notes/e.md") == "# E\n\nold line\n"
    page.click("#confirm")
    page.wait_for_selector("#committed")
    assert origin_text(console, "notes/e.md") == "# E\n\nnew line\n"
    assert "new line" in page.locator("#note").text_content()
    _no_script_ran(owner)


def test_hostile_content_runs_no_script(console: Console, owner: Device) -> None:
    plant(console, "notes/evil.svg", HOSTILE_SVG)
    write(console, "notes/hostile.md", HOSTILE_NOTE)
    page = owner.page
    page.goto(f"{console.url}/notes/notes/hostile.md")
    page.wait_for_selector("#note")
    assert "<script>window.__pwned = 1</script>" in page.locator("#note").text_content()  # shown as text
    assert (
        page.locator("#note script, #note img[onerror], #note a[href^='javascript'], #note a[href^='data']").count()
        == 0
    )
    for link in page.locator("#note a").all():
        link.click(modifiers=["Control"])  # whatever is a link at all: none may run script here
    _no_script_ran(owner)
    _shots(owner, "hostile")
    page.goto(f"{console.url}/history/notes/hostile.md")  # the diff shows the raw text, escaped
    assert '<img src="x" onerror' in page.locator("pre.diff").text_content()
    _no_script_ran(owner)
    page.goto(f"{console.url}/edit/notes/hostile.md")  # the textarea too
    _no_script_ran(owner)
    # An SVG is kept like any attachment; opened as a document it is sandboxed with no script source, so its
    # onload and <script> never run (the watch sees the CSP block them).
    response = page.goto(f"{console.url}/files/notes/evil.svg")
    assert response is not None and response.status == 200
    assert response.headers["content-type"] == "image/svg+xml"
    assert page.evaluate("() => window.__pwned") is None
    assert page.title() != "svg-ran"


def test_the_watch_sees_a_blocked_script(console: Console, owner: Device) -> None:
    """The control: an inline script on a notes page is blocked by the CSP, and the listener reports it."""
    write(console, "notes/plain.md", "plain\n")
    page = owner.page
    page.goto(f"{console.url}/notes/notes/plain.md")
    page.evaluate(
        "() => { const s = document.createElement('script'); s.textContent = 'window.__pwned = 1';"
        " document.body.append(s); }"
    )
    page.wait_for_function("() => window.__violations.length > 0")
    assert page.evaluate("() => window.__pwned") is None
    assert page.evaluate("() => window.__violations")[0].startswith("script-src")
