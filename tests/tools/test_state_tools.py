"""The tools gateway's rows (migration 6) on both backends: the statements of state/tools.py as PostgreSQL
runs them too, and what they promise (one mount per entry, account and environment; sealed values only;
approvals per listing digest; the audit)."""

from __future__ import annotations

from pathlib import Path

import pytest

from notegate.state import StateDB
from support.upstreams import TIME


@pytest.fixture
def state(tmp_path: Path, state_url: str):
    db = StateDB(tmp_path / "state.sqlite", url=state_url)
    yield db
    db.close()


def mount(name: str, account: str = "me", environment: str = "personal") -> dict[str, object]:
    return {
        "name": name,
        "catalog": "time",
        "account": account,
        "environment": environment,
        "variables": ("TOKEN",),
        "write_tools": ("write",),
        "created_at": 1.0,
    }


def test_the_tools_rows_round_trip(state: StateDB) -> None:
    assert state.tools_key("seal") is None
    state.set_tools_key("seal", "age1first", 1.0)
    state.set_tools_key("seal", "age1second", 2.0)
    assert state.tools_key("seal") == "age1second"
    assert state.add_tools_key_once("mint:a", "{}", 1.0) == "{}"
    assert state.add_tools_key_once("mint:a", "{other}", 2.0) == "{}"  # the first stays
    state.add_catalog_entry({"name": "time", **TIME, "created_at": 1.0})
    assert [r["package"] for r in state.catalog_entries()] == ["mcp-server-time"]
    state.add_mount(mount("clock"))
    with pytest.raises(Exception, match=r"(?i)unique|duplicate"):
        state.add_mount(mount("clock2"))  # the same entry, account and environment
    state.add_mount(mount("clock3", account="you"))
    assert [(m["name"], m["variables"], m["write_tools"]) for m in state.mounts()] == [
        ("clock", ("TOKEN",), ("write",)),
        ("clock3", ("TOKEN",), ("write",)),
    ]
    state.store_sealed_credential("clock", "TOKEN", "sealed-1", 1.0)
    state.store_sealed_credential("clock", "TOKEN", "sealed-2", 2.0)
    assert state.sealed_credentials("clock") == {"TOKEN": "sealed-2"}
    assert state.credential_names("clock") == ["TOKEN"]
    state.see_tool_listing("clock", "now", "d1", "{}", 1.0)
    state.see_tool_listing("clock", "now", "d1", "{}", 2.0)  # seen again: one row
    state.see_tool_listing("clock", "later", "d2", "{}", 1.0)
    assert [(r["tool"], r["digest"]) for r in state.pending_tools()] == [("later", "d2"), ("now", "d1")]
    assert state.approve_tools("clock", "owner", 3.0, tool="now") == 1
    assert state.approved_digests("clock") == {"now": {"d1"}}
    assert [r["tool"] for r in state.pending_tools("clock")] == ["later"]
    state.audit_tool_call(
        {
            "at": 4.0,
            "environment": "personal",
            "login": "owner",
            "connector": "token:x",
            "client": "phone",
            "tier": "restricted",
            "mount": "clock",
            "tool": "now",
            "outcome": "ok",
            "duration_ms": 1.5,
            "redacted": "",
        }
    )
    rows = state.tool_calls("clock")
    assert [(r["login"], r["connector"], r["outcome"]) for r in rows] == [("owner", "token:x", "ok")]
    assert state.remove_mount("clock", 5.0) == 1
    assert [m["name"] for m in state.mounts()] == ["clock3"] and state.sealed_credentials("clock") == {}
