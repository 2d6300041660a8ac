"""Device headers: minted by the real signer, verified by the pure verifier; every way a header fails to
count is one case with its exact reason (and none of them raises)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from collections.abc import Callable

import pytest
from cryptography.hazmat.primitives import serialization

from notegate.auth import devices
from notegate.auth.devices import (
    DEVICE_CLOCK_SKEW_SECONDS,
    DEVICE_MAX_LIFETIME_SECONDS,
    MAX_DEVICE_HEADER_CHARS,
    Reason,
    audience_of,
    generate_device_key,
    mint_device_header,
    parse_public_key,
    server_audiences,
    verify_device_header,
)
from notegate.config import DeviceConfig
from notegate.errors import NotegateError

NOW = 1_800_000_000
URL = "http://127.0.0.1:8765"
AUDIENCES = server_audiences("", "127.0.0.1", 8765)
PEM, PUBLIC = generate_device_key()
OTHER_PEM, OTHER_PUBLIC = generate_device_key()
KEYS = {"laptop": DeviceConfig("laptop", PUBLIC, "owner")}


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def craft(header: dict, claims: dict | bytes, sign: Callable[[bytes], bytes]) -> str:
    """A compact JWS built by hand, for the algorithms and shapes the real signer refuses to produce."""
    payload = claims if isinstance(claims, bytes) else json.dumps(claims).encode()
    signing_input = f"{b64(json.dumps(header).encode())}.{b64(payload)}".encode()
    return f"{signing_input.decode()}.{b64(sign(signing_input))}"


def ed25519(pem: bytes) -> Callable[[bytes], bytes]:
    private = serialization.load_pem_private_key(pem, password=None)
    return private.sign  # type: ignore[union-attr]


def claims(**overrides: object) -> dict:
    return {"aud": URL, "iat": NOW, "exp": NOW + 3600, "jti": "j-1"} | overrides


def verify(value, keys=KEYS, now: float = NOW):
    return verify_device_header(value, keys, AUDIENCES, now)


def test_a_minted_header_is_trusted_with_its_device_and_person() -> None:
    verdict = verify(mint_device_header(PEM, "laptop", URL + "/mcp", now=NOW))
    assert verdict.reason is Reason.TRUSTED and verdict.trusted
    assert (verdict.device, verdict.person) == ("laptop", "owner") and verdict.jti


def test_a_minted_header_has_the_shape_the_issue_names() -> None:
    value = mint_device_header(PEM, "laptop", URL, now=NOW, lifetime=600)
    head, body, _ = value.split(".")
    header = json.loads(base64.urlsafe_b64decode(head + "=="))
    payload = json.loads(base64.urlsafe_b64decode(body + "=="))
    assert header == {"alg": "Ed25519", "kid": "laptop", "typ": "JWT"}
    assert payload["aud"] == URL and payload["exp"] - payload["iat"] == 600
    assert len(payload["jti"]) >= 16
    again = json.loads(base64.urlsafe_b64decode(mint_device_header(PEM, "laptop", URL, now=NOW).split(".")[1] + "=="))
    assert again["jti"] != payload["jti"]  # random per header


def _swap_signature(value: str) -> str:
    head, body, _ = value.split(".")
    other = mint_device_header(OTHER_PEM, "laptop", URL, now=NOW)
    return f"{head}.{body}.{other.split('.')[2]}"


def _tamper_payload(value: str) -> str:
    head, _, sig = value.split(".")
    return f"{head}.{b64(json.dumps(claims(exp=NOW + 7200)).encode())}.{sig}"


HS_SECRETS = (PUBLIC.encode(), parse_public_key(PUBLIC), PUBLIC.split(":", 1)[1].encode())

# (case, header value, exact reason). Headers are built at import so that the table reads as the cases do.
CASES: list[tuple[str, object, Reason]] = [
    ("no header at all", None, Reason.MISSING),
    ("an empty header", "", Reason.MISSING),
    ("only whitespace", "  \t", Reason.MISSING),
    ("one byte past the bound", "a" * (MAX_DEVICE_HEADER_CHARS + 1), Reason.TOO_LARGE),
    ("bytes past the bound", b"a" * (MAX_DEVICE_HEADER_CHARS + 1), Reason.TOO_LARGE),
    ("not a JWS", "hello", Reason.MALFORMED),
    ("four parts", "a.b.c.d", Reason.MALFORMED),
    ("padding is not base64url", "eyJ=.e30.AA", Reason.MALFORMED),
    ("a header that is not JSON", f"{b64(b'nope')}.e30.AA", Reason.MALFORMED),
    ("a header that is a list", f"{b64(b'[1]')}.e30.AA", Reason.MALFORMED),
    ("no alg", f"{b64(json.dumps({'kid': 'laptop'}).encode())}.e30.AA", Reason.MALFORMED),
    ("non-ASCII bytes", "é".encode() + b".e30.AA", Reason.MALFORMED),
    (
        "an extra header (jwk)",
        craft({"alg": "Ed25519", "kid": "laptop", "jwk": {}}, claims(), ed25519(PEM)),
        Reason.MALFORMED,
    ),
    ("a kid that is not text", craft({"alg": "Ed25519", "kid": 7}, claims(), ed25519(PEM)), Reason.MALFORMED),
    # -- algorithms: exactly one is accepted, whatever the signature
    ("alg none", craft({"alg": "none", "kid": "laptop"}, claims(), lambda _: b""), Reason.ALG_NOT_ALLOWED),
    ("alg None (case)", craft({"alg": "None", "kid": "laptop"}, claims(), lambda _: b""), Reason.ALG_NOT_ALLOWED),
    *[
        (
            f"HS256 keyed with the public key ({i})",
            craft({"alg": "HS256", "kid": "laptop"}, claims(), lambda m, k=k: hmac.new(k, m, hashlib.sha256).digest()),
            Reason.ALG_NOT_ALLOWED,
        )
        for i, k in enumerate(HS_SECRETS)
    ],
    (
        "EdDSA with the right key",
        craft({"alg": "EdDSA", "kid": "laptop"}, claims(), ed25519(PEM)),
        Reason.ALG_NOT_ALLOWED,
    ),
    ("alg ed25519 (case)", craft({"alg": "ed25519", "kid": "laptop"}, claims(), ed25519(PEM)), Reason.ALG_NOT_ALLOWED),
    ("alg as a list", craft({"alg": ["Ed25519"], "kid": "laptop"}, claims(), ed25519(PEM)), Reason.ALG_NOT_ALLOWED),
    # -- keys and signatures
    ("an unknown kid", mint_device_header(PEM, "desktop", URL, now=NOW), Reason.UNKNOWN_KEY),
    ("signed by another key", mint_device_header(OTHER_PEM, "laptop", URL, now=NOW), Reason.BAD_SIGNATURE),
    ("another key's signature", _swap_signature(mint_device_header(PEM, "laptop", URL, now=NOW)), Reason.BAD_SIGNATURE),
    ("a tampered payload", _tamper_payload(mint_device_header(PEM, "laptop", URL, now=NOW)), Reason.BAD_SIGNATURE),
    ("no signature", mint_device_header(PEM, "laptop", URL, now=NOW).rsplit(".", 1)[0] + ".", Reason.MALFORMED),
    # -- claims, only read once the signature verified
    ("claims not JSON", craft({"alg": "Ed25519", "kid": "laptop"}, b"nope", ed25519(PEM)), Reason.MALFORMED),
    ("claims a list", craft({"alg": "Ed25519", "kid": "laptop"}, b"[]", ed25519(PEM)), Reason.MALFORMED),
    (
        "no jti",
        craft({"alg": "Ed25519", "kid": "laptop"}, {k: v for k, v in claims().items() if k != "jti"}, ed25519(PEM)),
        Reason.MALFORMED,
    ),
    ("an empty jti", craft({"alg": "Ed25519", "kid": "laptop"}, claims(jti=""), ed25519(PEM)), Reason.MALFORMED),
    ("iat as text", craft({"alg": "Ed25519", "kid": "laptop"}, claims(iat=str(NOW)), ed25519(PEM)), Reason.MALFORMED),
    ("exp true", craft({"alg": "Ed25519", "kid": "laptop"}, claims(exp=True), ed25519(PEM)), Reason.MALFORMED),
    ("exp before iat", craft({"alg": "Ed25519", "kid": "laptop"}, claims(exp=NOW - 1), ed25519(PEM)), Reason.MALFORMED),
    ("aud as a list", craft({"alg": "Ed25519", "kid": "laptop"}, claims(aud=[URL]), ed25519(PEM)), Reason.MALFORMED),
    (
        "expired",
        mint_device_header(PEM, "laptop", URL, now=NOW - 7200, lifetime=3600),
        Reason.EXPIRED,
    ),
    ("expired to the second", mint_device_header(PEM, "laptop", URL, now=NOW - 60, lifetime=60), Reason.EXPIRED),
    (
        "issued in the future beyond the skew",
        mint_device_header(PEM, "laptop", URL, now=NOW + DEVICE_CLOCK_SKEW_SECONDS + 1),
        Reason.ISSUED_IN_FUTURE,
    ),
    (
        "exp too far from iat",
        craft({"alg": "Ed25519", "kid": "laptop"}, claims(exp=NOW + DEVICE_MAX_LIFETIME_SECONDS + 1), ed25519(PEM)),
        Reason.LIFETIME_TOO_LONG,
    ),
    ("another server", mint_device_header(PEM, "laptop", "https://notes.example.org", now=NOW), Reason.WRONG_AUDIENCE),
    ("another port", mint_device_header(PEM, "laptop", "http://127.0.0.1:9999/mcp", now=NOW), Reason.WRONG_AUDIENCE),
    ("https for http", mint_device_header(PEM, "laptop", "https://127.0.0.1:8765", now=NOW), Reason.WRONG_AUDIENCE),
    # -- what still counts
    ("within the skew", mint_device_header(PEM, "laptop", URL, now=NOW + DEVICE_CLOCK_SKEW_SECONDS), Reason.TRUSTED),
    (
        "the longest lifetime",
        mint_device_header(PEM, "laptop", URL, now=NOW, lifetime=DEVICE_MAX_LIFETIME_SECONDS),
        Reason.TRUSTED,
    ),
    ("as bytes", mint_device_header(PEM, "laptop", URL, now=NOW).encode(), Reason.TRUSTED),
    (
        "localhost for 127.0.0.1",
        mint_device_header(PEM, "laptop", "http://localhost:8765/mcp/", now=NOW),
        Reason.TRUSTED,
    ),
]


@pytest.mark.parametrize(("case", "value", "reason"), CASES, ids=[c[0] for c in CASES])
def test_each_header_gets_its_exact_reason(case: str, value: object, reason: Reason) -> None:
    verdict = verify(value)
    assert verdict.reason is reason, case
    assert verdict.trusted is (reason is Reason.TRUSTED)
    if not verdict.trusted:
        assert verdict.person is None  # a header that does not count names nobody's person


def test_a_failing_header_names_only_a_configured_device() -> None:
    assert verify(mint_device_header(PEM, "desktop", URL, now=NOW)).device is None
    assert verify(mint_device_header(PEM, "laptop", URL, now=NOW - 86400, lifetime=60)).device == "laptop"


def test_removing_the_key_from_the_config_revokes_the_device_at_once() -> None:
    value = mint_device_header(PEM, "laptop", URL, now=NOW)
    assert verify(value).trusted
    assert verify(value, keys={}).reason is Reason.UNKNOWN_KEY
    rotated = {"laptop": DeviceConfig("laptop", OTHER_PUBLIC, "owner")}  # the name kept, the key replaced
    assert verify(value, keys=rotated).reason is Reason.BAD_SIGNATURE


def test_a_public_url_is_the_only_audience_behind_a_proxy() -> None:
    public = server_audiences("https://Notes.Example.org/", "127.0.0.1", 8765)
    assert public == {"https://notes.example.org"}
    value = mint_device_header(PEM, "laptop", "https://notes.example.org/mcp", now=NOW)
    assert verify_device_header(value, KEYS, public, NOW).trusted
    assert verify_device_header(mint_device_header(PEM, "laptop", URL, now=NOW), KEYS, public, NOW).reason is (
        Reason.WRONG_AUDIENCE
    )


@pytest.mark.parametrize(
    ("url", "audience"),
    [
        ("http://127.0.0.1:8765/mcp", "http://127.0.0.1:8765"),
        ("http://127.0.0.1:8765/mcp/", "http://127.0.0.1:8765"),
        ("HTTPS://Notes.Example.org/base/mcp", "https://notes.example.org/base"),
        ("https://notes.example.org/", "https://notes.example.org"),
        ("not a url", "not a url"),
    ],
)
def test_audience_of_names_the_server_not_its_endpoint(url: str, audience: str) -> None:
    assert audience_of(url) == audience


@pytest.mark.parametrize(
    "text",
    [
        "",
        "ed25519:",
        "ed25519:" + "A" * 42,
        "ed25519:" + "A" * 44,
        "ED25519:" + "A" * 43,
        "ed25519:" + "A" * 42 + "=",
        "ed25519:" + "A" * 42 + "B",  # non-canonical: the last character carries bits past 32 bytes
    ],
)
def test_only_canonical_public_key_lines_parse(text: str) -> None:
    with pytest.raises(ValueError):
        parse_public_key(text)


def test_generated_keys_round_trip() -> None:
    assert len(parse_public_key(PUBLIC)) == 32
    assert devices.public_key_of(PEM) == PUBLIC and PUBLIC != OTHER_PUBLIC


@pytest.mark.parametrize("lifetime", [0, -1, DEVICE_MAX_LIFETIME_SECONDS + 1])
def test_the_signer_refuses_a_lifetime_outside_the_bound(lifetime: int) -> None:
    with pytest.raises(NotegateError) as info:
        mint_device_header(PEM, "laptop", URL, now=NOW, lifetime=lifetime)
    assert info.value.rule == "device-lifetime-invalid"


@pytest.mark.parametrize("name", ["Laptop", "", "../x", "a" * 64, "lap top", "lé"])
def test_the_signer_refuses_a_bad_device_name(name: str) -> None:
    with pytest.raises(NotegateError) as info:
        mint_device_header(PEM, name, URL, now=NOW)
    assert info.value.rule == "device-name-invalid"
