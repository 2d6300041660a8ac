"""The contract door and the console are built on the first request that could be theirs, not at start.

Why: importing them (passkeys, page templates, contract schemas) was a large share of a restart before the
first MCP read could be served. The invariants: importing the HTTP door imports neither door; an MCP read
builds neither; the first other request builds them and is answered exactly as a flat route table in the
same place would answer it (checked against a flat table with hypothesis, on a real ASGI call each).
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import httpx2
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Mount, Route

from notegate.doors.http import MCP_PATHS, LazyRoutes
from support import mcp_http, mint
from support.inprocess import serve_in_process

LAZY_MODULES = ("notegate.doors.web", "notegate.doors.contracts_http", "notegate.services.contracts")


def test_importing_the_http_door_imports_neither_door() -> None:
    code = "import sys, notegate.doors.http\nprint(*[m in sys.modules for m in sys.argv[1:]])\n"
    out = subprocess.run([sys.executable, "-c", code, *LAZY_MODULES], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False"] * len(LAZY_MODULES)


def _lazy(app: Starlette) -> LazyRoutes:
    [lazy] = [r for r in app.routes if isinstance(r, LazyRoutes)]
    return lazy


@pytest.mark.anyio
async def test_an_mcp_read_builds_neither_door_and_the_first_page_builds_both(vault: Path) -> None:
    token = mint(vault, name="lazy", client_class="workstation", tier="trusted")
    with serve_in_process(vault) as served:
        lazy = _lazy(served.app)
        async with mcp_http(served.url, token) as client:
            result = await client.call_tool("read_note", {"path": "rules/digest.md"})
            assert not result.is_error
        assert not lazy.built
        async with httpx2.AsyncClient(base_url=served.url) as http:
            login = await http.get("/login")
            assert login.status_code == 200 and lazy.built
            listed = await http.get("/contracts")  # no token: the contract door's own 401
            assert listed.status_code == 401
            assert (await http.get("/mcp/nothing-here")).status_code == 404  # falls through to the MCP app


# ------------------------------------------------------------------ the same answers as a flat route table


def _endpoint(tag: str):
    async def answer(request: Request) -> PlainTextResponse:
        return PlainTextResponse(f"{tag} {sorted(request.path_params.items())}")

    return answer


def _door_routes() -> list[Route]:
    return [
        Route("/login", _endpoint("login-get"), methods=["GET"]),
        Route("/login/options", _endpoint("login-options"), methods=["POST"]),
        Route("/oauth/consent", _endpoint("consent-get"), methods=["GET"]),
        Route("/oauth/consent", _endpoint("consent-post"), methods=["POST"]),
        Route("/notes/{path:path}", _endpoint("notes"), methods=["GET"]),
        Route("/contracts", _endpoint("contracts"), methods=["GET"]),
        Route("/contracts/{name}", _endpoint("contract-call"), methods=["POST"]),
    ]


def _apps() -> tuple[Starlette, Starlette, list[int]]:
    builds: list[int] = []

    def build() -> list[Route]:
        builds.append(1)
        return _door_routes()

    before = [Route("/healthz", _endpoint("healthz"), methods=["GET"])]
    after = [Mount("/", app=PlainTextResponse("catch-all"))]
    flat = Starlette(routes=[*before, *_door_routes(), *after])
    lazy = Starlette(routes=[*before, LazyRoutes(build, skip=MCP_PATHS), *after])
    return flat, lazy, builds


async def _call(app: Starlette, method: str, path: str) -> tuple[int, bytes]:
    sent: list[dict] = []

    async def receive() -> dict:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "path": path,
        "raw_path": path.encode(),
        "root_path": "",
        "scheme": "http",
        "query_string": b"",
        "headers": [(b"host", b"localhost")],
        "client": ("127.0.0.1", 1),
        "server": ("127.0.0.1", 80),
    }
    await app(scope, receive, send)
    status = next(m["status"] for m in sent if m["type"] == "http.response.start")
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return status, body


PATHS = st.one_of(
    st.sampled_from(
        [
            "/login",
            "/login/",
            "/login/options",
            "/oauth/consent",
            "/notes/a/b.md",
            "/notes/",
            "/contracts",
            "/contracts/capture",
            "/contracts/a/b",
            "/healthz",
            "/mcp",
            "/mcp/",
            "/",
            "/elsewhere",
        ]
    ),
    st.text(st.sampled_from("/abcdlogintsc."), max_size=14).map(lambda s: "/" + s),
)


@settings(max_examples=100, deadline=None)
@given(requests=st.lists(st.tuples(st.sampled_from(["GET", "POST", "PUT", "HEAD"]), PATHS), min_size=1, max_size=6))
def test_lazy_routes_answer_as_the_flat_table(requests: list[tuple[str, str]]) -> None:
    flat, lazy, builds = _apps()

    async def run() -> None:
        for method, path in requests:
            assert await _call(lazy, method, path) == await _call(flat, method, path), (method, path)

    asyncio.run(run())
    # Built once, and only when a request got past the routes before it (/healthz) and was not for /mcp.
    reached = [(m, p) for m, p in requests if p not in MCP_PATHS and not (p == "/healthz" and m in ("GET", "HEAD"))]
    assert len(builds) == (1 if reached else 0)


def test_url_path_for_reaches_the_door_routes() -> None:
    lazy = LazyRoutes(lambda: [Route("/contracts/{name}", _endpoint("c"), methods=["POST"], name="call")])
    assert lazy.url_path_for("call", name="capture") == "/contracts/capture"
