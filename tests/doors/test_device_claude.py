"""The real Claude Code CLI with notegate's device key as its ``headersHelper``: the server sees a valid
``X-Notegate-Device`` header and treats the owner's workstation as trusted; a helper printing an expired header
or one signed for another server leaves it restricted, and the audit names the exact reason.

Everything is real: the key is made by ``notegate device keygen`` into a temporary config folder, its lines go
into the served vault's deployment config, the Claude Code server entry is the JSON the Claude Code guide has the user
pass to ``claude mcp add-json --scope user`` (read from docs/how-to/claude-code.md, so the documentation is what
is tested), and the
helper is ``notegate device header`` run by Claude Code itself (it passes ``CLAUDE_CODE_MCP_SERVER_URL``; nothing else
tells the helper the URL).  The model is the stand-in Messages API (tests/support/claude_standin.py) scripted to
call ``mcp__notegate__write_note`` once; the proof is read on the server's side: the audit rows in the state DB
and the commit's ``Notegate-Tier`` trailer on the origin.

Offline like tests/hooks/test_claude_cli.py: an isolated HOME, non-essential traffic off, loopback servers only.
Skips without the CLI (``make claude-cli``, or ``NOTEGATE_CLAUDE_CLI``) unless NOTEGATE_REQUIRE_CLAUDE_CLI=1."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from notegate.auth.devices import mint_device_header
from support import Server, mint, running
from support.claude_standin import ClaudeStandIn

REPO = Path(__file__).resolve().parents[2]
GUIDE = REPO / "docs" / "how-to" / "claude-code.md"
DEVICE = "laptop"
NOTE = "projects/device-key.md"  # not "…claude.md": the floor holds instruction-file names in session-loaded paths
WRITE_TOOL = "mcp__notegate__write_note"


@pytest.fixture
def claude() -> Path:
    explicit = os.environ.get("NOTEGATE_CLAUDE_CLI", "")
    path = Path(explicit) if explicit else REPO / ".tools" / "node_modules" / ".bin" / "claude"
    if not path.exists():
        if os.environ.get("NOTEGATE_REQUIRE_CLAUDE_CLI") == "1":
            pytest.fail("Claude Code CLI not installed (NOTEGATE_REQUIRE_CLAUDE_CLI=1 requires it)")
        pytest.skip("Claude Code CLI not installed; run: make claude-cli")
    return path


class Workstation:
    """The owner's machine: a HOME, a config folder holding the device key, and ``notegate`` on PATH."""

    def __init__(self, root: Path) -> None:
        self.home = root / "home"
        self.config_home = root / "config"  # XDG_CONFIG_HOME: where `notegate device keygen` puts the key
        self.project = root / "project"
        self.bin = root / "bin"
        for folder in (self.home, self.config_home, self.project, self.bin):
            folder.mkdir(parents=True)
        shim = self.bin / "notegate"  # this checkout's CLI, as the installed entry point would run it
        shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m notegate.cli "$@"\n')
        shim.chmod(0o755)
        self.token = ""

    def env(self, **extra: str) -> dict[str, str]:
        env = {
            "PATH": f"{self.bin}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}",
            "HOME": str(self.home),
            "XDG_CONFIG_HOME": str(self.config_home),
            "LANG": "C.UTF-8",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_ERROR_REPORTING": "1",
            "NOTEGATE_TOKEN": self.token,
            **extra,
        }
        assert "NOTEGATE_URL" not in env  # the helper learns the URL from Claude Code alone
        return env

    def run(self, *argv: str, **extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            list(argv),
            env=self.env(**extra),
            cwd=self.project,
            capture_output=True,
            text=True,
            timeout=180,
            stdin=subprocess.DEVNULL,
        )

    @property
    def key_file(self) -> Path:
        return self.config_home / "notegate" / "devices" / f"{DEVICE}.pem"


def keygen_and_trust(station: Workstation, config: Path) -> None:
    """`notegate device keygen` on the workstation; its printed lines pasted into the server's config."""
    made = station.run("notegate", "device", "keygen", DEVICE, "--person", "owner")
    assert made.returncode == 0, made.stderr
    assert made.stdout.startswith(f'[devices.{DEVICE}]\npublic_key = "ed25519:'), made.stdout
    assert stat.S_IMODE(station.key_file.stat().st_mode) == 0o600
    config.write_text(config.read_text() + "\n" + made.stdout)


def readme_server_entry() -> dict:
    """The Claude Code server entry exactly as the guide has the user add it (`claude mcp add-json --scope user
    notegate '…'`), checked to be the entry the guide then shows in ``~/.claude.json``."""
    readme = GUIDE.read_text()
    [typed] = re.findall(r"claude mcp add-json --scope user notegate '([^']*)'", readme)
    shown = [block for block in re.findall(r"```json\n(.*?)```", readme, flags=re.S) if '"headersHelper"' in block]
    assert len(shown) == 1, "the guide shows one ~/.claude.json entry with a headersHelper"
    entry = json.loads(typed)
    assert json.loads(shown[0])["mcpServers"]["notegate"] == entry
    return entry


def add_server(claude: Path, station: Workstation, server: Server, helper: str | None = None, scope: str = "user"):
    entry = {**readme_server_entry(), "url": f"{server.url}/mcp"}
    if helper is not None:
        entry["headersHelper"] = helper
    added = station.run(str(claude), "mcp", "add-json", "--scope", scope, "notegate", json.dumps(entry))
    assert added.returncode == 0, added.stdout + added.stderr
    return entry


def session_writing_a_note(claude: Path, station: Workstation) -> tuple[dict, subprocess.CompletedProcess[str]]:
    """One `claude -p` session whose model calls write_note once (confirmed); what the tool answered."""
    call = {"path": NOTE, "content": "written from Claude Code\n", "base_revision": "absent", "confirmed": True}
    with ClaudeStandIn({}, tool_calls=[(WRITE_TOOL, call)]) as model:
        done = station.run(
            str(claude),
            "-p",
            "Record that the device key works.",
            "--output-format",
            "json",
            "--allowedTools",
            WRITE_TOOL,
            ANTHROPIC_BASE_URL=model.url,
            ANTHROPIC_API_KEY="sk-standin",
        )
        assert done.returncode == 0, done.stdout + done.stderr
        assert json.loads(done.stdout)["result"] == "OK from the stand-in."
        [result] = model.tool_results()
    return result, done


def audit_rows(config: Path) -> list[tuple[str, str, str, str | None]]:
    db = sqlite3.connect(config.parent / "state" / "state.sqlite")
    try:
        return list(db.execute("SELECT tool, tier, outcome, path FROM audit ORDER BY id"))
    finally:
        db.close()


def origin_commit_message(config: Path, path: str) -> str:
    """The message of the origin's last commit touching ``path`` ('' when none did)."""
    done = subprocess.run(
        ["git", "--git-dir", str(config.parent / "origin.git"), "log", "-1", "--format=%B", "--", path],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


@pytest.fixture
def station(tmp_path: Path, vault: Path) -> Workstation:
    """A workstation whose device key the server trusts, holding a *restricted* workstation token: only the
    device header can make it trusted."""
    station = Workstation(tmp_path / "workstation")
    keygen_and_trust(station, vault)
    station.token = mint(vault, name="claude-code", client_class="workstation", tier="restricted")
    return station


def test_claude_code_with_the_device_helper_is_a_trusted_workstation(claude: Path, vault: Path, station: Workstation):
    with running(vault) as server:
        entry = add_server(claude, station, server)
        assert entry["headersHelper"] == f"notegate device header --name {DEVICE}"
        listed = station.run(str(claude), "mcp", "list")
        assert f"notegate: {server.url}/mcp (HTTP) - ✔ Connected" in listed.stdout, listed.stdout + listed.stderr
        result, _ = session_writing_a_note(claude, station)
    assert not result["is_error"], result["text"]
    assert json.loads(result["text"])["status"] == "committed"
    rows = audit_rows(vault)
    assert ("device-key", "trusted", "device-trusted", f"device:{DEVICE}") in rows, rows
    assert ("write_note", "trusted", "ok", NOTE) in rows, rows
    message = origin_commit_message(vault, NOTE)
    assert "Notegate-Tier: trusted" in message and "Notegate-Client: claude-code" in message, message


@pytest.mark.parametrize(
    ("case", "outcome"),
    [
        ("expired", "device-expired:device-not-verified"),
        ("wrong-audience", "device-wrong-audience:device-not-verified"),
    ],
)
def test_a_helper_printing_a_header_that_does_not_count_leaves_claude_code_restricted(
    claude: Path, vault: Path, station: Workstation, case: str, outcome: str
):
    with running(vault) as server:
        if case == "expired":  # signed by the right key for this server, but 13 hours ago for one hour
            header = mint_device_header(
                station.key_file.read_bytes(), DEVICE, f"{server.url}/mcp", now=time.time() - 13 * 3600, lifetime=3600
            )
            printed = station.home / "expired-header.json"
            printed.write_text(json.dumps({"X-Notegate-Device": header}) + "\n")
            helper = f"cat {printed}"
        else:  # the real helper, signing for another server
            helper = f"notegate device header --name {DEVICE} --url https://elsewhere.example/mcp"
        add_server(claude, station, server, helper=helper)
        result, _ = session_writing_a_note(claude, station)
    assert result["is_error"] and "Refused [restricted-outside-inbox]" in result["text"], result
    rows = audit_rows(vault)
    device_rows = [row for row in rows if row[0] == "device-key"]
    assert device_rows == [("device-key", "restricted", outcome, f"device:{DEVICE}")], rows
    assert ("write_note", "restricted", "restricted-outside-inbox", NOTE) in rows, rows
    assert origin_commit_message(vault, NOTE) == ""


def test_at_local_scope_in_an_untrusted_folder_claude_code_does_not_run_the_helper(
    claude: Path, vault: Path, station: Workstation
):
    """Why the guide says ``--scope user``: Claude Code runs a project- or local-scope headersHelper only in a
    folder whose trust dialog was accepted; otherwise it connects without the header, and the caller is what
    its token makes it."""
    with running(vault) as server:
        add_server(claude, station, server, scope="local")
        result, done = session_writing_a_note(claude, station)
    assert "headersHelper not run" in done.stderr, done.stderr
    assert result["is_error"] and "Refused [restricted-outside-inbox]" in result["text"], result
    rows = audit_rows(vault)
    assert [row for row in rows if row[0] == "device-key"] == [], rows  # no header at all: nothing to audit
    assert ("write_note", "restricted", "restricted-outside-inbox", NOTE) in rows, rows
