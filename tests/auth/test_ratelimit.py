"""The per-source token buckets (never over their rate, a bounded table), how a request's source is named
(X-Forwarded-For only from a trusted proxy, IPv6 by its /64), and the length bounds of stored OAuth fields."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from notegate.auth.anonymous import FIELD_LIMITS, MAX_REDIRECT_URIS, field_refusal, registration_refusal
from notegate.auth.ratelimit import TokenBuckets, source_of

SOURCES = st.sampled_from([f"10.0.0.{n}" for n in range(12)])
# (seconds since the previous request, its source): time only moves forward, as the monotonic clock does
STEPS = st.lists(st.tuples(st.floats(min_value=0, max_value=5, allow_nan=False), SOURCES), max_size=300)


@settings(max_examples=300, deadline=None)
@given(
    steps=STEPS,
    capacity=st.integers(min_value=1, max_value=8),
    rate=st.floats(min_value=0.05, max_value=4),
    max_sources=st.integers(min_value=1, max_value=6),
)
def test_no_source_ever_exceeds_its_rate_and_the_table_stays_bounded(
    steps: list[tuple[float, str]], capacity: int, rate: float, max_sources: int
) -> None:
    buckets = TokenBuckets(capacity=capacity, rate=rate, max_sources=max_sources)
    now = 0.0
    allowed: dict[str, list[float]] = {}
    for gap, source in steps:
        now += gap
        verdict = buckets.take(source, now)
        assert len(buckets) <= max_sources
        if verdict.allowed:
            allowed.setdefault(source, []).append(now)
        else:
            assert verdict.rule in ("rate-limited", "rate-limit-full") and verdict.retry_after > 0
    for times in allowed.values():  # every window [t_i, t_j]: at most capacity + rate * (t_j - t_i) requests
        for i in range(len(times)):
            for j in range(i, len(times)):
                assert j - i + 1 <= capacity + rate * (times[j] - times[i]) + 1e-6


def test_a_burst_then_the_rate() -> None:
    buckets = TokenBuckets(capacity=3, rate=1.0, max_sources=10)
    assert [buckets.take("a", 0.0).allowed for _ in range(4)] == [True, True, True, False]
    refused = buckets.take("a", 0.0)
    assert refused.rule == "rate-limited" and refused.retry_after == pytest.approx(1.0)
    assert buckets.take("b", 0.0).allowed  # another source: its own bucket
    assert buckets.take("a", 1.0).allowed and not buckets.take("a", 1.0).allowed


def test_a_full_table_forgets_only_refilled_buckets() -> None:
    buckets = TokenBuckets(capacity=2, rate=1.0, max_sources=2)
    assert buckets.take("a", 0.0).allowed and buckets.take("b", 0.5).allowed
    full = buckets.take("c", 0.6)  # a and b both spent recently: forgetting them would reset their debt
    assert not full.allowed and full.rule == "rate-limit-full"
    assert buckets.take("c", 1.0).allowed  # a has refilled by now: it goes, c takes its place
    assert len(buckets) == 2


@pytest.mark.parametrize(
    ("peer", "forwarded", "trusted", "source"),
    [
        ("198.51.100.7", None, (), "198.51.100.7"),
        ("198.51.100.7", "203.0.113.1", (), "198.51.100.7"),  # no trusted proxy: the header is ignored
        ("127.0.0.1", "203.0.113.1", (), "127.0.0.1"),  # not even from loopback
        ("10.0.0.2", "203.0.113.1", ("10.0.0.2",), "203.0.113.1"),
        ("10.0.0.2", "6.6.6.6, 203.0.113.1", ("10.0.0.2",), "203.0.113.1"),  # the left is the client's to forge
        ("10.0.0.2", "203.0.113.1, 10.0.0.3", ("10.0.0.2", "10.0.0.3"), "203.0.113.1"),  # two proxies
        ("10.0.0.2", "garbage", ("10.0.0.2",), "10.0.0.2"),
        ("10.0.0.2", "10.0.0.2", ("10.0.0.2",), "10.0.0.2"),
        ("2001:db8:1:2:aaaa::1", None, (), "2001:db8:1:2::/64"),  # one host owns a /64
        ("::ffff:198.51.100.7", None, (), "198.51.100.7"),
        (None, "203.0.113.1", (), "unknown"),
    ],
)
def test_source_of(peer: str | None, forwarded: str | None, trusted: tuple[str, ...], source: str) -> None:
    assert source_of(peer, forwarded, trusted) == source


@given(st.text(max_size=200), st.text(max_size=60))
def test_source_of_is_total(forwarded: str, peer: str) -> None:
    assert isinstance(source_of(peer, forwarded, ("10.0.0.2", peer)), str)


# ----------------------------------------------------------------------------------- field bounds
@given(st.dictionaries(st.sampled_from(sorted(FIELD_LIMITS)), st.text(max_size=1500), max_size=len(FIELD_LIMITS)))
def test_a_field_is_refused_exactly_when_over_its_limit(params: dict[str, str]) -> None:
    refused = field_refusal(params)
    over = [name for name in FIELD_LIMITS if name in params and len(params[name]) > FIELD_LIMITS[name]]
    if over:
        assert refused is not None and refused.rule == "oauth-field-too-long" and over[0] in refused.message
    else:
        assert refused is None


@given(
    st.lists(st.text(max_size=700), max_size=14),
    st.one_of(st.none(), st.text(max_size=300), st.integers()),
)
def test_a_registration_is_refused_exactly_when_a_stored_field_is_too_long(uris: list[str], name: object) -> None:
    refused = registration_refusal({"redirect_uris": uris, "client_name": name})
    too_long = (
        len(uris) > MAX_REDIRECT_URIS
        or any(len(u) > FIELD_LIMITS["redirect_uri"] for u in uris)
        or (isinstance(name, str) and len(name) > FIELD_LIMITS["client_name"])
    )
    assert (refused is not None) == too_long
    if refused is not None:
        assert refused.rule == "oauth-field-too-long"


def test_every_anonymous_oauth_route_is_rate_limited(vault) -> None:
    """A route added to the OAuth door without a row in ENDPOINTS fails here (only the metadata is free)."""
    from notegate.auth.anonymous import ENDPOINTS
    from notegate.auth.oauth import NotegateOAuthProvider
    from notegate.auth.oauth_routes import oauth_routes
    from notegate.config import load_config
    from notegate.state import StateDB

    config = load_config(vault)
    db = StateDB(config.state_dir / "state.sqlite")
    try:
        provider = NotegateOAuthProvider(db, config, issuer="http://localhost:1", resource="http://localhost:1/mcp")
        routes = oauth_routes(provider)
    finally:
        db.close()
    served = {(m, r.path) for r in routes for m in (r.methods or ()) if m not in ("HEAD", "OPTIONS")}
    assert served - set(ENDPOINTS) == {("GET", "/.well-known/oauth-authorization-server")}
    assert ("POST", "/oauth/consent") in ENDPOINTS
