"""The forked `notegate` command (tests/support/zygote.py run_cli) answers as the real one does: the same exit status,
stdout and stderr for the same argv, stdin, environment and directory, from a separate process."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from support import free_port, notegate

HOLD = "A note with a bidi control \u202e inside.\n"


@pytest.mark.parametrize(
    ("args", "stdin"),
    [
        (("floor", "check", "-"), "Plain text.\n"),  # exit 0, JSON on stdout
        (("floor", "check", "-"), HOLD),  # exit 1
        (("gate", "check-output", "--schema", "nope", "--manifest", "/nonexistent", "-"), "{}"),  # exit 2, stderr
        (("no-such-command",), None),  # argparse's SystemExit(2) and its usage text
        (("token", "list", "--config", "missing.toml"), None),  # a config error, relative to the directory
    ],
)
def test_forked_and_fresh_commands_answer_alike(tmp_path: Path, args: tuple[str, ...], stdin: str | None) -> None:
    env = {**os.environ, "NOTEGATE_CONFIG": str(tmp_path / "none.toml")}
    fresh = notegate(*args, input=stdin, env=env, cwd=tmp_path, real=True)
    forked = notegate(*args, input=stdin, env=env, cwd=tmp_path)
    assert (forked.returncode, forked.stdout, forked.stderr) == (fresh.returncode, fresh.stdout, fresh.stderr)
    assert forked.stdout or forked.stderr


def test_the_fork_gets_the_given_environment_and_directory_only(tmp_path: Path) -> None:
    """`device keygen` reads XDG_CONFIG_HOME from the environment it is given, not the test's or the fork
    server's, and a relative path is taken from the given directory."""
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "xdg")}
    made = notegate("device", "keygen", "laptop", env=env, cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    assert (tmp_path / "xdg" / "notegate" / "devices" / "laptop.pem").is_file()
    assert "XDG_CONFIG_HOME" not in os.environ or os.environ["XDG_CONFIG_HOME"] != str(tmp_path / "xdg")
    relative = notegate("init", "sub", env=env, cwd=tmp_path)
    assert relative.returncode == 0, relative.stderr
    assert (tmp_path / "sub" / "notegate.toml").is_file()


def test_a_command_past_its_timeout_is_killed_and_reported(vault: Path) -> None:
    with pytest.raises(subprocess.TimeoutExpired):
        notegate("serve", "--config", str(vault), "--port", str(free_port()), timeout=2)
