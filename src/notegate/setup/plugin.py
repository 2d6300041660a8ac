"""The Claude Code plugin's files, generated: ``integrations/claude-code/`` in the repository is this with
the command ``notegate`` (a test holds them equal), and ``notegate setup claude-code`` writes it with the
absolute path of the ``notegate`` that ran setup, so the hooks never depend on PATH (a GUI-started
Claude Code, a pipx or venv install).

A hook whose ``notegate`` is gone (uninstalled, moved, the venv rebuilt elsewhere) says so in one line on
stderr and exits 1, which Claude Code reports as a hook error and goes on; never 2 (that would block).
"""

from __future__ import annotations

import json
import shlex

MARKETPLACE = "notegate"
PLUGIN = "notegate"
VERSION = "0.1.0"
KEYWORDS = ["memory", "handoff", "mcp", "notes"]

#: Claude Code event -> (``notegate hook`` event, timeout in seconds, async).
HOOKS: dict[str, tuple[str, int, bool]] = {
    "SessionStart": ("session-start", 10, False),
    "SessionEnd": ("session-end", 300, True),
    "PreCompact": ("pre-compact", 60, False),
    "Stop": ("stop", 30, False),
}

HOOKS_DESCRIPTION = (
    "notegate: inject the fenced shared memory at session start; write the session back at its end, before "
    "compaction and at most every 30 minutes."
)


def hook_command(notegate: str, event: str) -> str:
    """The shell command of one hook. ``notegate`` is the bare word (the repository's copy: PATH decides) or
    an absolute path (setup's copy: checked first, with a one-line message when it is gone)."""
    if notegate == "notegate":
        return f"notegate hook {event}"
    quoted = shlex.quote(notegate)
    missing = shlex.quote(
        f"notegate hook {event}: {notegate} not found (notegate uninstalled or moved?). "
        "Install it again, then run: notegate setup claude-code"
    )
    return f"test -x {quoted} || {{ echo {missing} >&2; exit 1; }}; exec {quoted} hook {event}"


def hooks_json(notegate: str) -> dict:
    hooks = {}
    for claude_event, (event, timeout, is_async) in HOOKS.items():
        hook: dict[str, object] = {"type": "command", "command": hook_command(notegate, event), "timeout": timeout}
        if is_async:
            hook["async"] = True
        hooks[claude_event] = [{"hooks": [hook]}]
    return {"description": HOOKS_DESCRIPTION, "hooks": hooks}


def plugin_json() -> dict:
    return {
        "name": PLUGIN,
        "version": VERSION,
        "description": "Start every session from notegate's shared memory and write each session back (log "
        "entry, handoff, session note). Needs the `notegate` command on PATH and NOTEGATE_URL/NOTEGATE_TOKEN or "
        "~/.config/notegate/client.toml; without them every hook does nothing.",
        "author": {"name": "notegate"},
        "license": "MIT",
        "keywords": KEYWORDS,
    }


def marketplace_json() -> dict:
    return {
        "name": MARKETPLACE,
        "owner": {"name": "notegate"},
        "metadata": {
            "description": "notegate's Claude Code integration: one shared, git-versioned Markdown memory for "
            "every session.",
            "version": VERSION,
        },
        "plugins": [
            {
                "name": PLUGIN,
                "source": f"./{PLUGIN}",
                "description": "Start every session from the shared memory (rules digest, last handoff, context "
                "to resume, fenced as data) and write each session back: log entry, handoff, session note.",
                "version": VERSION,
                "license": "MIT",
                "category": "productivity",
                "keywords": KEYWORDS,
            }
        ],
    }


def plugin_files(notegate: str) -> dict[str, str]:
    """Relative path -> text of every file of the marketplace folder (what `claude plugin marketplace add`
    takes)."""
    dump = lambda value: json.dumps(value, indent=2, ensure_ascii=False) + "\n"  # noqa: E731
    return {
        ".claude-plugin/marketplace.json": dump(marketplace_json()),
        f"{PLUGIN}/.claude-plugin/plugin.json": dump(plugin_json()),
        f"{PLUGIN}/hooks/hooks.json": dump(hooks_json(notegate)),
    }
