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

from conftest import make_caller
from notegate.config import load_config
from notegate.doors.mcp import CallerResolver, build_mcp
from notegate.services.runtime import Runtime

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
