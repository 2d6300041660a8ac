"""``notegate hook <event>``: the Claude Code (and Codex) hooks, one entry point.

Events: ``session-start`` (print the fenced shared memory as SessionStart context),
``session-end`` and ``pre-compact`` (write the session back), ``stop`` (write back at most every
30 minutes), ``codex-notify`` (Codex's notify program; the payload is the last argument).

Rules every event keeps, because a hook must never get in a session's way:

* **Silent no-op** (exit 0, no output) when notegate is not configured, when the recursion guard
  ``NOTEGATE_HOOK_ACTIVE`` is set (notegate's own model processes set it), or when the project is
  archived in client.toml.
* **Bounded**: session-start gives up after :data:`START_BUDGET` seconds in all (Claude Code's
  limit for it is 10 s); write-backs detach and stop themselves after 300 s.
* **Exit 0 whatever happens outside** (server down, model failure, gate refusal); the reason, a
  rule name and never content, goes to stderr (shown by ``claude --debug``).
* **Lean start**: this package imports only the standard library until a write-back needs the
  model providers and the output gate; session-start never loads the server stack.

Claude Code documents exit code 2 as "block" for some events (Stop would keep the session
going), so this never returns 2.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

EVENTS = ("session-start", "session-end", "pre-compact", "stop", "codex-notify")
#: session-start's whole budget (seconds), inside Claude Code's 10 s hook timeout.
START_BUDGET = 8.0
#: Largest hook payload read from stdin.
MAX_PAYLOAD_BYTES = 1 << 20


class _OutOfTime(Exception):
    pass


def _read_payload(stdin: TextIO) -> dict[str, Any]:
    try:
        if stdin is None or stdin.isatty():
            return {}
        raw = stdin.read(MAX_PAYLOAD_BYTES)
    except (OSError, ValueError):
        return {}
    try:
        payload = json.loads(raw) if raw.strip() else {}
    except ValueError:
        return {}
    return payload if isinstance(payload, dict) else {}


def _sayer(event: str, stderr: TextIO):
    def say(reason: str) -> None:
        stamp = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        try:
            stderr.write(f"{stamp} notegate hook {event}: {reason}\n")
            stderr.flush()
        except (OSError, ValueError):
            pass

    return say


def _append_log(path: Path, line: str) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, line.encode("utf-8", errors="replace"))
        finally:
            os.close(fd)
    except OSError:
        pass  # an unwritable log must not break the session


def _is_stderr(path: Path) -> bool:
    """Whether fd 2 already writes to ``path`` (the detached write-back's stdio is the hooks log)."""
    try:
        mine, theirs = os.fstat(2), os.stat(path)
    except OSError:
        return False
    return (mine.st_dev, mine.st_ino) == (theirs.st_dev, theirs.st_ino)


def _logged(say, event: str, log_path: Path):
    """``say`` that also keeps each reason in the hooks log; ``.log_only`` keeps it there without telling
    the user (a Stop hook runs after every reply: the log, not the session, hears why it wrote nothing)."""

    def line(reason: str) -> str:
        return f"{datetime.now(UTC).strftime('%Y-%m-%dT%H:%M:%SZ')} notegate hook {event}: {reason}\n"

    def both(reason: str) -> None:
        say(reason)
        if not _is_stderr(log_path):
            _append_log(log_path, line(reason))

    def log_only(reason: str) -> None:
        _append_log(log_path, line(reason))

    both.log_only = log_only  # type: ignore[attr-defined]
    return both


def _start(payload: dict[str, Any], settings: Any, place: Any, stdout: TextIO, say) -> None:
    import signal

    from notegate.hooks.mcpclient import HookError
    from notegate.hooks.start import run_session_start

    deadline = time.monotonic() + START_BUDGET
    has_timer = hasattr(signal, "setitimer")

    def out_of_time(_signum: int, _frame: object) -> None:
        raise _OutOfTime

    if has_timer:
        previous = signal.signal(signal.SIGALRM, out_of_time)
        signal.setitimer(signal.ITIMER_REAL, START_BUDGET)
    try:
        run_session_start(payload, settings, place, stdout, timeout=max(0.1, min(5.0, deadline - time.monotonic())))
    except HookError as exc:
        say(f"no context injected: {exc}")
    except _OutOfTime:
        say(f"no context injected: gave up after {START_BUDGET:g} s")
    finally:
        if has_timer:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)


def main(
    event: str,
    stdin: TextIO,
    stdout: TextIO,
    environ: Mapping[str, str],
    *,
    args: Sequence[str] = (),
    stderr: TextIO | None = None,
) -> int:
    """Run one hook event; returns the exit status (0, or 1 for an unknown event)."""
    err = stderr if stderr is not None else sys.stderr
    say = _sayer(event, err)
    if event not in EVENTS:
        say(f"unknown event; known: {', '.join(EVENTS)}")
        return 1
    from notegate.hooks.settings import HOOK_GUARD_ENV, SettingsError, load_settings

    if environ.get(HOOK_GUARD_ENV):
        return 0
    if event == "codex-notify":
        from notegate.hooks.codex import payload_from_notify

        payload = payload_from_notify(args, environ)
        if payload is None:
            return 0
    else:
        payload = _read_payload(stdin)
    try:
        settings = load_settings(environ)
    except SettingsError as exc:
        say(f"not configured correctly: {exc}")
        return 0
    if settings is None:
        return 0
    from notegate.hooks.state import LOG_FILE

    say = _logged(say, event, settings.state_dir / LOG_FILE)
    if event == "stop" and payload.get("stop_hook_active") is True:
        return 0  # Claude is continuing because of a Stop hook: not a turn of its own
    from notegate.hooks.project import locate

    place = locate(
        payload.get("cwd") if isinstance(payload.get("cwd"), str) else None, settings.projects, settings.project
    )
    if place.project is not None and place.project in settings.archived:
        archived = "skipped: this project is archived (archived in client.toml), so nothing is written back"
        (say if event == "session-end" else say.log_only)(archived)  # the user hears it once, at the end
        return 0
    if event == "session-start":
        _start(payload, settings, place, stdout, say)
        return 0
    from notegate.hooks.writeback import now_from, run_writeback

    run_writeback(payload, settings, place, event=event, environ=environ, say=say, now=now_from(environ))
    return 0
