"""A request with a foreign Host header gets the 421 naming `allowed_hosts` before anything else, the 401 of a
missing token included (a real `notegate serve` on loopback); the decision is `policy.decide_host`, which
answers exactly as the SDK's own DNS-rebinding check behind it, in linear time."""

from __future__ import annotations

import httpx2
import pytest
from hypothesis import given
from hypothesis import strategies as st
from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings

from notegate.policy import decide_host
from support import Server, mint
from timing import assert_catches_quadratic, assert_linear, fill

pytestmark = pytest.mark.anyio

PING = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
MESSAGE = (
    'Refused [host-not-allowed]: the Host header "evil.example" is not one this server answers to '
    "(DNS-rebinding protection). Connect through localhost or 127.0.0.1, or add that host to [server] "
    "allowed_hosts in notegate.toml (a public address: set [server] public_url)."
)


async def test_a_foreign_host_is_421_before_the_bearer_check(vault, served: Server) -> None:
    token = mint(vault, name="laptop")
    async with httpx2.AsyncClient(timeout=30) as http:
        for method in ("POST", "GET", "DELETE"):
            for authorization in ({}, {"Authorization": f"Bearer {token}"}):
                headers = {"Host": "evil.example", "Content-Type": "application/json", **authorization}
                answer = await http.request(method, f"{served.url}/mcp", json=PING, headers=headers)
                case = f"{method} {'with' if authorization else 'without'} a token"
                assert answer.status_code == 421, case
                error = answer.json()["error"]
                assert error["data"] == {"rule": "host-not-allowed", "setting": "allowed_hosts"}, case
                assert error["message"] == MESSAGE, case
                assert "www-authenticate" not in answer.headers, case  # no OAuth challenge: it never got that far
        answer = await http.post(f"{served.url}/mcp", json=PING)  # the same request on an allowed host
        assert answer.status_code == 401


ALLOWED = ["127.0.0.1:*", "localhost:*", "[::1]:*", "notes.example.org", "box.lan:*"]


@pytest.mark.parametrize(
    ("host", "rule"),
    [
        ("localhost:8765", "host-allowed"),
        ("127.0.0.1:1", "host-allowed"),
        ("[::1]:8765", "host-allowed"),
        ("notes.example.org", "host-allowed"),  # an exact entry: that spelling only
        ("notes.example.org:443", "host-not-allowed"),
        ("box.lan:8765", "host-allowed"),
        ("localhost", "host-not-allowed"),  # NAME:* wants a port
        ("localhost.evil.example:80", "host-not-allowed"),
        ("evil.example", "host-not-allowed"),
        ("", "host-not-allowed"),
        (None, "host-not-allowed"),
    ],
)
def test_decide_host(host: str | None, rule: str) -> None:
    decision = decide_host(host, ALLOWED)
    assert (decision.allowed, decision.rule) == (rule == "host-allowed", rule)


_HOSTS = st.text(alphabet="abl.:*[]0123456789locathe", max_size=24)


@given(host=_HOSTS | st.none(), allowed=st.lists(_HOSTS, max_size=5))
def test_decide_host_answers_as_the_sdk_check_behind_it(host: str | None, allowed: list[str]) -> None:
    sdk = TransportSecurityMiddleware(TransportSecuritySettings(allowed_hosts=allowed))
    assert decide_host(host, allowed).allowed is sdk._validate_host(host)


def test_decide_host_is_linear() -> None:
    assert_linear(lambda text: decide_host(text, ALLOWED), lambda n: fill("localhost", n))
    assert_linear(lambda text: decide_host(text, [text[:-1] + ":*"]), lambda n: fill("a", n))


def test_the_ratio_catches_a_quadratic_host_check() -> None:
    assert_catches_quadratic(lambda n: fill("localhost", n))
