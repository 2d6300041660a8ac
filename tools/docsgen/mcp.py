"""The MCP tools reference, from the server's own ``tools/list`` and ``prompts/list`` answers.

Which server: the real one, ``notegate.doors.mcp.build_mcp`` over a throwaway ``notegate init --empty``
vault, asked through the official SDK's in-memory ``Client`` as a trusted workstation (the caller that sees
every tool). So the names, descriptions, argument schemas, annotations and output schemas on the page are
the bytes a client receives, not a copy of them (``tests/doors/mcp_surface.json`` pins the same answer)."""

from __future__ import annotations

import json
import tempfile
from functools import lru_cache
from pathlib import Path

from docsgen import GENERATED_NOTE, code, text


@lru_cache(maxsize=1)
def surface() -> dict:
    """``{"instructions", "tools", "prompts"}`` as a client lists them (JSON, by alias, no nulls)."""
    import anyio
    from mcp import Client

    from notegate.config import load_config
    from notegate.doors.mcp import CallerResolver, build_mcp
    from notegate.policy import Caller
    from notegate.services.runtime import Runtime
    from notegate.services.vaultinit import init_directory

    caller = Caller(login="owner", display_name="Owner", client="docs", client_class="workstation", tier="trusted")

    async def ask(runtime) -> dict:
        server = build_mcp(runtime, resolver=CallerResolver(fixed=caller))
        async with Client(server) as client:
            tools = (await client.list_tools()).tools
            prompts = (await client.list_prompts()).prompts

        def dump(model) -> dict:
            return model.model_dump(mode="json", by_alias=True, exclude_none=True)

        return {
            "instructions": server.instructions,
            "tools": [dump(t) for t in tools],
            "prompts": [dump(p) for p in prompts],
        }

    with tempfile.TemporaryDirectory(prefix="notegate-docs-") as folder:
        runtime = Runtime(load_config(init_directory(Path(folder) / "vault", empty=True)))
        try:
            return anyio.run(ask, runtime)
        finally:
            runtime.close()


def _type(schema: dict) -> str:
    if "anyOf" in schema:
        return " or ".join(_type(s) for s in schema["anyOf"])
    kind = schema.get("type", "any")
    if isinstance(kind, list):
        return " or ".join(kind)
    if kind == "array" and "items" in schema:
        return f"array of {_type(schema['items'])}"
    if "enum" in schema:
        return " | ".join(json.dumps(v) for v in schema["enum"])
    return kind


_HINTS = {
    "readOnlyHint": "read-only",
    "destructiveHint": "destructive",
    "idempotentHint": "idempotent",
    "openWorldHint": "open world",
}


def page() -> str:
    found = surface()
    out = [
        "# MCP tools",
        "",
        GENERATED_NOTE.format(source="the `tools/list` and `prompts/list` answers of the real server"),
        "The server's instructions, sent to every client at `initialize`:",
        "",
        "> " + text(found["instructions"]),
        "",
        "Every tool takes `environment` (omit it), `handle` (hosted clients: what `session_start` returned) and "
        "`grant` (after an approved `request_elevation`). Every refusal is a tool error reading "
        '"Refused [rule]: …" ([refusals](refusals.md)).',
        "",
    ]
    for tool in found["tools"]:
        out += [f"## {tool['name']}", ""]
        if tool.get("title"):
            out += [f"**{text(tool['title'])}**", ""]
        out += [text(tool.get("description", "")), ""]
        hints = tool.get("annotations", {})
        flags = [f"{label}: {code(json.dumps(hints[key]))}" for key, label in _HINTS.items() if key in hints]
        if flags:
            out += ["Annotations: " + ", ".join(flags) + ".", ""]
        schema = tool["inputSchema"]
        required = set(schema.get("required", []))
        properties = schema.get("properties", {})
        if properties:
            out += ["| argument | type | default | what |", "| --- | --- | --- | --- |"]
            for name, spec in properties.items():
                default = "**required**" if name in required else code(json.dumps(spec.get("default")))
                out.append(f"| {code(name)} | {text(_type(spec))} | {default} | {text(spec.get('description', ''))} |")
            out.append("")
        if "outputSchema" in tool:
            out += [
                '??? info "Output schema"',
                "",
                "    ```json",
                *("    " + line for line in json.dumps(tool["outputSchema"], indent=2).splitlines()),
                "    ```",
                "",
            ]
    out += ["## Prompts", ""]
    for prompt in found["prompts"]:
        out += [f"- {code(prompt['name'])}: {text(prompt.get('description', ''))}"]
    return "\n".join(out) + "\n"


def facts() -> list[tuple[str, list[str]]]:
    found = []
    for tool in surface()["tools"]:
        strings = [tool["name"], tool.get("description", "")]
        for name, spec in tool["inputSchema"].get("properties", {}).items():
            strings += [name, spec.get("description", "")]
        found.append((tool["name"], strings))
    for prompt in surface()["prompts"]:
        found.append((prompt["name"], [prompt["name"], prompt.get("description", "")]))
    return found
