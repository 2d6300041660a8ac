"""The console's home page, its nav bar, the shared environment picker (every page takes ``?env=``, the
notes pages too), the deleted-notes list, and two properties of the whole route table: every page sends the
strict CSP, and every POST refuses a browser without this session's CSRF token (exact rules)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import httpx2
import pygit2
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from notegate.auth.grants import Grants
from notegate.doors.web import web_routes
from notegate.doors.web.environments import pick
from notegate.errors import PolicyDenied
from notegate.policy import Caller
from notegate.services.container import Services
from support.callers import make_caller
from support.web_harness import Console, serve_console
from support.web_notes import delete, sign_in, write

PHONE = make_caller(tier="restricted", client_class="workstation", login="owner", client="phone")
PHONE = Caller(**{**PHONE.__dict__, "connector": "token:phone"})


def _rule(response: httpx2.Response) -> str | None:
    if response.headers.get("content-type", "").startswith("application/json"):
        return response.json().get("rule")
    found = re.search(r'id="refusal" data-rule="([^"]*)"', response.text)
    return found.group(1) if found else None


@pytest.fixture
def two_owned(vault: Path) -> Path:
    """personal (the default, owner 'owner', member 'kid') and household (owner 'owner' too)."""
    pygit2.init_repository(str(vault.parent / "household.git"), bare=True, initial_head="main")
    text = vault.read_text().replace("members = []", 'members = ["kid"]', 1)
    text = text.replace(
        "[policy]", '[environments.household]\norigin = "household.git"\nowner = "owner"\nmembers = []\n\n[policy]', 1
    )
    vault.write_text(text)
    return vault


@pytest.fixture
def served(two_owned: Path) -> Iterator[Console]:
    with serve_console(two_owned) as console:
        yield console


def _section(html: str, env: str) -> str:
    found = re.search(rf'<section class="waiting" data-env="{env}">(.*?)</section>', html, re.S)
    assert found, html
    return found.group(1)


def _count(section: str, cls: str) -> int:
    found = re.search(rf'class="{cls}"><b class="count">(\d+)</b>', section)
    assert found, section
    return int(found.group(1))


def test_home_sends_a_signed_out_browser_to_the_login(served: Console) -> None:
    response = httpx2.get(f"{served.url}/", follow_redirects=False)
    assert response.status_code == 303 and response.headers["location"] == "/login"


def test_home_counts_what_waits_in_each_environment_the_person_owns(served: Console) -> None:
    inbox = Services.build(served.runtime).inbox
    first = inbox.inbox_write(PHONE, "log", "Shipped the console.", project="notegate")
    inbox.inbox_write(PHONE, "handoff", "Where it stopped: the home page.", project="notegate")
    owner = sign_in(served)
    path, version = first.path, first.new_revision
    held = owner.post("/inbox/hold", {"env": "personal", "item": path, "version": version, "reason": "later"})
    assert held.status_code == 303, held.text
    served.runtime.state.open_task(environment="household", kind="fetch-refused", key="k", text="t", now=0)
    grants = Grants(served.runtime.state, served.runtime.policy)
    asker = replace(PHONE, environment="household")
    grants.request(asker, reason="fix the household log", conversation=None, base=served.url, now=served.clock())

    home = owner.client.get("/")
    assert home.status_code == 200, home.text
    personal, household = _section(home.text, "personal"), _section(home.text, "household")
    assert (_count(personal, "inbox"), _count(personal, "elevations"), _count(personal, "tasks")) == (1, 0, 0)
    assert "1 held" in personal
    assert (_count(household, "inbox"), _count(household, "elevations"), _count(household, "tasks")) == (0, 1, 1)
    assert 'href="/inbox?env=household"' in household
    # a member owns nothing: the page says so and counts nothing of the owner's
    kid = sign_in(served, "kid").client.get("/")
    assert kid.status_code == 200 and 'id="owns-nothing"' in kid.text and "data-env=" not in kid.text


@pytest.mark.parametrize(
    ("path", "current"),
    [
        ("/", "home"),
        ("/passkeys", "passkeys"),
        ("/inbox", "inbox"),
        ("/elevations", "elevations"),
        ("/audit", "audit"),
        ("/connections", "connections"),
        ("/status", "status"),
        ("/notes", "notes"),
        ("/search?q=x", "notes"),
        ("/deleted", "notes"),
    ],
)
def test_the_nav_marks_the_current_page(served: Console, path: str, current: str) -> None:
    page = sign_in(served).client.get(path)
    assert page.status_code == 200, page.text
    marked = re.findall(r'<a href="[^"]*" id="nav-([a-z]+)" class="current" aria-current="page">', page.text)
    assert marked == [current]


def test_the_notes_pages_work_in_the_environment_asked_for(served: Console) -> None:
    env = served.runtime.environment("household")
    owner_household = replace(make_caller(tier="trusted", login="owner"), environment="household")
    notes = Services.build(served.runtime).notes
    done = notes.write_note(
        owner_household, "house/boiler.md", "Service in [[house/march]].\n", "absent", confirmed=True
    )
    assert done.status == "committed"
    owner = sign_in(served)

    listing = owner.client.get("/notes/house?env=household")
    assert listing.status_code == 200, listing.text
    assert 'href="/notes/house/boiler.md?env=household"' in listing.text
    for path in ("/notes", "/inbox", "/elevations", "/audit", "/connections", "/status", "/deleted"):
        picker = owner.client.get(path).text  # two environments owned: every page has the one shared picker
        assert picker.count('id="envpick"') == 1 and '<option value="household"' in picker, path
    assert owner.client.get("/notes/house").status_code == 404  # not in the default environment
    read = owner.client.get("/notes/house/boiler.md?env=household")
    assert read.status_code == 200 and 'href="/history/house/boiler.md?env=household"' in read.text
    assert 'id="crumbs"><a href="/notes?env=household">' in read.text
    # the same picker as every page: an environment that is not there, or one the person does not own
    assert _rule(owner.client.get("/notes?env=nowhere")) == "console-not-owner"
    assert _rule(sign_in(served, "kid").client.get("/notes?env=personal")) == "console-not-owner"
    # a write there goes to that environment's origin, in two steps
    base = env.store.blob_id("house/boiler.md")
    deleted = notes.delete_note(owner_household, "house/boiler.md", base, confirmed=True)
    gone = owner.client.get("/deleted?env=household")
    assert 'href="/history/house/boiler.md?env=household"' in gone.text
    form = {"commit": done.commit, "base": "absent"}
    preview = owner.post("/restore/house/boiler.md?env=household", {**form, "step": "preview"})
    assert preview.status_code == 200 and 'action="/restore/house/boiler.md?env=household"' in preview.text
    confirmed = owner.post("/restore/house/boiler.md?env=household", {**form, "step": "confirm"})
    assert confirmed.status_code == 303, confirmed.text
    assert confirmed.headers["location"].endswith("&env=household")
    assert env.store.blob_id("house/boiler.md") == base and deleted.commit
    assert served.runtime.environment("personal").store.blob_id("house/boiler.md") == "absent"


def test_the_deleted_page_lists_deleted_notes_newest_first_with_their_history(served: Console) -> None:
    write(served, "notes/a.md", "a\n")
    write(served, "notes/b.md", "b\n")
    write(served, "notes/kept.md", "kept\n")
    delete(served, "notes/a.md")
    delete(served, "notes/b.md")
    write(served, "notes/a-again.md", "x\n")
    owner = sign_in(served)
    page = owner.client.get("/deleted")
    assert page.status_code == 200, page.text
    listed = re.findall(r'<li data-path="([^"]+)"><a href="(/history/[^"]+)"', page.text)
    assert [p for p, _ in listed] == ["notes/b.md", "notes/a.md"]
    assert dict(listed)["notes/a.md"] == "/history/notes/a.md"
    assert "notes/kept.md" not in page.text
    write(served, "notes/a.md", "back\n")  # written again: no longer deleted
    page = owner.client.get("/deleted")
    assert "notes/a.md" not in re.findall(r'data-path="([^"]+)"', page.text)


# -- the shared picker, as a pure function over a config


class _Env:
    def __init__(self, owner: str) -> None:
        self.owner = owner


class _Config:
    def __init__(self, owners: dict[str, str], default: str) -> None:
        self.environments = {name: _Env(o) for name, o in owners.items()}
        self.default_environment = default


NAMES = st.sampled_from(["personal", "household", "infra", "", "nowhere", "x" * 150])


@settings(max_examples=300, deadline=None)
@given(
    owners=st.dictionaries(
        st.sampled_from(["personal", "household", "infra"]), st.sampled_from(["a", "b"]), min_size=1
    ),
    person=st.sampled_from(["a", "b", "c"]),
    asked=st.one_of(st.none(), NAMES),
)
def test_the_picker_answers_only_environments_the_person_owns(owners, person, asked) -> None:
    config = _Config(owners, next(iter(owners)))
    try:
        name = pick(config, person, asked)
    except PolicyDenied as exc:
        assert exc.rule == "console-not-owner"
        assert asked or person not in owners.values()  # unasked, a person who owns one gets it
        assert not asked or owners.get(asked[:100]) != person
        return
    assert owners[name] == person
    if not asked:  # the default one if the person owns it, else their first
        mine = [n for n, o in owners.items() if o == person]
        assert name == (config.default_environment if config.default_environment in mine else mine[0])


# -- the whole route table

#: Every console route, with the path parameters it is requested with; a route added without a row here
#: fails test_the_tables_below_cover_every_route.
GET_PAGES = {
    "/": "/",
    "/login": "/login",
    "/enroll/{token}": "/enroll/nge_notarealtoken",
    "/passkeys": "/passkeys",
    "/oauth/consent": "/oauth/consent?request=x",
    "/elevate/{link_id}": "/elevate/nothing",
    "/inbox": "/inbox",
    "/elevations": "/elevations",
    "/elevations/{link_id}": "/elevations/nothing",
    "/audit": "/audit",
    "/connections": "/connections",
    "/status": "/status",
    "/notes": "/notes",
    "/notes/{path:notepath}": "/notes/notes/nothing.md",
    "/search": "/search?q=x",
    "/deleted": "/deleted",
    "/files/{path:notepath}": "/files/nothing.png",
    "/history/{path:notepath}": "/history/notes/nothing.md",
    "/edit/{path:notepath}": "/edit/notes/nothing.md",
    "/static/web/{name}": "/static/web/console.css",
    "/members": "/members",
    "/livesync": "/livesync",
    "/join/{token}": "/join/ngi_notarealtoken",
    "/oidc/callback": "/oidc/callback?state=nothing&code=x",
    "/tools": "/tools",
    "/tools/mounts/{mount}": "/tools/mounts/nothing",
    "/tools/oauth/callback": "/tools/oauth/callback?state=nothing&code=x",
    "/tools/oauth/client.json": "/tools/oauth/client.json",
}
#: Every POST route; each answers a signed-in browser that sends no CSRF token with this rule.
POSTS = {
    "/login/options": "/login/options",
    "/login/verify": "/login/verify",
    "/logout": "/logout",
    "/enroll/{token}/options": "/enroll/nge_notarealtoken/options",
    "/enroll/{token}/verify": "/enroll/nge_notarealtoken/verify",
    "/step-up/options": "/step-up/options",
    "/step-up/verify": "/step-up/verify",
    "/passkeys/options": "/passkeys/options",
    "/passkeys/verify": "/passkeys/verify",
    "/passkeys/{passkey_id}/revoke": "/passkeys/pk_owner/revoke",
    "/oauth/consent": "/oauth/consent",
    "/elevate/{link_id}": "/elevate/nothing",
    "/elevate/{link_id}/options": "/elevate/nothing/options",
    "/elevate/{link_id}/verify": "/elevate/nothing/verify",
    "/inbox/{action}": "/inbox/promote",
    "/elevations/grants/{grant_id}/revoke": "/elevations/grants/g1/revoke",
    "/elevations/{link_id}": "/elevations/nothing",
    "/elevations/{link_id}/options": "/elevations/nothing/options",
    "/elevations/{link_id}/verify": "/elevations/nothing/verify",
    "/connections/tokens": "/connections/tokens",
    "/connections/tokens/{token_id}/revoke": "/connections/tokens/t1/revoke",
    "/connections/oauth/{family_id}/revoke": "/connections/oauth/f1/revoke",
    "/restore/{path:notepath}": "/restore/notes/nothing.md",
    "/edit/{path:notepath}": "/edit/notes/nothing.md",
    "/members/invite": "/members/invite",
    "/members/{login}/remove": "/members/bob/remove",
    "/livesync/devices": "/livesync/devices",
    "/livesync/devices/{name}/revoke": "/livesync/devices/phone/revoke",
    "/join/{token}/options": "/join/ngi_notarealtoken/options",
    "/join/{token}/verify": "/join/ngi_notarealtoken/verify",
    "/oidc/{provider}/start": "/oidc/none/start",
    "/tools/mounts": "/tools/mounts",
    "/tools/mounts/{mount}/remove": "/tools/mounts/nothing/remove",
    "/tools/mounts/{mount}/credential": "/tools/mounts/nothing/credential",
    "/tools/mounts/{mount}/check": "/tools/mounts/nothing/check",
    "/tools/mounts/{mount}/approve": "/tools/mounts/nothing/approve",
    "/tools/mounts/{mount}/oauth": "/tools/mounts/nothing/oauth",
}


def _strict(headers: httpx2.Headers) -> bool:
    policy = headers.get("content-security-policy", "")
    return (
        "default-src 'none'" in policy
        and "unsafe-inline" not in policy
        and "unsafe-eval" not in policy
        and "frame-ancestors 'none'" in policy
    )


@pytest.fixture(scope="module")
def one_console(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Console]:
    import shutil

    from support.callers import vault_template as _template

    target = tmp_path_factory.mktemp("routes") / "vault"
    shutil.copytree(_template(tmp_path_factory), target, symlinks=True)
    with serve_console(target / "notegate.toml") as console:
        yield console


def test_the_tables_below_cover_every_route(one_console: Console) -> None:
    routes = web_routes(one_console.runtime, port=one_console.port)
    gets = {r.path for r in routes if "GET" in (r.methods or ())}
    posts = {r.path for r in routes if "POST" in (r.methods or ())}
    assert gets == set(GET_PAGES) and posts == set(POSTS)


@pytest.mark.parametrize("route", sorted(GET_PAGES))
def test_every_page_sends_the_strict_csp_signed_in_or_not(one_console: Console, route: str) -> None:
    owner = sign_in_once(one_console)
    for client in (owner.client, httpx2.Client(base_url=one_console.url, follow_redirects=False)):
        response = client.get(GET_PAGES[route])
        assert _strict(response.headers), (route, response.status_code, response.headers)


@pytest.mark.parametrize("route", sorted(POSTS))
def test_every_post_refuses_without_the_csrf_token(one_console: Console, route: str) -> None:
    owner = sign_in_once(one_console)
    response = owner.client.post(POSTS[route], data={"env": "personal", "item": "x", "version": "y"})
    assert response.status_code == 403, (route, response.status_code, response.text[:300])
    assert _rule(response) == "csrf-missing", (route, response.text[:300])
    assert _strict(response.headers)
    # a forged token is refused by its own rule
    forged = owner.client.post(
        POSTS[route], data={"csrf": "x" * 43}, headers={"X-CSRF-Token": "x" * 43, "Content-Type": "application/json"}
    )
    assert _rule(forged) in ("csrf-invalid", "web-bad-request"), (route, forged.text[:300])


_SIGNED: dict[int, object] = {}


def sign_in_once(console: Console):
    """One signed-in owner per console (the passkey row is per login)."""
    if id(console) not in _SIGNED:
        _SIGNED[id(console)] = sign_in(console)
    return _SIGNED[id(console)]
