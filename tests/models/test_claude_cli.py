"""The ``claude-cli`` provider against a fake ``claude`` executable put first on PATH.

The fake refuses to run unless it gets the locked-down flags, so every good-path test also
proves the lock-down; the recorded calls show where instructions, data and keys went.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any

import pytest

from notegate.models import ClaudeCliProvider, ClaudeCliSettings, ModelError, ModelTimeout
from notegate.models.base import user_turn_text, wire_schema
from notegate.models.claude_cli import EMPTY_MCP_CONFIG
from notegate.safety.outputgate import check_output
from support import model_cases as cases
from support.model_cases import (
    ANTHROPIC_KEY,
    DATA_MARKER,
    DUPLICATE_KEYS,
    MANIFEST,
    NEVER_LOGGED,
    PROSE_WRAPPED,
    SYSTEM,
)
from support.standins import CliAnswer, FakeClaude

TIMEOUT = 0.5


def ask(fake: FakeClaude, environ: dict[str, str] | None = None, timeout: float = 10.0, **settings: Any) -> str:
    provider = ClaudeCliProvider(ClaudeCliSettings(**settings), fake.environ() if environ is None else environ)
    return provider.complete_json(SYSTEM, cases.parts(), cases.review_schema(), schema_name="review", timeout=timeout)


def test_good_answer_is_the_cli_envelope_and_passes_the_output_gate(tmp_path: Path) -> None:
    fake = FakeClaude(tmp_path, CliAnswer.json(cases.verdicts()))
    raw = ask(fake)
    envelope = json.loads(raw)
    assert envelope["type"] == "result" and envelope["structured_output"] == cases.verdicts()
    result = check_output(raw, "review", MANIFEST)  # the gate unwraps the envelope by its known keys
    assert result.ok, result.error
    assert result.value == cases.verdicts()


def test_call_is_locked_down_and_keeps_instructions_and_data_apart(tmp_path: Path) -> None:
    fake = FakeClaude(tmp_path, CliAnswer.json(cases.verdicts()))
    environ = fake.environ(ANTHROPIC_API_KEY=ANTHROPIC_KEY, CLAUDECODE="1", CLAUDE_CODE_ENTRYPOINT="cli")
    ask(fake, environ)
    (call,) = fake.calls
    argv = call["argv"]
    assert argv[0] == "-p"
    for flag, value in [
        ("--output-format", "json"),
        ("--tools", ""),
        ("--mcp-config", EMPTY_MCP_CONFIG),
        ("--max-turns", "1"),
        ("--system-prompt", SYSTEM),  # the instructions, and only them
    ]:
        assert argv[argv.index(flag) + 1] == value, flag
    assert "--strict-mcp-config" in argv and "--no-session-persistence" in argv
    assert json.loads(argv[argv.index("--json-schema") + 1]) == wire_schema(cases.review_schema())
    # the data goes in on stdin, fenced, and appears nowhere on the command line
    assert call["stdin"] == user_turn_text(cases.parts())
    assert not any(DATA_MARKER in arg for arg in argv)
    # the environment: hook guard set, nesting markers gone, the key only where it was
    env = call["env"]
    assert env["NOTEGATE_HOOK_ACTIVE"] == "1"
    assert "CLAUDECODE" not in env and "CLAUDE_CODE_ENTRYPOINT" not in env
    assert env["ANTHROPIC_API_KEY"] == ANTHROPIC_KEY
    assert ANTHROPIC_KEY not in json.dumps(argv) and ANTHROPIC_KEY not in call["stdin"]
    # a fresh empty working directory (no project CLAUDE.md or settings), removed afterwards
    assert Path(call["cwd"]).name.startswith("notegate-model-")
    assert not Path(call["cwd"]).exists()
    assert os.path.realpath(call["cwd"]) != os.path.realpath(os.getcwd())


@pytest.mark.parametrize("text", [PROSE_WRAPPED, DUPLICATE_KEYS, "not json at all"])
def test_malformed_output_is_returned_as_is(tmp_path: Path, text: str) -> None:
    fake = FakeClaude(tmp_path, CliAnswer.raw(text))
    raw = ask(fake)
    assert raw == text
    assert not check_output(raw, "review", MANIFEST).ok


def test_error_envelope_is_a_model_error(tmp_path: Path) -> None:
    fake = FakeClaude(tmp_path, CliAnswer.error("error_max_turns"))
    with pytest.raises(ModelError, match="status 1"):  # the CLI exits 1 with an error envelope
        ask(fake)
    fake.play(CliAnswer(structured=None, is_error=True, subtype="error_during_execution", exit_code=0))
    with pytest.raises(ModelError, match=r"reported an error \(error_during_execution\)"):
        ask(fake)


def test_non_zero_exit_is_a_model_error_without_stderr(tmp_path: Path) -> None:
    fake = FakeClaude(tmp_path, CliAnswer.fail(3))
    with pytest.raises(ModelError) as caught:
        ask(fake)
    assert caught.value.rule == "model-unavailable"
    assert "status 3" in caught.value.message


def gone(pid: int) -> bool:
    """No such process, or only its zombie left (killed, waiting to be reaped by whoever adopted it)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return True
    return stat.rpartition(")")[2].split()[0] == "Z"


def test_timeout_kills_the_process_group(tmp_path: Path) -> None:
    """The fake sleeps with a grandchild holding stdout: the timeout kills the whole group.

    Asserted on what the kill leaves behind (the grandchild is gone when ``complete_json`` returns),
    not on a wall-clock limit: that flaked under load.
    """
    fake = FakeClaude(tmp_path, CliAnswer.slow(4.0))
    with pytest.raises(ModelTimeout) as caught:
        ask(fake, timeout=TIMEOUT)
    assert caught.value.rule == "model-timeout"
    assert len(fake.calls) == 1
    pid = fake.grandchild_pid
    assert pid is None or gone(pid)  # None: killed before it could start one


def test_missing_command_is_a_model_error(tmp_path: Path) -> None:
    fake = FakeClaude(tmp_path)
    with pytest.raises(ModelError, match="'claude-nowhere' was not found"):
        ask(fake, command="claude-nowhere")
    with pytest.raises(ModelError, match="not found"):
        ask(fake, environ={"PATH": str(tmp_path / "empty")})


def test_full_path_command_works_without_path(tmp_path: Path) -> None:
    fake = FakeClaude(tmp_path, CliAnswer.json(cases.verdicts()))
    raw = ask(fake, environ={}, command=str(fake.path))
    assert check_output(raw, "review", MANIFEST).ok


def test_nothing_of_the_call_is_logged(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    fake = FakeClaude(tmp_path, CliAnswer.json(cases.verdicts()))
    ask(fake, fake.environ(ANTHROPIC_API_KEY=ANTHROPIC_KEY))
    fake.play(CliAnswer.fail(2))
    with pytest.raises(ModelError) as caught:
        ask(fake, fake.environ(ANTHROPIC_API_KEY=ANTHROPIC_KEY))
    for secret in NEVER_LOGGED:
        assert secret not in caplog.text
        assert secret not in caught.value.explain()
