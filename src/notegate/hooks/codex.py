"""``notegate hook codex-notify``: Codex's ``notify`` program, mapped onto the periodic write-back.

Codex runs the ``notify`` command of ``~/.codex/config.toml`` after every agent turn with one JSON
argument (not stdin)::

    {"type": "agent-turn-complete", "thread-id": "…", "turn-id": "…", "cwd": "…",
     "input-messages": ["…"], "last-assistant-message": "…"}

It names no transcript, so the rollout file is found by its thread id under
``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<thread-id>.jsonl`` (``CODEX_HOME`` defaults to
``~/.codex``).  Notify has no session-end event, so it behaves like the Stop hook: at most one
write-back every 30 minutes per session.  Codex versions with lifecycle hooks should use those
instead (``docs/clients.md``): they give SessionStart context and the transcript path directly.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

_THREAD_ID = re.compile(r"[0-9A-Za-z-]{8,80}\Z")


def codex_home(environ: Mapping[str, str]) -> Path | None:
    if environ.get("CODEX_HOME"):
        return Path(environ["CODEX_HOME"])
    home = environ.get("HOME", "")
    return Path(home) / ".codex" if home else None


def find_rollout(environ: Mapping[str, str], thread_id: str) -> Path | None:
    home = codex_home(environ)
    if home is None or not _THREAD_ID.match(thread_id):
        return None
    matches = sorted((home / "sessions").glob(f"*/*/*/rollout-*{thread_id}.jsonl"), reverse=True)
    return matches[0] if matches else None


def payload_from_notify(args: Sequence[str], environ: Mapping[str, str]) -> dict[str, Any] | None:
    """A Claude-Code-shaped hook payload from notify's JSON argument, or None to ignore it."""
    if not args:
        return None
    try:
        note = json.loads(args[-1])
    except ValueError:
        return None
    if not isinstance(note, dict) or note.get("type") != "agent-turn-complete":
        return None
    thread = note.get("thread-id")
    if not isinstance(thread, str):
        return None
    rollout = find_rollout(environ, thread)
    return {
        "session_id": thread,
        "transcript_path": str(rollout) if rollout else "",
        "cwd": note.get("cwd") if isinstance(note.get("cwd"), str) else "",
        "hook_event_name": "codex-notify",
    }
