"""A stand-in Anthropic Messages API that the real Claude Code CLI can run a whole session against.

Claude Code streams (``"stream": true``, server-sent events); our write-back's SDK call does not.  The
stand-in answers every streamed request with one short text reply, and a non-streamed request whose
system prompt is the write-back's with the scripted session JSON.  Every request is recorded.  Loopback
only, a free port, shut down when the ``with`` block ends.

Optionally it plays a script of tool calls first (``tool_calls``: ``(tool name, input)`` pairs, e.g. an
``mcp__notegate__…`` tool): each streamed request that offers the model tools is answered with the next call as
one ``tool_use`` block (``stop_reason: tool_use``) until the script is spent, then with the text reply.  What the
client sent back for each call is in :meth:`ClaudeStandIn.tool_results`.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Iterable, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

REPLY = "OK from the stand-in."
WRITEBACK_MARK = "You record what a coding session did"


class ClaudeStandIn:
    def __init__(
        self, writeback_answer: dict[str, Any], tool_calls: Iterable[tuple[str, Mapping[str, Any]]] = ()
    ) -> None:
        self.writeback_answer = writeback_answer
        self.requests: list[dict[str, Any]] = []
        self._script = deque((name, dict(arguments)) for name, arguments in tool_calls)
        self._lock = threading.Lock()
        standin = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                self.send_response(404)
                self.send_header("content-length", "0")
                self.end_headers()

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("content-length") or 0))
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = {}
                with standin._lock:
                    standin.requests.append({"path": self.path, "body": body})
                if self.path.startswith("/v1/messages/count_tokens"):
                    return self._json({"input_tokens": 100})
                if not self.path.startswith("/v1/messages"):
                    return self._json({"type": "error", "error": {"type": "not_found_error", "message": "no"}}, 404)
                system = json.dumps(body.get("system", ""))
                text = json.dumps(standin.writeback_answer) if WRITEBACK_MARK in system else REPLY
                message = {
                    "id": f"msg_standin{len(standin.requests):04d}",
                    "type": "message",
                    "role": "assistant",
                    "model": body.get("model", "claude-test"),
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": {"input_tokens": 10, "output_tokens": 1},
                }
                if body.get("stream"):
                    call = standin._next_call(body)
                    if call is not None:
                        return self._stream(message, "", tool_use=call)
                    return self._stream(message, text)
                message["content"] = [{"type": "text", "text": text}]
                message["stop_reason"] = "end_turn"
                return self._json(message)

            def _json(self, obj: Any, status: int = 200) -> None:
                data = json.dumps(obj).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _stream(self, message: dict[str, Any], text: str, tool_use: dict[str, Any] | None = None) -> None:
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("cache-control", "no-cache")
                self.send_header("connection", "close")
                self.end_headers()
                if tool_use is None:
                    block = {"type": "text", "text": ""}
                    delta = {"type": "text_delta", "text": text}
                    stop_reason = "end_turn"
                else:  # the input arrives as JSON fragments, as the real API streams it
                    block = {"type": "tool_use", "id": tool_use["id"], "name": tool_use["name"], "input": {}}
                    delta = {"type": "input_json_delta", "partial_json": json.dumps(tool_use["input"])}
                    stop_reason = "tool_use"
                events = [
                    ("message_start", {"type": "message_start", "message": message}),
                    ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": block}),
                    ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
                    ("content_block_stop", {"type": "content_block_stop", "index": 0}),
                    (
                        "message_delta",
                        {
                            "type": "message_delta",
                            "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                            "usage": {"output_tokens": 5},
                        },
                    ),
                    ("message_stop", {"type": "message_stop"}),
                ]
                for name, obj in events:
                    self.wfile.write(f"event: {name}\ndata: {json.dumps(obj)}\n\n".encode())
                self.wfile.flush()
                self.close_connection = True

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        # shutdown() waits for serve_forever to look at its flag: every 0.5 s by default, here every 10 ms
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)

    def __enter__(self) -> ClaudeStandIn:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)

    def streamed(self) -> list[dict[str, Any]]:
        with self._lock:
            return [r["body"] for r in self.requests if r["body"].get("stream")]

    def _next_call(self, body: dict[str, Any]) -> dict[str, Any] | None:
        """The next scripted tool call, for a request that offers the model tools (the main loop does; the
        client's side requests, such as titles, offer none)."""
        if not body.get("tools"):
            return None
        with self._lock:
            if not self._script:
                return None
            name, arguments = self._script.popleft()
            return {"id": f"toolu_standin{len(self.requests):04d}", "name": name, "input": arguments}

    def tool_results(self) -> list[dict[str, Any]]:
        """What the client sent back for the scripted calls: ``tool_use_id``, ``is_error`` and the text."""
        seen: dict[str, dict[str, Any]] = {}
        for body in self.streamed():
            for message in body.get("messages", []):
                content = message.get("content") if isinstance(message, dict) else None
                for block in content if isinstance(content, list) else []:
                    if isinstance(block, dict) and block.get("type") == "tool_result":
                        inner = block.get("content")
                        if isinstance(inner, list):
                            inner = "\n".join(str(part.get("text", "")) for part in inner if isinstance(part, dict))
                        seen[str(block.get("tool_use_id"))] = {
                            "tool_use_id": block.get("tool_use_id"),
                            "is_error": bool(block.get("is_error")),
                            "text": str(inner or ""),
                        }
        return list(seen.values())
