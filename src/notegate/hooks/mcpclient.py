"""A tiny MCP client for hooks: one JSON-RPC ``tools/call`` per HTTP POST, standard library only.

Why not the SDK: a hook runs at every session start and must answer in well under a second; the
SDK pulls in pydantic, httpx and anyio (hundreds of milliseconds).  The server speaks stateless
Streamable HTTP, so with protocol version 2025-11-25 a single POST needs no ``initialize``
handshake.  Replies come as ``application/json`` (what notegate serves) or as one
``text/event-stream`` message (what other servers may send); both are read.

Errors are two kinds, never text passed off as a result:

* :class:`Unavailable` — the server could not be reached or answered nonsense (down, timeout,
  HTTP 5xx).  A hook then does nothing.
* :class:`Refused` — the server answered with a refusal (``isError`` or HTTP 401/403); ``rule``
  is the rule name it gave, when it gave one.

Messages name a status or a rule, never note text or a token.  Proxies are not used: the
server is on loopback or reached directly over TLS.
"""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
from typing import Any

from notegate.errors import NotegateError

PROTOCOL_VERSION = "2025-11-25"
SESSION_HEADER = "X-Notegate-Session"
#: Largest reply read (a note is at most 1 MiB; JSON escaping can double it).
MAX_REPLY_BYTES = 4 << 20
_RULE = re.compile(r"\[([a-z0-9][a-z0-9:-]{0,60})\]")
_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


class HookError(NotegateError):
    """Base of the client's errors (one family with the server's: :mod:`notegate.errors`); ``str()`` is safe
    to log (no content)."""

    rule = "hook-server-unavailable"


class Unavailable(HookError):
    """The server could not be reached or its reply could not be read."""


class Refused(HookError):
    """The server refused the call. ``rule`` names its rule; ``text`` is the refusal (may quote a diff)."""

    def __init__(self, rule: str, text: str) -> None:
        super().__init__(f"refused [{rule}]", rule=rule)
        self.text = text


def _sse_payloads(body: str) -> list[str]:
    events, data = [], []
    for line in body.splitlines():
        if line.startswith("data:"):
            data.append(line[5:].lstrip(" "))
        elif not line.strip() and data:
            events.append("\n".join(data))
            data = []
    if data:
        events.append("\n".join(data))
    return events


def _decode(raw: bytes, content_type: str) -> dict[str, Any]:
    try:
        text = raw.decode("utf-8")
        if content_type.startswith("text/event-stream"):
            for payload in _sse_payloads(text):
                message = json.loads(payload)
                if isinstance(message, dict) and ("result" in message or "error" in message):
                    return message
            raise Unavailable("the event stream held no JSON-RPC response")
        message = json.loads(text)
    except (UnicodeDecodeError, ValueError):
        raise Unavailable("the reply was not JSON") from None
    if not isinstance(message, dict):
        raise Unavailable("the reply was not a JSON-RPC object")
    return message


def _result(message: dict[str, Any]) -> dict[str, Any]:
    if "error" in message:
        error = message["error"] if isinstance(message["error"], dict) else {}
        raise Refused("jsonrpc-error", str(error.get("message", "JSON-RPC error"))[:500])
    result = message.get("result")
    if not isinstance(result, dict):
        raise Unavailable("the reply had no result")
    content = result.get("content") if isinstance(result.get("content"), list) else []
    first = content[0].get("text", "") if content and isinstance(content[0], dict) else ""
    if result.get("isError"):
        match = _RULE.search(first or "")
        raise Refused(match.group(1) if match else "refused", first or "")
    structured = result.get("structuredContent")
    if isinstance(structured, dict):
        return structured
    try:
        parsed = json.loads(first)
    except ValueError:
        raise Unavailable("the result held no structured content") from None
    if not isinstance(parsed, dict):
        raise Unavailable("the result held no structured content")
    return parsed


def call_tool(
    base_url: str,
    token: str,
    name: str,
    arguments: dict[str, Any],
    *,
    timeout: float,
    session: str | None = None,
) -> dict[str, Any]:
    """Call one tool and return its structured result (a dict).

    ``timeout`` bounds every socket operation (connect, each read), so a dead server costs at
    most that long; callers pass what is left of their budget.
    """
    body = json.dumps(
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": name, "arguments": arguments}}
    ).encode("utf-8")
    headers = {
        "Authorization": f"Bearer {token}",
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": PROTOCOL_VERSION,
        "User-Agent": "notegate-hook",
    }
    if session:
        headers[SESSION_HEADER] = session
    request = urllib.request.Request(base_url + "/mcp", data=body, headers=headers, method="POST")  # noqa: S310 - http(s) checked in settings
    try:
        with _OPENER.open(request, timeout=max(timeout, 0.05)) as response:
            raw = response.read(MAX_REPLY_BYTES + 1)
            content_type = response.headers.get("Content-Type", "")
    except urllib.error.HTTPError as exc:
        if exc.code in (401, 403):
            raise Refused("unauthorized", f"HTTP {exc.code}: the token was not accepted") from None
        raise Unavailable(f"HTTP {exc.code}") from None
    except (urllib.error.URLError, TimeoutError, ConnectionError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        kind = "timed out" if isinstance(reason, TimeoutError) else type(reason).__name__
        raise Unavailable(f"server unreachable ({kind})") from None
    if len(raw) > MAX_REPLY_BYTES:
        raise Unavailable("the reply was too large")
    return _result(_decode(raw, content_type))
