"""What a client lists about each tool: a title, single-spaced prose, and the policy's own inbox kinds.

Why here and not at each ``@mcp.tool``: a docstring is hard-wrapped and indented for the source, and a client
shows (and a model reads) it as it comes; a list of kinds written in a description would drift from the
policy file.  So the server polishes what ``tools/list`` answers in one place, over the registered tools,
and the tools' modules keep their docstrings as ordinary Python.  Only the listing is changed: arguments
are still validated by each tool's own signature and by the services.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from typing import Any

from mcp.server import MCPServer
from mcp_types import Tool as MCPTool

#: Every tool's title, as a client shows it in its tool list (a new tool without one still gets a title made
#: from its name, and tests/doors/test_mcp_surface.py asserts each tool is named here).
TITLES: dict[str, str] = {
    "session_start": "Start a session",
    "list_notes": "List notes",
    "read_note": "Read a note",
    "search_notes": "Search notes",
    "write_note": "Write a note",
    "append_note": "Append to a note",
    "move_note": "Move a note",
    "delete_note": "Delete a note",
    "note_history": "Note history",
    "restore_note": "Restore a note",
    "inbox_write": "Write to the inbox",
    "list_inbox": "List the inbox (reviewers)",
    "promote_inbox": "Promote an inbox item (reviewers)",
    "hold_inbox": "Hold an inbox item (reviewers)",
    "request_elevation": "Ask the owner for trust",
    "read_attachment": "Read an attachment",
    "write_attachment": "Write an attachment (trusted)",
}


def prose(text: str | None) -> str | None:
    """A docstring as one paragraph of single-spaced prose: no indentation, no hard line breaks."""
    if text is None:
        return None
    return " ".join(inspect.cleandoc(text).split())


def title_of(name: str) -> str:
    return TITLES.get(name) or name.replace("_", " ").capitalize()


def polish(tool: MCPTool, inbox_kinds: Sequence[str]) -> MCPTool:
    """``tool`` as a client should list it (a copy: the registered tool is left as it is)."""
    schema: dict[str, Any] = {**tool.input_schema}
    properties = {name: dict(spec) for name, spec in schema.get("properties", {}).items()}
    for spec in properties.values():
        if isinstance(spec.get("description"), str):
            spec["description"] = prose(spec["description"])
    if tool.name == "inbox_write" and "kind" in properties:
        properties["kind"]["enum"] = list(inbox_kinds)
        properties["kind"]["description"] = f"What the item is: one of {', '.join(inbox_kinds)} (the policy's kinds)."
    schema["properties"] = properties
    return tool.model_copy(
        update={
            "title": tool.title or title_of(tool.name),
            "description": prose(tool.description),
            "input_schema": schema,
        }
    )


class NotegateMCP(MCPServer):
    """The SDK's server, listing its tools polished (titles, prose, the policy's inbox kinds)."""

    def __init__(self, *args: Any, inbox_kinds: Sequence[str] = (), **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.inbox_kinds = tuple(inbox_kinds)

    async def list_tools(self) -> list[MCPTool]:
        return [polish(tool, self.inbox_kinds) for tool in await super().list_tools()]
