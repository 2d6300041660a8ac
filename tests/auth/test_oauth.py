"""The authorization server's state machine with an injected clock: consent invariants, code lifetime and
single use, refresh rotation and family revocation, the sweep, and the caller an OAuth token becomes."""

from __future__ import annotations

import dataclasses
import json
import tempfile
import time
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mcp.server.auth.provider import AuthorizationParams
from pydantic import AnyUrl

from notegate.auth.oauth import NotegateClient, NotegateOAuthProvider
from notegate.auth.oauth_core import OAuthCore, TokenGrant
from notegate.auth.tokens import create_token
from notegate.config import Config, EnvironmentConfig, load_config
from notegate.errors import NotegateError
from notegate.policy import decide_redirect_uri, decide_registration, decide_registration_redirects
from notegate.policyfile import OAUTH_REDIRECT_DEFAULTS
from notegate.state import StateDB

ISSUER = "http://127.0.0.1:8765"
RESOURCE = f"{ISSUER}/mcp"
CALLBACK = "http://127.0.0.1:4000/cb"
T0 = 1_900_000_000.0


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def config(vault: Path) -> Config:
    return load_config(vault)


@pytest.fixture
def db(config: Config):
    state = StateDB(config.state_dir / "state.sqlite")
    yield state
    state.close()


@pytest.fixture
def core(db: StateDB, config: Config) -> OAuthCore:
    return OAuthCore(db, config, issuer=ISSUER)


def register(db: StateDB, client_id: str = "c1", now: float = T0, uris: tuple[str, ...] = (CALLBACK,)) -> None:
    info = NotegateClient(client_id=client_id, client_name="Probe", redirect_uris=[AnyUrl(u) for u in uris])
    assert db.oauth_register_client(client_id, info.model_dump_json(), now, lambda count, idle: "keep")


def start(core: OAuthCore, client_id: str = "c1", now: float = T0, **kw) -> str:
    url = core.start(
        client_id=client_id,
        client_name="Probe",
        redirect_uri=kw.get("redirect_uri", CALLBACK),
        redirect_uri_provided_explicitly=True,
        registered=(CALLBACK,),
        state="s1",
        code_challenge="c" * 43,
        scopes=kw.get("scopes"),
        resource=RESOURCE,
        now=now,
    )
    assert url.startswith(f"{ISSUER}/oauth/consent?request=")
    return parse_qs(urlsplit(url).query)["request"][0]


def code_of(redirect: str) -> str:
    return parse_qs(urlsplit(redirect).query)["code"][0]


def rule_of(fn, *args, **kwargs) -> str:
    with pytest.raises(NotegateError) as info:
        fn(*args, **kwargs)
    return info.value.rule


# ------------------------------------------------------------------------------------- policy
REDIRECTS = [
    # (uri, registered, allowed?, rule)
    ("https://claude.ai/api/mcp/auth_callback", ["https://claude.ai/api/mcp/auth_callback"], True, "redirect-allowed"),
    (
        "https://chatgpt.com/connector_platform_oauth_redirect",
        ["https://chatgpt.com/connector_platform_oauth_redirect"],
        True,
        "redirect-allowed",
    ),
    ("http://127.0.0.1:5555/cb", ["http://127.0.0.1:3000/cb"], True, "redirect-allowed"),  # loopback: any port
    ("http://[::1]:5555/cb", ["http://[::1]/cb"], True, "redirect-allowed"),
    ("http://localhost:1/cb", ["http://localhost:2/cb"], True, "redirect-allowed"),
    ("http://127.0.0.1:5555/other", ["http://127.0.0.1:3000/cb"], False, "redirect-not-registered"),  # path differs
    ("http://localhost:1/cb", ["http://127.0.0.1:1/cb"], False, "redirect-not-registered"),  # host differs
    (
        "https://claude.ai/api/mcp/auth_callback?x=1",
        ["https://claude.ai/api/mcp/auth_callback"],
        False,
        "redirect-not-registered",
    ),
    ("https://evil.example/cb", ["https://evil.example/cb"], False, "redirect-not-allowed"),  # registered, not allowed
    ("http://127.0.0.1.evil.example/cb", ["http://127.0.0.1.evil.example/cb"], False, "redirect-not-allowed"),
    ("http://127.0.0.1@evil.example/cb", ["http://127.0.0.1@evil.example/cb"], False, "redirect-not-allowed"),
    ("https://127.0.0.1:5/cb", ["https://127.0.0.1:5/cb"], False, "redirect-not-allowed"),  # loopback is http only
]


@pytest.mark.parametrize(("uri", "registered", "allowed", "rule"), REDIRECTS)
def test_redirect_uri_decisions(uri: str, registered: list[str], allowed: bool, rule: str) -> None:
    decision = decide_redirect_uri(uri, registered, OAUTH_REDIRECT_DEFAULTS)
    assert (decision.allowed, decision.rule) == (allowed, rule)


def test_registration_decisions() -> None:
    assert decide_registration(99, 100).allowed
    refused = decide_registration(100, 100)
    assert not refused.allowed and refused.rule == "registration-cap"
    # at the cap, a registration that never completed a consent makes room: a flood cannot lock the owner out
    assert decide_registration(100, 100, evictable=True).rule == "registration-evict"
    assert decide_registration(100, 100, evictable=True).allowed
    assert decide_registration_redirects([], OAUTH_REDIRECT_DEFAULTS).rule == "redirect-not-registered"
    assert (
        decide_registration_redirects(["https://x.example/cb"], OAUTH_REDIRECT_DEFAULTS).rule == "redirect-not-allowed"
    )
    assert decide_registration_redirects(["http://127.0.0.1:9/cb"], OAUTH_REDIRECT_DEFAULTS).allowed


# ------------------------------------------------------------------------------------ consent
def test_consent_invariants(core: OAuthCore) -> None:
    request_id = start(core)
    assert len(request_id) >= 43  # 256 random bits, url-safe
    shown = core.pending(request_id, now=T0 + 1)
    assert shown is not None
    assert (shown.client_name, shown.redirect_uri, shown.redirect_host) == ("Probe", CALLBACK, "127.0.0.1:4000")
    assert "restricted" in shown.grants_text and "inbox" in shown.grants_text
    back = core.approve(request_id, person="owner", now=T0 + 2)
    query = parse_qs(urlsplit(back).query)
    assert back.startswith(CALLBACK + "?") and query["state"] == ["s1"] and query["iss"] == [ISSUER]
    assert core.pending(request_id, now=T0 + 3) is None
    assert rule_of(core.approve, request_id, person="owner", now=T0 + 3) == "consent-answered"
    assert rule_of(core.deny, request_id, now=T0 + 3) == "consent-answered"
    assert rule_of(core.approve, "no-such-request", person="owner", now=T0) == "consent-unknown"


def test_deny_redirects_with_access_denied(core: OAuthCore) -> None:
    request_id = start(core)
    query = parse_qs(urlsplit(core.deny(request_id, now=T0 + 1)).query)
    assert query["error"] == ["access_denied"] and query["state"] == ["s1"] and query["iss"] == [ISSUER]
    assert rule_of(core.approve, request_id, person="owner", now=T0 + 2) == "consent-answered"


def test_consent_expires(core: OAuthCore, config: Config) -> None:
    request_id = start(core)
    late = T0 + config.policy.oauth_consent_seconds + 1
    assert core.pending(request_id, now=late) is None
    assert rule_of(core.approve, request_id, person="owner", now=late) == "consent-unknown"


def test_the_grant_is_bound_to_one_environment_of_the_person(db: StateDB, config: Config) -> None:
    envs = {
        "personal": EnvironmentConfig("personal", "o", "owner", ()),
        "household": EnvironmentConfig("household", "o", "owner", ("sam",)),
        "infra": EnvironmentConfig("infra", "o", "ops", ("sam",)),
    }
    core = OAuthCore(db, dataclasses.replace(config, environments=envs), issuer=ISSUER)
    assert core.environment_for("owner") == "personal"  # the default, which the owner may use
    assert core.environment_for("sam") == "household"  # not the default's: the first they may use
    assert core.environment_for("stranger") is None
    request_id = start(core)
    assert rule_of(core.approve, request_id, person="stranger", now=T0) == "consent-no-environment"
    assert core.pending(request_id, now=T0) is not None  # not used up: someone who may can still answer
    tokens = core.exchange_code(
        core.load_code("c1", code_of(core.approve(request_id, person="sam", now=T0)), now=T0), now=T0
    )
    grant = core.access(tokens.access_token, now=T0)
    assert (grant.login, grant.environment) == ("sam", "household")


def test_pending_requests_are_stored_only_as_hashes(core: OAuthCore, db: StateDB) -> None:
    request_id = start(core)
    code = code_of(core.approve(request_id, person="owner", now=T0))
    dumped = json.dumps([dict(r) for t in ("oauth_pending", "oauth_codes") for r in db.query(f"SELECT * FROM {t}")])
    assert request_id not in dumped and code not in dumped


# ------------------------------------------------------------------------------ codes and tokens
def test_codes_live_60_seconds_and_are_single_use(core: OAuthCore) -> None:
    code = code_of(core.approve(start(core), person="owner", now=T0))
    assert core.load_code("c1", code, now=T0 + 61) is None  # expired
    assert core.load_code("other-client", code, now=T0 + 1) is None  # bound to its client
    grant = core.load_code("c1", code, now=T0 + 59)
    assert grant is not None and grant.redirect_uri == CALLBACK and grant.code_challenge == "c" * 43
    tokens = core.exchange_code(grant, now=T0 + 59)
    assert tokens is not None and core.access(tokens.access_token, now=T0 + 60) is not None
    assert core.load_code("c1", code, now=T0 + 59) is None  # spent: and its family is revoked
    assert core.access(tokens.access_token, now=T0 + 60) is None
    assert core.exchange_code(grant, now=T0 + 59) is None  # a racing second exchange loses


def test_missing_scope_gets_the_default_scope(core: OAuthCore) -> None:
    code = code_of(core.approve(start(core, scopes=None), person="owner", now=T0))
    assert core.load_code("c1", code, now=T0).scopes == ("notes",)


def test_access_tokens_live_an_hour_and_refresh_rotates(core: OAuthCore) -> None:
    code = code_of(core.approve(start(core), person="owner", now=T0))
    first = core.exchange_code(core.load_code("c1", code, now=T0), now=T0)
    assert first.expires_in == 3600
    assert core.access(first.access_token, now=T0 + 3599) is not None
    assert core.access(first.access_token, now=T0 + 3601) is None
    refresh = core.load_refresh("c1", first.refresh_token, now=T0 + 4000)
    second = core.rotate(refresh, [], now=T0 + 4000)
    assert second.refresh_token != first.refresh_token
    assert core.access(second.access_token, now=T0 + 4001) is not None
    assert core.load_refresh("c1", first.refresh_token, now=T0 + 4002) is None  # reuse: the family is revoked
    assert core.access(second.access_token, now=T0 + 4003) is None
    assert core.load_refresh("c1", second.refresh_token, now=T0 + 4003) is None


def test_oauth_claims_match_static_token_claims(core: OAuthCore, db: StateDB) -> None:
    code = code_of(core.approve(start(core), person="owner", now=T0))
    tokens = core.exchange_code(core.load_code("c1", code, now=T0), now=T0)
    grant = core.access(tokens.access_token, now=T0)
    _, record = create_token(db, name="t", client_class="workstation", tier=None, login="owner", now=T0)
    assert set(grant.claims()) == set(record.claims())
    claims = grant.claims()
    assert (claims["client_class"], claims["tier"], claims["login"]) == ("hosted", "restricted", "owner")
    assert claims["connector"] == f"oauth:{grant.family_id}" and claims["environment"] == "personal"


# ------------------------------------------------------------------------------ the provider
def test_provider_access_tokens_carry_name_resource_and_the_clock(db: StateDB, config: Config) -> None:
    clock = Clock()
    provider = NotegateOAuthProvider(db, config, issuer=ISSUER, resource=RESOURCE, clock=clock)
    register(db)

    async def flow() -> None:
        client = await provider.get_client("c1")
        assert client is not None and await provider.get_client("nope") is None
        params = AuthorizationParams(
            state="s",
            scopes=None,
            code_challenge="c" * 43,
            redirect_uri=AnyUrl(CALLBACK),
            redirect_uri_provided_explicitly=True,
            resource=None,
        )
        consent = await provider.authorize(client, params)
        request_id = parse_qs(urlsplit(consent).query)["request"][0]
        code = code_of(provider.core.approve(request_id, person="owner", now=clock()))
        loaded = await provider.load_authorization_code(client, code)
        issued = await provider.exchange_authorization_code(client, loaded)
        token = await provider.load_access_token(issued.access_token)
        assert token.client_id == "Probe" and token.resource == RESOURCE and token.scopes == ["notes"]
        clock.now += 3601
        assert await provider.load_access_token(issued.access_token) is None
        static, _ = create_token(db, name="laptop", client_class="workstation", tier=None, login="owner", now=T0)
        assert (await provider.load_access_token(static)).resource == RESOURCE

    anyio.run(flow)


def test_registration_cap_is_held_by_the_provider(db: StateDB, config: Config) -> None:
    from mcp.server.auth.provider import RegistrationError

    provider = NotegateOAuthProvider(
        db,
        dataclasses.replace(config, policy=dataclasses.replace(config.policy, oauth_max_registrations=2)),
        issuer=ISSUER,
        resource=RESOURCE,
    )

    async def flow() -> None:
        for n in range(3):
            await provider.register_client(NotegateClient(client_id=f"c{n}", redirect_uris=[AnyUrl(CALLBACK)]))
        # at the cap, the oldest registration that never completed a consent made room
        assert await provider.get_client("c0") is None
        assert await provider.get_client("c1") is not None and await provider.get_client("c2") is not None
        for client_id in ("c1", "c2"):  # both complete a consent: nothing is left to evict
            provider.core.approve(start(provider.core, client_id, now=time.time()), person="owner", now=time.time())
        with pytest.raises(RegistrationError) as info:
            await provider.register_client(NotegateClient(client_id="c3", redirect_uris=[AnyUrl(CALLBACK)]))
        assert "Refused [registration-cap]" in info.value.error_description
        assert "Connections page" in info.value.error_description  # what the owner can do
        assert await provider.get_client("c1") is not None  # a consented registration is never evicted

    anyio.run(flow)


# ---------------------------------------------------------------------------------- the sweep
def test_sweep_drops_expired_codes_tokens_and_unused_registrations(core: OAuthCore, db: StateDB) -> None:
    register(db, "idle")
    register(db, "busy")
    code = code_of(core.approve(start(core, "busy"), person="owner", now=T0))
    unspent = code_of(core.approve(start(core, "busy"), person="owner", now=T0))
    tokens = core.exchange_code(core.load_code("busy", code, now=T0), now=T0)
    swept = core.sweep(now=T0 + 61)
    assert swept["codes"] == 2 and swept["clients"] == 0  # both codes: one spent, one expired
    assert core.load_code("busy", unspent, now=T0 + 61) is None
    day = T0 + 86400 + 1
    # "busy" holds a live refresh token: never swept; "idle" was never used within a day: swept.
    swept = core.sweep(now=day)
    assert swept["clients"] == 1 and db.oauth_client("idle") is None and db.oauth_client("busy") is not None
    assert swept["tokens"] == 1  # the access token (1 h) expired; the refresh token lives on
    assert core.load_refresh("busy", tokens.refresh_token, now=day) is not None
    after_refresh = T0 + 31 * 86400
    swept = core.sweep(now=after_refresh)
    assert swept["tokens"] == 1 and swept["clients"] == 1 and db.oauth_client("busy") is None


def test_token_grant_is_a_credential_for_the_door() -> None:
    grant = TokenGrant("h", "access", "fam", "cid", "Name", "owner", "personal", ("notes",), RESOURCE, T0)
    assert grant.id == "oauth:fam" and grant.environment == "personal"


def test_a_loopback_wildcard_names_its_own_host_only() -> None:
    """``http://127.0.0.1:*`` on the allowlist admits any port of 127.0.0.1, never another loopback name."""
    allowlist = ["http://127.0.0.1:*"]
    assert decide_redirect_uri("http://127.0.0.1:5000/cb", ["http://127.0.0.1:1/cb"], allowlist).allowed
    refused = decide_redirect_uri("http://localhost:5000/cb", ["http://localhost:5000/cb"], allowlist)
    assert (refused.allowed, refused.rule) == (False, "redirect-not-allowed")


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from("abcd"), st.floats(min_value=0, max_value=300)), max_size=40),
    st.integers(min_value=1, max_value=4),
    st.integers(min_value=1, max_value=8),
)
def test_pending_consents_never_exceed_their_caps(asks: list[tuple[str, float]], per_client: int, total: int) -> None:
    """Whatever the order of requests, the live unanswered ones stay within both caps, the newest request is
    always kept, and expired ones are gone."""
    with tempfile.TemporaryDirectory() as folder:
        db = StateDB(Path(folder) / "state.sqlite")
        try:
            now = T0
            for n, (client, gap) in enumerate(asks):
                now += gap
                db.oauth_insert_pending(
                    request_hash=f"r{n}",
                    client_id=client,
                    client_name="n",
                    params_json="{}",
                    now=now,
                    live_after=now - 600,
                    max_total=total,
                    max_per_client=per_client,
                )
                rows = db.query("SELECT request_hash, client_id, created_at FROM oauth_pending")
                assert len(rows) <= total and f"r{n}" in {r[0] for r in rows}
                assert all([r[1] for r in rows].count(c) <= per_client for c in "abcd")
                assert all(r[2] >= now - 600 for r in rows)
        finally:
            db.close()
