"""The single-exchange path answers exactly as the SDK's stateless transport does (issue 15).

A differential test: two apps as ``notegate serve`` builds them, each on its own copy of one vault (so a
write lands on equal states), one with :class:`SingleExchange` on and one with it off (the SDK's path,
as before).  Every request of a corpus goes to both, in the same order; status, the headers that matter
and the JSON bodies must be equal.  What may differ, and is masked before comparing: commit ids (git
hashes a commit's time, and the two vaults commit moments apart), session handles (random by design) and
times.  Headers compared:
``content-type``, ``allow``, ``www-authenticate``, ``mcp-session-id``, ``connection``, ``retry-after``
(``content-length`` follows the body; ``date`` and ``server`` are uvicorn's and absent in process).
"""

from __future__ import annotations

import contextlib
import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio.from_thread
import httpx2
import pygit2
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from notegate.config import load_config
from notegate.doors.http import create_app
from notegate.services.runtime import Runtime
from support import mint

COMPARED_HEADERS = ("content-type", "allow", "www-authenticate", "mcp-session-id", "connection", "retry-after")
ACCEPT = "application/json, text/event-stream"
#: Masked before comparing: session handles (random), git object ids (a commit hashes its time), Unix or ISO times.
_VOLATILE = re.compile(
    r"\bngs_[A-Za-z0-9_-]+|\b[0-9a-f]{40}\b|\b[0-9a-f]{7,12}\b|\b1[0-9]{9}(\.[0-9]+)?\b|\d{4}-\d\d-\d\dT[0-9:.+Z-]+"
)


def _copy_vault(config_path: Path, target: Path) -> Path:
    """A second copy of the vault, its server clone pointed at the copy's own origin (as the fixture does)."""
    shutil.copytree(config_path.parent, target, symlinks=True)
    config = load_config(target / config_path.name)
    for name, env in config.environments.items():
        clone = config.state_dir / "envs" / name / "vault.git"
        pygit2.Repository(str(clone)).remotes.set_url("origin", env.origin_url)
    return target / config_path.name


class Pair:
    """Both apps, served in process from a blocking portal, so the tests (hypothesis too) stay synchronous."""

    def __init__(self, portal: anyio.from_thread.BlockingPortal, fast, slow) -> None:
        self.portal = portal
        self.fast, self.slow = fast, slow

    def _send(self, app, headers: dict[str, str], body: bytes, method: str) -> httpx2.Response:
        async def go() -> httpx2.Response:
            transport = httpx2.ASGITransport(app=app)
            async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1:8765") as http:
                return await http.request(method, "/mcp", content=body, headers=headers)

        return self.portal.call(go)

    def both(self, headers: dict[str, str], body: bytes | dict | list, method: str = "POST") -> dict[str, Any]:
        """Send to the fast app, then the SDK's; assert they answer alike; return the (fast) answer."""
        raw = body if isinstance(body, bytes) else json.dumps(body).encode()
        fast = self._send(self.fast, headers, raw, method)
        slow = self._send(self.slow, headers, raw, method)
        assert fast.status_code == slow.status_code, (fast.text, slow.text)
        for name in COMPARED_HEADERS:
            assert fast.headers.get(name) == slow.headers.get(name), name
        assert _masked(fast) == _masked(slow)
        return {"status": fast.status_code, "body": _masked(fast)}


def _masked(response: httpx2.Response) -> Any:
    try:
        return _mask(response.json())
    except ValueError:
        return _mask(response.text)


def _mask(value: Any) -> Any:
    """The decoded body with every volatile part replaced, inside strings (texts hold JSON too) and numbers."""
    if isinstance(value, str):
        return _VOLATILE.sub("<v>", value)
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float) and 1e9 <= value < 1e10:  # a Unix time
        return "<v>"
    if isinstance(value, list):
        return [_mask(item) for item in value]
    if isinstance(value, dict):
        return {key: _mask(item) for key, item in value.items()}
    return value


@contextlib.contextmanager
def _serving(config_path: Path, enabled: bool, portal: anyio.from_thread.BlockingPortal) -> Iterator[Any]:
    runtime = Runtime(load_config(config_path))
    app = create_app(runtime, host="127.0.0.1", port=8765)
    app.state.single_exchange.enabled = enabled
    with portal.wrap_async_context_manager(app.router.lifespan_context(app)):
        yield app


@pytest.fixture
def pair(vault: Path, tmp_path: Path) -> Iterator[tuple[Pair, dict[str, str]]]:
    tokens = {
        "trusted": mint(vault, name="trusted", client_class="workstation", tier="trusted"),
        "restricted": mint(vault, name="restricted", client_class="workstation", tier="restricted"),
        "hosted": mint(vault, name="hosted", client_class="hosted"),
    }
    other = _copy_vault(vault, tmp_path / "other")
    with (
        anyio.from_thread.start_blocking_portal() as portal,
        _serving(vault, True, portal) as fast,
        _serving(other, False, portal) as slow,
    ):
        yield Pair(portal, fast, slow), tokens


def headers(token: str | None, **extra: str) -> dict[str, str]:
    base = {"Accept": ACCEPT, "Content-Type": "application/json"}
    if token is not None:
        base["Authorization"] = f"Bearer {token}"
    base.update(extra)
    return {k: v for k, v in base.items() if v != "-"}


def call(name: str, arguments: dict[str, Any] | None = None, rid: int | str = 1) -> dict[str, Any]:
    params: dict[str, Any] = {"name": name}
    if arguments is not None:
        params["arguments"] = arguments
    return {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}


def request(method: str, params: dict[str, Any] | None = None, rid: int | str | None = 1) -> dict[str, Any]:
    body: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if rid is not None:
        body["id"] = rid
    if params is not None:
        body["params"] = params
    return body


def test_the_corpus_is_answered_alike(pair) -> None:
    both, tokens = pair
    trusted, restricted, hosted = tokens["trusted"], tokens["restricted"], tokens["hosted"]
    h = headers(trusted)
    served_before = both.fast.state.single_exchange.served

    # The methods a client sends, and every tool with valid arguments.
    listed = both.both(h, request("tools/list"))
    assert listed["status"] == 200 and len(listed["body"]["result"]["tools"]) > 10
    both.both(h, request("ping"))
    both.both(h, request("prompts/list"))
    both.both(h, request("prompts/get", {"name": "review_inbox"}))
    both.both(h, call("list_notes", {}))
    both.both(h, call("list_notes", {"folder": "rules", "limit": 2}))
    both.both(h, call("read_note", {"path": "rules/digest.md"}, rid="a-string-id"))
    both.both(h, call("search_notes", {"query": "rules"}))
    both.both(h, call("note_history", {"path": "rules/digest.md"}))
    both.both(h, call("list_inbox", {}))
    both.both(h, call("session_start", {}))
    preview = both.both(h, call("write_note", {"path": "notes/a.md", "content": "# A\n", "base_revision": "absent"}))
    assert preview["status"] == 200 and "result" in preview["body"]
    written = both.both(
        h, call("write_note", {"path": "notes/a.md", "content": "# A\n", "base_revision": "absent", "confirmed": True})
    )
    assert written["body"]["result"].get("structuredContent"), written
    read = both.both(h, call("read_note", {"path": "notes/a.md"}))
    revision = read["body"]["result"]["structuredContent"]["revision"]
    assert revision == "<v>"  # masked: the two vaults' commits differ in time only
    stale = {"path": "notes/a.md", "text": "more", "base_revision": "stale", "confirmed": True}
    both.both(h, call("append_note", stale))
    both.both(h, call("inbox_write", {"kind": "log", "text": "a log line", "confirmed": True}))
    both.both(h, call("read_attachment", {"path": "nothing.png"}))
    both.both(h, call("delete_note", {"path": "notes/none.md", "base_revision": "absent"}))
    both.both(h, call("move_note", {"path": "notes/a.md", "new_path": "notes/b.md", "base_revision": "x"}))
    both.both(h, call("restore_note", {"path": "notes/a.md", "revision": "0" * 40}))
    both.both(h, call("write_attachment", {"path": "a.png", "content_base64": "!!", "base_revision": "absent"}))
    both.both(h, call("promote_inbox", {"item": "nothing"}))
    both.both(h, call("hold_inbox", {"item": "nothing", "reason": "no"}))
    both.both(h, call("request_elevation", {"reason": "testing"}))

    # Bad arguments, unknown names, refusals.
    both.both(h, call("read_note", {}))
    both.both(h, call("read_note", {"path": 5}))
    both.both(h, call("read_note", {"path": "rules/digest.md", "extra": 1}))
    both.both(h, call("read_note", {"path": "private/x.md"}))
    both.both(h, call("read_note", {"path": "../etc/passwd"}))
    both.both(h, call("list_notes", {"limit": 0}))
    both.both(h, call("read_note"))
    both.both(h, call("no_such_tool", {}))
    both.both(h, request("tools/call", {"arguments": {}}))
    both.both(h, request("tools/call"))
    both.both(h, request("no/such/method"))
    both.both(h, request("resources/list"))
    rules = {"path": "rules/x.md", "content": "x", "base_revision": "absent"}
    refused = both.both(headers(restricted), call("write_note", rules))
    assert "Refused [restricted-outside-inbox]" in refused["body"]["result"]["content"][0]["text"]
    gated = both.both(headers(hosted), call("read_note", {"path": "rules/digest.md"}))  # no handle: the gate
    assert "Refused [session-handle-missing]" in gated["body"]["result"]["content"][0]["text"]
    both.both(headers(hosted), call("read_note", {"path": "rules/digest.md", "handle": "made-up"}))
    both.both(h, call("read_note", {"path": "rules/digest.md", "grant": "made-up"}))
    served_fast = both.fast.state.single_exchange.served - served_before
    assert served_fast >= 40  # every request above took the fast path on the fast app ...
    assert both.slow.state.single_exchange.served == 0  # ... and none on the other

    # What the fast path hands to the SDK: headers, bodies and versions it does not serve itself.
    handed = both.fast.state.single_exchange.served
    both.both(headers(trusted, Accept=""), request("ping"))  # empty (absent, httpx would send */*)
    both.both(headers(trusted, Accept="text/html"), request("ping"))
    both.both(headers(trusted, Accept="text/event-stream"), request("ping"))
    both.both(headers(trusted, Accept="*/*"), request("ping"))  # a wildcard is served: the SDK accepts it too
    both.both(headers(trusted, **{"Content-Type": "-"}), request("ping"))
    both.both(headers(trusted, **{"Content-Type": "text/plain"}), request("ping"))
    both.both(headers(trusted, **{"Content-Type": "application/json; charset=utf-8"}), request("ping"))
    both.both(headers(trusted, **{"MCP-Protocol-Version": "2025-06-18"}), request("ping"))
    both.both(headers(trusted, **{"MCP-Protocol-Version": "2025-03-26"}), request("tools/list"))
    both.both(headers(trusted, **{"MCP-Protocol-Version": "1999-01-01"}), request("ping"))
    both.both(headers(trusted, **{"MCP-Protocol-Version": "2026-07-28"}), request("ping"))
    both.both(headers(trusted, Origin="http://evil.example"), request("ping"))
    both.both(headers(trusted, Origin="http://localhost:3000"), request("ping"))
    both.both(headers(trusted, Host="evil.example"), request("ping"))
    both.both(headers(trusted, **{"Mcp-Session-Id": "abc"}), request("ping"))
    both.both(h, b"{not json")
    huge = {"path": "n.md", "content": "x" * both.fast.state.guard.limit, "base_revision": "absent"}
    too_large = both.both(h, call("write_note", huge))  # the guard's refusal, in front of either path
    assert too_large["status"] == 413 and too_large["body"]["error"]["data"]["rule"] == "request-too-large"
    both.both(h, b"")
    both.both(h, b"[]")
    both.both(h, [request("ping"), request("tools/list", rid=2)])
    both.both(h, request("notifications/initialized", rid=None))
    both.both(h, {"jsonrpc": "2.0", "id": 7, "result": {}})
    both.both(h, {"jsonrpc": "1.0", "id": 1, "method": "ping"})
    both.both(h, {"jsonrpc": "2.0", "id": None, "method": "ping"})
    both.both(h, {"jsonrpc": "2.0", "id": True, "method": "ping"})
    init = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    both.both(h, request("initialize", init))
    both.both(headers(None), request("ping"))
    both.both(headers("ngt_nobody_secret"), request("ping"))
    both.both(h, request("ping"), method="GET")
    both.both(h, request("ping"), method="DELETE")
    both.both(h, request("ping"), method="PUT")
    # Served by the fast path among those: the wildcard Accept, the charset, the two handshake versions and the
    # unknown session id (stateless: the SDK ignores it too), and the allowed Origin.
    assert both.fast.state.single_exchange.served - handed == 6


_TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=30)
_JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=False) | _TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_TEXT, inner, max_size=3),
    max_leaves=6,
)
_READS = st.sampled_from(["read_note", "list_notes", "search_notes", "note_history", "list_inbox", "nope"])
_KEYS = st.sampled_from(["path", "query", "folder", "limit", "recursive", "cursor", "handle", "grant", "x"])


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    name=_READS,
    arguments=st.dictionaries(_KEYS, _JSONISH | _TEXT.map(lambda t: f"rules/{t}"), max_size=4) | _JSONISH,
    rid=st.integers(-(2**53), 2**53) | _TEXT,
)
def test_any_arguments_are_answered_alike(pair, name: str, arguments: Any, rid: int | str) -> None:
    both, tokens = pair
    body = {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": {"name": name, "arguments": arguments}}
    both.both(headers(tokens["trusted"]), body)


@pytest.mark.anyio
async def test_over_http_a_handshake_client_takes_the_path_and_the_sdk_client_its_modern_entry(vault: Path) -> None:
    """Over real HTTP: a client of the handshake era (initialize, then MCP-Protocol-Version 2025-11-25 on each
    call: what the lean bench client and other SDKs send) is answered by the single-exchange path.  The
    official Python client 2.3 speaks 2026-07-28 (``server/discover``), which the SDK's own single-exchange
    entry serves, so it never reaches this path; both get the same structured answers."""
    from support import mcp_http
    from support.inprocess import serve_in_process

    token = mint(vault, name="sdk", client_class="workstation", tier="trusted")
    args = {"name": "read_note", "arguments": {"path": "rules/digest.md"}}
    with serve_in_process(vault) as served:
        single = served.app.state.single_exchange
        async with mcp_http(served.url, token) as client:
            result = await client.call_tool("read_note", {"path": "rules/digest.md"})
            assert not result.is_error and result.structured_content["path"] == "rules/digest.md"
        assert single.served == 0  # the SDK client: the modern entry
        init = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
        async with httpx2.AsyncClient(base_url=served.url, headers=headers(token)) as http:
            hello = await http.post("/mcp", json=request("initialize", init))
            version = hello.json()["result"]["protocolVersion"]
            assert version == "2025-11-25"
            await http.post("/mcp", json=request("notifications/initialized", rid=None))
            for i in range(3):
                answer = await http.post(
                    "/mcp", json=call("read_note", args["arguments"], rid=i), headers={"MCP-Protocol-Version": version}
                )
                assert answer.status_code == 200
                assert answer.json()["result"]["structuredContent"]["path"] == "rules/digest.md"
        assert single.served == 3
