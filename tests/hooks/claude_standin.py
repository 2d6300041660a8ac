"""A stand-in Anthropic Messages API that the real Claude Code CLI can run a whole session against.

Claude Code streams (``"stream": true``, server-sent events); our write-back's SDK call does not.  The
stand-in answers every streamed request with one short text reply, and a non-streamed request whose
system prompt is the write-back's with the scripted session JSON.  Every request is recorded.  Loopback
only, a free port, shut down when the ``with`` block ends.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

REPLY = "OK from the stand-in."
WRITEBACK_MARK = "You record what a coding session did"


class ClaudeStandIn:
    def __init__(self, writeback_answer: dict[str, Any]) -> None:
        self.writeback_answer = writeback_answer
        self.requests: list[dict[str, Any]] = []
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

            def _stream(self, message: dict[str, Any], text: str) -> None:
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("cache-control", "no-cache")
                self.send_header("connection", "close")
                self.end_headers()
                events = [
                    ("message_start", {"type": "message_start", "message": message}),
                    (
                        "content_block_start",
                        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
                    ),
                    (
                        "content_block_delta",
                        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}},
                    ),
                    ("content_block_stop", {"type": "content_block_stop", "index": 0}),
                    (
                        "message_delta",
                        {
                            "type": "message_delta",
                            "delta": {"stop_reason": "end_turn", "stop_sequence": None},
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
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

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
