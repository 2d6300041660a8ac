"""`notegate setup claude-code` with the real Claude Code CLI (pinned, `make claude-cli`) against a real
server: afterwards `claude mcp list`, from a folder setup never saw, shows notegate connected, and the plugin
is installed; --remove takes both away again. Skips without the CLI unless NOTEGATE_REQUIRE_CLAUDE_CLI=1."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from notegate.services.vaultinit import init_directory
from support import running

REPO = Path(__file__).resolve().parents[2]
NOTEGATE = str(Path(sys.executable).parent / "notegate")
INSTALL = "make claude-cli"


@pytest.fixture(scope="module")
def claude() -> Path:
    explicit = os.environ.get("NOTEGATE_CLAUDE_CLI", "")
    path = Path(explicit) if explicit else REPO / ".tools" / "node_modules" / ".bin" / "claude"
    if not path.exists():
        message = f"Claude Code CLI not installed; run: {INSTALL}"
        if os.environ.get("NOTEGATE_REQUIRE_CLAUDE_CLI") == "1":
            pytest.fail(message + " (NOTEGATE_REQUIRE_CLAUDE_CLI=1 requires it)")
        pytest.skip(message)
    return path


def _env(home: Path, claude: Path) -> dict[str, str]:
    return {
        "PATH": f"{claude.parent}:{os.environ.get('PATH', '/usr/bin:/bin')}",
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_ERROR_REPORTING": "1",
    }


def run(env: dict[str, str], *argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        list(argv), env=env, cwd=cwd, capture_output=True, text=True, timeout=180, stdin=subprocess.DEVNULL
    )


def test_setup_connects_claude_code_from_any_folder_and_remove_disconnects(claude: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    elsewhere = tmp_path / "some" / "project"
    elsewhere.mkdir(parents=True)
    env = _env(home, claude)
    config = init_directory(tmp_path / "vault")
    with running(config) as server:
        done = run(env, NOTEGATE, "setup", "claude-code", "--config", str(config), "--url", server.url, cwd=home)
        assert done.returncode == 0, done.stdout + done.stderr
        assert "ran:           claude mcp add --scope user --transport http notegate" in done.stdout
        assert "ran:           claude plugin install --scope user notegate@notegate" in done.stdout
        token = (home / ".config" / "notegate" / "token").read_text().strip()
        assert token not in done.stdout + done.stderr

        listed = run(env, str(claude), "mcp", "list", cwd=elsewhere)
        assert f"notegate: {server.url}/mcp (HTTP) - ✔ Connected" in listed.stdout, listed.stdout + listed.stderr
        plugins = run(env, str(claude), "plugin", "list", cwd=elsewhere)
        assert "notegate@notegate" in plugins.stdout and "enabled" in plugins.stdout, plugins.stdout
        registry = (home / ".claude" / "plugins" / "installed_plugins.json").read_text()
        assert "notegate@notegate" in registry

        undone = run(env, NOTEGATE, "setup", "claude-code", "--remove", cwd=elsewhere)
        assert undone.returncode == 0, undone.stdout + undone.stderr
        assert run(env, str(claude), "mcp", "get", "notegate", cwd=elsewhere).returncode != 0
        plugins = run(env, str(claude), "plugin", "list", cwd=elsewhere)
        assert "notegate@notegate" not in plugins.stdout
        assert not (home / ".config" / "notegate").exists()
        assert not (home / ".local" / "share" / "notegate").exists()
        listed = json.loads(run(env, NOTEGATE, "token", "list", "--config", str(config), "--json", cwd=home).stdout)
        assert [t["revoked_at"] is not None for t in listed] == [True]
