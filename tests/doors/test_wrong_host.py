"""A request with a foreign Host header gets the 421 naming `allowed_hosts` before anything else, the 401 of a
missing token included (a real `notegate serve` on loopback), on every route of the app; the decision is
`policy.decide_host`, which answers exactly as the SDK's own DNS-rebinding check behind it, in linear time."""

from __future__ import annotations

import re

import httpx2
import pytest
from hypothesis import given
from hypothesis import strategies as st
from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
from starlette.routing import Mount, Route

from notegate.config import load_config
from notegate.doors.http import LazyRoutes, create_app
from notegate.policy import decide_host
from notegate.services.runtime import Runtime
from support import Server, mint, running
from support.timing import assert_catches_quadratic, assert_linear, fill

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


# --- the Host allowlist comes first on every route ---------------------------------------------------------


def _concrete(path_format: str) -> str:
    """A path a route's template matches (every parameter filled with a note-like name)."""
    return re.sub(r"\{[^}]*\}", "x.md", path_format)


def route_table(routes: list, prefix: str = "") -> list[tuple[str, str]]:
    """(method, path) of every route the app serves: its own routes, the lazily built doors (contracts, the
    console), and the routes of the apps mounted under it (the SDK's: /mcp, /register, the metadata)."""
    found: list[tuple[str, str]] = []
    for route in routes:
        if isinstance(route, LazyRoutes):
            found += route_table(route.routes, prefix)
        elif isinstance(route, Mount):
            inner = route.app
            while not hasattr(inner, "routes") and hasattr(inner, "app"):  # through the door's guard
                inner = inner.app
            found.append(("GET", prefix + route.path + "/"))  # the mount's own root (Mount keeps no "/" at the end)
            found += route_table(getattr(inner, "routes", []), prefix + route.path)
        elif isinstance(route, Route):
            methods = sorted(set(route.methods or {"GET"}) - {"HEAD"})
            found.append((methods[0], prefix + _concrete(route.path_format)))
        else:
            raise AssertionError(f"a route of an unknown kind: {route!r}: teach this test to walk it")
    return found


def refusal_text(path: str, answer: httpx2.Response) -> str:
    """The refusal, read in the shape of the path's door: JSON-RPC (/mcp), the contracts' JSON, plain text."""
    if path in ("/mcp", "/mcp/"):
        return answer.json()["error"]["message"]
    if path.startswith("/contracts"):
        body = answer.json()
        assert body["rule"] == "host-not-allowed"
        return body["error"]
    assert answer.headers["content-type"].startswith("text/plain")
    return answer.text.strip()


def test_every_route_answers_a_foreign_host_421_first(vault) -> None:
    """Walks the app's whole route table: a route added later is checked here without anyone listing it.
    ``/metrics`` served a loopback peer without a token whatever its Host (a rebound page read it)."""
    runtime = Runtime(load_config(vault))
    try:
        table = route_table(create_app(runtime, host="127.0.0.1", port=8765).routes)
    finally:
        runtime.close()
    paths = {path for _, path in table}
    assert {"/metrics", "/healthz", "/mcp", "/authorize", "/token", "/register", "/contracts", "/login"} <= paths
    assert any(path.startswith("/.well-known/") for path in paths)
    token = mint(vault, name="prometheus", client_class="machine")
    with running(vault) as server, httpx2.Client(timeout=30) as http:
        for method, path in table:
            for authorization in ({}, {"Authorization": f"Bearer {token}"}):
                headers = {"Host": "evil.example", **authorization}
                answer = http.request(method, f"{server.url}{path}", headers=headers)
                case = f"{method} {path} {'with' if authorization else 'without'} a token"
                assert answer.status_code == 421, case
                assert refusal_text(path, answer) == MESSAGE, case
        # The same page on an allowed Host is served as before.
        assert http.get(f"{server.url}/metrics").status_code == 200
        assert http.get(f"{server.url}/healthz").status_code == 200
