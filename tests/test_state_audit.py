"""The audit log's group commit: rows of calls that finish together share one transaction, and every call
returns only once a transaction holding its own row has committed (or raises that transaction's error)."""

from __future__ import annotations

import sqlite3
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

from notegate.state import StateDB


def _row(db: StateDB, i: int) -> None:
    db.audit(
        now=float(i), environment="personal", login="owner", client=f"c{i}", client_class="workstation",
        tier="trusted", session=None, tool="write_note", path=f"n{i}.md", outcome="ok", commit_id=f"{i:040x}",
    )  # fmt: skip


def _committed(path: Path, i: int) -> bool:
    """Seen by another connection: the row's transaction committed."""
    other = sqlite3.connect(path)
    try:
        return other.execute("SELECT count(*) FROM audit WHERE client = ?", (f"c{i}",)).fetchone()[0] == 1
    finally:
        other.close()


def _queued_behind_the_writer(db: StateDB, n: int) -> tuple[list[threading.Thread], list[BaseException | None]]:
    """``n`` threads whose rows wait in the queue while the test holds the writer lock."""
    errors: list[BaseException | None] = [None] * n

    def run(i: int) -> None:
        try:
            _row(db, i)
        except BaseException as exc:
            errors[i] = exc

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    deadline = time.monotonic() + 10
    while len(db._audit_queue) < n:
        assert time.monotonic() < deadline, "the rows never queued"
        time.sleep(0.001)
    return threads, errors


def test_every_audit_call_returns_after_its_own_row_committed(tmp_path: Path) -> None:
    db = StateDB(tmp_path / "state.sqlite")
    seen: list[bool] = [False] * 48

    def run(i: int) -> None:
        _row(db, i)
        seen[i] = _committed(tmp_path / "state.sqlite", i)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(48)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(seen)
    assert db.query("SELECT count(*) AS n FROM audit")[0]["n"] == 48
    db.close()


def test_rows_that_queue_together_share_one_transaction_in_queue_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = StateDB(tmp_path / "state.sqlite")
    transactions = 0
    original = db.tx

    @contextmanager
    def counted(claim=None):
        nonlocal transactions
        transactions += 1
        with original(claim) as conn:
            yield conn

    monkeypatch.setattr(db, "tx", counted)
    with db._audit_writer:  # an earlier batch still writing: these eight wait behind it
        threads, errors = _queued_behind_the_writer(db, 8)
        order = [row.values[3] for row in db._audit_queue]
    for t in threads:
        t.join()
    assert errors == [None] * 8
    assert transactions == 1
    assert [r["client"] for r in db.query("SELECT client FROM audit ORDER BY id")] == order
    db.close()


def test_a_failed_batch_fails_every_call_in_it_and_records_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = StateDB(tmp_path / "state.sqlite")

    @contextmanager
    def broken(claim=None):
        raise sqlite3.OperationalError("disk I/O error")
        yield  # pragma: no cover

    with db._audit_writer:
        threads, errors = _queued_behind_the_writer(db, 5)
        monkeypatch.setattr(db, "tx", broken)
    for t in threads:
        t.join()
    assert all(isinstance(e, sqlite3.OperationalError) for e in errors)
    monkeypatch.undo()
    assert db.query("SELECT count(*) AS n FROM audit")[0]["n"] == 0
    _row(db, 99)  # the next call starts a batch of its own
    assert db.query("SELECT count(*) AS n FROM audit")[0]["n"] == 1
    db.close()
