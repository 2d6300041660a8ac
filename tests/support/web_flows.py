"""Flows several browser tests share: the official SDK client beside Playwright, a write with a grant, the inbox
review of four items, and the origin's log."""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

from anyio.from_thread import start_blocking_portal

from notegate.config import load_config
from notegate.policy import Caller
from support import mcp_http
from support.callers import make_caller
from support.web_harness import Device


@contextlib.contextmanager
def sdk_client(url: str, token: str) -> Iterator[Callable[[str, dict], object]]:
    """The official SDK client on an event loop of its own thread: Playwright's sync API holds this one's."""
    with start_blocking_portal() as portal, portal.wrap_async_context_manager(mcp_http(url, token)) as client:
        yield lambda name, arguments: portal.call(client.call_tool, name, arguments)


def write_with_grant(call, path: str, grant: str | None = None):
    args = {"path": path, "content": "elevated\n", "base_revision": "absent", **({"grant": grant} if grant else {})}
    preview = call("write_note", args)
    return preview if preview.is_error else call("write_note", {**args, "confirmed": True})


ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"


PHONE = Caller(**{**make_caller("restricted", "workstation", "owner", "phone").__dict__, "connector": "token:phone"})


def _shot(device: Device, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    for width in (360, 1280):
        device.page.set_viewport_size({"width": width, "height": 900})
        device.page.screenshot(path=str(ARTIFACTS / f"{name}-{width}.png"), full_page=True)
        # nothing is wider than the viewport: usable on a phone without sideways scrolling
        wide = device.page.evaluate("() => document.documentElement.scrollWidth")
        assert wide <= width, (name, width, wide)


def _item(device: Device, path: str, button: str) -> None:
    device.page.locator(f'section.item[data-path="{path}"] button.{button}').click()
    device.page.wait_for_load_state()


def _rule(device: Device) -> str | None:
    return device.page.locator("#refusal").get_attribute("data-rule")


def review_four(
    device: Device,
    url: str,
    *,
    log: str,
    handoff: str,
    capture: str,
    floor: str,
    seen: Callable[[str], None] = lambda _name: None,
) -> None:
    """On the inbox page: the floor-held item's promotion refused by its rule, then promote the log entry,
    hold the handoff with a reason, delete the capture; ``seen`` is called on the refusal and at the end."""
    page = device.page
    _item(device, floor, "promote")
    assert _rule(device) == "floor-hold"
    seen("refused-floor")
    page.goto(f"{url}/inbox")
    _item(device, log, "promote")
    assert page.locator("#done").get_attribute("data-action") == "promote"
    page.locator(f'section.item[data-path="{handoff}"] input.reason').fill("not yet: waits for the design")
    _item(device, handoff, "hold")
    assert page.locator("#done").get_attribute("data-action") == "hold"
    _item(device, capture, "delete")
    assert page.locator("#done").get_attribute("data-action") == "delete"
    assert page.locator("#waiting-count").text_content() == "1"  # the floor-held one waits for its owner
    seen("inbox-reviewed")


def git_log(config: Path, count: int) -> str:
    origin = load_config(config).environment(None).origin_url
    return subprocess.run(
        ["git", "-C", str(origin), "log", f"-{count}", "--format=%an <%ae>|%s%n%b"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
