"""On a workstation: client.toml usable, the Claude Code hooks wired to ``notegate hook``, and the
``notegate`` they run reachable.

Where Claude Code keeps hooks: an installed plugin's ``hooks/hooks.json`` (``installed_plugins.json``
under ``~/.claude/plugins`` names its ``installPath``) and the ``hooks`` key of ``~/.claude/settings.json``
(``$CLAUDE_CONFIG_DIR`` moves ``~/.claude``).  The hooks run with the environment Claude Code was started
in, so ``notegate`` must resolve on the PATH the doctor is given (or be an absolute executable).
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from notegate.doctor.result import CheckResult, fail, ok, warn
from notegate.hooks import EVENTS
from notegate.hooks.settings import SettingsError, config_path, load_settings

#: What the plugin wires (integrations/claude-code/notegate/hooks/hooks.json): Claude Code event -> hook.
PLUGIN_WIRING: dict[str, str] = {
    "SessionStart": "session-start",
    "SessionEnd": "session-end",
    "PreCompact": "pre-compact",
    "Stop": "stop",
}
PLUGIN_NAME = "notegate"


def claude_dir(environ: Mapping[str, str]) -> Path | None:
    explicit = environ.get("CLAUDE_CONFIG_DIR", "")
    if explicit:
        return Path(explicit)
    home = environ.get("HOME", "")
    return Path(home) / ".claude" if home else None


def parse_hooks(data: Any) -> tuple[list[str], list[tuple[str, str]]]:
    """(problems, [(event, command)]) of a Claude Code hooks document: ``{"hooks": {Event: [{"hooks":
    [{"type": "command", "command": ...}]}]}}``.  Total: any JSON value gives problems, never an exception."""
    if not isinstance(data, dict) or not isinstance(data.get("hooks"), dict):
        return ['it has no "hooks" object'], []
    problems: list[str] = []
    commands: list[tuple[str, str]] = []
    for event, groups in data["hooks"].items():
        if not isinstance(groups, list):
            problems.append(f"{event} is not a list of hook groups")
            continue
        for group in groups:
            hooks = group.get("hooks") if isinstance(group, dict) else None
            if not isinstance(hooks, list):
                problems.append(f'a {event} group has no "hooks" list')
                continue
            for hook in hooks:
                if not isinstance(hook, dict) or hook.get("type") != "command":
                    continue  # other hook types are Claude Code's business, not ours
                command = hook.get("command")
                if not isinstance(command, str) or not command.strip():
                    problems.append(f"a {event} command hook has no command")
                else:
                    commands.append((str(event), command))
    return problems, commands


def notegate_words(command: str) -> list[str] | None:
    """The words of a command that runs notegate (``[VAR=x ...] PROGRAM [-m notegate] hook EVENT``), from
    PROGRAM on; None when the command is not notegate's.  ValueError when it does not split as shell words."""
    words = shlex.split(command)
    while words and "=" in words[0] and not words[0].startswith(("/", "=")):
        words = words[1:]
    if not words:
        return None
    if Path(words[0]).name == "notegate" or words[1:3] in (["-m", "notegate"], ["-m", "notegate.cli"]):
        return words
    return None


def _hook_event(words: list[str]) -> str | None:
    rest = words[3:] if words[1:2] == ["-m"] else words[1:]
    return rest[1] if len(rest) >= 2 and rest[0] == "hook" else None


def wiring_problems(commands: list[tuple[str, str]], *, required: Mapping[str, str]) -> list[str]:
    """What is wrong with the notegate commands of one hooks file (``required``: events that must be wired)."""
    problems: list[str] = []
    wired: dict[str, str] = {}
    for event, command in commands:
        try:
            words = notegate_words(command)
        except ValueError:
            problems.append(f"{event}: the command does not parse as shell words")
            continue
        if words is None:
            continue
        hook = _hook_event(words)
        if hook not in EVENTS:
            problems.append(f"{event}: runs notegate without a known `hook EVENT` ({', '.join(EVENTS)})")
            continue
        expected = PLUGIN_WIRING.get(event)
        if expected is not None and hook != expected:
            problems.append(f"{event}: runs `notegate hook {hook}`, expected `notegate hook {expected}`")
        wired[event] = hook
    problems += [
        f"{event} is not wired to `notegate hook {hook}`" for event, hook in required.items() if event not in wired
    ]
    return problems


def program_problem(words: list[str], environ: Mapping[str, str]) -> str | None:
    """Why the hook's program would not start: not on PATH, or an absolute path that is not an executable."""
    program = words[0]
    if os.path.isabs(program):
        if not (os.path.isfile(program) and os.access(program, os.X_OK)):
            return f"{program} is not an existing executable"
        return None
    if os.sep in program:
        return f"{program} is a relative path: it depends on the directory Claude Code starts in"
    if shutil.which(program, path=environ.get("PATH", "")) is None:
        return f"`{program}` is not on PATH"
    return None


def _hook_files(environ: Mapping[str, str]) -> list[tuple[Path, bool]]:
    """(hooks file, is notegate's plugin) for every place Claude Code would read notegate's hooks from."""
    base = claude_dir(environ)
    if base is None:
        return []
    found: list[tuple[Path, bool]] = []
    registry = base / "plugins" / "installed_plugins.json"
    try:
        plugins = json.loads(registry.read_text(encoding="utf-8")).get("plugins", {})
    except (OSError, ValueError, AttributeError):
        plugins = {}
    if isinstance(plugins, dict):
        for key, installs in plugins.items():
            if str(key).split("@", 1)[0] != PLUGIN_NAME or not isinstance(installs, list):
                continue
            for install in installs:
                if isinstance(install, dict) and isinstance(install.get("installPath"), str):
                    found.append((Path(install["installPath"]) / "hooks" / "hooks.json", True))
    settings = base / "settings.json"
    try:
        if "notegate" in settings.read_text(encoding="utf-8"):
            found.append((settings, False))
    except OSError:
        pass
    return found


def _check_file(path: Path, plugin: bool, environ: Mapping[str, str]) -> list[CheckResult]:
    label = str(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError:
        return [fail("workstation.hooks", f"{path} cannot be read", "Reinstall the plugin.", subject=label)]
    except ValueError as exc:
        return [
            fail(
                "workstation.hooks",
                f"{path} is not valid JSON ({type(exc).__name__} at line {getattr(exc, 'lineno', '?')})",
                "Reinstall the plugin (`claude plugin install notegate@notegate`), or fix the file's JSON.",
                subject=label,
            )
        ]
    problems, commands = parse_hooks(data)
    problems += wiring_problems(commands, required=PLUGIN_WIRING if plugin else {})
    results = []
    if problems:
        results.append(
            fail(
                "workstation.hooks",
                "; ".join(problems),
                "Reinstall the plugin, or wire each event to `notegate hook EVENT` as the plugin's hooks.json does.",
                subject=label,
            )
        )
    else:
        results.append(ok("workstation.hooks", "valid JSON; every event runs `notegate hook`", subject=label))
    unreachable = []
    count = 0
    for _event, command in commands:
        try:
            words = notegate_words(command)
        except ValueError:
            continue
        if words is not None:
            count += 1
            if (problem := program_problem(words, environ)) is not None:
                unreachable.append(problem)
    if unreachable:
        results.append(
            fail(
                "workstation.notegate",
                "; ".join(sorted(set(unreachable))),
                "Install notegate where Claude Code's PATH finds it (`pipx install notegate`), or write the "
                "absolute path of the notegate executable in the hook command.",
                subject=label,
            )
        )
    elif count:
        results.append(ok("workstation.notegate", f"the {count} notegate command(s) resolve", subject=label))
    return results


def check_workstation(environ: Mapping[str, str]) -> list[CheckResult]:
    """Nothing when this machine has neither a client.toml nor Claude Code hooks calling notegate."""
    client = config_path(environ)
    files = _hook_files(environ)
    has_client = client is not None and client.exists()
    if not has_client and not files:
        return []
    results: list[CheckResult] = []
    try:
        settings = load_settings(environ)
    except SettingsError as exc:
        results.append(
            fail("workstation.client", str(exc), "Fix client.toml (see integrations/claude-code/README.md).")
        )
    else:
        if settings is None:
            results.append(
                warn(
                    "workstation.client",
                    "no server URL and token configured: every hook does nothing",
                    "Write url and token_file in client.toml, or set NOTEGATE_URL and NOTEGATE_TOKEN_FILE.",
                )
            )
        else:
            results.append(
                ok("workstation.client", f"a server URL and a token are configured ({settings.client_name})")
            )
    if not files:
        results.append(
            warn(
                "workstation.hooks",
                "no Claude Code hooks call notegate",
                "Install the plugin: claude plugin marketplace add PATH/integrations/claude-code, then "
                "claude plugin install notegate@notegate.",
            )
        )
    for path, plugin in files:
        results += _check_file(path, plugin, environ)
    return results
