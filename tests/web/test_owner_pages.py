"""The owner's inbox review and elevations pages over the real server (httpx, no browser): every refusal by
its exact rule (console-not-owner, csrf-missing, csrf-invalid, stale-revision, floor-hold, bad-argument,
grant-unknown, elevation-unknown, elevation-approver-not-owner), and what the pages show, escaped."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest

from notegate.auth.grants import Grants
from notegate.auth.websession import WebSessions, csrf_token
from notegate.config import load_config
from notegate.policy import Caller
from notegate.services.container import Services
from support.callers import make_caller
from support.web_harness import Console, serve_console

PHONE = make_caller(tier="restricted", client_class="workstation", login="owner", client="phone")
PHONE = Caller(**{**PHONE.__dict__, "connector": "token:phone"})
COOKIE = "notegate-session"  # loopback: no __Host- prefix
HOSTILE = '<script>window.pwned=1</script><img src=x onerror="window.pwned=2">'


def _member_config(vault: Path) -> None:
    vault.write_text(vault.read_text().replace("members = []", 'members = ["member"]', 1))


@pytest.fixture
def served(vault: Path) -> Iterator[Console]:
    _member_config(vault)
    with serve_console(vault) as console:
        yield console


def _client(console: Console, login: str) -> tuple[httpx2.Client, str]:
    """A browser signed in as ``login`` (the session opened as a passkey login opens it) and its CSRF token."""
    state = console.runtime.state
    passkey = f"pk-test-{login}"
    if not state.query("SELECT id FROM passkeys WHERE id = ?", (passkey,)):
        row = {"id": passkey, "login": login, "credential_id": passkey.encode(), "public_key": b"-"}
        row |= {"user_handle": b"-", "sign_count": 0, "name": "test", "created_at": console.clock()}
        state.insert_passkey(row)
    session = WebSessions(state).open(login=login, passkey_id=passkey, now=console.clock())
    client = httpx2.Client(base_url=console.url, cookies={COOKIE: session.secret}, follow_redirects=False)
    return client, csrf_token(session.secret)


def _rule(response: httpx2.Response) -> str | None:
    found = re.search(r'id="refusal" data-rule="([^"]*)"', response.text)
    return found.group(1) if found else None


def _items(console: Console) -> dict[str, str]:
    """Write the items a restricted connector of the owner would: path -> version."""
    inbox = Services.build(console.runtime).inbox
    made = {
        "log": inbox.inbox_write(PHONE, "log", "Shipped the console.", project="notegate"),
        "handoff": inbox.inbox_write(PHONE, "handoff", HOSTILE, project="notegate"),
        "floor": inbox.inbox_write(PHONE, "decision", "looks fine\u202eevil", project="notegate"),
    }
    return {name: (w.path, w.new_revision) for name, w in made.items()}


def test_not_signed_in_goes_to_login(served: Console) -> None:
    for path in ("/inbox", "/elevations"):
        response = httpx2.get(f"{served.url}{path}", follow_redirects=False)
        assert response.status_code == 303 and response.headers["location"].startswith("/login?next=")


def test_the_inbox_shows_each_item_with_its_promotion_diff_escaped(served: Console) -> None:
    items = _items(served)
    client, _ = _client(served, "owner")
    page = client.get("/inbox")
    assert page.status_code == 200, page.text
    html = page.text
    assert 'id="waiting-count">3<' in html
    assert "+Shipped the console." in html  # the log route's entry in the diff against log/notegate.md
    assert "handoffs/notegate.md" in html and "log/notegate.md" in html and "design/notegate.md" in html
    assert "<script>window.pwned" not in html and "<img src=x" not in html
    assert "&lt;script&gt;window.pwned=1&lt;/script&gt;" in html
    assert 'data-floor="hold"' in html and "U+202E" in html
    for path, version in items.values():
        assert f'value="{version}"' in html and f'value="{path}"' in html


def test_a_member_is_refused_every_owner_page_and_action(served: Console) -> None:
    items = _items(served)
    client, csrf = _client(served, "member")
    for path in ("/inbox", "/elevations"):
        response = client.get(path)
        assert response.status_code == 403 and _rule(response) == "console-not-owner", response.text
    path, version = items["log"]
    for action in ("promote", "hold", "delete"):
        response = client.post(
            f"/inbox/{action}", data={"csrf": csrf, "item": path, "version": version, "reason": "mine"}
        )
        assert _rule(response) == "console-not-owner", response.text
    assert Services.build(served.runtime).notes.rt.environment(None).store.blob_id(path) == version


def test_an_environment_that_is_not_there_is_refused_like_a_member(served: Console) -> None:
    client, _ = _client(served, "owner")
    assert _rule(client.get("/inbox?env=nowhere")) == "console-not-owner"
    assert _rule(client.get("/elevations?env=nowhere")) == "console-not-owner"


@pytest.mark.parametrize(("csrf", "rule"), [(None, "csrf-missing"), ("x" * 43, "csrf-invalid")])
def test_an_action_without_this_browsers_csrf_token_is_refused(served: Console, csrf: str | None, rule: str) -> None:
    items = _items(served)
    client, _ = _client(served, "owner")
    path, version = items["log"]
    data = {"item": path, "version": version, **({"csrf": csrf} if csrf else {})}
    response = client.post("/inbox/promote", data=data)
    assert response.status_code == 403 and _rule(response) == rule
    assert served.runtime.environment(None).store.blob_id(path) == version  # nothing was promoted


def test_promote_hold_and_delete_act_through_the_service_with_its_rules(served: Console) -> None:
    items = _items(served)
    client, csrf = _client(served, "owner")
    store = served.runtime.environment(None).store
    # the floor holds what it holds, for the owner's browser too
    path, version = items["floor"]
    refused = client.post("/inbox/promote", data={"csrf": csrf, "item": path, "version": version})
    assert refused.status_code == 403 and _rule(refused) == "floor-hold"
    # a version the page did not show is refused by the service's own rule
    path, version = items["log"]
    stale = client.post("/inbox/promote", data={"csrf": csrf, "item": path, "version": "0" * 40})
    assert _rule(stale) == "stale-revision"
    done = client.post("/inbox/promote", data={"csrf": csrf, "item": path, "version": version})
    assert done.status_code == 303 and done.headers["location"].endswith("done=promote"), done.text
    assert store.blob_id(path) == "absent" and "Shipped the console." in store.read("log/notegate.md")[0].decode()
    # a hold needs a reason
    path, version = items["handoff"]
    empty = client.post("/inbox/hold", data={"csrf": csrf, "item": path, "version": version, "reason": " "})
    assert _rule(empty) == "bad-argument"
    held = client.post("/inbox/hold", data={"csrf": csrf, "item": path, "version": version, "reason": "hostile"})
    assert held.status_code == 303
    page = client.get("/inbox").text
    assert 'id="held-count">1<' in page and 'class="held-reason">hostile<' in page
    # delete is refused for anything but an inbox item
    notes = client.post("/inbox/delete", data={"csrf": csrf, "item": "rules/digest.md", "version": "0" * 40})
    assert _rule(notes) == "no-such-note"
    path, version = items["floor"]
    gone = client.post("/inbox/delete", data={"csrf": csrf, "item": path, "version": version})
    assert gone.status_code == 303 and store.blob_id(path) == "absent"
    outcomes = [
        r["outcome"]
        for r in served.runtime.state.query("SELECT outcome FROM audit WHERE tool LIKE 'web:inbox-%' ORDER BY id")
    ]
    assert outcomes[:3] == ["refused:floor-hold", "refused:stale-revision", outcomes[2]]
    assert outcomes[2].startswith("ok:") and "refused:bad-argument" in outcomes
    origin = load_config(served.config_path).environment(None).origin_url
    log = subprocess.run(
        ["git", "-C", str(origin), "log", "-3", "--format=%an <%ae>%n%B"], capture_output=True, text=True, check=True
    ).stdout
    assert "Notegate-Connector: web:console" in log and "Notegate-Client: notegate-console" in log


def test_an_item_changed_since_its_hold_is_marked(served: Console) -> None:
    items = _items(served)
    client, csrf = _client(served, "owner")
    path, version = items["log"]
    assert client.post("/inbox/hold", data={"csrf": csrf, "item": path, "version": version, "reason": "later"})
    Services.build(served.runtime).inbox.inbox_write(PHONE, "log", "One more thing.", project="notegate")
    page = client.get("/inbox").text
    assert 'id="held-count">0<' in page
    assert 'class="changed-since-hold"' in page and 'class="earlier-reason">later<' in page


def test_elevations_list_requests_and_grants_and_refuse_by_rule(served: Console) -> None:
    grants = Grants(served.runtime.state, served.runtime.policy)
    hosted = make_caller(tier="restricted", client_class="hosted", login="owner", client="claude.ai")
    hosted = Caller(**{**hosted.__dict__, "connector": "oauth:fam-a"})
    ticket = grants.request(hosted, reason="edit <b>rules</b>", conversation=None, base=served.url, now=served.clock())
    client, csrf = _client(served, "owner")
    page = client.get("/elevations")
    assert page.status_code == 200
    assert f'class="code">{ticket.code}<' in page.text and "edit &lt;b&gt;rules&lt;/b&gt;" in page.text
    assert f'data-request="{ticket.grant_id}"' in page.text and 'id="grant-count">0<' in page.text
    # approve needs the fresh passkey: the page by request id shows the code and no Approve button yet
    approve = client.get(f"/elevations/{ticket.grant_id}")
    assert f'id="code">{ticket.code}<' in approve.text and 'id="approve"' not in approve.text
    assert 'data-verify="/elevations/' in approve.text
    without = client.post(f"/elevations/{ticket.grant_id}", data={"csrf": csrf, "decision": "approve"})
    assert 'data-rule="elevation-assertion-unverified"' in without.text
    assert _rule(client.get("/elevations/g-0000000000000000")) == "elevation-unknown"
    # a member sees neither the list nor the request's page
    member, member_csrf = _client(served, "member")
    assert _rule(member.get(f"/elevations/{ticket.grant_id}")) == "console-not-owner"
    refused = member.post(f"/elevations/{ticket.grant_id}", data={"csrf": member_csrf, "decision": "deny"})
    assert _rule(refused) == "console-not-owner"
    # unknown grants are refused; a denial from the list answers the request
    assert _rule(client.post("/elevations/grants/g-1/revoke", data={"csrf": csrf})) == "grant-unknown"
    denied = client.post(f"/elevations/{ticket.grant_id}", data={"csrf": csrf, "decision": "deny"})
    assert 'data-decision="deny"' in denied.text
    assert grants.tier_for(hosted, ticket.grant, None, served.clock())[1].rule == "grant-unknown"
    assert 'id="pending-count">0<' in client.get("/elevations").text


def test_every_owner_page_answer_carries_the_security_headers(served: Console) -> None:
    from support.web_harness import assert_strict

    client, csrf = _client(served, "owner")
    answers = [
        client.get("/inbox"),
        client.get("/elevations"),
        client.get("/elevations/g-0000000000000000"),
        client.post("/inbox/promote", data={"csrf": csrf, "item": "inbox/log/x.md", "version": "0" * 40}),
        client.post("/elevations/grants/g-1/revoke", data={}),
        httpx2.get(f"{served.url}/inbox", follow_redirects=False),
    ]
    for response in answers:
        assert_strict(response.headers)


def test_deleting_a_held_item_takes_its_hold_along_in_the_same_commit(served: Console) -> None:
    items = _items(served)
    client, csrf = _client(served, "owner")
    store = served.runtime.environment(None).store
    path, version = items["handoff"]
    assert client.post("/inbox/hold", data={"csrf": csrf, "item": path, "version": version, "reason": "odd"})
    assert path in store.read("inbox/_held.md")[0].decode()
    gone = client.post("/inbox/delete", data={"csrf": csrf, "item": path, "version": version})
    assert gone.status_code == 303, gone.text
    assert store.blob_id(path) == "absent"
    assert path not in store.read("inbox/_held.md")[0].decode()  # the held list never names a gone item
    assert served.runtime.state.holds("personal") == {}
    origin = load_config(served.config_path).environment(None).origin_url
    changed = subprocess.run(
        ["git", "-C", str(origin), "show", "--name-only", "--format=%s", "HEAD"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert changed[:2] == ["delete", path] and path in changed and "inbox/_held.md" in changed


def test_a_capture_is_shown_with_its_text_and_no_promote_button(served: Console) -> None:
    """The owner never decides blind: every waiting item shows its own text (fenced, hidden characters
    marked), and Promote is offered only where a route exists (a capture has none)."""
    capture = Services.build(served.runtime).inbox.inbox_write(PHONE, "capture", "Buy oat milk\u200b.", title="shop")
    client, _ = _client(served, "owner")
    html = client.get("/inbox").text
    section = html.split(f'data-path="{capture.path}"', 1)[1].split("</section>", 1)[0]
    assert '<pre class="item-text untrusted">' in section and "Buy oat milk" in section
    assert "U+200B" in section  # the zero-width space is shown as a marker, not hidden
    assert 'class="promote"' not in section and 'class="hold"' in section and 'class="delete"' in section
    assert 'class="no-diff" data-rule="no-route"' in section


def test_a_refused_action_is_an_inline_message_on_the_same_page_in_console_terms(served: Console) -> None:
    items = _items(served)
    client, csrf = _client(served, "owner")
    path, version = items["floor"]
    refused = client.post("/inbox/promote", data={"csrf": csrf, "item": path, "version": version})
    assert refused.status_code == 403 and _rule(refused) == "floor-hold"
    html = refused.text
    assert 'id="waiting-count">3<' in html  # the inbox itself, not a refusal page
    assert "hold it with a reason, or delete it" in html
    assert "hold_inbox" not in html and "MCP" not in html.split('id="refusal"', 1)[1].split("</p>", 1)[0]
    assert 'href="/login"' not in html


def test_a_promoted_items_history_names_who_wrote_it_not_only_who_promoted_it(served: Console) -> None:
    items = _items(served)
    client, csrf = _client(served, "owner")
    path, version = items["log"]
    done = client.post("/inbox/promote", data={"csrf": csrf, "item": path, "version": version})
    assert done.status_code == 303, done.text
    history = client.get("/history/log/notegate.md").text
    assert "reviewed by notegate-console (owner)" in history
    assert '<span class="authors">phone (owner)</span>' in history
