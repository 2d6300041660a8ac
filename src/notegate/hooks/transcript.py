"""Turns and segments from a session transcript (JSONL), and the window a model gets to read.

Pure: lines in, values out; the caller opens the file.

Formats read
------------
* **Claude Code** — one JSON object per line; conversation lines have ``type`` ``user`` or
  ``assistant`` and ``message.content`` that is a string or a list of content blocks.  Only
  ``text`` blocks count: tool calls, tool results and thinking are not conversation.  Lines
  marked ``isMeta``, ``isSidechain`` (subagents) or ``isCompactSummary`` are skipped, and so are
  slash-command echoes (``<command-name>…``, ``<local-command-stdout>…``) and interruption
  notices.
* **Codex** rollouts — lines ``{"type": "response_item", "payload": {"type": "message", "role":
  "user"|"assistant", "content": [{"type": "input_text"|"output_text", "text": …}]}}``; the
  injected ``<environment_context>``/``<user_instructions>``/AGENTS.md preambles are skipped.

Anything else (summaries, file snapshots, malformed lines) is ignored.

Turns and segments
------------------
A *turn* is a run of consecutive messages of one role (an assistant reply split over several
lines around tool calls is one turn).  A *segment* is the part of a session between two
``/clear`` commands: Claude Code records ``/clear`` as a user line holding
``<command-name>/clear</command-name>``; every such line starts a new segment (index + 1).  When
the client instead starts a fresh session id and transcript after ``/clear`` (Claude Code's
SessionStart ``source: "clear"``, Codex's too), the new transcript simply is segment 0 of the new
session.  Either way each segment gets its own write-back: ``(session id, segment index)`` names it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass

#: Write-back needs at least this many turns in the current segment.
MIN_TURNS = 4
#: The model reads at most this many of the segment's last turns…
WINDOW_TURNS = 150
#: …and at most this many bytes (UTF-8) of them.
WINDOW_BYTES = 40_000

_CLEAR_MARK = "<command-name>/clear</command-name>"
_SKIP_USER_PREFIXES = (
    "<command-name>",
    "<command-message>",
    "<command-args>",
    "<local-command-stdout>",
    "<local-command-stderr>",
    "<local-command-caveat>",
    "[Request interrupted by user",
    "<environment_context>",
    "<user_instructions>",
    "# AGENTS.md instructions",
)


@dataclass(frozen=True)
class Turn:
    role: str  # "user" | "assistant"
    text: str


@dataclass(frozen=True)
class Segment:
    index: int
    turns: tuple[Turn, ...]


@dataclass(frozen=True)
class Transcript:
    segments: tuple[Segment, ...]
    client: str  # "claude-code" | "codex" | "unknown": which format the lines were in

    @property
    def current(self) -> Segment:
        return self.segments[-1]


def _block_text(content: object, kinds: tuple[str, ...]) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    texts = [
        block["text"]
        for block in content
        if isinstance(block, dict) and block.get("type") in kinds and isinstance(block.get("text"), str)
    ]
    return "\n\n".join(texts)


def _claude_message(obj: dict) -> tuple[str, str] | None:
    role = obj.get("type")
    if role not in ("user", "assistant") or obj.get("isMeta") or obj.get("isSidechain"):
        return None
    if obj.get("isCompactSummary"):
        return None
    message = obj.get("message")
    if not isinstance(message, dict):
        return None
    return role, _block_text(message.get("content"), ("text",))


def _codex_message(obj: dict) -> tuple[str, str] | None:
    payload = obj.get("payload")
    if not isinstance(payload, dict) or payload.get("type") != "message":
        return None
    role = payload.get("role")
    if role not in ("user", "assistant"):
        return None
    return role, _block_text(payload.get("content"), ("input_text", "output_text", "text"))


def parse_transcript(lines: Iterable[str]) -> Transcript:
    """Segments of conversation turns, oldest first; there is always at least one (maybe empty) segment."""
    # A turn's pieces are collected in a list and joined once: adding each piece to a growing string
    # is quadratic in a run of many same-role lines.
    segments: list[list[tuple[str, list[str]]]] = [[]]
    client = "unknown"
    for line in lines:
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        if not isinstance(obj, dict):
            continue
        if obj.get("type") in ("response_item", "session_meta", "turn_context", "event_msg"):
            client = "codex"
            found = _codex_message(obj) if obj.get("type") == "response_item" else None
        else:
            found = _claude_message(obj)
            if found is not None:
                client = "claude-code"
        if found is None:
            continue
        role, text = found
        stripped = text.strip()
        if role == "user" and _CLEAR_MARK in stripped:
            if segments[-1]:
                segments.append([])
            continue
        if not stripped or (role == "user" and stripped.startswith(_SKIP_USER_PREFIXES)):
            continue
        turns = segments[-1]
        if turns and turns[-1][0] == role:
            turns[-1][1].append(stripped)
        else:
            turns.append((role, [stripped]))
    return Transcript(
        tuple(
            Segment(i, tuple(Turn(role, "\n\n".join(pieces)) for role, pieces in turns))
            for i, turns in enumerate(segments)
        ),
        client,
    )


def window(turns: tuple[Turn, ...], *, max_turns: int = WINDOW_TURNS, max_bytes: int = WINDOW_BYTES) -> str:
    """The last turns as plain text, newest kept: at most ``max_turns`` turns and ``max_bytes`` bytes.

    A single turn larger than what is left keeps its tail (the end of a long reply says most
    about where the work stopped) and is marked as cut.
    """
    chunks: list[str] = []
    used = 0
    for turn in reversed(turns[-max_turns:]):
        chunk = f"[{turn.role}]\n{turn.text}\n"
        size = len(chunk.encode("utf-8")) + 1
        if used + size > max_bytes:
            room = max_bytes - used - len(f"[{turn.role}] (cut)\n…\n".encode()) - 1
            if room > 200:
                tail = turn.text.encode("utf-8")[-room:].decode("utf-8", errors="ignore")
                chunks.append(f"[{turn.role}] (cut)\n…{tail}\n")
            break
        chunks.append(chunk)
        used += size
    return "\n".join(reversed(chunks))
