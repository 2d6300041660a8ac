"""Every tool hands every argument to its service by keyword, under the service parameter's own name.

Why: the door used to forward by position, so reordering a service's parameters would have silently passed
``limit`` as ``recursive``.  Each service method is replaced by a recorder with the real method's signature;
every tool is called through the in-memory SDK client with every argument set to a non-default value; the
recorder must see the caller alone by position and exactly those values by keyword, and the real
signature must accept them.  A renamed or reordered parameter the door did not follow fails here.
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.server import MCPServer
from mcp.server.mcpserver import Context

from notegate.auth.grants import Grants
from notegate.config import load_config
from notegate.doors.mcp import CallerResolver, build_mcp, tools_elevation, tools_inbox, tools_notes, tools_sessions
from notegate.doors.mcp.forwarding import ToolSet
from notegate.doors.mcp.results import NoteRead
from notegate.errors import NotegateError
from notegate.services.container import Services
from notegate.services.elevation import ElevationService
from notegate.services.runtime import Runtime
from support.callers import make_caller

pytestmark = pytest.mark.anyio

REV = "0123456789abcdef0123456789abcdef01234567"
ENV = "elsewhere"

#: tool -> (service, method, every argument with a value no default has; ``handle`` is the door's own).
TOOLS: dict[str, tuple[str, str, dict[str, Any]]] = {
    "list_notes": (
        "notes",
        "list_notes",
        {"folder": "projects", "recursive": False, "limit": 7, "cursor": "projects/a.md", "environment": ENV},
    ),
    "read_note": ("notes", "read_note", {"path": "projects/a.md", "environment": ENV}),
    "search_notes": (
        "notes",
        "search_notes",
        {"query": "pelican", "folder": "ideas", "limit": 3, "include_inbox": True, "environment": ENV},
    ),
    "write_note": (
        "notes",
        "write_note",
        {
            "path": "ideas/a.md",
            "content": "text\n",
            "base_revision": REV,
            "confirmed": True,
            "allow_secret": True,
            "environment": ENV,
        },
    ),
    "append_note": (
        "notes",
        "append_note",
        {
            "path": "ideas/a.md",
            "text": "more\n",
            "base_revision": REV,
            "confirmed": True,
            "allow_secret": True,
            "environment": ENV,
        },
    ),
    "move_note": (
        "notes",
        "move_note",
        {"path": "ideas/a.md", "new_path": "ideas/b.md", "base_revision": REV, "confirmed": True, "environment": ENV},
    ),
    "delete_note": (
        "notes",
        "delete_note",
        {"path": "ideas/a.md", "base_revision": REV, "confirmed": True, "environment": ENV},
    ),
    "note_history": ("notes", "note_history", {"path": "ideas/a.md", "limit": 5, "environment": ENV}),
    "restore_note": (
        "notes",
        "restore_note",
        {
            "path": "ideas/a.md",
            "commit": "abcdef1",
            "base_revision": REV,
            "confirmed": True,
            "allow_secret": True,
            "environment": ENV,
        },
    ),
    "read_attachment": ("notes", "read_attachment", {"path": "images/a.png", "environment": ENV}),
    "write_attachment": (
        "notes",
        "write_attachment",
        {
            "path": "images/a.png",
            "content_base64": "iVBORw0KGgo=",
            "base_revision": REV,
            "confirmed": True,
            "environment": ENV,
        },
    ),
    "inbox_write": (
        "inbox",
        "inbox_write",
        {"kind": "decision", "text": "use x", "project": "p", "title": "a title", "environment": ENV},
    ),
    "list_inbox": ("inbox", "list_inbox", {"environment": ENV}),
    "promote_inbox": ("inbox", "promote_inbox", {"item": "inbox/log/p.md", "version": REV, "environment": ENV}),
    "hold_inbox": (
        "inbox",
        "hold_inbox",
        {"item": "inbox/log/p.md", "version": REV, "reason": "why", "environment": ENV},
    ),
    "session_start": ("sessions", "start", {"project": "p", "branch": "dev", "environment": ENV}),
    "request_elevation": ("elevation", "request_elevation", {"reason": "why", "environment": ENV}),
}
#: What the door adds of its own (from the request, never from the model's arguments).
DOOR_ADDS: dict[str, dict[str, Any]] = {"request_elevation": {"conversation": None}}


class Recorded(NotegateError):
    """Raised by a recorder once it has seen a call: the tool then answers with a readable refusal."""


def recorder(method, calls: list) -> Any:
    signature = inspect.signature(method)

    def record(*args: Any, **kwargs: Any) -> Any:
        calls.append((args, kwargs))
        signature.bind(*args, **kwargs)  # a keyword the real method does not take is a crash, not a refusal
        raise Recorded("recorded", rule="bad-argument")

    return record


@pytest.fixture
def services(vault: Path):
    runtime = Runtime(load_config(vault))
    yield Services.build(runtime)
    runtime.close()


async def test_every_tool_forwards_every_argument_by_keyword(services: Services, monkeypatch) -> None:
    calls: dict[str, list] = {}
    runtime = services.runtime
    elevation = ElevationService(Grants(runtime.state, runtime.policy), base="http://x", clock=runtime.clock)
    for tool, (service, method, _) in TOOLS.items():
        target = elevation if service == "elevation" else getattr(services, service)
        calls[tool] = []
        monkeypatch.setattr(target, method, recorder(getattr(target, method), calls[tool]))
    caller = make_caller()
    server = build_mcp(services, resolver=CallerResolver(fixed=caller), elevation=elevation)
    async with Client(server) as client:
        listed = {t.name: t for t in (await client.list_tools()).tools}
        assert set(listed) == set(TOOLS), "a new tool needs a line in TOOLS"
        for tool, (_, _, sent) in TOOLS.items():
            schema = set(listed[tool].input_schema["properties"]) - {"handle", "grant"}  # the door's own
            assert schema == set(sent), f"{tool}: set every argument to a non-default value"
            result = await client.call_tool(tool, sent)
            assert result.is_error and "Refused [bad-argument]" in result.content[0].text, (tool, result.content)
            assert calls[tool] == [((caller,), {**sent, **DOOR_ADDS.get(tool, {})})], tool


def test_the_recorder_catches_a_renamed_parameter(services: Services) -> None:
    """The check above can fail: a keyword the service no longer takes is caught by the signature."""
    calls: list = []
    record = recorder(services.notes.read_note, calls)
    with pytest.raises(TypeError):
        record(make_caller(), note_path="a.md", environment=None)
    with pytest.raises(Recorded):
        record(make_caller(), path="a.md", environment=None)


def test_a_forwarded_tool_needs_its_service_method() -> None:
    """A tool declared for a method its service lacks fails when the server is built, not at its first call."""
    tools = ToolSet()

    @tools.forward(None)  # type: ignore[arg-type]
    async def read_note(ctx: Context) -> NoteRead:
        """Never registered."""

    with pytest.raises(TypeError, match="read_note"):
        tools.register(MCPServer(name="t"), None, object())  # type: ignore[arg-type]


def test_every_tool_is_declared_at_module_level() -> None:
    """Each tool is addressable by its name in its module (``tools_notes.write_note``), as declared."""
    modules = (tools_notes, tools_inbox, tools_sessions, tools_elevation)
    declared = {d.declaration.__name__: module for module in modules for d in module.TOOLS.declared}
    assert set(declared) == set(TOOLS)
    for name, module in declared.items():
        assert getattr(module, name).__qualname__ == name, name
