"""Transcript parsing (pure): what counts as a turn, where segments start, the window the model reads."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from notegate.hooks.transcript import MIN_TURNS, Turn, parse_transcript, window
from support.hookrun import Transcript


def _lines(path: Path) -> list[str]:
    return path.read_text().splitlines()


def test_tool_calls_and_results_are_not_turns(tmp_path: Path):
    t = Transcript(tmp_path / "t.jsonl", "s", tmp_path)
    t.exchange(2)
    parsed = parse_transcript(_lines(t.path))
    assert parsed.client == "claude-code"
    assert [turn.role for turn in parsed.current.turns] == ["user", "assistant", "user", "assistant"]
    assert "tests pass" in parsed.current.turns[1].text
    assert len(parsed.current.turns) == MIN_TURNS


# Each row: a line Claude Code writes that is not conversation, and why it is skipped.
NOT_TURNS = [
    ({"type": "user", "isMeta": True, "message": {"role": "user", "content": "Caveat: ..."}}, "meta"),
    ({"type": "user", "isSidechain": True, "message": {"role": "user", "content": "subagent task"}}, "subagent"),
    ({"type": "user", "isCompactSummary": True, "message": {"role": "user", "content": "Summary..."}}, "summary"),
    (
        {"type": "user", "message": {"role": "user", "content": "<local-command-stdout>ok</local-command-stdout>"}},
        "cmd",
    ),
    ({"type": "user", "message": {"role": "user", "content": "[Request interrupted by user]"}}, "interrupt"),
    ({"type": "summary", "summary": "Parser work", "leafUuid": "x"}, "summary line"),
    ({"type": "file-history-snapshot", "snapshot": {}}, "snapshot"),
    (
        {"type": "assistant", "message": {"role": "assistant", "content": [{"type": "thinking", "thinking": "hm"}]}},
        "think",
    ),
]


@pytest.mark.parametrize(("line", "why"), NOT_TURNS, ids=[why for _, why in NOT_TURNS])
def test_lines_that_are_not_conversation(line: dict, why: str):
    lines = [json.dumps({"type": "user", "message": {"role": "user", "content": "hello"}}), json.dumps(line)]
    assert parse_transcript(lines).current.turns == (Turn("user", "hello"),)


def test_malformed_lines_are_ignored():
    lines = ["not json", "{broken", "[]", json.dumps({"type": "user", "message": {"role": "user", "content": "hi"}})]
    assert len(parse_transcript(lines).current.turns) == 1


def test_clear_starts_a_new_segment(tmp_path: Path):
    t = Transcript(tmp_path / "t.jsonl", "s", tmp_path)
    t.exchange(3, "the lexer")
    t.clear()
    t.exchange(2, "the docs")
    parsed = parse_transcript(_lines(t.path))
    assert [s.index for s in parsed.segments] == [0, 1]
    assert len(parsed.segments[0].turns) == 6
    assert len(parsed.current.turns) == 4
    assert all("docs" in turn.text for turn in parsed.current.turns)


def test_clear_at_the_start_of_a_fresh_transcript_is_not_an_empty_segment(tmp_path: Path):
    t = Transcript(tmp_path / "t.jsonl", "s", tmp_path)
    t.clear()
    t.exchange(2)
    parsed = parse_transcript(_lines(t.path))
    assert len(parsed.segments) == 1 and len(parsed.current.turns) == 4


def test_codex_rollout_lines():
    def item(role: str, text: str) -> str:
        kind = "input_text" if role == "user" else "output_text"
        payload = {"type": "message", "role": role, "content": [{"type": kind, "text": text}]}
        return json.dumps({"timestamp": "2026-11-30T09:00:00Z", "type": "response_item", "payload": payload})

    lines = [
        json.dumps({"type": "session_meta", "payload": {"id": "t-1", "cwd": "/x"}}),
        item("user", "<environment_context>cwd=/x</environment_context>"),
        item("user", "Fix the bug"),
        json.dumps({"type": "event_msg", "payload": {"type": "user_message", "message": "Fix the bug"}}),
        item("assistant", "Fixed."),
        json.dumps({"type": "response_item", "payload": {"type": "function_call", "name": "shell"}}),
        item("assistant", "Tests pass."),
    ]
    parsed = parse_transcript(lines)
    assert parsed.client == "codex"
    assert parsed.current.turns == (Turn("user", "Fix the bug"), Turn("assistant", "Fixed.\n\nTests pass."))


def test_window_keeps_the_newest_turns_within_both_caps():
    turns = tuple(Turn("user" if i % 2 == 0 else "assistant", f"turn {i} " + "x" * 50) for i in range(400))
    text = window(turns)
    assert "turn 399" in text and "turn 250 " in text and "turn 249 " not in text  # 150 turns
    big = tuple(Turn("user" if i % 2 == 0 else "assistant", f"turn {i} " + "y" * 1000) for i in range(100))
    text = window(big)
    assert len(text.encode()) <= 40_000
    assert "turn 99 " in text and "turn 0 " not in text


def test_window_cuts_a_huge_last_turn_to_its_tail():
    text = window((Turn("user", "start"), Turn("assistant", "head " + "z" * 100_000 + " the end")))
    assert len(text.encode()) <= 40_000
    assert text.rstrip().endswith("the end") and "(cut)" in text and "start" not in text
