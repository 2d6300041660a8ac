"""Real sockets against a real `notegate serve`'s listener: peers from their own loopback addresses, half
request heads, raw reads (tests/doors/test_listener_bounds.py, test_listener_admission.py)."""

from __future__ import annotations

import json
import re
import socket
from pathlib import Path

import httpx2

from support import Server, raw_read

LIST = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}).encode()
HALF_HEAD = b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Ty"
DEADLINE = 30.0


def set_server(config: Path, **values: object) -> None:
    """Set [server] keys of a config file (each key replaced where it stands, else added under [server])."""
    text = config.read_text()
    for key, value in values.items():
        line = f"{key} = {value}"
        text, found = re.subn(rf"(?m)^{key} = .*$", line, text)
        if not found:
            text = text.replace("[server]\n", f"[server]\n{line}\n", 1)
    config.write_text(text)


def connect(server: Server, source: str) -> socket.socket:
    """A TCP connection to the server from ``source`` (a loopback address: one peer per address)."""
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=DEADLINE, source_address=(source, 0))
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


def half_heads(server: Server, sources: list[str], per_source: int) -> list[socket.socket]:
    socks = []
    for source in sources:
        for _ in range(per_source):
            sock = connect(server, source)
            sock.sendall(HALF_HEAD)
            socks.append(sock)
    return socks


def read_all(sock: socket.socket, seconds: float = DEADLINE) -> bytes:
    """Everything the server sends until it closes (a reset after its answer counts as the close)."""
    sock.settimeout(seconds)
    data = b""
    while True:
        try:
            chunk = sock.recv(65536)
        except ConnectionResetError:
            return data
        if not chunk:
            return data
        data += chunk


def get_healthz(sock: socket.socket, port: int) -> int:
    """GET /healthz on a kept-alive connection; the answer's status (0: closed without one)."""
    sock.sendall(f"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
    try:
        return raw_read(sock).status
    except (ConnectionError, TimeoutError):
        return 0


def caller_is_served(server: Server, token: str) -> None:
    """The authenticated caller (from 127.0.0.1) is answered on /mcp and /healthz, with no refusal."""
    headers = {
        "Authorization": f"Bearer {token}",
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
    }
    with httpx2.Client(timeout=DEADLINE) as http:
        listed = http.post(f"http://127.0.0.1:{server.port}/mcp", content=LIST, headers=headers)
        assert listed.status_code == 200, listed.text
        assert "tools" in listed.json()["result"]
        health = http.get(f"http://127.0.0.1:{server.port}/healthz")
        assert health.status_code == 200, health.text
