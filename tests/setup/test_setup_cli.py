"""`notegate setup claude-code|codex` as a user meets it: the real CLI in a throwaway HOME, a real vault and
state DB; setup then --remove leaves HOME exactly as it was (every path, mode and byte compared)."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from notegate.setup.plugin import plugin_files
from support import notegate

REPO = Path(__file__).resolve().parents[2]
NOTEGATE = str(Path(sys.executable).parent / "notegate")


def snapshot(root: Path) -> dict[str, tuple[int, bytes | None]]:
    """Every path under root with its mode and, for files, its bytes."""
    found: dict[str, tuple[int, bytes | None]] = {".": (stat.S_IMODE(root.stat().st_mode), None)}
    for path in sorted(root.rglob("*")):
        info = path.lstat()
        found[str(path.relative_to(root))] = (
            stat.S_IMODE(info.st_mode),
            path.read_bytes() if path.is_file() else None,
        )
    return found


def run(home: Path, *args: str, path: str = "/usr/bin:/bin") -> subprocess.CompletedProcess[str]:
    env = {"HOME": str(home), "PATH": path, "LANG": "C.UTF-8"}
    return subprocess.run(
        [NOTEGATE, *args], env=env, cwd=home, capture_output=True, text=True, timeout=180, stdin=subprocess.DEVNULL
    )


def live_tokens(config: Path) -> list[dict]:
    """The tokens ``notegate token list --json`` shows as live. A check of what setup did, not the user's path:
    a fork of the warm fork server (support.notegate), not a fresh interpreter per check."""
    listed = notegate("token", "list", "--config", str(config), "--json")
    assert listed.returncode == 0, listed.stderr
    return [t for t in json.loads(listed.stdout) if t["revoked_at"] is None]


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A lived-in HOME: a shell profile and another tool's config that setup must not touch."""
    home = tmp_path / "home"
    (home / ".config" / "other").mkdir(parents=True)
    (home / ".config" / "other" / "settings.toml").write_text("keep = true\n")
    (home / ".bashrc").write_text("export EDITOR=vi\n")
    return home


@pytest.fixture
def config(vault: Path) -> Path:
    """A `notegate init` directory at tmp_path/vault: the suite's copy of one made earlier (tests/conftest.py),
    a fraction of an init's cost."""
    return vault


def test_setup_then_remove_leaves_home_exactly_as_before(home: Path, config: Path) -> None:
    before = snapshot(home)
    done = run(home, "setup", "claude-code", "--config", str(config), "--url", "http://localhost:9")
    assert done.returncode == 0, done.stderr
    token_file = home / ".config" / "notegate" / "token"
    token = token_file.read_text().strip()
    assert token.startswith("ngt_") and token not in done.stdout + done.stderr
    assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
    assert stat.S_IMODE(token_file.parent.stat().st_mode) == 0o700
    client = tomllib.loads((home / ".config" / "notegate" / "client.toml").read_text())
    assert client == {"url": "http://localhost:9", "token_file": str(token_file)}
    # no claude on PATH: the exact commands, with the token read from its file, never printed
    assert (
        "run yourself:  claude mcp add --scope user --transport http notegate http://localhost:9/mcp --header "
        f'"Authorization: Bearer $(cat {token_file})"'
    ) in done.stdout
    plugin_dir = home / ".local" / "share" / "notegate" / "claude-code"
    assert f"run yourself:  claude plugin marketplace add {plugin_dir}" in done.stdout
    assert "run yourself:  claude plugin install --scope user notegate@notegate" in done.stdout
    assert done.stdout.rstrip().endswith("undo all of it: notegate setup claude-code --remove")
    hooks = json.loads((plugin_dir / "notegate" / "hooks" / "hooks.json").read_text())["hooks"]
    command = hooks["SessionStart"][0]["hooks"][0]["command"]
    assert command.endswith(f"exec {NOTEGATE} hook session-start")
    [minted] = live_tokens(config)
    assert (minted["name"], minted["client_class"], minted["tier"]) == ("claude-code", "workstation", "restricted")

    again = run(home, "setup", "claude-code", "--config", str(config))
    assert again.returncode == 1 and "Refused [setup-conflict]: notegate setup claude-code was done already" in (
        again.stderr
    )

    undone = run(home, "setup", "claude-code", "--remove")
    assert undone.returncode == 0, undone.stderr
    assert "run yourself:  claude mcp remove --scope user notegate" in undone.stdout
    assert f"revoked:       token {minted['id']}" in undone.stdout
    assert snapshot(home) == before
    assert live_tokens(config) == []
    twice = run(home, "setup", "claude-code", "--remove")
    assert twice.returncode == 1 and "Refused [setup-not-done]" in twice.stderr


def test_an_existing_token_is_used_and_kept(home: Path, config: Path) -> None:
    token_file = home / ".config" / "notegate" / "token"
    made = run(home, "token", "create", "--config", str(config), "--name", "laptop", "--class", "workstation",
               "--output", str(token_file))  # fmt: skip
    assert made.returncode == 0, made.stderr
    before = snapshot(home)
    done = run(home, "setup", "claude-code")
    assert done.returncode == 0, done.stderr
    assert f"token:         using {token_file} as it is (--remove leaves it)" in done.stdout
    assert run(home, "setup", "claude-code", "--remove").returncode == 0
    assert snapshot(home) == before
    assert [t["name"] for t in live_tokens(config)] == ["laptop"]


def test_no_token_and_no_config_is_refused_and_changes_nothing(home: Path) -> None:
    before = snapshot(home)
    refused = run(home, "setup", "claude-code")
    assert refused.returncode == 1
    assert refused.stderr.strip() == (
        f"notegate setup: Refused [setup-token-missing]: there is no token at {home}/.config/notegate/token and no "
        "server config to mint one. Pass --config with the server's notegate.toml to mint one, or --token-file "
        "with a token from notegate token create."
    )
    assert snapshot(home) == before


def test_a_client_toml_naming_another_server_is_refused_before_anything_is_minted(home: Path, config: Path) -> None:
    (home / ".config" / "notegate").mkdir()
    (home / ".config" / "notegate" / "client.toml").write_text('url = "https://elsewhere.example"\n')
    before = snapshot(home)
    refused = run(home, "setup", "claude-code", "--config", str(config))
    assert refused.returncode == 1
    assert "Refused [setup-conflict]:" in refused.stderr and "names another server or token file" in refused.stderr
    assert snapshot(home) == before
    assert live_tokens(config) == []


CODEX_BEFORE = """\
# my Codex settings
model = "o4"   # keep this comment

[mcp_servers.other]
command = "other-server"

[profiles.work]
model = "o3"
"""


def test_codex_gets_one_table_and_remove_restores_the_file_byte_for_byte(home: Path, config: Path) -> None:
    codex = home / ".codex" / "config.toml"
    codex.parent.mkdir()
    codex.write_text(CODEX_BEFORE)
    before = snapshot(home)
    done = run(home, "setup", "codex", "--config", str(config), "--url", "http://localhost:9")
    assert done.returncode == 0, done.stderr
    text = codex.read_text()
    assert text.startswith(CODEX_BEFORE)
    parsed = tomllib.loads(text)
    assert parsed["mcp_servers"]["notegate"] == {
        "url": "http://localhost:9/mcp",
        "bearer_token_env_var": "NOTEGATE_TOKEN",
    }
    assert parsed["mcp_servers"]["other"] == {"command": "other-server"} and parsed["model"] == "o4"
    token_file = home / ".config" / "notegate" / "token"
    assert f'export NOTEGATE_TOKEN="$(cat {token_file})"' in done.stdout
    assert token_file.read_text().strip() not in done.stdout
    undone = run(home, "setup", "codex", "--remove")
    assert undone.returncode == 0, undone.stderr
    assert codex.read_text() == CODEX_BEFORE
    assert snapshot(home) == before


def test_codex_without_a_config_file_gets_one_and_loses_it_again(home: Path, config: Path) -> None:
    before = snapshot(home)
    assert run(home, "setup", "codex", "--config", str(config)).returncode == 0
    assert "[mcp_servers.notegate]" in (home / ".codex" / "config.toml").read_text()
    assert run(home, "setup", "codex", "--remove").returncode == 0
    assert snapshot(home) == before


def test_codex_table_edited_since_setup_is_left_alone(home: Path, config: Path) -> None:
    assert run(home, "setup", "codex", "--config", str(config)).returncode == 0
    codex = home / ".codex" / "config.toml"
    edited = codex.read_text().replace("NOTEGATE_TOKEN", "MY_TOKEN")
    codex.write_text(edited)
    undone = run(home, "setup", "codex", "--remove")
    assert undone.returncode == 0
    assert f"left as is:    [mcp_servers.notegate] in {codex} (changed since setup)" in undone.stdout
    assert codex.read_text() == edited


def test_codex_inline_table_is_a_conflict(home: Path, config: Path) -> None:
    codex = home / ".codex" / "config.toml"
    codex.parent.mkdir()
    codex.write_text('mcp_servers = { other = { command = "x" } }\n')
    before = snapshot(home)
    refused = run(home, "setup", "codex", "--config", str(config))
    assert refused.returncode == 1 and "Refused [setup-conflict]:" in refused.stderr
    assert snapshot(home) == before
    assert live_tokens(config) == []


# ------------------------------------------------------------------ the plugin's hook commands
def test_the_repository_plugin_is_the_generated_one_with_the_bare_command() -> None:
    for relative, text in plugin_files("notegate").items():
        on_disk = REPO / "integrations" / "claude-code" / relative
        assert json.loads(text) == json.loads(on_disk.read_text()), relative


def _hook(notegate: str, event: str = "session-start") -> str:
    hooks = json.loads(plugin_files(notegate)["notegate/hooks/hooks.json"])["hooks"]
    return next(g[0]["hooks"][0]["command"] for g in hooks.values() if g[0]["hooks"][0]["command"].endswith(event))


def test_a_hook_whose_notegate_is_gone_says_so_in_one_line(tmp_path: Path) -> None:
    gone = str(tmp_path / "old-venv" / "bin" / "notegate")
    result = subprocess.run(["sh", "-c", _hook(gone)], capture_output=True, text=True, input="{}", timeout=30)
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr == (
        f"notegate hook session-start: {gone} not found (notegate uninstalled or moved?). "
        "Install it again, then run: notegate setup claude-code\n"
    )


def test_a_hook_runs_the_notegate_it_was_set_up_with(tmp_path: Path) -> None:
    """PATH without notegate: the absolute command still runs it (unconfigured: a silent no-op, exit 0)."""
    env = {"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    result = subprocess.run(
        ["sh", "-c", _hook(NOTEGATE)], capture_output=True, text=True, input="{}", env=env, timeout=60
    )
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")


@pytest.mark.parametrize("path", [f"{os.sep}opt{os.sep}it's here{os.sep}notegate"])
def test_hook_commands_quote_the_path(path: str) -> None:
    command = _hook(path, "stop")
    assert command.endswith("exec '/opt/it'\"'\"'s here/notegate' hook stop")


def test_setup_says_when_nothing_answers_at_the_url(
    home: Path, config: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A server on another port than the one named (`make run PORT=N`, then a URL for 8765): setup still does
    every step, and says so at once instead of leaving it to `claude mcp list`. In this process, so the checkout's
    code runs (the entry point beside the interpreter may be another checkout's)."""
    from notegate.cli import main

    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("PATH", "/usr/bin:/bin")  # no claude: the commands are printed
    for name in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "CODEX_HOME", "NOTEGATE_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    assert main(["setup", "claude-code", "--config", str(config), "--url", "http://localhost:9"]) == 0
    out = capsys.readouterr().out
    [said] = [line.strip() for line in out.splitlines() if line.strip().startswith("server:")]
    assert said.startswith("server:        nothing answers at http://localhost:9 now ("), out
    assert said.endswith("set up again with the URL the server printed (--url)"), said
    assert out.index("server:") < out.index("journal:")  # with the steps, before how to undo them
