"""Hostile device headers: any text or bytes gives a verdict, never an exception, and a huge header costs
nothing (it is refused on its length, before any parsing)."""

from __future__ import annotations

import base64
import json
import time

from hypothesis import given, settings
from hypothesis import strategies as st

from notegate.auth.devices import (
    MAX_DEVICE_HEADER_CHARS,
    DeviceVerdict,
    Reason,
    generate_device_key,
    mint_device_header,
    server_audiences,
    verify_device_header,
)
from notegate.config import DeviceConfig

NOW = 1_800_000_000
PEM, PUBLIC = generate_device_key()
KEYS = {"laptop": DeviceConfig("laptop", PUBLIC, "owner")}
AUDIENCES = server_audiences("", "127.0.0.1", 8765)
VALID = mint_device_header(PEM, "laptop", "http://127.0.0.1:8765", now=NOW)


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def check(value: object) -> DeviceVerdict:
    verdict = verify_device_header(value, KEYS, AUDIENCES, NOW)  # type: ignore[arg-type]
    assert isinstance(verdict, DeviceVerdict) and isinstance(verdict.reason, Reason)
    return verdict


@settings(max_examples=400, deadline=None)
@given(st.one_of(st.text(max_size=600), st.binary(max_size=600)))
def test_any_text_or_bytes_gets_a_verdict(value: str | bytes) -> None:
    assert not check(value).trusted


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(header=JSON_VALUES, claims=JSON_VALUES, signature=st.binary(max_size=80))
def test_well_shaped_tokens_of_arbitrary_json_get_a_verdict(header: object, claims: object, signature: bytes) -> None:
    def enc(value: object) -> str:
        return b64(json.dumps(value, allow_nan=True).encode())

    assert not check(f"{enc(header)}.{enc(claims)}.{b64(signature)}").trusted


@settings(max_examples=200, deadline=None)
@given(header=st.dictionaries(st.sampled_from(["alg", "kid", "typ", "crit", "jwk"]), JSON_VALUES, max_size=5))
def test_arbitrary_protected_headers_around_a_real_signature_never_count(header: dict) -> None:
    _, body, sig = VALID.split(".")
    verdict = check(f"{b64(json.dumps(header).encode())}.{body}.{sig}")
    if header == {"alg": "Ed25519", "kid": "laptop", "typ": "JWT"}:
        assert verdict.trusted
    else:
        assert not verdict.trusted


@settings(max_examples=200, deadline=None)
@given(position=st.integers(min_value=0, max_value=len(VALID) - 1), char=st.sampled_from("AQgw_-.x="))
def test_one_changed_character_never_counts(position: int, char: str) -> None:
    value = VALID[:position] + char + VALID[position + 1 :]
    verdict = check(value)
    if value != VALID:
        # The last character of a base64url part can carry unused bits: flipping only those decodes to the
        # same bytes, so the same valid header is the one acceptable outcome.
        assert not verdict.trusted or base64.urlsafe_b64decode(value.split(".")[2] + "==") == (
            base64.urlsafe_b64decode(VALID.split(".")[2] + "==")
        )


def _best_of(value: str | bytes, runs: int = 30) -> float:
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        verify_device_header(value, KEYS, AUDIENCES, NOW)
        best = min(best, time.perf_counter() - start)
    return best


def test_a_megabyte_header_costs_no_more_than_a_kilobyte_one() -> None:
    """1 MB of a plausible-looking JWS is refused on its length; 1 KB of one is parsed. The big one must not
    cost more (measured as the best of 30 runs each, so a busy machine does not decide it)."""
    small = VALID + "A" * (1024 - len(VALID))
    big = VALID + "A" * ((1 << 20) - len(VALID))
    assert check(big).reason is Reason.TOO_LARGE and check(big.encode()).reason is Reason.TOO_LARGE
    assert check(small).reason is Reason.BAD_SIGNATURE  # parsed all the way to the signature check
    assert len(small) <= MAX_DEVICE_HEADER_CHARS < len(big)
    ratio = _best_of(big) / _best_of(small)
    assert ratio < 2.0, ratio
    ratio_bytes = _best_of(big.encode()) / _best_of(small.encode())
    assert ratio_bytes < 2.0, ratio_bytes
