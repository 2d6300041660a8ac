"""The owner's audit, connections and status pages against the real server (uvicorn on loopback), driven with
httpx and a real console session cookie: every page, every filter, every refusal by its exact rule, and the
audit page never showing a note's contents or a token."""

from __future__ import annotations

import os
import re
import secrets
import time
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pygit2
import pytest
from anyio.from_thread import start_blocking_portal

from notegate.auth.oauth_core import ACCESS_PREFIX, digest
from notegate.auth.websession import WebSessions
from support import mcp_http, mint, text_of
from support.web_harness import Console, serve_console

PING = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


@pytest.fixture
def two_envs(vault: Path) -> Path:
    """The default environment (personal, owner 'owner') and household (owner 'partner', member 'kid')."""
    pygit2.init_repository(str(vault.parent / "household.git"), bare=True, initial_head="main")
    text = vault.read_text().replace(
        "[policy]",
        '[environments.household]\norigin = "household.git"\nowner = "partner"\nmembers = ["kid"]\n\n[policy]',
        1,
    )
    vault.write_text(text)
    return vault


@pytest.fixture
def console(two_envs: Path) -> Iterator[Console]:
    with serve_console(two_envs) as served:
        yield served


class Browser:
    """A signed-in person: the session cookie a passkey login sets, and the page's CSRF token."""

    def __init__(self, console: Console, login: str) -> None:
        state = console.runtime.state
        passkey_id = f"pk_{secrets.token_hex(4)}"
        state.insert_passkey(
            {
                "id": passkey_id,
                "login": login,
                "credential_id": os.urandom(16),
                "public_key": b"not-used-here",
                "user_handle": os.urandom(16),
                "sign_count": 0,
                "name": "test",
                "created_at": time.time(),
            }
        )
        session = WebSessions(state).open(login=login, passkey_id=passkey_id, now=console.clock())
        self.csrf = session.csrf
        self.http = httpx2.Client(
            base_url=console.url, cookies={"notegate-session": session.secret}, follow_redirects=False, timeout=30
        )

    def get(self, url: str, /, **params: str) -> httpx2.Response:
        return self.http.get(url, params=params)

    def post(self, url: str, /, *, csrf: bool = True, **fields: str) -> httpx2.Response:
        data = {**({"csrf": self.csrf} if csrf else {}), **fields}
        return self.http.post(url, data=data)


def rule_of(response: httpx2.Response) -> str | None:
    found = re.search(r'id="refusal" data-rule="([^"]+)"', response.text)
    return found.group(1) if found else None


def token_id(token: str) -> str:
    return token.split("_")[1]


# ---------------------------------------------------------------- the gate on every page and action
PAGES = ["/audit", "/connections", "/status"]


@pytest.mark.parametrize("path", PAGES)
def test_each_page_needs_a_session(console: Console, path: str) -> None:
    response = httpx2.get(f"{console.url}{path}", follow_redirects=False)
    assert response.status_code == 303 and response.headers["location"].startswith("/login?next=")


@pytest.mark.parametrize("path", PAGES)
def test_each_page_is_the_owners_only(console: Console, path: str) -> None:
    kid = Browser(console, "kid")  # a member of household, owner of nothing
    for env in ("household", "personal", "nowhere"):
        response = kid.get(path, env=env)
        assert response.status_code == 403 and rule_of(response) == "console-not-owner", (path, env)
    partner = Browser(console, "partner")  # owns household, not personal
    assert rule_of(partner.get(path, env="personal")) == "console-not-owner"
    assert partner.get(path).status_code == 200  # by default: the environment the person owns
    assert partner.get(path, env="household").status_code == 200


@pytest.mark.parametrize(
    ("path", "fields"),
    [
        ("/connections/tokens", {"name": "x", "class": "hosted", "tier": ""}),
        ("/connections/tokens/0123456789abcdef/revoke", {}),
        ("/connections/oauth/0123456789abcdef01234567/revoke", {}),
    ],
)
def test_each_action_needs_the_owner_and_the_csrf_token(console: Console, path: str, fields: dict) -> None:
    owner = Browser(console, "owner")
    missing = owner.post(path, csrf=False, env="personal", **fields)
    assert missing.status_code == 403 and rule_of(missing) == "csrf-missing"
    wrong = owner.http.post(path, data={"csrf": "x" * 40, "env": "personal", **fields})
    assert rule_of(wrong) == "csrf-invalid"
    kid = Browser(console, "kid")
    assert rule_of(kid.post(path, env="household", **fields)) == "console-not-owner"
    assert rule_of(kid.post(path, env="personal", **fields)) == "console-not-owner"
    anonymous = httpx2.post(f"{console.url}{path}", data={"env": "personal", **fields})
    assert rule_of(anonymous) == "login-required"
    rows = console.runtime.state.audit_rows(tool=None, limit=1000)
    refused = [r for r in rows if r["tool"].startswith("web:") and r["outcome"].startswith("refused:")]
    assert {r["outcome"] for r in refused} >= {
        "refused:csrf-missing",
        "refused:csrf-invalid",
        "refused:console-not-owner",
    }


# ---------------------------------------------------------------- connections: tokens
def test_create_a_token_shown_once_then_revoke_it_and_the_mcp_door_refuses_it(console: Console) -> None:
    owner = Browser(console, "owner")
    created = owner.post("/connections/tokens", env="personal", name="phone", **{"class": "hosted", "tier": ""})
    assert created.status_code == 200 and created.headers["cache-control"] == "no-store"
    token = re.search(r'id="secret" class="secret">(ngt_[A-Za-z0-9_-]+)<', created.text).group(1)
    tid = token_id(token)
    record = console.runtime.state.token(tid)
    assert (record["environment"], record["login"], record["client_class"], record["tier"]) == (
        "personal",
        "owner",
        "hosted",
        "restricted",
    )
    listing = owner.get("/connections")
    assert f'data-token="{tid}"' in listing.text and token not in listing.text
    assert token.split("_", 2)[2] not in listing.text  # not even the secret half
    assert httpx2.post(f"{console.url}/mcp", json=PING, headers={**MCP_HEADERS, **_bearer(token)}).status_code == 200

    again = owner.post("/connections/tokens", env="personal", name="PHONE", **{"class": "hosted", "tier": ""})
    assert again.status_code == 400 and rule_of(again) == "token-name-taken"
    assert "ngt_" not in again.text

    revoked = owner.post(f"/connections/tokens/{tid}/revoke", env="personal")
    assert revoked.status_code == 303 and "done=token-revoked" in revoked.headers["location"]
    assert console.runtime.state.token(tid)["revoked_at"] is not None
    assert f'data-token="{tid}"' not in owner.get("/connections").text
    refused = httpx2.post(f"{console.url}/mcp", json=PING, headers={**MCP_HEADERS, **_bearer(token)})
    assert refused.status_code == 401
    outcomes = [(r["tool"], r["outcome"], r["environment"], r["login"]) for r in console.runtime.state.audit_rows()]
    assert ("web:token-create", f"ok:token:{tid}", "personal", "owner") in outcomes
    assert ("web:token-create", "refused:token-name-taken", "personal", "owner") in outcomes
    assert ("web:token-revoke", f"ok:token:{tid}", "personal", "owner") in outcomes
    # a revoked token's name is free again
    assert owner.post("/connections/tokens", env="personal", name="phone", **{"class": "hosted"}).status_code == 200


def test_the_form_goes_through_issue_tokens_checks(console: Console) -> None:
    owner = Browser(console, "owner")
    for fields in (
        {"name": "", "class": "hosted"},
        {"name": "x", "class": "root"},
        {"name": "x", "class": "machine", "tier": "trusted"},
    ):
        response = owner.post("/connections/tokens", env="personal", **fields)
        assert rule_of(response) == "bad-argument", fields
    assert not [r for r in console.runtime.state.tokens() if r["environment"] == "personal"]


def test_revoking_another_environments_token_is_refused(console: Console, two_envs: Path) -> None:
    theirs = mint(two_envs, name="kid-phone", login="kid", client_class="hosted", environment="household")
    ours = mint(two_envs, name="laptop", environment="personal")
    partner = Browser(console, "partner")
    page = partner.get("/connections")
    assert f'data-token="{token_id(theirs)}"' in page.text and token_id(ours) not in page.text
    for tid in (token_id(ours), "ffffffffffffffff", "x" * 300):
        response = partner.post(f"/connections/tokens/{tid}/revoke", env="household")
        assert response.status_code == 400 and rule_of(response) == "console-revoke-other-environment", tid
    assert console.runtime.state.token(token_id(ours))["revoked_at"] is None
    # the owner of both sides may revoke it only from its own environment's page
    owner = Browser(console, "owner")
    response = owner.post(f"/connections/tokens/{token_id(theirs)}/revoke", env="personal")
    assert rule_of(response) == "console-revoke-other-environment"
    assert console.runtime.state.token(token_id(theirs))["revoked_at"] is None


def test_a_token_is_created_only_in_the_owners_environment(console: Console) -> None:
    partner = Browser(console, "partner")
    response = partner.post("/connections/tokens", env="personal", name="sneaky", **{"class": "hosted"})
    assert rule_of(response) == "console-not-owner"
    assert not [r for r in console.runtime.state.tokens() if r["name"] == "sneaky"]


# ---------------------------------------------------------------- connections: OAuth, devices, members
def test_oauth_families_are_listed_and_revoked(console: Console) -> None:
    state = console.runtime.state
    now = time.time()
    state.oauth_insert_family(
        family_id="f" * 24,
        client_id="https://claude.ai/c.json",
        client_name="<b>Claude</b>",
        login="owner",
        environment="personal",
        now=now,
    )
    state.oauth_insert_family(
        family_id="e" * 24, client_id="dcr-1", client_name="Other", login="partner", environment="household", now=now
    )
    owner = Browser(console, "owner")
    page = owner.get("/connections")
    assert 'data-family="' + "f" * 24 + '"' in page.text and "e" * 24 not in page.text
    assert "<b>Claude</b>" not in page.text and "&lt;b&gt;Claude&lt;/b&gt;" in page.text
    refused = owner.post(f"/connections/oauth/{'e' * 24}/revoke", env="personal")
    assert rule_of(refused) == "console-revoke-other-environment"
    assert state.oauth_family("e" * 24)["revoked_at"] is None
    access = ACCESS_PREFIX + secrets.token_urlsafe(32)  # a live access token of the family, as /token mints it
    state.oauth_insert_token(
        token_hash=digest(access),
        kind="access",
        family_id="f" * 24,
        client_id="https://claude.ai/c.json",
        scopes="",
        resource=f"{console.url}/mcp",
        expires_at=now + 3600,
        now=now,
    )
    assert _ping(console, access) == 200
    assert re.search(
        r'data-family="f{24}">.*?<td data-label="live tokens">1</td>', owner.get("/connections").text, re.S
    )
    done = owner.post(f"/connections/oauth/{'f' * 24}/revoke", env="personal")
    assert done.status_code == 303
    assert _ping(console, access) == 401  # the MCP door refuses the family's tokens at once
    assert state.oauth_family("f" * 24)["revoked_at"] is not None
    assert "f" * 24 not in owner.get("/connections").text
    assert ("web:oauth-revoke", f"ok:oauth:{'f' * 24}") in [(r["tool"], r["outcome"]) for r in state.audit_rows()]


def test_devices_and_members_are_listed_read_only(two_envs: Path) -> None:
    text = two_envs.read_text() + (
        '\n[devices.laptop]\npublic_key = "ed25519:' + "A" * 43 + '"\nperson = "owner"\n'
        '\n[devices.tablet]\npublic_key = "ed25519:' + "B" * 42 + "A" + '"\nperson = "partner"\n'
    )
    two_envs.write_text(text)
    with serve_console(two_envs) as console:
        page = Browser(console, "partner").get("/connections")
        assert 'data-device="tablet"' in page.text and 'data-device="laptop"' not in page.text
        assert '<dd id="owner">partner</dd>' in page.text and '<dd id="members">kid</dd>' in page.text
        assert 'action="/connections/devices' not in page.text


# ---------------------------------------------------------------- audit
def test_the_audit_filters_and_pages_and_never_shows_contents_or_tokens(console: Console, two_envs: Path) -> None:
    marker = f"marker-{secrets.token_hex(8)}"
    laptop = mint(two_envs, name="laptop", tier="trusted", environment="personal")

    async def writes() -> None:
        async with mcp_http(console.url, laptop) as client:
            for i in range(5):
                args = {"path": f"drafts/p{i}.md", "content": f"# {marker}\n{laptop}?\n", "base_revision": "absent"}
                done = await client.call_tool("write_note", {**args, "confirmed": True})
                assert "Refused" in text_of(done) or not done.is_error, text_of(done)
            done = await client.call_tool(
                "write_note",
                {"path": "notes/alpha.md", "content": f"{marker}\n", "base_revision": "absent", "confirmed": True},
            )
            assert not done.is_error, text_of(done)
            stale = await client.call_tool(
                "write_note",
                {"path": "notes/alpha.md", "content": "x\n", "base_revision": "0" * 40, "confirmed": True},
            )
            assert stale.is_error

    # In its own thread's event loop: the package's sync Playwright browser may hold this thread's loop.
    with start_blocking_portal() as portal:
        portal.call(writes)
    owner = Browser(console, "owner")
    everything = owner.get("/audit")
    assert everything.status_code == 200
    assert (
        marker not in everything.text
        and laptop not in everything.text
        and laptop.split("_", 2)[2] not in everything.text
    )
    assert "notes/alpha.md" in everything.text

    def rows(**params: str) -> list[tuple[str, str, str]]:
        page = owner.get("/audit", **params)
        assert page.status_code == 200, page.text
        return re.findall(
            r'<td[^>]*><code>([^<]+)</code></td>\s*<td class="path"[^>]*>([^<]*)</td>\s*'
            r'<td class="outcome"[^>]*>([^<]*)</td>',
            page.text,
        )

    assert rows(path="notes/alpha.md", tool="write_note") == [
        ("write_note", "notes/alpha.md", "stale-revision"),
        ("write_note", "notes/alpha.md", "ok"),
    ]
    assert rows(outcome="stale-revision") == [("write_note", "notes/alpha.md", "stale-revision")]
    assert {p for _, p, _ in rows(path="notes")} == {"notes/alpha.md"}
    assert rows(path="note") == []  # a folder, never a prefix
    assert rows(connector="laptop") and rows(connector="laptop") == rows(connector="laptop", since="1h")
    assert rows(connector="nobody") == []
    assert rows(since="2999-01-01") == [] and rows(until="2000-01-01") == []
    # pages: bounded, newest first, "older" links carry the filters on
    first = owner.get("/audit", tool="write_note", limit="2")
    older = re.search(r'href="([^"]+)" id="older"', first.text).group(1).replace("&amp;", "&")
    assert "tool=write_note" in older and "limit=2" in older
    second = owner.http.get(older)
    ids_first = re.findall(r'<tr data-id="(\d+)"', first.text)
    ids_second = re.findall(r'<tr data-id="(\d+)"', second.text)
    assert len(ids_first) == 2 and len(ids_second) == 2 and max(map(int, ids_second)) < min(map(int, ids_first))
    # the other environment's owner sees none of it
    assert "notes/alpha.md" not in Browser(console, "partner").get("/audit").text


@pytest.mark.parametrize(
    "params",
    [
        {"limit": "0"},
        {"limit": "201"},
        {"limit": "ten"},
        {"before": "-1"},
        {"since": "yesterday"},
        {"since": "2026-12-02", "until": "2026-12-01"},
        {"tool": "write note"},
        {"path": "a\x00b"},
        {"connector": "x" * 201},
        {"sort": "at"},
    ],
)
def test_bad_audit_filters_are_refused_by_name(console: Console, params: dict) -> None:
    response = Browser(console, "owner").get("/audit", **params)
    assert response.status_code == 400 and rule_of(response) == "console-bad-query"


# ---------------------------------------------------------------- status
def test_status_shows_each_environment_its_tasks_and_the_last_jobs(console: Console) -> None:
    state = console.runtime.state
    state.open_task(
        environment="personal", kind="fetch-refused", key="a" * 40, text="The origin <moved>", now=time.time()
    )
    state.record_job_run(job="review", environment="personal", at=time.time(), line="review: promoted 1, held 0")
    state.record_job_run(job="reflect", environment="household", at=time.time(), line="reflect: done, 2 sources")
    owner = Browser(console, "owner")
    page = owner.get("/status")
    assert page.status_code == 200
    assert 'data-env="personal"' in page.text and 'data-env="household"' not in page.text
    assert 'id="origin" data-in-sync="True">reachable, in sync' in page.text
    assert re.search(r'id="last-commit"><code>[0-9a-f]{12}</code>', page.text)
    assert 'data-refused="True"' in page.text and "The origin &lt;moved&gt;" in page.text
    assert "review: promoted 1, held 0" in page.text and "reflect: done" not in page.text
    household = Browser(console, "partner").get("/status")
    assert "reflect: done, 2 sources" in household.text and 'data-refused="False"' in household.text
    assert "The origin" not in household.text


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def test_status_shows_a_real_refused_fetch_and_its_task_note(console: Console, two_envs: Path, tmp_path: Path) -> None:
    from support.gitstreams import FILE, commit, forge_push

    origin = two_envs.parent / "origin.git"
    good = str(pygit2.Repository(str(origin)).references["refs/heads/main"].target)
    scratch = pygit2.clone_repository(str(origin), str(tmp_path / "scratch.git"), bare=True)
    bad = commit(scratch, [good], add={".obsidian/plugins/x/main.js": (FILE, b"require('child_process')")})
    forge_push(origin, scratch, bad)
    console.runtime.sync("personal")  # what the server's fetch loop does at its next tick
    page = Browser(console, "owner").get("/status")
    assert 'data-refused="True"' in page.text and 'data-kind="fetch-refused"' in page.text
    assert bad[:12] in page.text and "incoming-hidden-path" in page.text
    assert "child_process" not in page.text  # the refused content never reaches the page
    assert f"<code>{good[:12]}</code>" in page.text  # the last good commit is still the one served
    assert "reachable, behind by 1" in page.text


def test_status_shows_the_last_review_and_reflect_runs_of_the_real_commands(
    console: Console, two_envs: Path, tmp_path: Path
) -> None:
    from support import notegate

    raw = tmp_path / "transcripts"
    raw.mkdir()
    review = notegate("review", "--config", str(two_envs))
    assert review.returncode == 0, review.stderr
    reflect = notegate("reflect", "--config", str(two_envs), "--raw", str(raw), "--environment", "household")
    assert reflect.returncode == 0, reflect.stderr
    personal = Browser(console, "owner").get("/status").text
    assert re.search(r'id="last-review">[0-9-]+ [0-9:]+Z: review: promoted 0, held 0, skipped 0, failed 0<', personal)
    assert 'id="last-reflect">never<' in personal  # the reflect run was household's
    household = Browser(console, "partner").get("/status").text
    assert 'id="last-review">never<' in household
    assert re.search(r'id="last-reflect">[0-9-]+ [0-9:]+Z: reflect: nothing-new, 0 sources, 0 captures<', household)


def test_the_pages_carry_the_strict_headers_and_escape_what_others_named(console: Console) -> None:
    from support.web_harness import assert_strict

    owner = Browser(console, "owner")
    hostile = '<script>alert(1)</script><img src=x onerror="alert(2)">'
    created = owner.post("/connections/tokens", env="personal", name=hostile, **{"class": "hosted"})
    assert created.status_code == 200
    assert_strict(created.headers)
    for path in PAGES:
        response = owner.get(path)
        assert_strict(response.headers)
        assert "<script>alert" not in response.text and "<img src=x" not in response.text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in owner.get("/connections").text
    assert "<script>" not in created.text.replace('<script src="/static/web/passkeys.js" defer></script>', "")


def _ping(console: Console, token: str) -> int:
    return httpx2.post(f"{console.url}/mcp", json=PING, headers={**MCP_HEADERS, **_bearer(token)}).status_code


def test_audit_pages_cover_every_row_once_when_the_clock_stepped_back(console: Console) -> None:
    state = console.runtime.state
    times = [1000.0, 1003.0, 1001.0, 1001.0, 1002.0, 999.0, 1003.0]  # ids ascend; times do not
    for i, at in enumerate(times):
        state.audit(
            now=at,
            environment="personal",
            login="owner",
            client="laptop",
            client_class="workstation",
            tier="trusted",
            session="-",
            tool="step",
            path=f"notes/{i}.md",
            outcome="ok",
        )
    owner = Browser(console, "owner")
    seen: list[str] = []
    url = "/audit?" + "tool=step&limit=2"
    for _ in range(10):
        page = owner.http.get(url)
        seen += re.findall(r'<td class="path"[^>]*>notes/(\d)\.md</td>', page.text)
        older = re.search(r'href="([^"]+)" id="older"', page.text)
        if older is None:
            break
        url = older.group(1).replace("&amp;", "&")
    expected = sorted(range(len(times)), key=lambda i: (times[i], i), reverse=True)
    assert seen == [str(i) for i in expected]


def test_the_consoles_own_page_views_are_left_out_of_the_audit_unless_asked(console: Console) -> None:
    """The owner's browsing (read_note by the connector web:console) is not what the audit is read for: the
    page leaves it out by default, keeps the console's actions, and shows the views with views=1."""
    from notegate.services.notes import NotesService
    from notegate.vault.store import ABSENT

    owner = Browser(console, "owner")
    notes = NotesService(console.runtime)
    from notegate.policy import fixed_caller

    web = fixed_caller("web:console", "owner")
    notes.write_note(web, "notes/seen.md", "# Seen\n", ABSENT)  # the console's preview, then its commit
    notes.write_note(web, "notes/seen.md", "# Seen\n", ABSENT, confirmed=True)
    notes.read_note(web, "notes/seen.md")
    default = owner.get("/audit")
    assert default.status_code == 200
    rows = re.findall(r'<td data-label="tool"><code>([^<]+)</code>', default.text)
    assert "write_note" in rows and "read_note" not in rows
    everything = owner.get("/audit", views="1")
    assert "read_note" in re.findall(r'<td data-label="tool"><code>([^<]+)</code>', everything.text)
    assert owner.get("/audit", views="yes").status_code == 400


def test_two_oauth_clients_of_one_self_chosen_name_are_told_apart(console: Console) -> None:
    """A name is the client's own claim: the page shows beside it when each registered and where it returns."""
    import json as _json

    state = console.runtime.state
    now = time.time()
    for n, (client_id, host) in enumerate([("dcr-a", "claude.ai"), ("dcr-b", "evil.example:8443")]):
        info = {"client_name": "Claude", "redirect_uris": [f"https://{host}/cb"]}
        assert state.oauth_register_client(client_id, _json.dumps(info), now - 86400 * (n + 1), lambda *_: "keep")
        state.oauth_insert_family(
            family_id=f"{n}" * 24,
            client_id=client_id,
            client_name="Claude",
            login="owner",
            environment="personal",
            now=now,
        )
    page = Browser(console, "owner").get("/connections").text
    origins = re.findall(r'<small class="client-origin">([^<]+)</small>', page)
    assert len(origins) == 2 and origins[0] != origins[1]
    assert any("returns to claude.ai" in o for o in origins) and any(
        "returns to evil.example:8443" in o for o in origins
    )
