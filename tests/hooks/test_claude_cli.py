"""The real Claude Code CLI (pinned, installed repo-locally under .tools/) against our plugin and server.

Offline by construction: an isolated HOME, non-essential traffic (telemetry, updates, error reports)
switched off, and only loopback servers.  No Anthropic key is needed: plugin and MCP commands do not
call a model.  Without the CLI these tests skip, unless NOTEGATE_REQUIRE_CLAUDE_CLI=1 (CI) makes them
fail; install it with:

    npm install --prefix .tools --no-audit --no-fund @anthropic-ai/claude-code@2.1.332
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from notegate.vault.formats import Handoff, parse_log
from support.claude_standin import ClaudeStandIn
from support.hookrun import (
    HOOK_SNIPPET,
    Served,
    anthropic_models,
    cli_has_hook,
    client_toml,
    good_answer,
    make_repo,
    vault_client,
    wait_for,
)

REPO = Path(__file__).resolve().parents[2]
MARKETPLACE = REPO / "integrations" / "claude-code"
PINNED = "2.1.332"
INSTALL = f"npm install --prefix .tools --no-audit --no-fund @anthropic-ai/claude-code@{PINNED}"


def _cli() -> Path | None:
    explicit = os.environ.get("NOTEGATE_CLAUDE_CLI", "")
    path = Path(explicit) if explicit else REPO / ".tools" / "node_modules" / ".bin" / "claude"
    return path if path.exists() else None


@pytest.fixture(scope="module")
def claude() -> Path:
    path = _cli()
    if path is None:
        message = f"Claude Code CLI not installed; run: {INSTALL}"
        if os.environ.get("NOTEGATE_REQUIRE_CLAUDE_CLI") == "1":
            pytest.fail(message + " (NOTEGATE_REQUIRE_CLAUDE_CLI=1 requires it)")
        pytest.skip(message)
    return path


def _env(home: Path) -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_ERROR_REPORTING": "1",
    }


def run(claude: Path, home: Path, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(claude), *args],
        env=_env(home),
        cwd=cwd or home,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


def test_pinned_version(claude: Path, home: Path):
    result = run(claude, home, "--version")
    assert result.returncode == 0 and result.stdout.startswith(PINNED), result.stdout + result.stderr


def test_marketplace_and_plugin_manifests_validate(claude: Path, home: Path):
    for target in (MARKETPLACE, MARKETPLACE / "notegate"):
        result = run(claude, home, "plugin", "validate", str(target))
        assert result.returncode == 0, result.stdout + result.stderr
        assert "Validation passed" in result.stdout


def test_marketplace_add_and_plugin_install(claude: Path, home: Path):
    name = json.loads((MARKETPLACE / ".claude-plugin" / "marketplace.json").read_text())["name"]
    added = run(claude, home, "plugin", "marketplace", "add", str(MARKETPLACE))
    assert added.returncode == 0, added.stdout + added.stderr
    assert f"Successfully added marketplace: {name}" in added.stdout
    installed = run(claude, home, "plugin", "install", f"notegate@{name}")
    assert installed.returncode == 0, installed.stdout + installed.stderr
    assert f"Successfully installed plugin: notegate@{name}" in installed.stdout
    listed = run(claude, home, "plugin", "list")
    assert f"notegate@{name}" in listed.stdout and "enabled" in listed.stdout
    registry = json.loads((home / ".claude" / "plugins" / "installed_plugins.json").read_text())
    assert f"notegate@{name}" in json.dumps(registry)


def test_mcp_add_then_list_reports_connected(claude: Path, home: Path, served: Served, tmp_path: Path):
    project = tmp_path / "proj"
    project.mkdir()
    header = f"Authorization: Bearer {served.token()}"
    added = run(
        claude,
        home,
        "mcp",
        "add",
        "--transport",
        "http",
        "notegate",
        f"{served.url}/mcp",
        "--header",
        header,
        cwd=project,
    )
    assert added.returncode == 0, added.stdout + added.stderr
    listed = run(claude, home, "mcp", "list", cwd=project)
    assert listed.returncode == 0, listed.stdout + listed.stderr
    assert f"notegate: {served.url}/mcp (HTTP) - ✔ Connected" in listed.stdout


def test_mcp_list_reports_a_bad_token(claude: Path, home: Path, served: Served, tmp_path: Path):
    project = tmp_path / "proj"
    project.mkdir()
    header = "Authorization: Bearer ngt_not_a_real_token"
    run(
        claude,
        home,
        "mcp",
        "add",
        "--transport",
        "http",
        "notegate",
        f"{served.url}/mcp",
        "--header",
        header,
        cwd=project,
    )
    listed = run(claude, home, "mcp", "list", cwd=project)
    assert "notegate:" in listed.stdout and "✔ Connected" not in listed.stdout


def _notegate_shim(directory: Path) -> Path:
    """A ``notegate`` on PATH for the hooks.json commands, running this checkout's code."""
    directory.mkdir(parents=True, exist_ok=True)
    shim = directory / "notegate"
    if cli_has_hook():
        shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m notegate.cli "$@"\n')
    else:  # until the CLI has `hook`: drop the word and call the entry point
        shim.write_text(f'#!/bin/sh\nshift\nexec "{sys.executable}" -c \'{HOOK_SNIPPET}\' "$@"\n')
    shim.chmod(0o755)
    return directory


def test_real_session_starts_with_fenced_memory_and_ends_with_a_write_back(
    claude: Path, home: Path, served: Served, tmp_path: Path, project_name: str
):
    """The done-when of the plugin: the real client, the installed plugin, a real server and vault."""
    repo = make_repo(tmp_path / "work", project_name)
    client_toml(
        home / ".config" / "notegate" / "client.toml", models=anthropic_models("http://placeholder", "NG_TEST_KEY")
    )
    assert run(claude, home, "plugin", "marketplace", "add", str(MARKETPLACE)).returncode == 0
    assert run(claude, home, "plugin", "install", "notegate@notegate").returncode == 0
    with ClaudeStandIn(good_answer("lexer")) as model:
        client_toml(home / ".config" / "notegate" / "client.toml", models=anthropic_models(model.url, "NG_TEST_KEY"))
        env = {
            **_env(home),
            "PATH": f"{_notegate_shim(tmp_path / 'bin')}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}",
            "ANTHROPIC_BASE_URL": model.url,
            "ANTHROPIC_API_KEY": "sk-standin",
            "NG_TEST_KEY": "sk-standin",
            "NOTEGATE_URL": served.url,
            "NOTEGATE_TOKEN": served.token(),
        }

        def claude_p(*args: str) -> dict:
            done = subprocess.run(
                [str(claude), "-p", *args, "--output-format", "json"],
                env=env,
                cwd=repo,
                capture_output=True,
                text=True,
                timeout=120,
                stdin=subprocess.DEVNULL,
            )
            assert done.returncode == 0, done.stdout + done.stderr
            return json.loads(done.stdout)

        first = claude_p("Please fix the lexer.")
        assert first["result"] == "OK from the stand-in."
        sent = json.dumps(model.streamed()[0])
        assert "SessionStart hook additional context: notegate shared memory" in sent
        assert "[notegate: quoted data (rules digest from rules/digest.md)" in sent
        claude_p("--resume", first["session_id"], "Now add tests.")  # 4 turns: SessionEnd writes back
        vault = vault_client(served.url, served.token())
        # The detached write-back: log, handoff, then the session note and the summary, in that order.
        assert wait_for(lambda: vault.read(f"projects/{project_name}.md")[0] is not None, timeout=30)
        assert parse_log(vault.read(f"log/{project_name}.md")[0])[0].text == good_answer("lexer")["log_entry"]
        assert Handoff.parse(vault.read(f"handoffs/{project_name}.md")[0]).session == first["session_id"]
        [note] = vault.list_paths(f"sessions/{project_name}")
        assert note in vault.read(f"projects/{project_name}.md")[0].replace("[[", "").replace("]]", ".md")
