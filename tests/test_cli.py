"""The `notegate` command as users and scripts call it (its own process, real files): one test per command
starts a fresh interpreter as a user's shell does (real=True); the rest fork the warm fork server."""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import subprocess
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import settings as examples
from hypothesis import strategies as st

from notegate.cli import COMMANDS, build_parser, command_named
from notegate.config import load_config
from notegate.errors import RULES, ConfigError
from support import clone_and_push, mcp_http, mint, notegate, running, token_secret


def cli(*args: str, stdin: str | None = None, real: bool = False) -> subprocess.CompletedProcess:
    return notegate(*args, input=stdin, timeout=120, real=real)


def test_init_creates_layout_and_refuses_foreign_dirs(tmp_path: Path) -> None:
    result = cli("init", str(tmp_path / "v"), real=True)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "v" / "notegate.toml").exists() and (tmp_path / "v" / "origin.git" / "HEAD").exists()
    assert (tmp_path / "v" / "state" / "envs" / "personal" / "vault.git").exists()
    tree = subprocess.run(
        ["git", "--git-dir", str(tmp_path / "v" / "origin.git"), "ls-tree", "-r", "--name-only", "main"],
        capture_output=True,
        text=True,
    ).stdout.split()
    assert {"rules/digest.md", "handoffs/notegate-demo.md", "log/notegate-demo.md", "inbox/README.md"} <= set(tree)
    again = cli("init", str(tmp_path / "v"), real=True)
    assert again.returncode == 2 and "already a notegate directory" in again.stderr
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "file.txt").write_text("x")
    refused = cli("init", str(tmp_path / "other"), real=True)
    assert refused.returncode == 2 and "not empty" in refused.stderr
    assert sorted(p.name for p in (tmp_path / "other").iterdir()) == ["file.txt"]


def test_token_create_list_revoke(vault: Path) -> None:
    created = cli("token", "create", "--config", str(vault), "--name", "laptop", "--class", "workstation", real=True)
    assert created.returncode == 0
    token = created.stdout.strip()
    assert token.startswith("ngt_") and "restricted" in created.stderr
    listed = cli("token", "list", "--config", str(vault), "--json", real=True)
    rows = json.loads(listed.stdout)
    assert rows[0]["name"] == "laptop" and rows[0]["tier"] == "restricted"
    secret = token_secret(token)  # the whole secret, never a fragment of it
    assert token not in listed.stdout and secret not in (vault.parent / "state" / "state.sqlite").read_bytes().decode(
        "latin-1"
    )
    assert cli("token", "revoke", "--config", str(vault), "laptop", real=True).returncode == 0
    assert cli("token", "revoke", "--config", str(vault), "laptop", real=True).returncode == 1
    bad = cli("token", "create", "--config", str(vault), "--name", "x", "--class", "machine", "--tier", "trusted")
    assert bad.returncode == 1 and "machine" in bad.stderr


def test_import_lists_what_it_skips_and_refuses(vault: Path, tmp_path: Path) -> None:
    src = tmp_path / "src"
    (src / "notes").mkdir(parents=True)
    (src / "notes" / "a.md").write_text("# A\nimported aardvark\n")
    (src / ".obsidian").mkdir()
    (src / ".obsidian" / "app.json").write_text("{}")
    (src / "img.png").write_bytes(b"\x89PNG")
    (src / "link.md").symlink_to(src / "notes" / "a.md")
    (src / "bad%2e%2e.md").write_text("x")
    (src / "latin1.md").write_bytes(b"caf\xe9")
    (src / "rules").mkdir()
    (src / "rules" / "digest.md").write_text("different rules\n")
    result = cli("import", "--config", str(vault), str(src), "--message", "Import test", "--quiet", real=True)
    assert result.returncode == 1, result.stderr  # something was refused
    out = result.stdout
    assert "skipped  1 × hidden folder" in out  # counted by reason; --list-skipped names each
    assert out.startswith("refused  ")  # refusals first: each needs the person
    assert "refused  img.png: attachment-type-mismatch: " in out
    assert "refused  link.md: symlink" in out
    assert "refused  bad%2e%2e.md: path-percent-encoded" in out
    assert "refused  latin1.md: content-not-utf8" in out
    assert "refused  rules/digest.md: import-exists: rules/digest.md is in the vault with other content" in out
    assert "notes (imported)             1" in out
    log = subprocess.run(
        ["git", "--git-dir", str(vault.parent / "origin.git"), "log", "-1", "--format=%s%n%b", "main"],
        capture_output=True,
        text=True,
    ).stdout
    assert log.startswith("Import test") and "Notegate-Client: notegate-import" in log
    again = cli("import", "--config", str(vault), str(src), "--quiet")
    assert "notes (imported)             0\n" in again.stdout and "unchanged                    1\n" in again.stdout


@pytest.mark.anyio
async def test_running_server_sees_import_without_restart(vault: Path, tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "fresh.md").write_text("# Fresh\nnarwhal\n")
    with running(vault) as server:
        async with mcp_http(server.url, mint(vault)) as client:
            before = await client.call_tool("search_notes", {"query": "narwhal"})
            assert before.structured_content["hits"] == []
            assert cli("import", "--config", str(vault), str(src), "--quiet").returncode == 0
            after = await client.call_tool("search_notes", {"query": "narwhal"})
            assert [h["path"] for h in after.structured_content["hits"]] == ["fresh.md"]


def test_reindex_rebuilds(vault: Path) -> None:
    index = vault.parent / "state" / "envs" / "personal" / "index.sqlite"
    result = cli("reindex", "--config", str(vault), "--quiet", real=True)
    assert result.returncode == 0 and "indexed 8 notes" in result.stdout
    assert index.exists()


def test_reindex_counts_canvas_files_apart_from_notes(vault: Path, tmp_path: Path) -> None:
    """``status`` counts notes; a canvas is searched too but is no note: reindex says so, not 9 notes."""
    canvas = {"nodes": [{"id": "a", "type": "text", "text": "plan", "x": 0, "y": 0, "width": 9, "height": 9}]}
    clone_and_push(vault.parent / "origin.git", tmp_path / "w", "boards/plan.canvas", json.dumps(canvas))
    result = cli("reindex", "--config", str(vault), "--quiet", real=True)
    assert result.returncode == 0 and "indexed 8 notes and 1 canvas files" in result.stdout, result.stdout


@pytest.mark.parametrize(
    ("snippet", "needle"),
    [
        ("[policy]\nprivte = ['x/**']\n", "unknown key 'privte' in [policy]"),
        ("[server]\nport = 'eighty'\n", "[server] port has the wrong type"),
        ("[policy]\nmax_note_bytes = true\n", "[policy] max_note_bytes has the wrong type"),
        ("[policy]\ntwo_step_classes = ['robots']\n", "unknown class 'robots'"),
        ("[extra]\nx = 1\n", "unknown section or key 'extra'"),
    ],
)
def test_config_errors_name_the_key(tmp_path: Path, snippet: str, needle: str) -> None:
    config = tmp_path / "notegate.toml"
    config.write_text("[environments.personal]\norigin = 'origin.git'\n" + snippet)
    with pytest.raises(ConfigError) as info:
        load_config(config)
    assert needle in info.value.message
    result = cli("reindex", "--config", str(config))
    assert result.returncode == 2 and needle in result.stderr


def test_a_fresh_config_is_exactly_the_defaults(vault: Path) -> None:
    """`notegate init` writes its config from the rows: loading it gives the default policy, nothing else."""
    from notegate.config import SERVER_SETTINGS
    from notegate.policy import Policy

    config = load_config(vault)
    assert config.policy == Policy()
    for setting in SERVER_SETTINGS:
        value = getattr(config, setting.name)
        if setting.name == "state_dir":
            assert value == (vault.parent / setting.default).resolve()
        else:
            assert value == (tuple(setting.default) if isinstance(setting.default, list) else setting.default)


def test_generated_config_is_valid_and_complete(vault: Path) -> None:
    from notegate.policy import POLICY_SETTINGS

    text = vault.read_text()
    for setting in POLICY_SETTINGS:
        marker = f"[policy.{setting.name}]" if setting.kind is dict else f"\n{setting.name} = "
        assert marker in text, setting.name
    assert load_config(vault).policy.max_note_bytes == 1 << 20


def test_deploy_examples_are_well_formed() -> None:
    import plistlib

    deploy = Path(__file__).parents[1] / "deploy"
    for plist in (deploy / "launchd").glob("*.plist"):
        data = plistlib.loads(plist.read_bytes())
        assert "notegate" in " ".join(data["ProgramArguments"])
    units = {p.name: p.read_text() for p in (deploy / "systemd").iterdir()}
    assert "ExecStart=%h/.local/bin/notegate review" in units["notegate-review.service"]
    assert "OnCalendar=hourly" in units["notegate-review.timer"]
    workflow = (deploy / "ci" / "notegate-review.yml").read_text()
    assert "notegate review --config" in workflow and "secrets.ANTHROPIC_API_KEY" in workflow
    for text in (*units.values(), workflow):
        assert "sk-ant-" not in text and "ghp_" not in text  # no secrets in examples


def test_connect_hint_never_prints_the_token(tmp_path: Path) -> None:
    from notegate.cli import _connect_hint

    token_file = tmp_path / "demo.token"
    token_file.write_text("ngt_0123456789abcdef_secret-part-of-the-token\n")
    hint = _connect_hint("http://127.0.0.1:8765", str(token_file))
    assert "secret-part" not in hint and f"$(cat {token_file})" in hint and "/mcp" in hint


# ------------------------------------------------------------------ device keys
def device_cli(home: Path, *args: str, real: bool = False, **env: str) -> subprocess.CompletedProcess:
    """`notegate device …` with its own config directory (XDG_CONFIG_HOME) and nothing from this shell."""
    import os

    clean = {k: v for k, v in os.environ.items() if not k.startswith(("NOTEGATE_", "CLAUDE_CODE_", "XDG_"))}
    env = clean | {"XDG_CONFIG_HOME": str(home), "HOME": str(home.parent)} | env
    return notegate("device", *args, env=env, timeout=120, real=real)


def test_device_keygen_writes_a_0600_key_and_prints_config_lines_the_server_loads(vault: Path, tmp_path: Path) -> None:
    home = tmp_path / "xdg"
    made = device_cli(home, "keygen", "laptop", real=True)
    assert made.returncode == 0, made.stderr
    key = home / "notegate" / "devices" / "laptop.pem"
    assert key.stat().st_mode & 0o777 == 0o600 and key.parent.stat().st_mode & 0o777 == 0o700
    assert key.read_bytes().startswith(b"-----BEGIN PRIVATE KEY-----")
    assert made.stdout.splitlines()[0] == "[devices.laptop]" and 'person = "owner"' in made.stdout
    assert "PRIVATE" not in made.stdout + made.stderr  # the private key is never printed
    vault.write_text(vault.read_text() + "\n" + made.stdout)
    loaded = load_config(vault).devices["laptop"]
    assert loaded.person == "owner" and loaded.public_key in made.stdout

    before = key.read_bytes()
    again = device_cli(home, "keygen", "laptop")
    assert again.returncode == 1 and "Refused [device-key-exists]" in again.stderr
    assert key.read_bytes() == before  # the existing key is untouched

    bad = device_cli(home, "keygen", "../laptop")
    assert bad.returncode == 1 and "Refused [device-name-invalid]" in bad.stderr


def test_device_keys_default_to_dot_config_without_xdg(tmp_path: Path) -> None:
    made = device_cli(tmp_path / "unused", "keygen", "desk", XDG_CONFIG_HOME="")
    assert made.returncode == 0, made.stderr
    assert (tmp_path / ".config" / "notegate" / "devices" / "desk.pem").is_file()


def test_device_header_prints_what_claude_codes_headers_helper_expects(vault: Path, tmp_path: Path) -> None:
    import time

    from notegate.auth.devices import DeviceVerifier, Reason

    home = tmp_path / "xdg"
    made = device_cli(home, "keygen", "laptop")
    vault.write_text(vault.read_text() + "\n" + made.stdout)
    # Claude Code runs the helper with the server's URL in CLAUDE_CODE_MCP_SERVER_URL and reads stdout as a
    # JSON object of header names to string values: a fresh interpreter, as Claude Code starts it.
    out = device_cli(home, "header", real=True, CLAUDE_CODE_MCP_SERVER_URL="http://127.0.0.1:8765/mcp")
    assert out.returncode == 0, out.stderr
    headers = json.loads(out.stdout)
    assert isinstance(headers, dict) and list(headers) == ["X-Notegate-Device"]
    assert all(isinstance(v, str) for v in headers.values()) and out.stdout.count("\n") == 1
    verifier = DeviceVerifier(load_config(vault), time.time)
    assert verifier.verify(headers["X-Notegate-Device"]).reason is Reason.TRUSTED

    value = device_cli(home, "header", "--value", "--url", "http://localhost:8765", "--lifetime", "60")
    assert value.returncode == 0 and verifier.verify(value.stdout.strip()).trusted  # Codex: env_http_headers

    elsewhere = device_cli(home, "header", "--url", "https://notes.example.org/mcp")
    assert verifier.verify(json.loads(elsewhere.stdout)["X-Notegate-Device"]).reason is Reason.WRONG_AUDIENCE


def test_device_header_refusals_name_their_rule(tmp_path: Path) -> None:
    home = tmp_path / "xdg"
    none = device_cli(home, "header", "--url", "http://127.0.0.1:8765")
    assert none.returncode == 1 and "Refused [device-key-unknown]" in none.stderr and not none.stdout
    device_cli(home, "keygen", "laptop")
    device_cli(home, "keygen", "desk")
    two = device_cli(home, "header", "--url", "http://127.0.0.1:8765")
    assert two.returncode == 1 and "Refused [device-key-unknown]" in two.stderr and "desk, laptop" in two.stderr
    named = device_cli(home, "header", "--url", "http://127.0.0.1:8765", NOTEGATE_DEVICE="desk")
    assert named.returncode == 0, named.stderr
    no_url = device_cli(home, "header", "--name", "laptop")
    assert no_url.returncode == 1 and "Refused [device-audience-missing]" in no_url.stderr
    unknown = device_cli(home, "header", "--name", "phone", "--url", "http://127.0.0.1:8765")
    assert unknown.returncode == 1 and "Refused [device-key-unknown]" in unknown.stderr
    long = device_cli(home, "header", "--name", "laptop", "--url", "http://127.0.0.1:8765", "--lifetime", "43201")
    assert long.returncode == 1 and "Refused [device-lifetime-invalid]" in long.stderr


def test_device_list_shows_local_keys_and_the_configured_devices(vault: Path, tmp_path: Path) -> None:
    home = tmp_path / "xdg"
    laptop = device_cli(home, "keygen", "laptop")
    device_cli(home, "keygen", "desk")
    vault.write_text(vault.read_text() + "\n" + laptop.stdout)
    listed = device_cli(home, "list", "--config", str(vault), "--json")
    assert listed.returncode == 0, listed.stderr
    data = json.loads(listed.stdout)
    assert [(r["name"], r["configured_as"]) for r in data["local"]] == [("desk", None), ("laptop", "laptop")]
    assert [(d["name"], d["person"]) for d in data["configured"]] == [("laptop", "owner")]
    assert "PRIVATE" not in listed.stdout
    plain = device_cli(home, "list")
    assert plain.returncode == 0 and "laptop" in plain.stdout and "desk" in plain.stdout


def test_the_guides_say_how_each_client_sends_the_device_header() -> None:
    """The settings themselves are on the generated configuration page (tests/docs/test_reference.py); the
    guides say how Claude Code and Codex send the header."""
    guides = Path(__file__).parents[1] / "docs" / "how-to"
    assert "headersHelper" in (guides / "claude-code.md").read_text()
    assert "env_http_headers" in (guides / "codex.md").read_text()
    assert "[devices." in (guides / "add-device.md").read_text()


# What a short command may not load (issue 9): the web and MCP stack, the model SDKs, the template engine
# and the progress bar belong to `serve`, `mcp`, `review`/`reflect` and `import`; a command that loads them
# makes every shell and hook call that runs it pay their import. Checked by name in a fresh interpreter, not
# timed, so a shared machine cannot make it flaky.
SERVER_STACK = ("mcp", "uvicorn", "starlette", "anthropic", "openai", "jinja2", "pydantic", "httpx", "tqdm")
_LOADED = (
    "import json, sys\n"
    "from notegate.cli import main\n"
    "try:\n"
    "    code = main(sys.argv[1:])\n"
    "except SystemExit as exc:\n"
    "    code = exc.code\n"
    "sys.stdout.flush()\n"
    "print('\\nMODULES ' + json.dumps(sorted(sys.modules)))\n"
    "sys.exit(code)\n"
)


def modules_loaded(*args: str, stdin: str = "", cwd: Path | None = None) -> set[str]:
    """The modules ``notegate ARGS`` has imported by the time it returns, in a fresh interpreter."""
    import sys

    result = subprocess.run(
        [sys.executable, "-c", _LOADED, *args], input=stdin, capture_output=True, text=True, cwd=cwd, timeout=120
    )
    assert result.returncode == 0, result.stderr
    return set(json.loads(result.stdout.rsplit("\nMODULES ", 1)[1]))


def _heavy(loaded: set[str], also: tuple[str, ...] = ()) -> list[str]:
    return sorted(m for m in loaded if m.split(".")[0] in SERVER_STACK or m.startswith(also))


def test_init_imports_neither_the_server_stack_nor_the_postgres_glue(tmp_path: Path) -> None:
    """`init` without ``--state-url`` talks to no PostgreSQL: notegate.postgres stays unloaded (it did not)."""
    loaded = modules_loaded("init", str(tmp_path / "v"))
    assert "notegate.services.notes" in loaded  # the default notes still go through the recipe
    assert _heavy(loaded, ("notegate.postgres", "notegate.doors", "notegate.models.sdk", "notegate.doctor")) == []


def test_short_commands_import_no_server_stack(vault: Path, tmp_path: Path) -> None:
    payload = json.dumps({"cwd": str(tmp_path), "session_id": "s1", "hook_event_name": "SessionStart"})
    runs = {
        "token list": modules_loaded("token", "list", "--config", str(vault)),
        "doctor --help": modules_loaded("doctor", "--help"),
        "hook session-start": modules_loaded("hook", "session-start", stdin=payload, cwd=tmp_path),
    }
    assert {name: _heavy(loaded, ("notegate.doors", "notegate.services")) for name, loaded in runs.items()} == {
        name: [] for name in runs
    }
    # --help builds the parser and nothing else: no config, no policy, no git.
    assert not {"notegate.config", "notegate.policy", "pygit2"} & runs["doctor --help"]


# main() builds only the parser of the command it runs (build_parser(only=...)); these pin that it parses,
# helps and refuses exactly as the whole parser does.
def _words(parser: argparse.ArgumentParser) -> list[str]:
    """Every option string and sub-command name under ``parser`` (argparse's own tables)."""
    words: list[str] = []
    for action in parser._actions:
        words += action.option_strings
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                words += [name, *_words(sub)]
    return words


def _outcome(parser: argparse.ArgumentParser, argv: list[str]) -> tuple:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            return ("parsed", vars(parser.parse_args(argv)))
        except SystemExit as exc:
            return ("exit", exc.code, out.getvalue(), err.getvalue())


_FULL = build_parser()
_SUBS = next(a for a in _FULL._actions if isinstance(a, argparse._SubParsersAction))


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_each_commands_own_parser_helps_like_the_whole_one(command: str) -> None:
    assert command_named([command, "--help"]) == command and _SUBS.choices[command].prog == f"notegate {command}"
    helps = [[command, "--help"]] + [[command, w, "--help"] for w in _words(_SUBS.choices[command]) if w[0] != "-"]
    for argv in helps:
        assert _outcome(build_parser(command), argv) == _outcome(_FULL, argv), argv


@examples(max_examples=300, deadline=None)
@given(data=st.data())
def test_each_commands_own_parser_parses_like_the_whole_one(data: st.DataObject) -> None:
    command = data.draw(st.sampled_from(sorted(COMMANDS)))
    vocabulary = [*_words(_SUBS.choices[command]), *sorted(COMMANDS), "x", "7", "-", "--", "a b", "--nope"]
    rest = data.draw(st.lists(st.sampled_from(vocabulary) | st.text(max_size=4), max_size=6))
    argv = [command, *rest]
    assert _outcome(build_parser(command_named(argv)), argv) == _outcome(_FULL, argv)


@pytest.mark.parametrize("argv", [[], ["--help"], ["--version"], ["inti"], ["-x", "init"], ["--", "init"]])
def test_argv_without_a_leading_command_gets_the_whole_parser(argv: list[str]) -> None:
    assert command_named(argv) is None


def test_a_mint_key_id_that_begins_with_a_dash_is_taken_in_the_form_the_docs_write() -> None:
    """A key id is a base64url thumbprint: about one in 32 begins with "-", which argparse takes for an option
    after a separate ``--mint-key`` (CI met one).  The docs and the refusal's remedy write ``--mint-key=ID``."""
    parsed = build_parser().parse_args(["tools", "serve", "--mint-key=-dash-first", "--mint-key=plain"])
    assert parsed.mint_key == ["-dash-first", "plain"]
    assert "--mint-key=ID" in RULES["tools-mint-unpinned"]
