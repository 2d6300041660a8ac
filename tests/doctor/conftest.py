"""The doctor's fixtures: exactly `make run`'s setup, made with the real CLI, copied per test and broken
one way at a time."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from notegate.sync import hookfile
from support.doctor import Doctor, notegate


@pytest.fixture(scope="session")
def demo_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The Makefile's run target, minus `serve`: `notegate init var/demo`, then the demo token."""
    demo = tmp_path_factory.mktemp("make-run") / "var" / "demo"
    done = notegate("init", str(demo))
    assert done.returncode == 0, done.stderr
    config = demo / "notegate.toml"
    done = notegate(
        "token", "create", "--config", str(config), "--name", "demo-workstation", "--class", "workstation",
        "--tier", "trusted", "--output", str(demo / "demo.token"),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return demo


@pytest.fixture
def demo(demo_template: Path, tmp_path: Path) -> Path:
    """A copy of the make-run directory (config paths are relative, so a copy is a working deployment)
    with the pre-receive hook installed. Returns its config path.

    The hook is installed here until `notegate init` installs it itself (the pre-receive work in progress
    on another branch); then this line goes and the fixture is exactly `make run`'s setup.
    """
    target = tmp_path / "demo"
    shutil.copytree(demo_template, target, symlinks=True)
    config = target / "notegate.toml"
    hookfile.install_hook(target / "origin.git", config, "personal")
    return config


@pytest.fixture
def isolated_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """An empty HOME (no client.toml, no Claude Code): only what a test sets up is a workstation."""
    home = tmp_path / "home"
    home.mkdir()
    for name in ("NOTEGATE_CONFIG", "NOTEGATE_CLIENT_CONFIG", "XDG_CONFIG_HOME", "CLAUDE_CONFIG_DIR", "NO_COLOR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(home))
    return {"HOME": str(home), "PATH": str(Path(sys.executable).parent) + ":/usr/bin:/bin", "LANG": "C.UTF-8"}


@pytest.fixture
def doctor(isolated_env: dict[str, str], capsys: pytest.CaptureFixture[str]) -> Doctor:
    """`notegate doctor ARGS --json` through the CLI's own entry point (in-process: the enforcer modules
    are imported once, not once per fixture); returns (exit status, the parsed JSON list)."""
    from notegate.cli import main

    def run(*args: str) -> tuple[int, list[dict[str, str]]]:
        capsys.readouterr()
        code = main(["doctor", *args, "--json"])
        out = capsys.readouterr().out
        return code, json.loads(out)

    return run
