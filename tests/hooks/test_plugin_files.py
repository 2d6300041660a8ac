"""The plugin's files, checked without the CLI: every hook calls an event `notegate hook` knows, with the
timeouts the design asks for, and the marketplace lists the plugin where it is."""

from __future__ import annotations

import json
from pathlib import Path

from notegate.hooks import EVENTS

ROOT = Path(__file__).resolve().parents[2] / "integrations" / "claude-code"


def _load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def test_marketplace_lists_the_plugin_folder():
    market = _load(ROOT / ".claude-plugin" / "marketplace.json")
    [entry] = market["plugins"]
    assert market["name"] == "notegate" and market["owner"]["name"]
    assert entry["name"] == "notegate" and entry["source"] == "./notegate"
    plugin = _load(ROOT / "notegate" / ".claude-plugin" / "plugin.json")
    assert plugin["name"] == entry["name"] and plugin["version"] == entry["version"]
    assert "hooks" not in plugin  # hooks/hooks.json is loaded by default; naming it again is an error


def test_hooks_wire_every_event_to_notegate_hook():
    hooks = _load(ROOT / "notegate" / "hooks" / "hooks.json")["hooks"]
    wired = {}
    for event, groups in hooks.items():
        [group] = groups
        [hook] = group["hooks"]
        assert hook["type"] == "command"
        program, word, name = hook["command"].split()
        assert (program, word) == ("notegate", "hook") and name in EVENTS
        wired[event] = (name, hook["timeout"], hook.get("async", False))
    assert wired == {
        "SessionStart": ("session-start", 10, False),
        "SessionEnd": ("session-end", 300, True),
        "PreCompact": ("pre-compact", 60, False),
        "Stop": ("stop", 30, False),
    }
