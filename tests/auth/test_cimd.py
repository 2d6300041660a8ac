"""Client ID Metadata Documents: the fetch (https only, no redirects, time and size caps, private addresses,
one resolution), the validation (client_id equals the URL) and the cache, against a real local HTTPS stand-in
whose certificate comes from a test CA generated here with ``cryptography``."""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from notegate.auth.cimd import (
    MAX_CACHE_SECONDS,
    MAX_DOCUMENT_BYTES,
    CimdFetcher,
    CimdRefused,
    cache_seconds,
    is_public,
    parse_response,
    parse_url,
)
from support.oauth import StandIn

# ------------------------------------------------------------------ a test CA and an HTTPS stand-in
# make_ca: the lab's throwaway CA (one definition: notegate.lab.standins)


@pytest.fixture
def standin(tmp_path: Path) -> Iterator[StandIn]:
    with StandIn(tmp_path) as server:
        yield server


def loopback(host: str, port: int) -> list[str]:
    return ["127.0.0.1"]


def fetcher(standin: StandIn, **kw) -> CimdFetcher:
    kw.setdefault("private_hosts", ("localhost",))
    kw.setdefault("resolver", loopback)
    return CimdFetcher(ca_file=str(standin.ca), **kw)


def refused_rule(fn, *args) -> str:
    with pytest.raises(CimdRefused) as info:
        fn(*args)
    return info.value.rule


# ------------------------------------------------------------------------------------- the fetch
def test_a_valid_document_is_fetched_and_validated(standin: StandIn) -> None:
    url = standin.document("/client.json")
    doc = fetcher(standin).fetch(url)
    assert doc.client_id == url
    assert doc.client_name == "Stand-in client"
    assert doc.redirect_uris == ("http://127.0.0.1:9/cb",)


def test_client_id_must_equal_the_url(standin: StandIn) -> None:
    url = standin.serve("/other.json", {"client_id": "https://elsewhere.example/c.json", "redirect_uris": ["x"]})
    assert refused_rule(fetcher(standin).fetch, url) == "cimd-invalid"


@pytest.mark.parametrize(
    "url",
    [
        "http://localhost/client.json",  # not https
        "https://localhost/",  # the root is not a document
        "https://user@localhost/c.json",  # user info
        "https://localhost/c.json#frag",  # fragment
        "ftp://localhost/c.json",
        "https:///c.json",  # no host
    ],
)
def test_only_plain_https_urls_with_a_path(url: str) -> None:
    assert refused_rule(parse_url, url) == "cimd-invalid"


def test_redirects_are_not_followed(standin: StandIn) -> None:
    target = standin.document("/real.json")
    url = standin.serve("/moved.json", b"", {"Location": target}, status=302)
    assert refused_rule(fetcher(standin).fetch, url) == "cimd-unreachable"
    assert standin.hits == ["/moved.json"]  # the target was never asked for


def test_a_document_over_10_kb_is_refused(standin: StandIn) -> None:
    url = standin.url("/big.json")
    standin.serve("/big.json", {"client_id": url, "redirect_uris": ["http://127.0.0.1/cb"], "pad": "x" * 11_000})
    assert refused_rule(fetcher(standin).fetch, url) == "cimd-unreachable"


def test_a_slow_server_is_cut_off_at_the_deadline(standin: StandIn) -> None:
    url = standin.url("/slow.json")
    standin.serve("/slow.json", {"client_id": url, "redirect_uris": ["http://127.0.0.1/cb"]}, delay=1.0)
    started = time.monotonic()
    assert refused_rule(fetcher(standin, timeout=0.3).fetch, url) == "cimd-unreachable"
    assert time.monotonic() - started < 0.9


def test_an_untrusted_certificate_is_refused(standin: StandIn) -> None:
    url = standin.document("/client.json")
    plain = CimdFetcher(private_hosts=("localhost",), resolver=loopback)  # the system's CAs: not the test CA
    assert refused_rule(plain.fetch, url) == "cimd-unreachable"


@pytest.mark.parametrize(
    "address",
    [
        "127.0.0.1",
        "10.1.2.3",
        "192.168.0.7",
        "172.16.5.4",
        "169.254.169.254",
        "::1",
        "fe80::1",
        "fc00::5",
        "::ffff:127.0.0.1",
        "0.0.0.0",
        "100.64.0.1",
    ],
)
def test_private_loopback_and_link_local_addresses_are_refused(standin: StandIn, address: str) -> None:
    url = standin.document("/client.json")
    strict = fetcher(standin, private_hosts=(), resolver=lambda host, port: [address])
    assert refused_rule(strict.fetch, url) == "cimd-private-address"
    assert standin.hits == []  # refused before any connection


def test_one_private_address_among_public_ones_is_refused(standin: StandIn) -> None:
    url = standin.document("/client.json")
    mixed = fetcher(standin, private_hosts=(), resolver=lambda host, port: ["93.184.216.34", "10.0.0.1"])
    assert refused_rule(mixed.fetch, url) == "cimd-private-address"


def test_public_addresses_are_public() -> None:
    assert is_public("93.184.216.34") and is_public("2606:4700::1111")
    assert not is_public("not-an-address")


def test_resolve_check_connect_uses_the_checked_address(standin: StandIn) -> None:
    """No DNS-rebinding window: a resolver that answers differently the second time is asked once, and the
    connection goes to the address that was checked."""
    answers = [["127.0.0.1"], ["10.66.66.66"]]
    asked: list[str] = []

    def rebinding(host: str, port: int) -> list[str]:
        asked.append(host)
        return answers[min(len(asked) - 1, 1)]

    url = standin.document("/client.json")
    doc = fetcher(standin, resolver=rebinding).fetch(url)
    assert doc.client_id == url
    assert asked == ["localhost"]
    assert standin.hits == ["/client.json"]


def test_cache_is_bounded_by_headers_and_24_hours(standin: StandIn) -> None:
    now = [1_000_000.0]
    url = standin.url("/cached.json")
    body = {"client_id": url, "redirect_uris": ["http://127.0.0.1/cb"]}
    standin.serve("/cached.json", body, {"Cache-Control": "max-age=60"})
    cached = fetcher(standin, clock=lambda: now[0])
    cached.fetch(url)
    cached.fetch(url)
    assert len(standin.hits) == 1
    now[0] += 61
    cached.fetch(url)
    assert len(standin.hits) == 2
    standin.serve("/cached.json", body, {"Cache-Control": "no-store"})
    now[0] += 61
    cached.fetch(url)
    cached.fetch(url)
    assert len(standin.hits) == 4  # no-store: fetched every time
    standin.serve("/cached.json", body, {"Cache-Control": "max-age=31536000"})
    cached.fetch(url)
    now[0] += MAX_CACHE_SECONDS - 1
    cached.fetch(url)
    assert len(standin.hits) == 5
    now[0] += 2
    cached.fetch(url)
    assert len(standin.hits) == 6  # a year's max-age is held to 24 h


@pytest.mark.parametrize(
    ("header", "seconds"),
    [
        (None, MAX_CACHE_SECONDS),
        ("max-age=10", 10),
        ("no-store", 0),
        ("private, max-age=9", 0),
        ("max-age=abc", 0),
        ("max-age=99999999", MAX_CACHE_SECONDS),
        ("public, s-maxage=5, max-age=50", 5),
    ],
)
def test_cache_seconds(header: str | None, seconds: float) -> None:
    assert cache_seconds(header) == seconds


# ---------------------------------------------------------------------------------- the parsing
URL = "https://client.example/oauth/client.json"


def answer(body: bytes, *headers: str, status: str = "200 OK") -> bytes:
    return f"HTTP/1.1 {status}\r\n".encode() + b"".join(h.encode() + b"\r\n" for h in headers) + b"\r\n" + body


@pytest.mark.parametrize(
    ("raw", "rule"),
    [
        (b"garbage", "cimd-unreachable"),
        (answer(b"{}", status="301 Moved"), "cimd-unreachable"),
        (answer(b"{}", status="500 Oops"), "cimd-unreachable"),
        (answer(b"{}", "Transfer-Encoding: chunked"), "cimd-unreachable"),
        (answer(b"{}", "Content-Length: 9"), "cimd-unreachable"),  # truncated
        (answer(b"{" + b" " * MAX_DOCUMENT_BYTES + b"}"), "cimd-unreachable"),
        (answer(b"{}", "Content-Type: text/html"), "cimd-invalid"),
        (answer(b"[1]"), "cimd-invalid"),
        (answer(b'{"client_id": NaN}'), "cimd-invalid"),
        (answer(json.dumps({"client_id": URL}).encode()), "cimd-invalid"),  # no redirect URIs
        (answer(json.dumps({"client_id": URL, "redirect_uris": [1]}).encode()), "cimd-invalid"),
        (
            answer(json.dumps({"client_id": URL, "redirect_uris": ["a"], "token_endpoint_auth_method": "x"}).encode()),
            "cimd-invalid",
        ),
    ],
)
def test_malformed_answers_are_refused_with_their_rule(raw: bytes, rule: str) -> None:
    assert refused_rule(parse_response, raw, URL) == rule


def test_a_good_answer_parses() -> None:
    body = json.dumps({"client_id": URL, "client_name": "Ex\u0007ample", "redirect_uris": ["https://c.example/cb"]})
    doc, ttl = parse_response(answer(body.encode(), "Content-Type: application/json", "Cache-Control: max-age=5"), URL)
    assert doc.client_name == "Example" and doc.redirect_uris == ("https://c.example/cb",) and ttl == 5


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=4096))
def test_arbitrary_bytes_give_a_document_or_one_refusal(raw: bytes) -> None:
    with contextlib.suppress(CimdRefused):
        parse_response(raw, URL)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.text(max_size=40), max_size=6),
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=20),
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
        max_leaves=20,
    ),
)
def test_arbitrary_headers_and_json_give_a_document_or_one_refusal(headers: list[str], value: object) -> None:
    body = json.dumps({"client_id": URL, "redirect_uris": value, "client_name": value}).encode()
    raw = answer(body, *(h.replace("\r", "").replace("\n", "") for h in headers))
    with contextlib.suppress(CimdRefused):
        parse_response(raw.decode("utf-8", "replace").encode("latin-1", "replace"), URL)
