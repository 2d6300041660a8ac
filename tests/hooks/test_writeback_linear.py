"""The write-back's transcript parsing is linear in the transcript (tests/support/timing.py's measure)."""

from __future__ import annotations

import json

import pytest

from notegate.hooks.transcript import parse_transcript
from support.timing import assert_catches_quadratic, assert_linear

LINE = json.dumps({"type": "assistant", "message": {"content": [{"type": "text", "text": "x" * 40}]}})


def _assistant_lines(n: int) -> str:
    return "\n".join([LINE] * (n // len(LINE)))


SHAPES = {
    # one reply spread over many lines: the old code re-copied the growing turn for every line
    "same-role-run": _assistant_lines,
    "one-huge-line": lambda n: json.dumps({"type": "user", "message": {"content": " " * n + "x"}}),
    "garbage-lines": lambda n: "{" * n,
    "blank-lines": lambda n: "\n" * n,
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_transcript_parse_is_linear(shape: str) -> None:
    assert_linear(lambda text: parse_transcript(text.splitlines()), SHAPES[shape])


def test_the_ratio_catches_a_quadratic_parser() -> None:
    """The measuring stick at this file's sizes: a deliberately quadratic scan of a transcript fails it."""
    assert_catches_quadratic(_assistant_lines)


def test_a_reply_over_many_lines_is_one_turn() -> None:
    transcript = parse_transcript(_assistant_lines(4096).splitlines())
    [turn] = transcript.current.turns
    assert turn.role == "assistant" and turn.text == "\n\n".join(["x" * 40] * (4096 // len(LINE)))
