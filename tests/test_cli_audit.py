"""`notegate audit` as the owner runs it: the audit rows real service calls left, filtered, never contents."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from notegate.cli import parse_since
from notegate.config import load_config
from notegate.errors import NotegateError, StaleRevision
from notegate.services.notes import NotesService
from notegate.services.runtime import Runtime
from notegate.vault.store import ABSENT
from support import notegate
from support.callers import make_caller

LAPTOP = make_caller(tier="trusted", client_class="workstation", login="owner", client="laptop")
PHONE = make_caller(tier="restricted", client_class="hosted", login="owner", client="phone")
SECRET_TEXT = "a sentence only the note holds"


def audit(vault: Path, *args: str, real: bool = False) -> subprocess.CompletedProcess:
    return notegate("audit", "--config", str(vault), *args, timeout=120, real=real)


@pytest.fixture
def calls(vault: Path) -> Path:
    """Three calls through the notes service, as the doors make them: a write, a read, a stale write."""
    runtime = Runtime(load_config(vault))
    try:
        notes = NotesService(runtime)
        made = notes.write_note(LAPTOP, "projects/alpha.md", f"# Alpha\n\n{SECRET_TEXT}\n", ABSENT, confirmed=True)
        notes.read_note(PHONE, "projects/alpha.md")
        with pytest.raises(StaleRevision):
            notes.write_note(LAPTOP, "projects/alpha.md", "# Other\n", "0" * 40, confirmed=True)
        assert made.commit
    finally:
        runtime.close()
    return vault


def test_audit_lists_the_calls_and_filters_them(calls: Path) -> None:
    everything = audit(calls, "--json", real=True)
    assert everything.returncode == 0, everything.stderr
    rows = json.loads(everything.stdout)
    assert [(r["client"], r["tool"], r["path"], r["outcome"]) for r in rows] == [
        ("laptop", "write_note", "projects/alpha.md", "ok"),
        ("phone", "read_note", "projects/alpha.md", "ok"),
        ("laptop", "write_note", "projects/alpha.md", "stale-revision"),
    ]
    assert rows[0]["commit_id"] and SECRET_TEXT not in everything.stdout
    phone = json.loads(audit(calls, "--connector", "phone", "--json").stdout)
    assert [r["tool"] for r in phone] == ["read_note"]
    refused = json.loads(audit(calls, "--outcome", "stale-revision", "--json").stdout)
    assert len(refused) == 1 and refused[0]["client"] == "laptop"
    folder = json.loads(audit(calls, "--path", "projects", "--tool", "write_note", "--json").stdout)
    assert len(folder) == 2
    assert json.loads(audit(calls, "--path", "project", "--json").stdout) == []  # a folder, never a prefix
    assert len(json.loads(audit(calls, "--since", "1h", "--json").stdout)) == 3
    assert json.loads(audit(calls, "--since", "2999-01-01", "--json").stdout) == []


def test_audit_prints_one_line_per_row(calls: Path) -> None:
    text = audit(calls, "--limit", "1")
    assert text.returncode == 0, text.stderr
    header, line = text.stdout.splitlines()
    assert header == "time (UTC)  environment  client (person)  tool  path  outcome  [commit]"
    assert line.endswith("  personal  laptop (owner)  write_note  projects/alpha.md  stale-revision"), line


def test_a_bad_since_is_refused_with_its_rule(vault: Path) -> None:
    bad = audit(vault, "--since", "yesterday")
    assert bad.returncode == 1
    assert "Refused [bad-argument]: --since 'yesterday' is neither a duration nor a date." in bad.stderr


def test_parse_since_reads_durations_and_dates() -> None:
    now = 1_800_000_000.0
    assert parse_since("30m", now) == now - 1800
    assert parse_since("2h", now) == now - 7200
    assert parse_since("7d", now) == now - 7 * 86400
    assert parse_since("2026-12-01", now) == time.mktime((2026, 12, 1, 0, 0, 0, 0, 0, 0)) - time.timezone
    assert parse_since("2026-12-01T10:00+01:00", now) == parse_since("2026-12-01T09:00", now)


@given(st.text(max_size=60))
def test_parse_since_answers_a_time_or_bad_argument(raw: str) -> None:
    try:
        assert isinstance(parse_since(raw, 1_800_000_000.0), float)
    except NotegateError as exc:
        assert exc.rule == "bad-argument"


def test_an_inbox_write_is_audited_as_inbox_write(vault: Path) -> None:
    """The inbox writes through the notes service; its audit row names the tool the caller called."""
    from notegate.services.container import Services

    runtime = Runtime(load_config(vault))
    try:
        Services.build(runtime).inbox.inbox_write(PHONE, "capture", "an idea", title="idea")
    finally:
        runtime.close()
    rows = json.loads(audit(vault, "--json").stdout)
    assert [(r["client"], r["tool"], r["outcome"]) for r in rows] == [("phone", "inbox_write", "ok")]
    assert audit(vault, "--tool", "write_note").stdout == ""
