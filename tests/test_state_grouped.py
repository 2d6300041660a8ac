"""Audit rows of calls that end at once share one transaction (state/grouped.py), with each call's own
outcome: it returns only once its own row is committed, and a row that cannot be written fails its own call
alone."""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from notegate.state import StateDB

WRITERS = 16


@pytest.fixture
def db(tmp_path: Path, state_url: str):
    state = StateDB(tmp_path / "state.sqlite", url=state_url)
    yield state
    state.close()


def _audit(db: StateDB, path: str) -> None:
    db.audit(
        now=1.0,
        environment="personal",
        login="owner",
        client="laptop",
        client_class="workstation",
        tier="trusted",
        session="s",
        tool="write_note",
        path=path,
        outcome="ok",
    )


def _at_once(db: StateDB, paths: Sequence[str]) -> dict[str, BaseException | bool]:
    """Each path's audit call in its own thread, started together: per path, the error its call raised, or
    whether its row was readable (from the same thread) as soon as the call returned."""
    start = threading.Barrier(len(paths))
    seen: dict[str, BaseException | bool] = {}

    def run(path: str) -> None:
        start.wait()
        try:
            _audit(db, path)
        except BaseException as exc:  # handed to the test
            seen[path] = exc
            return
        seen[path] = bool(db.query("SELECT 1 FROM audit WHERE path = ?", (path,)))

    threads = [threading.Thread(target=run, args=(p,)) for p in paths]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    return seen


def test_audit_rows_written_at_once_share_transactions_and_each_call_sees_its_row(db, monkeypatch) -> None:
    groups: list[int] = []
    insert = db._insert_audit

    def slow_insert(rows: Sequence[tuple[Any, ...]]) -> None:
        time.sleep(0.02)  # the others arrive meanwhile (a WAL sync's time, made longer)
        groups.append(len(rows))
        insert(rows)

    monkeypatch.setattr(db, "_insert_audit", slow_insert)
    paths = [f"notes/{i}.md" for i in range(WRITERS)]
    seen = _at_once(db, paths)
    assert seen == dict.fromkeys(paths, True)
    assert sum(groups) == WRITERS
    assert len(groups) < WRITERS  # 16 rows, fewer transactions
    assert sorted(r["path"] for r in db.query("SELECT path FROM audit")) == sorted(paths)


def test_a_row_that_cannot_be_written_fails_its_own_call_alone(db, monkeypatch) -> None:
    insert = db._insert_audit

    def failing_insert(rows: Sequence[tuple[Any, ...]]) -> None:
        time.sleep(0.02)
        if any("bad.md" in row for row in rows):
            raise sqlite3.OperationalError("database or disk is full")
        insert(rows)

    monkeypatch.setattr(db, "_insert_audit", failing_insert)
    paths = [f"notes/{i}.md" for i in range(WRITERS - 1)] + ["bad.md"]
    seen = _at_once(db, paths)
    assert isinstance(seen.pop("bad.md"), sqlite3.OperationalError)
    assert seen == dict.fromkeys(paths[:-1], True)
    assert sorted(r["path"] for r in db.query("SELECT path FROM audit")) == sorted(paths[:-1])
