"""Claude Code's real CLI discovers notegate's OAuth: after `claude mcp add --transport http` of the server's URL
without a token, `claude mcp list` reports that it needs authentication, not a failure.

Offline like tests/hooks/test_claude_cli.py: an isolated HOME, non-essential traffic off, a loopback server.
Skips without the CLI (``.tools/``, or ``NOTEGATE_CLAUDE_CLI``) unless NOTEGATE_REQUIRE_CLAUDE_CLI=1."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from support import Server

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def claude() -> Path:
    explicit = os.environ.get("NOTEGATE_CLAUDE_CLI", "")
    path = Path(explicit) if explicit else REPO / ".tools" / "node_modules" / ".bin" / "claude"
    if not path.exists():
        if os.environ.get("NOTEGATE_REQUIRE_CLAUDE_CLI") == "1":
            pytest.fail("Claude Code CLI not installed (NOTEGATE_REQUIRE_CLAUDE_CLI=1 requires it)")
        pytest.skip("Claude Code CLI not installed; see tests/hooks/test_claude_cli.py for the install line")
    return path


def run(claude: Path, home: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_ERROR_REPORTING": "1",
    }
    return subprocess.run(
        [str(claude), *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL
    )


def test_mcp_list_says_the_oauth_server_needs_authentication(claude: Path, served: Server, tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "proj"
    home.mkdir()
    project.mkdir()
    added = run(claude, home, "mcp", "add", "--transport", "http", "notegate", f"{served.url}/mcp", cwd=project)
    assert added.returncode == 0, added.stdout + added.stderr
    listed = run(claude, home, "mcp", "list", cwd=project)
    line = next((ln for ln in listed.stdout.splitlines() if ln.startswith("notegate:")), "")
    print(line)  # shown with -s: what the CLI reports
    assert "authentication" in line.lower(), listed.stdout + listed.stderr
    assert "Failed" not in line and "✔ Connected" not in line, line
