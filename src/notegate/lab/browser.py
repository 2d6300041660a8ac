"""The owner in the lab: Debian's Chromium driven by Playwright (async API), with a CDP virtual authenticator
(a platform passkey with user verification) — the same browser the suite's console tests use, never a
downloaded one."""

from __future__ import annotations

import time
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
        #: when this browser last made a passkey check (time.monotonic): a step-up is needed only once that
        #: check is older than the policy's window, so a check that wants the refusal waits for it to go stale
        self.asserted_at = 0.0

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
        self.asserted_at = time.monotonic()

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
        self.asserted_at = time.monotonic()
        await self.page.wait_for_function(
            "() => document.getElementById('outcome') !== null"
            " || (document.getElementById('status')?.getAttribute('data-rule') || 'ok') !== 'ok'",
            timeout=WAIT_MS,
        )
        if await self.page.locator("#outcome").count():
            return (await self.page.locator("#outcome").get_attribute("data-decision")) or ""
        return (await self.page.locator("#status").get_attribute("data-rule")) or ""

    # ------------------------------------------------------------------ members (issue 35)
    async def refusal(self) -> str | None:
        """The rule of the refused page showing now, or None."""
        if await self.page.locator("#refusal").count():
            return await self.page.locator("#refusal").get_attribute("data-rule")
        return None

    async def step_up(self) -> None:
        """On a step-up-required page: "Confirm with your passkey" (a fresh check), back where the page says."""
        await self._ceremony_then_leave()

    async def _owner_post(self, submit: Any) -> str | None:
        """Submit a console form; when refused for a stale check, step up and submit again.
        Returns the first refusal's rule (None when the first try went through)."""
        await submit()
        first = await self.refusal()
        if first == "step-up-required":
            await self.step_up()
            await submit()
        return first

    async def invite(self, console: str, login: str) -> tuple[str | None, str]:
        """Invite ``login`` from the members page: (the first try's refusal, the one-time link shown)."""

        async def submit() -> None:
            await self.page.goto(f"{console}/members")
            await self.page.fill("#invite-login", login)
            await self.page.click("#invite")
            await self.page.wait_for_selector("#refusal, #invite-link", timeout=WAIT_MS)

        first = await self._owner_post(submit)
        link = await self.page.locator("#invite-link").text_content() if not await self.refusal() else ""
        return first, (link or "").strip()

    async def member_row(self, console: str, login: str) -> str:
        await self.page.goto(f"{console}/members")
        row = self.page.locator(f"tr[data-member={login}]")
        return (await row.inner_text()) if await row.count() else ""

    async def remove(self, console: str, login: str) -> tuple[str | None, str]:
        """Remove ``login`` from the members page: (the first try's refusal, the page's done marker)."""

        async def submit() -> None:
            await self.page.goto(f"{console}/members")
            await self.page.locator(f"tr[data-member={login}] button.remove").click()
            await self.page.wait_for_selector("#refusal, #done", timeout=WAIT_MS)

        first = await self._owner_post(submit)
        done = self.page.locator("#done")
        return first, ((await done.get_attribute("data-done")) or "") if await done.count() else ""

    async def at_provider(self, button: str, sub: str) -> None:
        """Click a console button that goes to the OpenID Connect provider, log in there as ``sub`` (the mock
        provider's form), and wait until the browser is back at the console."""
        await self.page.click(button)
        await self.page.fill("input[name=sub]", sub)
        await self.page.click("button[type=submit]:has-text('Authorize')")
        await self.page.wait_for_selector("#who, #refusal", timeout=WAIT_MS)

    async def who(self) -> str:
        return (await self.page.locator("#who").text_content() or "") if await self.page.locator("#who").count() else ""
