"""The MCP door's wire surface is pinned: tool names, argument names/descriptions/defaults, annotations, output
schemas, INSTRUCTIONS and the review_inbox prompt, exactly as a client lists them.

Why a golden file: clients (and the models behind them) learn these words; a refactor of the door must not
change one of them by accident.  A deliberate change regenerates the file and shows up whole in review:
``NOTEGATE_UPDATE_SURFACE=1 .venv/bin/python -m pytest -q tests/doors/test_mcp_surface.py``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from mcp import Client

from notegate.config import load_config
from notegate.doors.mcp import CallerResolver, build_mcp
from notegate.doors.mcp.surface import TITLES, prose
from notegate.services.runtime import Runtime
from support.callers import make_caller

pytestmark = pytest.mark.anyio

GOLDEN = Path(__file__).with_name("mcp_surface.json")


async def surface(vault: Path) -> dict:
    runtime = Runtime(load_config(vault))
    try:
        server = build_mcp(runtime, resolver=CallerResolver(fixed=make_caller()))
        async with Client(server) as client:
            tools = await client.list_tools()
            prompts = await client.list_prompts()
            prompt = await client.get_prompt("review_inbox", {})
    finally:
        runtime.close()

    def dump(model) -> dict:
        return model.model_dump(mode="json", by_alias=True, exclude_none=True)

    return {
        "instructions": server.instructions,
        "tools": [dump(t) for t in tools.tools],
        "prompts": [dump(p) for p in prompts.prompts],
        "review_prompt": dump(prompt),
    }


async def test_the_wire_surface_is_unchanged(vault: Path) -> None:
    found = await surface(vault)
    if os.environ.get("NOTEGATE_UPDATE_SURFACE") == "1":
        GOLDEN.write_text(json.dumps(found, indent=1, sort_keys=True), encoding="utf-8")
    assert found == json.loads(GOLDEN.read_text(encoding="utf-8"))


def _descriptions(tool: dict) -> list[tuple[str, str]]:
    found = [(tool["name"], tool.get("description", ""))]
    for name, spec in tool["inputSchema"].get("properties", {}).items():
        found.append((f"{tool['name']}.{name}", spec.get("description", "")))
    return found


async def test_every_tool_lists_a_title_and_single_spaced_prose(vault: Path) -> None:
    found = await surface(vault)
    names = [t["name"] for t in found["tools"]]
    assert set(names) <= set(TITLES), f"give these tools a title in doors/mcp/surface.py: {set(names) - set(TITLES)}"
    for tool in found["tools"]:
        assert tool.get("title") == TITLES[tool["name"]], tool["name"]
        for where, text in _descriptions(tool):
            assert text, f"{where} has no description"
            assert "\n" not in text and "  " not in text and text == text.strip(), (where, text)


async def test_inbox_kinds_and_annotations_come_from_the_policy(vault: Path) -> None:
    tools = {t["name"]: t for t in (await surface(vault))["tools"]}
    kinds = [kind for kind, _ in load_config(vault).policy.inbox]
    kind = tools["inbox_write"]["inputSchema"]["properties"]["kind"]
    assert kind["enum"] == kinds == ["handoff", "log", "decision", "capture"]
    assert kind["description"] == "What the item is: one of handoff, log, decision, capture (the policy's kinds)."
    assert tools["hold_inbox"]["annotations"]["destructiveHint"] is False
    assert tools["promote_inbox"]["annotations"]["destructiveHint"] is True
    handle = tools["read_note"]["inputSchema"]["properties"]["handle"]["description"]
    assert handle.startswith("Hosted clients only")
    project = tools["inbox_write"]["inputSchema"]["properties"]["project"]["description"]
    assert project.startswith("Handoffs, log entries and decisions only")


def test_prose_joins_a_hard_wrapped_docstring() -> None:
    assert prose("First line\n        second line.\n\n    Third.") == "First line second line. Third."
    assert prose(None) is None
