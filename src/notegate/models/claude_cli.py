"""The ``claude-cli`` provider: ``claude -p`` (Claude Code in print mode), locked down.

For people whose model access is a Claude subscription rather than an API key.  Claude Code is
an agent, so it is started with everything that makes it one switched off::

    claude -p --output-format json --json-schema SCHEMA --system-prompt SYSTEM
           --tools "" --strict-mcp-config --mcp-config '{"mcpServers":{}}'
           --no-session-persistence --max-turns 1

* ``--tools ""``: no built-in tool (no shell, no file access, no web); a CLI too old to know the
  flag exits non-zero, which is a :class:`ModelError` (fail closed, the chain moves on).
* ``--strict-mcp-config`` with an empty config: no MCP server from any settings file.
* ``--no-session-persistence``: the call leaves no resumable transcript behind.
* ``--system-prompt`` replaces Claude Code's own prompt with the job's instructions; the fenced
  data goes in on **stdin** (the user turn), never on the command line.
* It runs in a fresh empty temporary directory, so no project ``CLAUDE.md``, ``.mcp.json`` or
  project settings apply, and with ``NOTEGATE_HOOK_ACTIVE=1`` so notegate's own Claude Code hooks
  no-op inside it.  ``CLAUDECODE`` and friends are removed from its environment: Claude Code
  refuses to start when it believes it is nested inside another session (our session-end hook
  runs inside one).
* A wall-clock ``timeout``: the CLI runs in its own process group and the whole group is killed
  when time is up, so a stuck grandchild cannot hold the job.

The return value is the CLI's stdout, its JSON envelope (``{"type": "result", "is_error": false,
"result": …, "structured_output": {…}}``) as-is: the output gate unwraps it by its known keys.
The envelope is read here only to turn an *error* envelope (``is_error`` true or a subtype
other than ``success``) into a :class:`ModelError`.  Nothing of stderr is kept (it could echo
input); messages carry the exit status or the envelope's subtype code.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from typing import Any

from notegate.models.base import (
    HOOK_GUARD_ENV,
    DataPart,
    ModelError,
    ModelTimeout,
    user_turn_text,
    wire_schema,
)
from notegate.models.config import ClaudeCliSettings

#: Agentic turns the CLI may take.  One: a single answer, no tool loop.
CLI_MAX_TURNS = 1
#: The empty MCP configuration passed with ``--strict-mcp-config``.
EMPTY_MCP_CONFIG = '{"mcpServers":{}}'
#: Variables Claude Code sets inside a session; a child that inherits them refuses to start
#: ("cannot be launched inside another Claude Code session") or attaches to the parent.
NESTING_ENV = ("CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT", "CLAUDE_CODE_SESSION_ACCESS_TOKEN")
#: Seconds to wait for a killed process group's pipes to close before giving up on them.
KILL_GRACE_SECONDS = 2.0
_SUBTYPE = re.compile(r"[a-z_]{1,64}\Z")


def cli_argv(executable: str, system: str, schema: dict[str, Any]) -> list[str]:
    """The locked-down command line (without the data, which goes on stdin)."""
    return [
        executable,
        "-p",
        "--output-format",
        "json",
        "--json-schema",
        json.dumps(wire_schema(schema), separators=(",", ":"), ensure_ascii=True),
        "--system-prompt",
        system,
        "--tools",
        "",
        "--strict-mcp-config",
        "--mcp-config",
        EMPTY_MCP_CONFIG,
        "--no-session-persistence",
        "--max-turns",
        str(CLI_MAX_TURNS),
    ]


def child_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """The job's environment for the CLI: nesting markers removed, our hook guard set."""
    env = {k: v for k, v in environ.items() if k not in NESTING_ENV}
    env[HOOK_GUARD_ENV] = "1"
    return env


class ClaudeCliProvider:
    """Ask Claude through a locked-down ``claude -p`` process."""

    name = "claude-cli"

    def __init__(self, settings: ClaudeCliSettings, environ: Mapping[str, str]) -> None:
        self.settings = settings
        self._environ = environ

    def _executable(self) -> str:
        found = shutil.which(self.settings.command, path=self._environ.get("PATH", os.defpath))
        if found is None:
            raise ModelError(
                f"the command '{self.settings.command}' was not found on PATH",
                provider=self.name,
                remedy="Install Claude Code, or set [models.claude-cli] command to its full path.",
            )
        return found

    def complete_json(
        self, system: str, data_parts: Sequence[DataPart], schema: dict[str, Any], *, schema_name: str, timeout: float
    ) -> str:
        stdin = user_turn_text(data_parts).encode("utf-8")
        argv = cli_argv(self._executable(), system, schema)
        with tempfile.TemporaryDirectory(prefix="notegate-model-") as workdir:
            stdout = self._run(argv, stdin, workdir, timeout)
        try:
            text = stdout.decode("utf-8")
        except UnicodeDecodeError:
            raise ModelError("the CLI wrote output that is not UTF-8", provider=self.name) from None
        self._check_envelope(text)
        return text

    def _run(self, argv: list[str], stdin: bytes, workdir: str, timeout: float) -> bytes:
        try:
            proc = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=workdir,
                env=child_environment(self._environ),
                start_new_session=True,  # its own process group, so a timeout can kill all of it
            )
        except OSError as exc:
            raise ModelError(f"the command could not be started ({type(exc).__name__})", provider=self.name) from None
        try:
            stdout, _stderr = proc.communicate(stdin, timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            raise ModelTimeout(f"no answer within {timeout:g} s (process group killed)", provider=self.name) from None
        except BaseException:
            _kill_group(proc)
            raise
        if proc.returncode != 0:
            raise ModelError(
                f"the CLI exited with status {proc.returncode}",
                provider=self.name,
                remedy="Run `claude -p` by hand to see why (not logged in, an old version without --tools, ...).",
            )
        return stdout

    def _check_envelope(self, text: str) -> None:
        try:
            envelope = json.loads(text)
        except ValueError:
            return  # not our business: the output gate refuses it
        if not isinstance(envelope, dict):
            return
        subtype = envelope.get("subtype")
        if envelope.get("is_error") is True or (subtype is not None and subtype != "success"):
            code = subtype if isinstance(subtype, str) and _SUBTYPE.match(subtype) else "error"
            raise ModelError(f"the CLI reported an error ({code})", provider=self.name)


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    """SIGKILL the CLI's whole process group, then reap it without waiting forever on stray pipes."""
    with contextlib.suppress(ProcessLookupError, PermissionError):  # already gone
        os.killpg(proc.pid, signal.SIGKILL)
    try:
        proc.communicate(timeout=KILL_GRACE_SECONDS)
    except subprocess.TimeoutExpired:  # a grandchild left the group and holds a pipe open
        for pipe in (proc.stdin, proc.stdout, proc.stderr):
            if pipe is not None:
                pipe.close()
        proc.wait()
