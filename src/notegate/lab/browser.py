"""The owner in the lab: Debian's Chromium driven by Playwright (async API), with a CDP virtual authenticator
(a platform passkey with user verification) — the same browser the suite's console tests use, never a
downloaded one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from notegate.errors import NotegateError

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
AUTHENTICATOR = {
    "protocol": "ctap2",
    "transport": "internal",
    "hasResidentKey": True,
    "hasUserVerification": True,
    "isUserVerified": True,
    "automaticPresenceSimulation": True,
}
WAIT_MS = 30_000


class BrowserMissing(NotegateError):
    """The lab's owner is a real browser: without Debian's Chromium (or playwright) it cannot run."""

    def __init__(self, message: str) -> None:
        super().__init__(message, rule="lab-browser-missing")


def require_browser() -> None:
    if not Path(CHROMIUM).exists():
        raise BrowserMissing(f"the lab needs Debian's Chromium at {CHROMIUM} (apt-get install -y chromium)")
    try:
        import playwright.async_api  # noqa: F401
    except ImportError as exc:  # pragma: no cover - a dev dependency
        raise BrowserMissing("the lab needs the playwright package (pip install -e '.[dev]')") from exc


class Owner:
    """One browser context with its own authenticator: the owner's phone or laptop at the console."""

    def __init__(self, page: Any, cdp: Any, authenticator: str) -> None:
        self.page = page
        self.cdp = cdp
        self.authenticator = authenticator

    @classmethod
    async def open(cls, browser: Any) -> Owner:
        context = await browser.new_context()
        page = await context.new_page()
        cdp = await context.new_cdp_session(page)
        await cdp.send("WebAuthn.enable", {"enableUI": False})
        added = await cdp.send("WebAuthn.addVirtualAuthenticator", {"options": AUTHENTICATOR})
        return cls(page, cdp, added["authenticatorId"])

    async def _ceremony_then_leave(self) -> None:
        """Click the page's passkey button and wait until the page's script went elsewhere."""
        before = self.page.url
        await self.page.click("#go")
        await self.page.wait_for_function(
            "(before) => location.href !== before && document.readyState === 'complete'", arg=before, timeout=WAIT_MS
        )

    async def enrol(self, link: str, name: str = "lab phone") -> None:
        await self.page.goto(link)
        await self.page.fill("#name", name)
        await self._ceremony_then_leave()

    async def login_if_asked(self) -> None:
        if "/login" in self.page.url:
            await self._ceremony_then_leave()

    async def consent(self, authorize_url: str, redirect_prefix: str) -> dict[str, str]:
        """Follow a client's authorization URL, approve on the consent page; returns what the page showed."""
        await self.page.goto(authorize_url)
        await self.login_if_asked()
        shown = {
            "client": (await self.page.locator("#client-name").text_content()) or "",
            "redirect": (await self.page.locator("#redirect-host").text_content()) or "",
        }
        await self.page.click("#approve")
        await self.page.wait_for_url(f"{redirect_prefix}?**", timeout=WAIT_MS)
        return shown

    async def open_elevation(self, link: str) -> str:
        """Open an approval link; returns the code the page shows."""
        await self.page.goto(link)
        await self.login_if_asked()
        await self.page.wait_for_selector("#code", timeout=WAIT_MS)
        return (await self.page.locator("#code").text_content()) or ""

    async def approve_without_passkey(self) -> str:
        """Post "approve" with the page's own form token but no passkey check: returns the rule shown."""
        await self.page.evaluate(
            """() => { const f = document.getElementById('deny-form');
                       const d = document.createElement('input'); d.type = 'hidden'; d.name = 'decision';
                       d.value = 'approve'; f.appendChild(d); f.querySelector('button').remove(); f.submit(); }"""
        )
        await self.page.wait_for_selector("#refusal", timeout=WAIT_MS)
        return (await self.page.locator("#refusal").get_attribute("data-rule")) or ""

    async def approve_with_passkey(self) -> str:
        """Click "Approve with passkey" (the fresh check is the approval): "approve" when the page confirms,
        else the rule the page shows."""
        await self.page.click("#go")
        await self.page.wait_for_function(
            "() => document.getElementById('outcome') !== null"
            " || (document.getElementById('status')?.getAttribute('data-rule') || 'ok') !== 'ok'",
            timeout=WAIT_MS,
        )
        if await self.page.locator("#outcome").count():
            return (await self.page.locator("#outcome").get_attribute("data-decision")) or ""
        return (await self.page.locator("#status").get_attribute("data-rule")) or ""
