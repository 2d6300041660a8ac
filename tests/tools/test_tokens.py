"""The per-call tokens: minted by the knowledge service for the tools process, accepted by nothing else."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from notegate.config import load_config
from notegate.errors import NotegateError
from notegate.policy import Caller
from notegate.state import StateDB
from notegate.tools.tokens import TOKEN_SECONDS, Minter, Verifier, _header

CALLER = Caller(
    login="owner",
    display_name="Owner",
    client="phone",
    client_class="hosted",
    tier="restricted",
    environment="personal",
    connector="token:abc",
)


class Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def pair(vault: Path, tmp_path: Path):
    state = StateDB.for_config(load_config(vault))
    clock = Clock()
    yield Minter(state, tmp_path, clock), Verifier(state, clock), clock
    state.close()


def refused(verifier: Verifier, token: str | None, scope: str) -> str:
    with pytest.raises(NotegateError) as caught:
        verifier.verify(token, scope)
    return caught.value.rule


def test_a_minted_call_token_names_the_person_and_connector_and_is_spent_once(pair) -> None:
    minter, verifier, _clock = pair
    token = minter.mint(CALLER, "personal", "tools:call", mount="clock", tool="now")
    claims = json.loads(__import__("base64").urlsafe_b64decode(token.split(".")[1] + "=="))
    assert claims["sub"] == "owner" and claims["act"] == {"sub": "notegate-knowledge-service"}
    assert claims["aud"] == "notegate-tools" and claims["exp"] - claims["iat"] == TOKEN_SECONDS
    who = verifier.verify(token, "tools:call")
    assert (who.login, who.connector, who.client, who.environment, who.tier) == (
        "owner",
        "token:abc",
        "phone",
        "personal",
        "restricted",
    )
    assert (who.mount, who.tool) == ("clock", "now")
    assert refused(verifier, token, "tools:call") == "tools-token-invalid"  # a replay


def test_a_token_for_one_purpose_or_time_serves_no_other(pair) -> None:
    minter, verifier, clock = pair
    listing = minter.mint(CALLER, "personal", "tools:list")
    assert refused(verifier, listing, "tools:call") == "tools-token-invalid"
    stale = minter.mint(CALLER, "personal", "tools:list")
    clock.now += TOKEN_SECONDS + 1
    assert refused(verifier, stale, "tools:list") == "tools-token-invalid"


def test_a_token_signed_by_another_key_is_refused(pair, tmp_path: Path, vault: Path) -> None:
    _minter, verifier, clock = pair
    other_state = StateDB(tmp_path / "other.sqlite")
    forged = Minter(other_state, tmp_path / "elsewhere", clock).mint(CALLER, "personal", "tools:list")
    other_state.close()
    assert refused(verifier, forged, "tools:list") == "tools-token-invalid"


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300))
def test_only_the_refusal_escapes_for_any_bearer(text: str) -> None:
    """Any text as a bearer (a client's ngt_ token, garbage, a JWS of another shape): refused by rule."""
    verifier = Verifier(state=_NoKeys(), clock=lambda: 0.0)
    with pytest.raises(NotegateError) as caught:
        verifier.verify(text, "tools:call")
    assert caught.value.rule == "tools-token-invalid"


class _NoKeys:
    def tools_key(self, purpose: str) -> None:
        return None


def test_header_parsing_refuses_what_is_not_an_object() -> None:
    with pytest.raises(ValueError):
        _header("WzFd.x.y")  # "[1]"


def test_a_pinned_verifier_refuses_a_key_the_database_alone_records(pair, tmp_path: Path) -> None:
    """A second mint key recorded in the same database (whoever can write it) is refused by a verifier pinned to
    the knowledge service's key id; the pinned key still verifies."""
    minter, verifier, clock = pair
    pinned = Verifier(verifier.state, clock, pinned=[minter.kid])
    intruder = Minter(verifier.state, tmp_path / "intruder", clock)
    assert refused(pinned, intruder.mint(CALLER, "personal", "tools:list"), "tools:list") == "tools-token-invalid"
    assert pinned.verify(minter.mint(CALLER, "personal", "tools:list"), "tools:list").login == "owner"


@settings(max_examples=50, deadline=None)
@given(st.text(alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_", min_size=1, max_size=64))
def test_a_recorded_key_under_another_id_is_refused(kid: str) -> None:
    """Whatever id a database writer files a (valid) key under, unless it is that key's own thumbprint, the
    verifier refuses: a pinned id cannot be given another key."""
    from joserfc.jwk import OKPKey

    key = OKPKey.generate_key("Ed25519")
    if kid == key.thumbprint():
        return
    public = json.dumps(key.as_dict(private=False))

    class _Recorded:
        def tools_key(self, purpose: str) -> str:
            return public

    from joserfc import jwt

    now = 1_800_000_000
    claims = {"iss": "notegate", "aud": "notegate-tools", "act": {"sub": "notegate-knowledge-service"}}
    token = jwt.encode(
        {"alg": "Ed25519", "typ": "notegate-tools+jwt", "kid": kid}, claims | {"iat": now}, key, algorithms=["Ed25519"]
    )
    verifier = Verifier(state=_Recorded(), clock=lambda: float(now), pinned=[kid])
    with pytest.raises(NotegateError) as caught:
        verifier.verify(token, "tools:list")
    assert caught.value.rule == "tools-token-invalid" and "not the one its id names" in str(caught.value)
