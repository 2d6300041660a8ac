"""A household in a real browser with a real OpenID Connect provider (oidc-provider-mock on loopback): the owner
invites a person from the console, the person joins by linking their provider account (or a passkey), uses a
connector, and is removed, each step with its audit row; removing them stops their running MCP session at its
next call; a removed member's provider login is refused."""

from __future__ import annotations

import threading
from pathlib import Path

import anyio
import httpx2
import pytest

from support import mcp_http, text_of
from support.web_harness import cli, enrolled, serve_console
from support.web_oidc import add_provider, real_provider, set_user

WAIT = 60


@pytest.fixture
def provider():
    with real_provider() as issuer:
        yield issuer


@pytest.fixture
def console(vault: Path, provider: str):
    (vault.parent / "oidc-secret").write_text("a-client-secret\n")  # a confidential client, as most providers make
    add_provider(
        vault,
        "real",
        provider,
        display_name="Household ID",
        second_factor_amr=["otp"],
        client_secret_file="oidc-secret",
    )
    with serve_console(vault) as served:
        yield served


class RunningSession(threading.Thread):
    """A connector's MCP session held open across the removal: one call before, one after (its own event loop:
    Playwright's sync API holds the test thread's)."""

    def __init__(self, url: str, token: str) -> None:
        super().__init__(daemon=True)
        self.url, self.token = url, token
        self.first_done, self.go = threading.Event(), threading.Event()
        self.first: str = ""
        self.second: str = ""
        self.error: BaseException | None = None

    async def _main(self) -> None:
        async with mcp_http(self.url, self.token, start_session=True) as client:
            self.first = text_of(await client.call_tool("list_notes", {"folder": ""}))
            self.first_done.set()
            await anyio.to_thread.run_sync(lambda: self.go.wait(WAIT))
            try:
                self.second = text_of(await client.call_tool("list_notes", {"folder": ""}))
            except BaseException as exc:  # the transport's refusal of a revoked credential
                self.second = f"{type(exc).__name__}: {exc} {getattr(exc, 'error', '')!r}"

    def run(self) -> None:
        try:
            anyio.run(self._main)
        except BaseException as exc:
            self.error = exc
        finally:
            self.first_done.set()


def _audit(console, tool: str) -> list[str]:
    rows = console.runtime.state.query("SELECT outcome FROM audit WHERE tool = ? ORDER BY id", (tool,))
    return [r["outcome"] for r in rows]


def test_invite_join_with_the_provider_connect_and_remove(console, provider: str, devices) -> None:
    owner = enrolled(console, devices())
    page = owner.page
    page.goto(f"{console.url}/members")
    page.fill("#invite-login", "bob")
    page.click("#invite")
    link = page.locator("#invite-link").inner_text()
    assert link.startswith(f"{console.url}/join/ngi_")
    assert _audit(console, "web:member-invite")[0].endswith(":bob")

    # bob opens the link on his own device and links his account at the household's provider
    set_user(provider, "bob-at-idp", email="owner@example.org")  # the e-mail of another person: never used
    bob = devices()
    bob.page.goto(link)
    assert bob.page.locator("#login").inner_text() == "bob"
    bob.page.click("#link-real")
    bob.page.fill("input[name=sub]", "bob-at-idp")
    bob.page.click("button[type=submit]:has-text('Authorize')")
    bob.page.wait_for_url(f"{console.url}/", timeout=WAIT * 1000)
    assert bob.page.locator("#who").inner_text() == "bob"
    assert _audit(console, "web:oidc-link")[0].startswith("ok:real:oi_")
    assert console.runtime.members.may_use("bob", "personal")
    bob.page.goto(link)  # the invitation is spent
    assert bob.page.locator("#refusal").get_attribute("data-rule") == "invite-used"

    # bob's connector: a workstation token (its MCP session runs across the removal)
    token = cli(
        console.config_path, "token", "create", "--name", "bob-laptop", "--class", "workstation", "--login", "bob"
    )
    token = token.strip().splitlines()[-1].strip()
    session = RunningSession(console.url, token)
    session.start()
    assert session.first_done.wait(WAIT) and session.error is None, session.error
    assert "Refused" not in session.first

    from notegate.state import LiveSyncDevice

    bobs_phone = LiveSyncDevice(
        "k-bob", "bobs-phone", "personal", "bob", "livesync:k-bob", "ES256", "PEM", 0, None, None
    )
    console.runtime.state.add_livesync_device(bobs_phone)  # his phone's LiveSync key (tests/livesync: the real gate)
    page.goto(f"{console.url}/members")
    row = page.locator("tr[data-member=bob]")
    assert "bob-laptop" in row.locator(".connectors").inner_text()
    assert "bobs-phone (LiveSync)" in row.inner_text()
    assert "real" in row.inner_text()  # the linked provider account
    row.locator("button.remove").click()
    page.wait_for_url("**/members?env=personal&done=member-removed")
    assert page.locator("tr[data-member=bob]").count() == 0
    removed = _audit(console, "web:member-remove")
    assert len(removed) == 1 and removed[0].startswith("ok:bob:") and "tokens=" in removed[0]
    assert "console_sessions=1" in removed[0] and "livesync_devices=k-bob" in removed[0]
    assert console.runtime.state.livesync_device("k-bob").public_key is None

    session.go.set()
    session.join(WAIT)
    assert session.second.startswith("MCPError"), session.second  # the running session's next call failed
    probe = httpx2.post(  # why: the token it holds answers 401 now (the SDK hides the status)
        f"{console.url}/mcp",
        headers={"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream"},
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
    )
    assert probe.status_code == 401 and "invalid_token" in probe.headers.get("www-authenticate", "")
    bob.page.goto(f"{console.url}/")  # bob's console session ended with his membership
    assert "/login" in bob.page.url
    bob.page.click("#login-real")  # and his provider account no longer lets him in
    bob.page.fill("input[name=sub]", "bob-at-idp")
    bob.page.click("button[type=submit]:has-text('Authorize')")
    bob.page.wait_for_selector("#refusal", timeout=WAIT * 1000)
    assert bob.page.locator("#refusal").get_attribute("data-rule") == "person-unknown"


def test_a_member_joins_with_a_passkey_through_the_invitation(console, devices) -> None:
    owner = enrolled(console, devices())
    owner.page.goto(f"{console.url}/members")
    owner.page.fill("#invite-login", "carol")
    owner.page.click("#invite")
    link = owner.page.locator("#invite-link").inner_text()
    carol = devices()
    carol.page.goto(link)
    carol.page.fill("#name", "carol's phone")
    assert carol.ceremony() == "ok"
    assert carol.page.locator("#who").inner_text() == "carol"
    assert _audit(console, "web:member-join")[0].startswith("ok:passkey:pk_")
    assert console.runtime.members.may_use("carol", "personal")
    carol.page.goto(f"{console.url}/members")  # a member is no owner: the page is not theirs
    assert carol.page.locator("#refusal").get_attribute("data-rule") == "console-not-owner"


def test_a_stale_session_cannot_invite(console, devices) -> None:
    owner = enrolled(console, devices())
    console.clock.advance(3600)  # the owner's passkey check is now an hour old
    owner.page.goto(f"{console.url}/members")
    owner.page.fill("#invite-login", "dave")
    owner.page.click("#invite")
    assert owner.page.locator("#refusal").get_attribute("data-rule") == "step-up-required"
    assert "refused:step-up-required" in _audit(console, "web:member-invite")


def _authorize(device, sub: str) -> None:
    device.page.fill("input[name=sub]", sub)
    device.page.click("button[type=submit]:has-text('Authorize')")


def test_a_stale_provider_login_cannot_approve_an_elevation_in_the_browser(console, provider: str, devices) -> None:
    """The owner links their account at the real provider, then approves an elevation by logging in there
    again: a login older than max_age is refused, a fresh one with a second factor approves."""
    import time

    from notegate.auth.grants import Grants, owners_in
    from notegate.policy import Caller

    owner = enrolled(console, devices())
    owner.page.goto(f"{console.url}/passkeys")
    owner.page.click("#link-self-real")
    _authorize(owner, "owner-at-idp")
    owner.page.wait_for_url(f"{console.url}/passkeys", timeout=WAIT * 1000)
    assert owner.page.locator("#identities").inner_text() == "real"

    phone = Caller("owner", "Owner", "claude.ai", "hosted", "restricted", session="s1", connector="oauth:fam-a")
    grants = Grants(console.runtime.state, console.runtime.policy, owner_of=owners_in(lambda: console.runtime.config))
    ticket = grants.request(phone, reason="write the digest", conversation=None, base=console.url, now=time.time())
    link_id = ticket.link.rsplit("/", 1)[1]

    set_user(provider, "owner-at-idp", amr=["pwd", "otp"], auth_time=int(time.time()) - 3600)  # an hour-old login
    owner.page.goto(ticket.link)
    owner.page.click("#approve-real")
    _authorize(owner, "owner-at-idp")
    owner.page.wait_for_selector("#refusal", timeout=WAIT * 1000)
    assert owner.page.locator("#refusal").get_attribute("data-rule") == "step-up-login-stale"
    assert grants.pending(link_id, now=time.time()) is not None

    set_user(provider, "owner-at-idp", amr=["pwd"], auth_time=int(time.time()))  # fresh, but one factor
    owner.page.goto(ticket.link)
    owner.page.click("#approve-real")
    _authorize(owner, "owner-at-idp")
    owner.page.wait_for_selector("#refusal", timeout=WAIT * 1000)
    assert owner.page.locator("#refusal").get_attribute("data-rule") == "step-up-second-factor-unproven"
    assert "amr=[pwd]" in owner.page.locator("#refusal").inner_text()

    set_user(provider, "owner-at-idp", amr=["pwd", "otp"], auth_time=int(time.time()))
    owner.page.goto(ticket.link)
    owner.page.click("#approve-real")
    _authorize(owner, "owner-at-idp")
    owner.page.wait_for_selector("#outcome", timeout=WAIT * 1000)
    assert owner.page.locator("#outcome").get_attribute("data-decision") == "approve"
    assert grants.pending(link_id, now=time.time()) is None
    assert _audit(console, "web:oidc-approve") == [
        "refused:step-up-login-stale",
        "refused:step-up-second-factor-unproven",
        "ok:oauth:fam-a",
    ]
