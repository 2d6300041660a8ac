"""Helpers for hook tests: run a hook as Claude Code does (its own process, JSON on stdin), build the
documented hook payloads and Claude Code transcripts, and read the vault back over MCP.

Payload shapes follow the hook input schemas of the pinned Claude Code (2.1.332): common fields
``session_id``, ``transcript_path``, ``cwd``, ``permission_mode``, ``hook_event_name``; SessionStart
adds ``source`` (startup|resume|clear|compact|fork) and ``model``; SessionEnd adds ``reason``
(clear|resume|logout|prompt_input_exit|other); PreCompact adds ``trigger`` (manual|auto) and
``custom_instructions`` (nullable); Stop adds ``stop_hook_active`` and ``last_assistant_message``.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from notegate.hooks.vaultclient import VaultClient
from support import Server, mint, notegate
from support.standins import FakeClaude

T0 = datetime(2026, 11, 30, 10, 0, tzinfo=UTC).timestamp()

_tokens = itertools.count(1)


@dataclass
class Served:
    """A real vault served by a real `notegate serve` subprocess."""

    config: Path
    server: Server

    @property
    def url(self) -> str:
        return self.server.url

    def token(self, tier: str | None = "trusted", client_class: str = "workstation") -> str:
        return mint(self.config, name=f"hook-{next(_tokens)}", client_class=client_class, tier=tier)


HOOK_SNIPPET = (
    "import os, sys; from notegate.hooks import main; "
    "sys.exit(main(sys.argv[1], sys.stdin, sys.stdout, os.environ, args=sys.argv[2:]))"
)


def cli_has_hook() -> bool:
    try:
        from notegate import cli
    except ImportError:
        return False
    return "hook" in getattr(cli, "COMMANDS", {})


def hook_command(event: str, *args: str, python_flags: tuple[str, ...] = ()) -> list[str]:
    """``python -m notegate.cli hook EVENT`` once the CLI has it; until then the entry point itself."""
    if cli_has_hook():
        return [sys.executable, *python_flags, "-m", "notegate.cli", "hook", event, *args]
    return [sys.executable, *python_flags, "-c", HOOK_SNIPPET, event, *args]


@dataclass
class HookRun:
    returncode: int
    stdout: str
    stderr: str
    seconds: float

    def output(self) -> dict[str, Any]:
        return json.loads(self.stdout)


def run_hook(
    event: str,
    payload: Mapping[str, Any] | None,
    env: Mapping[str, str],
    *args: str,
    timeout: float = 60,
    python_flags: tuple[str, ...] = (),
    real: bool = False,
) -> HookRun:
    """The hook in its own process with JSON on stdin: a fork of the warm fork server (tests/support/zygote.py), or,
    with ``real=True`` or interpreter flags, a fresh interpreter exactly as Claude Code starts it (the
    tests that show that path: start-up imports, a detached child holding no pipe of Claude Code's)."""
    started = time.monotonic()
    stdin = json.dumps(payload) if payload is not None else ""
    if real or python_flags or not cli_has_hook():
        proc = subprocess.run(
            hook_command(event, *args, python_flags=python_flags),
            input=stdin,
            capture_output=True,
            text=True,
            env=dict(env),
            timeout=timeout,
        )
    else:
        proc = notegate("hook", event, *args, input=stdin, env=env, timeout=timeout)
    return HookRun(proc.returncode, proc.stdout, proc.stderr, time.monotonic() - started)


def base_env(home: Path, **extra: str) -> dict[str, str]:
    """A clean environment: an isolated HOME, no notegate or XDG variables from the developer's shell."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    env.update(extra)
    return env


def make_repo(parent: Path, name: str, branch: str = "main") -> Path:
    """A directory that looks like a git checkout to the hook (``.git/HEAD`` on ``branch``)."""
    top = parent / name
    (top / ".git").mkdir(parents=True)
    (top / ".git" / "HEAD").write_text(f"ref: refs/heads/{branch}\n")
    (top / "src").mkdir()
    return top


# ------------------------------------------------------------------ payloads --


def common(event_name: str, session_id: str, transcript: Path, cwd: Path) -> dict[str, Any]:
    return {
        "session_id": session_id,
        "transcript_path": str(transcript),
        "cwd": str(cwd),
        "permission_mode": "default",
        "hook_event_name": event_name,
    }


def session_start_payload(session_id: str, transcript: Path, cwd: Path, source: str = "startup") -> dict[str, Any]:
    return {**common("SessionStart", session_id, transcript, cwd), "source": source, "model": "claude-sonnet-4-6"}


def session_end_payload(session_id: str, transcript: Path, cwd: Path, reason: str = "prompt_input_exit") -> dict:
    return {**common("SessionEnd", session_id, transcript, cwd), "reason": reason}


def pre_compact_payload(session_id: str, transcript: Path, cwd: Path, trigger: str = "auto") -> dict[str, Any]:
    return {**common("PreCompact", session_id, transcript, cwd), "trigger": trigger, "custom_instructions": None}


def stop_payload(session_id: str, transcript: Path, cwd: Path) -> dict[str, Any]:
    return {
        **common("Stop", session_id, transcript, cwd),
        "stop_hook_active": False,
        "last_assistant_message": "Done.",
    }


# --------------------------------------------------------------- transcripts --


class Transcript:
    """Writes Claude Code transcript lines (the JSONL a session appends to)."""

    def __init__(self, path: Path, session_id: str, cwd: Path) -> None:
        self.path = path
        self.session_id = session_id
        self.cwd = cwd
        self.parent: str | None = None
        path.parent.mkdir(parents=True, exist_ok=True)
        path.touch()

    def _line(self, kind: str, message: dict[str, Any], **extra: Any) -> None:
        this = str(uuid.uuid4())
        obj = {
            "parentUuid": self.parent,
            "isSidechain": False,
            "userType": "external",
            "cwd": str(self.cwd),
            "sessionId": self.session_id,
            "version": "2.1.332",
            "gitBranch": "main",
            "type": kind,
            "message": message,
            "uuid": this,
            "timestamp": "2026-11-30T09:00:00.000Z",
            **extra,
        }
        self.parent = this
        with self.path.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(obj) + "\n")

    def user(self, text: str) -> None:
        self._line("user", {"role": "user", "content": text})

    def assistant(self, text: str, *, with_tool: bool = True) -> None:
        message_id = f"msg_{uuid.uuid4().hex[:20]}"
        base = {"id": message_id, "type": "message", "role": "assistant", "model": "claude-sonnet-4-6"}
        self._line("assistant", {**base, "content": [{"type": "text", "text": text}]}, requestId="req_1")
        if with_tool:
            tool_id = f"toolu_{uuid.uuid4().hex[:20]}"
            tool_use = {"type": "tool_use", "id": tool_id, "name": "Bash", "input": {"command": "pytest -q"}}
            self._line("assistant", {**base, "content": [tool_use]}, requestId="req_1")
            result = [{"tool_use_id": tool_id, "type": "tool_result", "content": "3 passed", "is_error": False}]
            self._line("user", {"role": "user", "content": result}, toolUseResult={"stdout": "3 passed"})

    def exchange(self, n: int, topic: str = "the parser") -> None:
        """``n`` user/assistant pairs (2n turns)."""
        for i in range(n):
            self.user(f"Please work on {topic}, step {i + 1}.")
            self.assistant(f"I changed {topic} for step {i + 1} and the tests pass.")

    def clear(self) -> None:
        """What Claude Code records for ``/clear``."""
        self._line(
            "user",
            {
                "role": "user",
                "content": "<command-name>/clear</command-name>\n<command-message>clear</command-message>\n"
                "<command-args></command-args>",
            },
        )


# ------------------------------------------------------------------- answers --


def good_answer(tag: str = "parser") -> dict[str, Any]:
    return {
        "log_entry": f"Reworked the {tag} and added tests for the edge cases.",
        "handoff": {
            "where_it_stopped": f"The {tag} handles nested lists; tests pass.",
            "next_step": "Add the benchmark for large inputs.",
            "open_questions": "Should empty lines be kept?",
            "repo_state": "On main, all changes committed.",
        },
        "session_note": {
            "summary": f"Reworked the {tag}.",
            "tags": [tag, "tests"],
            "bullets": [f"Changed the {tag} step {i}." for i in range(1, 7)],
        },
    }


def client_toml(
    path: Path,
    *,
    url: str | None = None,
    token_file: Path | None = None,
    models: str = "",
    extra: str = "",
) -> Path:
    lines = []
    if url:
        lines.append(f'url = "{url}"')
    if token_file:
        lines.append(f'token_file = "{token_file}"')
    body = "\n".join(lines) + "\n" + extra + "\n" + models
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(body)
    return path


def anthropic_models(base_url: str, key_env: str = "NG_TEST_KEY") -> str:
    return (
        '[models]\nchain = ["anthropic"]\ntimeout_seconds = 20\n'
        f'[models.anthropic]\nmodel = "claude-test"\nbase_url = "{base_url}"\napi_key_env = "{key_env}"\n'
    )


def vault_client(url: str, token: str) -> VaultClient:
    return VaultClient(url, token, session="test", deadline=time.monotonic() + 60)


def wait_for(predicate, timeout: float = 20.0, interval: float = 0.1) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return predicate()


KEY = "sk-standin"


@dataclass
class Session:
    """One Claude Code session in a repository named after the project, configured for write-back."""

    served: Served
    home: Path
    project: str
    models: str
    tier: str = "trusted"
    session_id: str = "3f2a9c1e-5b7d-4e8f-9a0b-1c2d3e4f5a6b"
    env: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.repo = make_repo(self.home.parent / "work", self.project, branch="main")
        self.transcript = Transcript(
            self.home / ".claude" / "projects" / f"{self.session_id}.jsonl", self.session_id, self.repo
        )
        self.token = self.served.token(tier=self.tier)
        client_toml(self.home / ".config" / "notegate" / "client.toml", models=self.models)
        self.env = base_env(
            self.home,
            NOTEGATE_URL=self.served.url,
            NOTEGATE_TOKEN=self.token,
            NOTEGATE_HOOK_FOREGROUND="1",
            NG_TEST_KEY=KEY,
        )
        self.vault = vault_client(self.served.url, self.served.token())

    def run(self, event: str, now: float = T0, *, real: bool = False, **payload_kw):
        """The hook as a fork of the warm fork server, or ``real`` (a fresh interpreter, as Claude Code
        starts it) in the one test per event that shows that path."""
        build = {"session-end": session_end_payload, "pre-compact": pre_compact_payload, "stop": stop_payload}[event]
        payload = build(self.session_id, self.transcript.path, self.repo / "src", **payload_kw)
        result = run_hook(event, payload, {**self.env, "NOTEGATE_NOW": str(now)}, real=real)
        assert result.returncode == 0, result.stderr
        assert result.stdout == ""
        return result

    def read(self, path: str) -> str | None:
        return self.vault.read(path)[0]

    def sessions(self) -> list[str]:
        return sorted(self.vault.list_paths(f"sessions/{self.project}"))


def cli_models(fake: FakeClaude) -> str:
    return f'[models]\nchain = ["claude-cli"]\ntimeout_seconds = 20\n[models.claude-cli]\ncommand = "{fake.path}"\n'
