"""The event log's record and the commit message's trailer values, made without the per-call work they used to
repeat (the logger's stack walk, a character-by-character rebuild): the same lines and values as before."""

from __future__ import annotations

import logging

import pytest
from hypothesis import given
from hypothesis import strategies as st

from notegate.services import eventlog
from notegate.services.notes import _trailer_value


def _reference_trailer_value(value: str) -> str:
    """The former spelling, every character judged on its own."""
    cleaned = "".join(ch if ch.isprintable() else " " for ch in value).strip()
    return cleaned[:120] or "-"


@given(st.text())
def test_a_trailer_value_is_what_it_always_was(value: str) -> None:
    assert _trailer_value(value) == _reference_trailer_value(value)


def test_a_trailer_value_stays_one_printable_line() -> None:
    assert _trailer_value("Ann\nNotegate-Tier: trusted") == "Ann Notegate-Tier: trusted"
    assert _trailer_value(" \t\x00 ") == "-"


def test_an_event_is_one_record_with_its_line_and_fields(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="notegate.events"):
        eventlog.event("commit", environment="personal", path="a b.md", paths=1, commit=None)
    (record,) = [r for r in caplog.records if r.name == "notegate.events"]
    assert record.levelno == logging.INFO
    assert record.getMessage() == 'commit environment=personal path="a b.md" paths=1'
    assert record.event == "commit"  # type: ignore[attr-defined]
    assert record.fields == {"environment": "personal", "path": "a b.md", "paths": 1}  # type: ignore[attr-defined]


def test_a_silenced_log_still_feeds_the_listeners(caplog: pytest.LogCaptureFixture) -> None:
    heard: list[tuple[str, dict]] = []
    stop = eventlog.listen(lambda name, fields: heard.append((name, fields)))
    try:
        with caplog.at_level(logging.WARNING, logger="notegate.events"):
            eventlog.event("tool", tool="write_note", outcome="ok")
    finally:
        stop()
    assert not [r for r in caplog.records if r.name == "notegate.events"]
    assert heard == [("tool", {"tool": "write_note", "outcome": "ok"})]
