"""Stand-in model servers and a fake ``claude`` executable, so the real SDK and CLI code runs in tests.

Nothing here reaches the network: servers bind 127.0.0.1 on a free port, in a background thread,
and always shut down when their ``with`` block ends (a sleeping handler is woken).

Servers
-------
:class:`AnthropicStandIn` speaks the Anthropic Messages wire format (``POST /v1/messages``; checks the
key -- ``x-api-key``, or ``Authorization: Bearer``, which SDK 2.x sends -- and ``anthropic-version``;
answers a real ``message`` object with content blocks, ``stop_reason`` and ``usage``, or the real
error shape).  :class:`OpenAIStandIn` speaks OpenAI chat
completions (``POST /v1/chat/completions``; checks ``Authorization: Bearer`` when given a key;
answers ``choices[0].message.content``).  Each plays a script of :class:`Answer` values, one per
request, in order; the last one repeats when the script runs out::

    from support.standins import AnthropicStandIn, Answer      # from tests/models: from .standins import …

    with AnthropicStandIn([Answer.error(529), Answer.json({"verdicts": []})], api_key="sk-test") as server:
        settings = AnthropicSettings(model="claude-test", base_url=server.base_url, api_key_env="KEY")
        ...                                   # environ={"KEY": "sk-test"}
        server.requests[0].json["system"]     # every request is recorded: method, path, headers, body, json

    Answer.json(value)          good JSON (the model's text is json.dumps(value))
    Answer.raw(text)            any text as the model's answer (prose-wrapped, duplicate keys, …)
    Answer.slow(seconds, …)     answer only after a delay (bounded by MAX_DELAY_SECONDS)
    Answer.error(status)        an HTTP error in the API's own error shape (500, 529, 401, …)
    Answer.refuse()             a refusal (Anthropic stop_reason "refusal"; OpenAI message.refusal)
    Answer.raw(text, stop_reason="max_tokens")   any stop/finish reason

``server.url`` is ``http://127.0.0.1:PORT``; ``server.base_url`` is what the SDK wants as
``base_url`` (the URL itself for Anthropic, ``…/v1`` for OpenAI).  ``api_key=None`` accepts any
or no key (a local server).

Fake Claude CLI
---------------
:class:`FakeClaude` writes an executable ``claude`` (a Python script) into a directory and plays a
:class:`CliAnswer`.  It refuses to run (exit 64) unless called with the locked-down flags, refuses
like the real CLI when ``CLAUDECODE`` is set, reads stdin, records each call (argv, stdin, cwd,
environment) and prints the CLI's JSON envelope::

    fake = FakeClaude(tmp_path, CliAnswer.json({"verdicts": []}))
    environ = fake.environ(HOME=str(tmp_path))     # PATH with the fake first
    ... ClaudeCliProvider(ClaudeCliSettings(), environ) ...
    fake.calls[0]["stdin"], fake.calls[0]["argv"], fake.calls[0]["env"]["NOTEGATE_HOOK_ACTIVE"]

    CliAnswer.json(value)       success envelope with structured_output=value and result=json text
    CliAnswer.raw(stdout)       exactly this on stdout (malformed output)
    CliAnswer.fail(code)        exit with this status
    CliAnswer.error(subtype)    an error envelope (is_error true), exit 1
    CliAnswer.slow(seconds)     sleep first, with a grandchild holding stdout (tests the group kill)
"""

from __future__ import annotations

import json
import os
import socket
import stat
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

#: Longest a scripted delay may sleep, whatever a test asks: keeps the suite bounded.
MAX_DELAY_SECONDS = 5.0

_ANTHROPIC_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}
_OPENAI_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "invalid_request_error",
    404: "invalid_request_error",
    429: "rate_limit_exceeded",
    500: "server_error",
    503: "server_error",
}
#: Text every scripted error body carries; tests check it never reaches an error message or a log.
ERROR_BODY_MARKER = "STANDIN-ERROR-BODY-7c1e"


# --------------------------------------------------------------------------------------------
# Scripted answers
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Answer:
    """One scripted reply of a stand-in server."""

    text: str | None = None
    status: int = 200
    delay: float = 0.0
    stop_reason: str | None = None
    refusal: bool = False
    error_type: str | None = None

    @classmethod
    def json(cls, value: Any, **kw: Any) -> Answer:
        return cls(text=json.dumps(value), **kw)

    @classmethod
    def raw(cls, text: str, **kw: Any) -> Answer:
        return cls(text=text, **kw)

    @classmethod
    def slow(cls, seconds: float, value: Any = None) -> Answer:
        return cls(text=json.dumps(value if value is not None else {}), delay=seconds)

    @classmethod
    def error(cls, status: int, error_type: str | None = None) -> Answer:
        return cls(status=status, error_type=error_type)

    @classmethod
    def refuse(cls) -> Answer:
        return cls(text="", refusal=True)


@dataclass(frozen=True)
class RecordedRequest:
    """What a stand-in received: header names are lower-cased; ``json`` is the parsed body or None."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    json: Any


@dataclass
class _Reply:
    status: int
    payload: dict[str, Any]
    delay: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)


# --------------------------------------------------------------------------------------------
# The HTTP machinery shared by both servers
# --------------------------------------------------------------------------------------------


class _Handler(BaseHTTPRequestHandler):
    server_version = "standin/1"
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out in two writes: no 40 ms delayed-ACK stall
    standin: _StandIn  # set on a subclass per server

    def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
        return

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length) if length else b""
        try:
            parsed = json.loads(body) if body else None
        except ValueError:
            parsed = None
        request = RecordedRequest(
            method="POST",
            path=self.path,
            headers={k.lower(): v for k, v in self.headers.items()},
            body=body,
            json=parsed,
        )
        self.standin._record(request)
        self._send(self.standin._reply(request))

    def do_GET(self) -> None:
        self.standin._record(
            RecordedRequest("GET", self.path, {k.lower(): v for k, v in self.headers.items()}, b"", None)
        )
        self._send(self.standin._not_found())

    def _send(self, reply: _Reply) -> None:
        if reply.delay > 0 and self.standin._closing.wait(min(reply.delay, MAX_DELAY_SECONDS)):
            return  # the stand-in is shutting down: drop the connection
        data = json.dumps(reply.payload).encode("utf-8")
        try:
            self.send_response(reply.status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.send_header("connection", "close")
            for name, value in reply.headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)
        except OSError:  # the client gave up (timeout) and closed the socket
            pass
        self.close_connection = True


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def handle_error(self, request: Any, client_address: Any) -> None:  # a client that went away
        return


class _StandIn:
    """Base of the stand-in servers: lifecycle, answer script and request log."""

    api_path = "/"

    def __init__(self, answers: Sequence[Answer] = (), *, api_key: str | None = "test-key") -> None:
        self.answers = list(answers)
        self.api_key = api_key
        self._requests: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._served = 0
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    # lifecycle ---------------------------------------------------------------------------
    def __enter__(self) -> _StandIn:
        handler = type("Handler", (_Handler,), {"standin": self})
        self._server = _Server(("127.0.0.1", 0), handler)
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.01}, name=type(self).__name__, daemon=True
        )
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._closing.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("the stand-in is not running: use it as a context manager")
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        return self.url

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._requests)

    # script ------------------------------------------------------------------------------
    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self._requests.append(request)

    def _next_answer(self) -> Answer | None:
        with self._lock:
            if not self.answers:
                return None
            answer = self.answers[min(self._served, len(self.answers) - 1)]
            self._served += 1
            return answer

    def _reply(self, request: RecordedRequest) -> _Reply:
        if request.path.split("?")[0] != self.api_path:
            return self._not_found()
        problem = self._check(request)
        if problem is not None:
            return problem
        answer = self._next_answer()
        if answer is None:
            return self._error(500, None, "no scripted answer left")
        if answer.status != 200:
            reply = self._error(answer.status, answer.error_type, f"scripted error {ERROR_BODY_MARKER}")
            reply.delay = answer.delay
            return reply
        reply = self._success(request, answer)
        reply.delay = answer.delay
        return reply

    # protocol hooks ----------------------------------------------------------------------
    def _check(self, request: RecordedRequest) -> _Reply | None:
        raise NotImplementedError

    def _success(self, request: RecordedRequest, answer: Answer) -> _Reply:
        raise NotImplementedError

    def _error(self, status: int, error_type: str | None, message: str) -> _Reply:
        raise NotImplementedError

    def _not_found(self) -> _Reply:
        return self._error(404, None, "no such route")


def _bearer(value: str | None) -> str | None:
    if value is None or not value.startswith("Bearer "):
        return None
    return value[len("Bearer ") :]


def _tokens(text: str) -> int:
    return max(1, len(text) // 4)


# --------------------------------------------------------------------------------------------
# Anthropic Messages
# --------------------------------------------------------------------------------------------


class AnthropicStandIn(_StandIn):
    """``POST /v1/messages`` as the Anthropic API answers it."""

    api_path = "/v1/messages"

    def __enter__(self) -> AnthropicStandIn:
        super().__enter__()
        return self

    def _check(self, request: RecordedRequest) -> _Reply | None:
        if self.api_key is not None and self.api_key not in (
            request.headers.get("x-api-key"),
            _bearer(request.headers.get("authorization")),
        ):
            return self._error(401, None, "invalid x-api-key")
        if not request.headers.get("anthropic-version"):
            return self._error(400, None, "anthropic-version header is required")
        body = request.json
        if not isinstance(body, dict) or not {"model", "max_tokens", "messages"} <= body.keys():
            return self._error(400, None, "model, max_tokens and messages are required")
        return None

    def _success(self, request: RecordedRequest, answer: Answer) -> _Reply:
        text = answer.text or ""
        stop = answer.stop_reason or ("refusal" if answer.refusal else "end_turn")
        n = len(self.requests)
        return _Reply(
            200,
            {
                "id": f"msg_standin{n:04d}",
                "type": "message",
                "role": "assistant",
                "model": request.json["model"],
                "content": [{"type": "text", "text": text}] if text or not answer.refusal else [],
                "stop_reason": stop,
                "stop_sequence": None,
                "usage": {
                    "input_tokens": _tokens(request.body.decode("utf-8", "replace")),
                    "output_tokens": _tokens(text),
                    "cache_creation_input_tokens": 0,
                    "cache_read_input_tokens": 0,
                },
            },
            headers={"request-id": f"req_standin{n:04d}"},
        )

    def _error(self, status: int, error_type: str | None, message: str) -> _Reply:
        kind = error_type or _ANTHROPIC_ERROR_TYPES.get(status, "api_error")
        return _Reply(status, {"type": "error", "error": {"type": kind, "message": message}})


# --------------------------------------------------------------------------------------------
# OpenAI chat completions
# --------------------------------------------------------------------------------------------


class OpenAIStandIn(_StandIn):
    """``POST /v1/chat/completions`` as OpenAI (and Ollama, llama.cpp, vLLM, LM Studio) answer it."""

    api_path = "/v1/chat/completions"

    def __enter__(self) -> OpenAIStandIn:
        super().__enter__()
        return self

    @property
    def base_url(self) -> str:
        return self.url + "/v1"

    def _check(self, request: RecordedRequest) -> _Reply | None:
        if self.api_key is not None and request.headers.get("authorization") != f"Bearer {self.api_key}":
            return self._error(401, "invalid_request_error", "Incorrect API key provided")
        body = request.json
        if not isinstance(body, dict) or not {"model", "messages"} <= body.keys():
            return self._error(400, None, "model and messages are required")
        return None

    def _success(self, request: RecordedRequest, answer: Answer) -> _Reply:
        text = answer.text or ""
        n = len(self.requests)
        message: dict[str, Any] = {"role": "assistant", "content": None if answer.refusal else text, "refusal": None}
        if answer.refusal:
            message["refusal"] = "I can't help with that."
        prompt_tokens = _tokens(request.body.decode("utf-8", "replace"))
        return _Reply(
            200,
            {
                "id": f"chatcmpl-standin{n:04d}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": request.json["model"],
                "choices": [
                    {"index": 0, "message": message, "logprobs": None, "finish_reason": answer.stop_reason or "stop"}
                ],
                "usage": {
                    "prompt_tokens": prompt_tokens,
                    "completion_tokens": _tokens(text),
                    "total_tokens": prompt_tokens + _tokens(text),
                },
            },
        )

    def _error(self, status: int, error_type: str | None, message: str) -> _Reply:
        kind = error_type or _OPENAI_ERROR_TYPES.get(status, "server_error")
        return _Reply(status, {"error": {"message": message, "type": kind, "param": None, "code": None}})


def closed_port_url() -> str:
    """A 127.0.0.1 URL nothing listens on (connection refused at once)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}"


# --------------------------------------------------------------------------------------------
# Fake Claude Code CLI
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CliAnswer:
    """What the fake ``claude`` does once its flags pass."""

    structured: Any = None
    stdout: str | None = None
    exit_code: int = 0
    delay: float = 0.0
    is_error: bool = False
    subtype: str = "success"
    grandchild: bool = False
    until: str | None = None  # answer only once this file exists (at most MAX_DELAY_SECONDS)

    @classmethod
    def json(cls, value: Any) -> CliAnswer:
        return cls(structured=value)

    @classmethod
    def raw(cls, stdout: str) -> CliAnswer:
        return cls(stdout=stdout)

    @classmethod
    def fail(cls, exit_code: int = 1) -> CliAnswer:
        return cls(stdout="", exit_code=exit_code)

    @classmethod
    def error(cls, subtype: str = "error_max_turns") -> CliAnswer:
        return cls(is_error=True, subtype=subtype, exit_code=1)

    @classmethod
    def slow(cls, seconds: float) -> CliAnswer:
        return cls(structured={}, delay=seconds, grandchild=True)

    @classmethod
    def held(cls, value: Any, release: Path) -> CliAnswer:
        """Answer ``value`` once the test creates ``release``: the test decides when the model answers."""
        return cls(structured=value, until=str(release))


_FAKE_CLAUDE = r'''#!{python}
"""Fake `claude` written by tests/support/standins.py (FakeClaude)."""
import json, os, subprocess, sys, time

ANSWER = json.loads({answer!r})
CALLS = {calls!r}
MAX_DELAY = {max_delay!r}


def value_after(flag):
    args = sys.argv[1:]
    if flag not in args or args.index(flag) + 1 >= len(args):
        return None
    return args[args.index(flag) + 1]


def refuse(message, status):
    sys.stderr.write("fake claude: " + message + "\n")
    sys.exit(status)


stdin = sys.stdin.read()
with open(CALLS, "a", encoding="utf-8") as f:
    f.write(json.dumps({{"argv": sys.argv[1:], "stdin": stdin, "cwd": os.getcwd(), "env": dict(os.environ)}}) + "\n")

if os.environ.get("CLAUDECODE"):
    refuse("Claude Code cannot be launched inside another Claude Code session.", 1)
args = sys.argv[1:]
for flag in ("-p", "--strict-mcp-config", "--no-session-persistence"):
    if flag not in args:
        refuse("missing locked-down flag " + flag, 64)
if value_after("--output-format") != "json":
    refuse("--output-format json is required", 64)
if value_after("--tools") != "":
    refuse('--tools "" is required', 64)
if value_after("--max-turns") != "1":
    refuse("--max-turns 1 is required", 64)
if value_after("--system-prompt") is None:
    refuse("--system-prompt is required", 64)
try:
    schema = json.loads(value_after("--json-schema") or "")
    mcp = json.loads(value_after("--mcp-config") or "")
except ValueError:
    refuse("--json-schema and --mcp-config must be JSON", 64)
if not isinstance(schema, dict) or mcp != {{"mcpServers": {{}}}}:
    refuse("--json-schema must be an object and --mcp-config empty", 64)

if ANSWER["delay"]:
    if ANSWER["grandchild"]:  # holds our stdout open: only a process-group kill ends it early
        sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(%r)" % MAX_DELAY])
        with open(CALLS + ".grandchild", "w", encoding="utf-8") as f:
            f.write(str(sleeper.pid))
    time.sleep(min(ANSWER["delay"], MAX_DELAY))
if ANSWER["until"]:
    waited = 0.0
    while not os.path.exists(ANSWER["until"]) and waited < MAX_DELAY:
        time.sleep(0.02)
        waited += 0.02
if ANSWER["stdout"] is not None:
    sys.stdout.write(ANSWER["stdout"])
else:
    structured = ANSWER["structured"]
    envelope = {{
        "type": "result",
        "subtype": ANSWER["subtype"],
        "is_error": ANSWER["is_error"],
        "duration_ms": 12,
        "num_turns": 1,
        "result": "" if structured is None else json.dumps(structured),
        "session_id": "00000000-0000-4000-8000-000000000000",
        "total_cost_usd": 0.0,
        "usage": {{"input_tokens": len(stdin) // 4, "output_tokens": 10}},
    }}
    if structured is not None:
        envelope["structured_output"] = structured
    sys.stdout.write(json.dumps(envelope))
sys.stdout.flush()
sys.exit(ANSWER["exit_code"])
'''


class FakeClaude:
    """A fake ``claude`` executable in ``directory`` (its ``bin`` folder), playing one :class:`CliAnswer`."""

    def __init__(self, directory: Path, answer: CliAnswer | None = None, *, name: str = "claude") -> None:
        self.bin_dir = Path(directory) / "fake-bin"
        self.bin_dir.mkdir(parents=True, exist_ok=True)
        self.calls_file = self.bin_dir / "calls.jsonl"
        self.path = self.bin_dir / name
        self.play(answer or CliAnswer.json({}))

    def play(self, answer: CliAnswer) -> None:
        """(Re)write the executable to play ``answer`` from the next call on."""
        spec = {
            "structured": answer.structured,
            "stdout": answer.stdout,
            "exit_code": answer.exit_code,
            "delay": answer.delay,
            "is_error": answer.is_error,
            "subtype": answer.subtype,
            "grandchild": answer.grandchild,
            "until": answer.until,
        }
        self.path.write_text(
            _FAKE_CLAUDE.format(
                python=sys.executable,
                answer=json.dumps(spec),
                calls=str(self.calls_file),
                max_delay=MAX_DELAY_SECONDS,
            ),
            encoding="utf-8",
        )
        self.path.chmod(self.path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)

    def path_env(self, base: str | None = None) -> str:
        """A PATH with the fake first."""
        rest = os.environ.get("PATH", os.defpath) if base is None else base
        return str(self.bin_dir) + os.pathsep + rest

    def environ(self, **extra: str) -> dict[str, str]:
        """A minimal job environment for the provider: PATH (fake first) plus ``extra``."""
        return {"PATH": self.path_env(), **extra}

    @property
    def grandchild_pid(self) -> int | None:
        """The pid of the last sleeper a slow answer started (None if it never got that far)."""
        path = Path(str(self.calls_file) + ".grandchild")
        return int(path.read_text(encoding="utf-8")) if path.exists() else None

    @property
    def calls(self) -> list[dict[str, Any]]:
        if not self.calls_file.exists():
            return []
        return [json.loads(line) for line in self.calls_file.read_text(encoding="utf-8").splitlines() if line]
