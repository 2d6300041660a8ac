"""What a client lists about each tool: a title, single-spaced prose, and the policy's own inbox kinds.

Why here and not at each ``@mcp.tool``: a docstring is hard-wrapped and indented for the source, and a client
shows (and a model reads) it as it comes; a list of kinds written in a description would drift from the
policy file.  So the server polishes what ``tools/list`` answers in one place, over the registered tools,
and the tools' modules keep their docstrings as ordinary Python.  Only the listing is changed: arguments
are still validated by each tool's own signature and by the services.

The output schemas are listed in an equivalent form that is cheaper to check (:func:`compact_schema`): the
official client re-validates every structured result against the listed schema with ``jsonschema``, whose
cost grows with every listed item, and pydantic's ``anyOf`` for each optional field and ``$ref`` for each
nested model made a 200-note ``list_notes`` cost the client about twice what the same schema costs as
``"type": [..., "null"]`` with the model written in place.  The same documents validate either way.
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


#: The reference prefix of a definition in the schema's own ``$defs`` (all pydantic writes).
LOCAL_DEFS = "#/$defs/"


def compact_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with every local ``$ref`` written in place (``$defs`` dropped) and every ``anyOf`` of two bare
    types, one of them ``null``, as a type list: the same documents validate, at about half the cost.

    A schema this cannot write out whole (a recursive definition, which written in place would not end, or a
    reference other than a bare local one) is listed as pydantic wrote it: no notegate model has either."""
    defs = schema.get("$defs", {})

    def walk(node: Any, seen: tuple[str, ...]) -> Any:
        if isinstance(node, list):
            return [walk(item, seen) for item in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith(LOCAL_DEFS) and set(node) == {"$ref"}:
            name = ref.removeprefix(LOCAL_DEFS)
            if name in seen:
                raise _Recursive(name)
            return walk(defs[name], (*seen, name))
        out = {key: walk(value, seen) for key, value in node.items() if key != "$defs"}
        branches = out.get("anyOf")
        if (
            isinstance(branches, list)
            and len(branches) == 2
            and all(isinstance(b, dict) and set(b) == {"type"} and isinstance(b["type"], str) for b in branches)
            and {"type": "null"} in branches
            and "type" not in out
        ):
            other = next(b["type"] for b in branches if b["type"] != "null")
            del out["anyOf"]
            out["type"] = [other, "null"]
        return out

    try:
        compact = walk(schema, ())
    except _Recursive:
        return schema
    if any(isinstance(v, dict) and "$ref" in v for v in _nodes(compact)):
        return schema  # a reference left that is not a bare local one: list the schema as pydantic wrote it
    return compact


class _Recursive(Exception):
    """A definition that refers to itself: it cannot be written in place."""


def _nodes(node: Any) -> list[Any]:
    found: list[Any] = []
    stack = [node]
    while stack:
        item = stack.pop()
        found.append(item)
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return found


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
    update: dict[str, Any] = {
        "title": tool.title or title_of(tool.name),
        "description": prose(tool.description),
        "input_schema": schema,
    }
    if tool.output_schema is not None:
        update["output_schema"] = compact_schema(tool.output_schema)
    return tool.model_copy(update=update)


#: The JSON Schema keyword a 2026-07-28 tool puts on a property its ``Mcp-Param-*`` header mirrors.
X_MCP_HEADER_KEY = "x-mcp-header"


def declares_param_headers(schema: Any) -> bool:
    """Whether ``x-mcp-header`` appears anywhere in ``schema`` (as a key of any object, at any depth).

    Broader than the SDK's own walk (which enters only schema positions), so it never says no where the SDK
    would find an annotation."""
    return any(isinstance(node, dict) and X_MCP_HEADER_KEY in node for node in _nodes(schema))


class NotegateMCP(MCPServer):
    """The SDK's server, listing its tools polished (titles, prose, the policy's inbox kinds)."""

    def __init__(self, *args: Any, inbox_kinds: Sequence[str] = (), **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.inbox_kinds = tuple(inbox_kinds)
        self._param_headers: dict[str, tuple[object, bool]] = {}

    def _tool_input_schema(self, name: str) -> dict[str, Any] | None:
        """The schema the SDK's modern entry checks a ``tools/call``'s ``Mcp-Param-*`` headers against; None for
        a tool whose schema declares no such header.

        Why: on the 2026-07-28 wire the SDK walks the called tool's whole input schema twice on every call
        (once for invalid annotations, once for annotated properties), about 4 % of the server's profiled CPU
        per read_note, to find that no notegate tool declares a header.  With no ``x-mcp-header`` anywhere in
        the schema that walk cannot reject anything (an undeclared ``Mcp-Param-*`` header is ignored either
        way), and None makes the SDK skip it; a tool that declares one gets its schema and the full check.
        The answer is kept per tool and made again if the tool's schema object changes."""
        schema = super()._tool_input_schema(name)
        if schema is None:
            return None
        kept = self._param_headers.get(name)
        if kept is None or kept[0] is not schema:
            kept = (schema, declares_param_headers(schema))
            self._param_headers[name] = kept
        return schema if kept[1] else None

    async def list_tools(self) -> list[MCPTool]:
        return [polish(tool, self.inbox_kinds) for tool in await super().list_tools()]
