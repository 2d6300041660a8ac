"""The output schemas tools/list answers are the models' own, in a form cheaper for clients to check.

The official client re-validates every structured result against the listed schema with ``jsonschema``; a
200-note list_notes cost it twice as much with pydantic's ``anyOf``/``$ref`` form (issue 15).  These tests
pin that the compact form accepts exactly the documents the original does (a hypothesis property over
near-valid documents for every tool), that nothing is left to resolve, and the cost ratio, measured
interleaved in CPU time (never an absolute time).
"""

from __future__ import annotations

import functools
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import exceptions, validators
from mcp import Client
from mcp.server.mcpserver.utilities.func_metadata import _inline_root_ref
from pydantic import TypeAdapter
from referencing import Registry

from notegate.config import load_config
from notegate.doors.mcp import CallerResolver, build_mcp
from notegate.doors.mcp.results import ListResult, NoteEntry, NoteRead, SearchResult, WriteResult
from notegate.doors.mcp.surface import compact_schema
from notegate.services.runtime import Runtime
from support.callers import make_caller

MODELS = [ListResult, NoteRead, SearchResult, WriteResult]
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.floats(allow_nan=False), st.text(max_size=5))


def original(model) -> dict[str, Any]:
    """The schema as the SDK derives it from a tool's return model (before the listing compacts it)."""
    return _inline_root_ref(TypeAdapter(model).json_schema())


def valid(schema: dict[str, Any], document: Any) -> bool:
    """What the SDK client decides (the same calls as its validate_tool_result)."""
    validator = validators.validator_for(schema)(schema, registry=Registry())
    return exceptions.best_match(validator.iter_errors(document)) is None


def near(schema: dict[str, Any], defs: dict[str, Any], depth: int = 0) -> st.SearchStrategy[Any]:
    """Documents close to ``schema``: right keys with right or wrong values, missing and extra keys."""
    if "$ref" in schema:
        schema = defs[schema["$ref"].removeprefix("#/$defs/")]
    if "anyOf" in schema:
        return st.one_of(*[near(b, defs, depth) for b in schema["anyOf"]], SCALARS)
    kind = schema.get("type")
    if kind == "object" and depth < 3:
        props = schema.get("properties", {})
        return st.fixed_dictionaries(
            {},
            optional={
                **{name: st.one_of(near(sub, defs, depth + 1), SCALARS) for name, sub in props.items()},
                "extra": SCALARS,
            },
        )
    if kind == "array" and depth < 3:
        return st.lists(st.one_of(near(schema.get("items", {}), defs, depth + 1), SCALARS), max_size=3)
    if "enum" in schema:
        return st.one_of(st.sampled_from(schema["enum"]), SCALARS)
    return SCALARS


@functools.cache
def _case(model) -> tuple[dict[str, Any], dict[str, Any], st.SearchStrategy[Any]]:
    """The model's schema, its compact form and the strategy of documents near it, made once per model: neither
    function changes its input, and deriving the three again for each example (pydantic's schema generation,
    a fresh strategy tree) was most of the property's time."""
    schema = original(model)
    return schema, compact_schema(schema), near(schema, schema.get("$defs", {}))


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.__name__)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_the_compact_schema_accepts_exactly_what_the_original_does(model, data) -> None:
    schema, compact, documents = _case(model)
    document = data.draw(documents)
    assert valid(compact, document) == valid(schema, document)


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.__name__)
def test_a_real_result_validates_under_both(model) -> None:
    samples = {
        ListResult: ListResult(folder="", notes=[{"path": "a.md", "revision": "absent"}]),
        NoteRead: NoteRead(path="a.md", text="x", revision="absent", last_change=None),
        SearchResult: SearchResult(query="q", hits=[{"path": "a.md", "snippet": "s", "score": 1.0}]),
        WriteResult: WriteResult(status="preview", message="m", path="a.md", base_revision="absent", diff=""),
    }
    document = samples[model].model_dump(mode="json")
    assert valid(original(model), document) and valid(compact_schema(original(model)), document)


@pytest.mark.anyio
async def test_tools_list_answers_compact_schemas(vault: Path) -> None:
    runtime = Runtime(load_config(vault))
    try:
        server = build_mcp(runtime, resolver=CallerResolver(fixed=make_caller()))
        async with Client(server) as client:
            tools = (await client.list_tools()).tools
    finally:
        runtime.close()
    schemas = {t.name: t.output_schema for t in tools if t.output_schema is not None}
    assert {"list_notes", "read_note", "search_notes", "write_note"} <= set(schemas)
    for name, schema in schemas.items():
        text = repr(schema)
        assert "$ref" not in text and "$defs" not in text, name
    notes = schemas["list_notes"]["properties"]["notes"]["items"]
    assert notes["properties"]["size"]["type"] == ["integer", "null"]
    assert notes["required"] == ["path", "revision"]


def test_a_recursive_definition_and_a_foreign_ref_are_listed_as_pydantic_wrote_them() -> None:
    recursive = {"$defs": {"N": {"type": "object", "properties": {"next": {"$ref": "#/$defs/N"}}}}, "$ref": "#/$defs/N"}
    assert compact_schema(recursive) == recursive
    nested = {"type": "object", "properties": {"n": {"$ref": "#/$defs/N"}}, "$defs": recursive["$defs"]}
    assert compact_schema(nested) == nested
    foreign = {"type": "object", "properties": {"x": {"$ref": "https://example.org/s.json"}}}
    assert compact_schema(foreign) == foreign


def _cpu(fn, loops: int) -> float:
    started = time.thread_time()
    for _ in range(loops):
        fn()
    return time.thread_time() - started


def test_the_compact_schema_halves_a_long_listing_for_the_client() -> None:
    """Interleaved CPU-time samples, best of each: the ratio, not an absolute time."""
    schema = original(ListResult)
    compact = compact_schema(schema)
    entries = [NoteEntry(path=f"n{i}.md", revision="a" * 40) for i in range(200)]
    document = ListResult(folder="", notes=entries).model_dump(mode="json")
    slow = validators.validator_for(schema)(schema, registry=Registry())
    fast = validators.validator_for(compact)(compact, registry=Registry())
    best_slow = best_fast = float("inf")
    for _ in range(5):
        best_slow = min(best_slow, _cpu(lambda: exceptions.best_match(slow.iter_errors(document)), 3))
        best_fast = min(best_fast, _cpu(lambda: exceptions.best_match(fast.iter_errors(document)), 3))
    assert best_fast < 0.75 * best_slow, (best_fast, best_slow)


@pytest.mark.anyio
async def test_no_tracing_span_is_made_per_message(vault: Path, monkeypatch) -> None:
    """The SDK's OpenTelemetry middleware is dropped (notegate installs no exporter; each no-op span cost ~3 %
    of the server's CPU under 32 writers): a tool call opens no span, and the call still answers."""
    import mcp.server._otel as otel

    spans: list[str] = []
    real = otel.otel_span

    def counting(*args, **kwargs):
        spans.append(kwargs.get("name", "?"))
        return real(*args, **kwargs)

    monkeypatch.setattr(otel, "otel_span", counting)
    runtime = Runtime(load_config(vault))
    try:
        server = build_mcp(runtime, resolver=CallerResolver(fixed=make_caller()))
        async with Client(server) as client:
            listed = await client.call_tool("list_notes", {"limit": 1})
    finally:
        runtime.close()
    assert not listed.is_error
    assert spans == []
