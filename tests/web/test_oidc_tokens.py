"""Every ID token the relying party must refuse, through the real server's /oidc/callback, by its exact rule; and
the step-up through a provider (fresh login, second factor from amr/acr by the provider's allowlist), for console
actions and for an elevation's approval (a stale login cannot approve).

The provider here is a stand-in that serves real discovery, keys and a token endpoint, and answers with the token
each case crafted (tests/support/web_oidc.py); the happy paths run against the real provider in the browser
(test_members_browser.py)."""

from __future__ import annotations

import re
import time
from pathlib import Path

import httpx2
import pytest

from notegate.auth.grants import Grants, owners_in
from notegate.policy import Caller
from support.web_harness import serve_console
from support.web_notes import SESSION_COOKIE, sign_in
from support.web_oidc import CLIENT_ID, StubProvider, add_provider, browser_client, start

PHONE = Caller("owner", "Owner", "claude.ai", "hosted", "restricted", session="s1", connector="oauth:fam-a")


@pytest.fixture
def stub():
    provider = StubProvider()
    yield provider
    provider.close()


@pytest.fixture
def console(vault: Path, stub: StubProvider):
    add_provider(vault, "stub", stub.issuer, second_factor_amr=["otp", "mfa"])
    with serve_console(vault) as served:
        yield served


def _rule(response: httpx2.Response) -> str | None:
    found = re.search(r'id="refusal" data-rule="([^"]+)"', response.text)
    return found.group(1) if found else None


def _link(console, login: str, stub: StubProvider, sub: str = "stub-subject") -> None:
    """What an invitation's 'Link my account' leaves: (issuer, subject) -> login."""
    console.runtime.state.insert_oidc_identity(
        {
            "id": f"oi_{login}",
            "provider": "stub",
            "issuer": stub.issuer,
            "subject": sub,
            "login": login,
            "created_at": 1,
        }
    )


def _callback(client: httpx2.Client, params: dict[str, str]) -> httpx2.Response:
    return client.get("/oidc/callback", params={"code": "a-code", "state": params["state"]})


NOW = int(time.time())
#: (case, claims to change or drop, rule): each one ID token the server must refuse.
REFUSED = [
    ("wrong issuer", {"iss": "http://localhost:1"}, "oidc-issuer"),
    ("wrong audience", {"aud": "another-client"}, "oidc-audience"),
    ("authorized party is another client", {"aud": [CLIENT_ID, "other"], "azp": "other"}, "oidc-audience"),
    ("several audiences and no azp", {"aud": [CLIENT_ID, "other"]}, "oidc-audience"),
    ("wrong nonce", {"nonce": "not-the-one-sent"}, "oidc-nonce"),
    ("no nonce", {"nonce": None}, "oidc-nonce"),
    ("expired", {"exp": NOW - 3600, "iat": NOW - 7200}, "oidc-expired"),
    ("issued in the future", {"iat": NOW + 3600}, "oidc-issued-in-future"),
    ("no subject", {"sub": None}, "oidc-token-invalid"),
]


@pytest.mark.parametrize(("case", "claims", "rule"), REFUSED, ids=[c[0] for c in REFUSED])
def test_an_id_token_is_refused_by_its_exact_rule(console, stub: StubProvider, case, claims, rule) -> None:
    _link(console, "owner", stub)
    client, csrf = browser_client(console)
    params = start(client, csrf, "stub")
    stub.token = stub.mint(**{"nonce": params["nonce"], **claims})
    answer = _callback(client, params)
    assert answer.status_code == 403 and _rule(answer) == rule, (case, answer.text[:400])
    assert f"Refused [{rule}]" in answer.text and SESSION_COOKIE not in answer.headers.get("set-cookie", "")
    audit = console.runtime.state.query("SELECT outcome FROM audit WHERE tool = 'web:oidc-callback'")
    assert [r["outcome"] for r in audit] == [f"refused:{rule}"]


@pytest.mark.parametrize(
    ("case", "rule"), [("HS256 (signed with a shared secret)", "oidc-algorithm"), ("unknown key", "oidc-key-unknown")]
)
def test_a_token_signed_otherwise_is_refused(console, stub: StubProvider, case: str, rule: str) -> None:
    client, csrf = browser_client(console)
    params = start(client, csrf, "stub")
    if rule == "oidc-algorithm":
        stub.token = stub.mint(params["nonce"], alg="HS256")
    else:
        stub.token = stub.mint(params["nonce"], key=stub.rogue)
    assert _rule(_callback(client, params)) == rule, case


def test_a_replayed_id_token_and_a_replayed_callback_are_refused(console, stub: StubProvider) -> None:
    _link(console, "owner", stub)
    client, csrf = browser_client(console)
    params = start(client, csrf, "stub")
    stub.token = stub.mint(params["nonce"])
    first = _callback(client, params)
    assert first.status_code == 303 and SESSION_COOKIE in first.headers["set-cookie"]
    client.cookies.delete(SESSION_COOKIE)  # log in again from the same browser
    assert _rule(_callback(client, params)) == "oidc-state-unknown"  # the same state again: spent
    again = start(client, csrf, "stub")  # a new login answered with the old token
    assert _rule(_callback(client, again)) == "oidc-replayed"
    stranger, _ = browser_client(console)  # a state from another browser
    third = start(client, csrf, "stub")
    assert _rule(_callback(stranger, third)) == "oidc-state-unknown"


def test_an_unknown_subject_gets_a_page_saying_what_the_owner_must_do(console, stub: StubProvider) -> None:
    client, csrf = browser_client(console)
    params = start(client, csrf, "stub")
    stub.token = stub.mint(params["nonce"], sub="someone-new", email="owner@example.org")  # never by e-mail
    answer = _callback(client, params)
    assert _rule(answer) == "oidc-subject-unknown"
    assert 'id="subject"' in answer.text and "someone-new" in answer.text and "must invite you" in answer.text


def _owner_via_stub(console, stub: StubProvider, **claims) -> tuple[httpx2.Client, str]:
    """The owner logged in through the stand-in (a single-factor login unless ``claims`` say otherwise)."""
    _link(console, "owner", stub)
    client, csrf = browser_client(console)
    params = start(client, csrf, "stub")
    stub.token = stub.mint(params["nonce"], **claims)
    answer = _callback(client, params)
    assert answer.status_code == 303, answer.text[:300]
    session = answer.cookies[SESSION_COOKIE]
    from notegate.auth.websession import csrf_token

    client.cookies.set(SESSION_COOKIE, session)
    return client, csrf_token(session)


def test_a_single_factor_login_is_no_step_up_and_the_provider_can_prove_one(console, stub: StubProvider) -> None:
    client, csrf = _owner_via_stub(console, stub, amr=["pwd"])
    refused = client.post("/members/invite", data={"csrf": csrf, "env": "personal", "login": "bob"})
    assert refused.status_code == 403 and _rule(refused) == "step-up-required"
    assert 'id="step-up-stub"' in refused.text  # the provider is offered beside the passkey
    # a fresh login that sends only a password: refused, quoting what the provider sent
    params = start(client, csrf, "stub", purpose="step-up", next="/members")
    assert params["max_age"] == "300" and params["prompt"] == "login" and params["code_challenge_method"] == "S256"
    stub.token = stub.mint(params["nonce"], amr=["pwd"], acr="urn:basic")
    answer = _callback(client, params)
    assert _rule(answer) == "step-up-second-factor-unproven"
    assert "amr=[pwd] acr=urn:basic" in answer.text and 'data-options="/step-up/options"' in answer.text
    # a second factor, but a login from before max_age: stale
    params = start(client, csrf, "stub", purpose="step-up", next="/members")
    stub.token = stub.mint(params["nonce"], amr=["pwd", "otp"], auth_time=NOW - 3600)
    assert _rule(_callback(client, params)) == "step-up-login-stale"
    # fresh, with a second factor the allowlist names: a new session that counts as a step-up
    params = start(client, csrf, "stub", purpose="step-up", next="/members")
    stub.token = stub.mint(params["nonce"], amr=["pwd", "otp"], auth_time=int(time.time()))
    answer = _callback(client, params)
    assert answer.status_code == 303 and answer.headers["location"] == "/members"
    from notegate.auth.websession import csrf_token

    client.cookies.set(SESSION_COOKIE, answer.cookies[SESSION_COOKIE])
    csrf = csrf_token(answer.cookies[SESSION_COOKIE])
    made = client.post("/members/invite", data={"csrf": csrf, "env": "personal", "login": "bob"})
    assert made.status_code == 200 and "/join/ngi_" in made.text and made.headers["cache-control"] == "no-store"
    outcomes = [
        r["outcome"]
        for r in console.runtime.state.query("SELECT outcome FROM audit WHERE tool = ?", ("web:oidc-step-up",))
    ]
    assert outcomes == [
        "refused:step-up-second-factor-unproven",
        "refused:step-up-login-stale",
        "ok:stub",
    ]


def test_a_stale_provider_login_cannot_approve_an_elevation(console, stub: StubProvider) -> None:
    grants = Grants(console.runtime.state, console.runtime.policy, owner_of=owners_in(lambda: console.runtime.config))
    ticket = grants.request(PHONE, reason="write the digest", conversation=None, base=console.url, now=time.time())
    link_id = ticket.link.rsplit("/", 1)[1]
    client, csrf = _owner_via_stub(console, stub)
    page = client.get(f"/elevate/{link_id}")
    assert 'id="approve-stub"' in page.text
    params = start(client, csrf, "stub", purpose="approve", link=link_id)
    stub.token = stub.mint(params["nonce"], amr=["otp"], auth_time=NOW - 3600)
    stale = _callback(client, params)
    assert _rule(stale) == "step-up-login-stale"
    assert grants.pending(link_id, now=time.time()) is not None  # nothing was approved
    params = start(client, csrf, "stub", purpose="approve", link=link_id)
    stub.token = stub.mint(params["nonce"], amr=["otp"], auth_time=int(time.time()))
    approved = _callback(client, params)
    assert approved.status_code == 200 and grants.pending(link_id, now=time.time()) is None
    rows = console.runtime.state.query(
        "SELECT approved_by FROM elevation_grants WHERE grant_id = ?", (ticket.grant_id,)
    )
    assert [r["approved_by"] for r in rows] == ["owner"]


def test_a_passkey_session_still_steps_up_with_the_passkey(console) -> None:
    """The provider is an alternative: a passkey session keeps its own step-up (nothing changed for it)."""
    owner = sign_in(console)
    made = owner.client.post("/members/invite", data={"csrf": owner.csrf, "env": "personal", "login": "carol"})
    assert made.status_code == 200 and "/join/ngi_" in made.text


def test_the_doctor_checks_each_providers_discovery_and_keys(vault: Path, stub: StubProvider) -> None:
    from notegate.config import load_config
    from notegate.doctor.oidc import check_providers

    add_provider(vault, "stub", stub.issuer)
    add_provider(vault, "typo", stub.issuer + "/", client_secret_file="")
    add_provider(vault, "down", "http://localhost:1")
    found = {r.subject: r for r in check_providers(load_config(vault))}
    assert found["stub"].status == "ok" and "stub-1" in found["stub"].found
    assert found["typo"].status == "fail" and "Refused [oidc-issuer]" in found["typo"].found
    assert found["down"].status == "fail" and "Refused [oidc-provider-unavailable]" in found["down"].found


def test_a_person_links_their_own_account_only_with_a_fresh_step_up(console, stub: StubProvider) -> None:
    owner = sign_in(console)
    page = owner.client.get("/passkeys")
    assert (
        'id="link-self-stub"' in page.text
        and "form-action 'self' " + stub.issuer in page.headers["content-security-policy"]
    )
    params = start(owner.client, owner.csrf, "stub", purpose="link-self")
    stub.token = stub.mint(params["nonce"], sub="owner-at-stub")
    assert _callback(owner.client, params).headers["location"] == "/passkeys"
    assert console.runtime.state.oidc_identity(stub.issuer, "owner-at-stub")["login"] == "owner"
    console.clock.advance(3600)  # an hour later the session's check is stale: no new way in without a fresh one
    refused = owner.client.post("/oidc/stub/start", params={"purpose": "link-self"}, data={"csrf": owner.csrf})
    assert _rule(refused) == "step-up-required"
