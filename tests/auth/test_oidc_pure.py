"""The OpenID Connect decisions and the ID-token check over every class of input: any string as an ID token is
refused by a registered rule (nothing else escapes); the step-up allows exactly a fresh login whose amr or acr
the provider's allowlist names; azp as OpenID Connect Core 3.1.3.7 says."""

from __future__ import annotations

import time

import pytest
from hypothesis import given
from hypothesis import strategies as st
from joserfc import jwt
from joserfc.jwk import KeySet, RSAKey

from notegate.auth.oidc import parse_discovery, validate_id_token
from notegate.errors import RULES, NotegateError
from notegate.oidcconfig import OidcProvider
from notegate.policy import decide_authorized_party, decide_provider_step_up

PROVIDER = OidcProvider(
    name="idp",
    issuer="https://id.example.org",
    client_id="notegate",
    display_name="idp",
    environments=(),
    algorithms=("RS256",),
    second_factor_amr=("mfa", "otp"),
    second_factor_acr=("urn:mfa",),
)
KEY = RSAKey.generate_key(2048, parameters={"kid": "k1"}, private=True)
KEYS = KeySet.import_key_set(KeySet([KEY]).as_dict(private=False))
NOW = 1_800_000_000


def _token(**claims) -> str:
    payload = {"iss": PROVIDER.issuer, "aud": "notegate", "sub": "s", "iat": NOW, "exp": NOW + 300, "nonce": "n"}
    payload.update(claims)
    return jwt.encode({"alg": "RS256", "kid": "k1"}, payload, KeySet([KEY]))


def test_a_good_token_validates() -> None:
    assert validate_id_token(_token(), keys=KEYS, provider=PROVIDER, nonce="n", now=NOW)["sub"] == "s"


@given(st.text(max_size=300) | st.from_regex(r"[A-Za-z0-9_-]{0,40}\.[A-Za-z0-9_-]{0,40}\.[A-Za-z0-9_-]{0,40}"))
def test_any_string_as_an_id_token_is_refused_by_a_registered_rule(raw: str) -> None:
    with pytest.raises(NotegateError) as refused:
        validate_id_token(raw, keys=KEYS, provider=PROVIDER, nonce="n", now=NOW)
    assert refused.value.rule in RULES


@given(
    st.dictionaries(
        st.sampled_from(["iss", "aud", "sub", "iat", "exp", "nonce", "azp"]),
        st.none() | st.integers(-(10**12), 10**12) | st.text(max_size=20) | st.lists(st.text(max_size=8), max_size=3),
        max_size=7,
    )
)
def test_any_claims_are_accepted_only_when_every_check_holds(changes: dict) -> None:
    token = _token(**changes)
    claims = {"iss": PROVIDER.issuer, "aud": "notegate", "sub": "s", "iat": NOW, "exp": NOW + 300, "nonce": "n"}
    claims.update(changes)
    try:
        validate_id_token(token, keys=KEYS, provider=PROVIDER, nonce="n", now=NOW)
    except NotegateError as exc:
        assert exc.rule in RULES
        return
    aud = claims["aud"]
    assert claims["iss"] == PROVIDER.issuer and claims["nonce"] == "n" and isinstance(claims["sub"], str)
    assert aud == "notegate" or (isinstance(aud, list) and "notegate" in aud)
    assert claims["exp"] > NOW - 60 and claims["iat"] <= NOW + 60
    assert claims.get("azp") in (None, "notegate")


amr_values = st.lists(st.sampled_from(["pwd", "otp", "mfa", "hwk", "face", "sms", ""]), max_size=4)


@given(
    st.none() | st.integers(NOW - 10_000, NOW + 10_000) | st.text(max_size=5) | st.booleans(),
    st.none() | amr_values | st.text(max_size=5),
    st.none() | st.sampled_from(["urn:mfa", "urn:basic", "0", ""]),
)
def test_the_provider_step_up_is_exactly_fresh_and_second_factor(auth_time, amr, acr) -> None:
    claims = {"auth_time": auth_time, "amr": amr, "acr": acr}
    decision = decide_provider_step_up(
        claims, now=NOW, max_age=300, second_factor_amr=("mfa", "otp"), second_factor_acr=("urn:mfa",)
    )
    fresh = isinstance(auth_time, int) and not isinstance(auth_time, bool) and -60 <= NOW - auth_time <= 300
    proven = (isinstance(amr, list) and bool({"mfa", "otp"} & set(amr))) or acr == "urn:mfa"
    assert decision.allowed == (fresh and proven)
    if not decision.allowed:
        assert decision.rule == ("step-up-login-stale" if not fresh else "step-up-second-factor-unproven")
        assert "amr=[" in decision.reason  # what the provider sent, so the owner can configure it


@given(
    st.none() | st.text(max_size=5) | st.lists(st.sampled_from(["notegate", "other"]), max_size=3),
    st.none() | st.sampled_from(["notegate", "other"]),
)
def test_the_authorized_party(aud, azp) -> None:
    decision = decide_authorized_party({"aud": aud, "azp": azp}, "notegate")
    several = isinstance(aud, list) and len(aud) > 1
    assert decision.allowed == (azp == "notegate" or (azp is None and not several))


def test_discovery_must_name_the_configured_issuer_and_https_endpoints() -> None:
    good = {
        "issuer": PROVIDER.issuer,
        "authorization_endpoint": "https://id.example.org/auth",
        "token_endpoint": "https://id.example.org/token",
        "jwks_uri": "https://id.example.org/jwks",
    }
    assert parse_discovery(PROVIDER, good).token_endpoint.endswith("/token")
    for changed, rule in (
        ({"issuer": "https://evil.example"}, "oidc-issuer"),
        ({"token_endpoint": "http://id.example.org/token"}, "oidc-provider-unavailable"),
        ({"jwks_uri": None}, "oidc-provider-unavailable"),
    ):
        with pytest.raises(NotegateError) as refused:
            parse_discovery(PROVIDER, {**good, **changed})
        assert refused.value.rule == rule


def test_time_is_a_parameter() -> None:
    """Nothing reads a clock: a token valid at NOW is expired an hour later, by the same function."""
    token = _token()
    assert validate_id_token(token, keys=KEYS, provider=PROVIDER, nonce="n", now=NOW)
    with pytest.raises(NotegateError) as refused:
        validate_id_token(token, keys=KEYS, provider=PROVIDER, nonce="n", now=NOW + 3600)
    assert refused.value.rule == "oidc-expired" and time.time() < NOW + 3600 + 10**9
