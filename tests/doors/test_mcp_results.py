"""The door's result models mirror the services' plain results, field for field, and the services stay free
of the wire shape (no pydantic, no MCP).

Why: the services return dataclasses and the door converts them by attribute (``to_result``); a field
added to one side and not the other would vanish from a tool's answer or fail every call.
"""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pytest

from notegate.doors.mcp import results
from notegate.services import inbox, notes, sessions

PAIRS = [
    (notes.NoteEntry, results.NoteEntry),
    (notes.ListResult, results.ListResult),
    (notes.ChangeInfo, results.ChangeInfo),
    (notes.NoteRead, results.NoteRead),
    (notes.SearchHit, results.SearchHit),
    (notes.SearchResult, results.SearchResult),
    (notes.WriteResult, results.WriteResult),
    (notes.HistoryResult, results.HistoryResult),
    (inbox.InboxItem, results.InboxItem),
    (inbox.InboxList, results.InboxList),
    (inbox.ReviewResult, results.ReviewResult),
    (sessions.SessionStartResult, results.SessionStartResult),
]
SERVICES = Path(notes.__file__).parent


@pytest.mark.parametrize(("plain", "model"), PAIRS, ids=lambda c: c.__name__)
def test_each_model_mirrors_its_service_result(plain: type, model: type) -> None:
    assert plain.__name__ == model.__name__  # the name is in the tool's output schema
    assert [f.name for f in dataclasses.fields(plain)] == [n for n in model.model_fields if n != "notice"]


def test_conversion_reads_nested_values_by_attribute() -> None:
    change = notes.ChangeInfo(commit="c", date="d", author="a", login="l", summary="s")
    read = notes.NoteRead(path="a.md", text="t", revision="r", last_change=change)
    converted = results.to_result(results.NoteRead, read)
    assert converted.last_change is not None and converted.last_change.summary == "s"
    assert converted.notice is None and converted.model_dump()["quarantined"] is False


@pytest.mark.parametrize("path", sorted(SERVICES.glob("*.py")), ids=lambda p: p.name)
def test_services_do_not_know_the_wire_shape(path: Path) -> None:
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom | ast.Import):
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) else [a.name for a in node.names]
            for name in names:
                assert name.split(".")[0] not in {"pydantic", "mcp", "mcp_types"}, f"{path.name} imports {name}"
