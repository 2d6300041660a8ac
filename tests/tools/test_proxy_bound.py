"""The knowledge service reads the tools process's answers bounded (issue 32): an answer larger than
``[tools] max_answer_bytes`` is cut off as it arrives and refused by its rule, never held whole.

A real ``notegate serve`` whose ``[tools] url`` names a stand-in tools process (a small HTTP server in this
test) that answers a listing with one small tool and a call with an endless body: with a declared length
larger than the bound, and without one (chunked, never ending), so both the header check and the streaming
cut are exercised."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from support import mcp_http, mint, running, text_of

pytestmark = pytest.mark.anyio

BOUND = 65536
LISTING = {
    "mounts": [
        {
            "mount": "flood",
            "account": "me",
            "tools": [{"name": "declared", "inputSchema": {"type": "object"}}, {"name": "chunked"}],
        }
    ]
}


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, *args) -> None:
        return None

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        request = json.loads(self.rfile.read(length) or b"{}")
        if self.path == "/v1/list":
            body = json.dumps(LISTING).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        self.send_response(200)
        self.send_header("content-type", "application/json")
        if request.get("tool") == "declared":
            self.send_header("content-length", str(BOUND * 100))
            self.end_headers()
            self.wfile.write(b'{"result": "' + b"x" * BOUND)
            return
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        block = b"x" * 16384
        try:
            self.wfile.write(b'c\r\n{"result": "\r\n')
            for _ in range(10_000):  # 160 MiB if read whole; the reader stops at BOUND
                self.wfile.write(b"%x\r\n%s\r\n" % (len(block), block))
        except OSError:  # the reader hung up at its bound
            return


@pytest.fixture
def fake_tools():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


async def test_an_answer_over_the_bound_is_refused_by_its_rule(vault: Path, fake_tools: str) -> None:
    text = vault.read_text().replace(
        "[policy]", f'[tools]\nurl = "{fake_tools}"\nmax_answer_bytes = {BOUND}\n\n[policy]', 1
    )
    vault.write_text(text)
    token = mint(vault, name="laptop", tier="trusted")
    with running(vault) as server:
        async with mcp_http(server.url, token) as client:
            listed = {t.name for t in (await client.list_tools()).tools}
            assert {"flood__declared", "flood__chunked"} <= listed  # a small listing passes
            results = [await client.call_tool(f"flood__{tool}", {}) for tool in ("declared", "chunked")]
            assert not (await client.call_tool("search_notes", {"query": "x"})).is_error  # the door still serves
    for result in results:
        assert result.is_error and "Refused [tools-answer-too-large]" in text_of(result), text_of(result)
