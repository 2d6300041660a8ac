"""The state database on real SQLite files: migration, previews, quota reservations, notices, handles, holds,
and what it must never hold (note contents, tokens, session handles)."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from notegate.auth.tokens import create_token, verify_token
from notegate.config import load_config
from notegate.services.inbox import InboxService
from notegate.services.notes import NotesService
from notegate.services.runtime import Runtime
from notegate.services.sessions import SessionsService
from notegate.state import MIGRATIONS, StateDB

OLD_INBOX_PARTS = """
CREATE TABLE inbox_parts (
    id INTEGER PRIMARY KEY,
    environment TEXT NOT NULL,
    path TEXT NOT NULL,
    login TEXT NOT NULL,
    client TEXT NOT NULL,
    at REAL NOT NULL,
    commit_id TEXT NOT NULL,
    op TEXT NOT NULL
);
"""


@pytest.fixture
def db(tmp_path: Path, state_url: str):
    state = StateDB(tmp_path / "state.sqlite", url=state_url)
    yield state
    state.close()


def part(db: StateDB, path: str, connector: str = "token:a", at: float = 1.0) -> None:
    db.record_inbox_part(
        environment="personal",
        path=path,
        login="owner",
        client="phone",
        connector=connector,
        at=at,
        commit_id="c" * 40,
        op="inbox_write",
    )


# ------------------------------------------------------------------ migration
def test_an_old_inbox_parts_table_gains_the_connector_column(tmp_path: Path) -> None:
    path = tmp_path / "state.sqlite"
    old = sqlite3.connect(path)
    old.executescript(OLD_INBOX_PARTS)
    old.execute(
        "INSERT INTO inbox_parts (environment, path, login, client, at, commit_id, op)"
        " VALUES ('personal', 'inbox/log/x.md', 'owner', 'phone', 5.0, 'abc', 'inbox_write')"
    )
    old.commit()
    old.close()
    db = StateDB(path)
    try:
        columns = [row[1] for row in db.query("PRAGMA table_info(inbox_parts)")]
        assert columns[-1] == "connector"
        assert db.migrations() == sorted(MIGRATIONS)  # a file from before schema_migrations records what it now has
        (row,) = db.inbox_parts("personal", "inbox/log/x.md")
        assert (row["login"], row["client"], row["at"], row["connector"]) == ("owner", "phone", 5.0, "")
        part(db, "inbox/log/x.md", connector="token:new")
        assert [r["connector"] for r in db.inbox_parts("personal", "inbox/log/x.md")] == ["", "token:new"]
    finally:
        db.close()
    again = StateDB(path)  # opening a migrated file again changes nothing
    try:
        columns = [row[1] for row in again.query("PRAGMA table_info(inbox_parts)")]
        assert columns.count("connector") == 1
        assert len(again.inbox_parts("personal", "inbox/log/x.md")) == 2
    finally:
        again.close()


# ------------------------------------------------------------------- previews
def test_a_preview_is_taken_once(db: StateDB) -> None:
    db.remember_preview("k", expires_at=110.0, now=100.0)
    assert db.take_preview("k", now=105.0) is True
    assert db.take_preview("k", now=105.0) is False


def test_a_preview_is_good_until_its_expiry_inclusive(db: StateDB) -> None:
    db.remember_preview("edge", expires_at=110.0, now=100.0)
    assert db.take_preview("edge", now=110.0) is True


def test_an_expired_preview_is_refused_and_consumed(db: StateDB) -> None:
    db.remember_preview("k", expires_at=110.0, now=100.0)
    assert db.take_preview("k", now=110.5) is False
    assert db.query("SELECT count(*) FROM previews")[0][0] == 0


def test_an_unknown_preview_is_refused(db: StateDB) -> None:
    db.remember_preview("k", expires_at=110.0, now=100.0)
    assert db.take_preview("other", now=100.0) is False
    assert db.take_preview("k", now=100.0) is True


def test_remembering_a_preview_purges_expired_ones(db: StateDB) -> None:
    db.remember_preview("old", expires_at=110.0, now=100.0)
    db.remember_preview("live", expires_at=150.0, now=100.0)
    db.remember_preview("new", expires_at=300.0, now=200.0)
    assert sorted(r["key"] for r in db.query("SELECT key FROM previews")) == ["new"]


def test_remembering_the_same_preview_again_renews_it(db: StateDB) -> None:
    db.remember_preview("k", expires_at=110.0, now=100.0)
    db.remember_preview("k", expires_at=210.0, now=105.0)
    assert db.take_preview("k", now=200.0) is True


# -------------------------------------------------------------- write quota
def test_reserve_write_counts_writes_and_bytes_in_the_window(db: StateDB) -> None:
    seen: list[tuple[int, int]] = []

    def fits(writes: int, used: int) -> bool:
        seen.append((writes, used))
        return writes < 2

    first = db.reserve_write(connector="token:a", now=100.0, window=60.0, size=10, fits=fits)
    second = db.reserve_write(connector="token:a", now=110.0, window=60.0, size=20, fits=fits)
    third = db.reserve_write(connector="token:a", now=120.0, window=60.0, size=5, fits=fits)
    assert first.id is not None and second.id is not None
    assert (third.id, third.writes, third.bytes, third.retry_at) == (None, 2, 30, 160.0)
    assert seen == [(0, 0), (1, 10), (2, 30)]
    other = db.reserve_write(connector="token:b", now=120.0, window=60.0, size=5, fits=fits)
    assert (other.id is not None, other.writes, other.bytes) == (True, 0, 0)  # each connector has its own
    later = db.reserve_write(connector="token:a", now=161.0, window=60.0, size=5, fits=fits)
    assert (later.id is not None, later.writes, later.bytes) == (True, 1, 20)  # the first left the window


def test_release_write_frees_the_slot(db: StateDB) -> None:
    def fits(writes: int, _used: int) -> bool:
        return writes < 1

    taken = db.reserve_write(connector="token:a", now=100.0, window=60.0, size=10, fits=fits)
    assert db.reserve_write(connector="token:a", now=101.0, window=60.0, size=10, fits=fits).id is None
    db.release_write(taken.id)
    again = db.reserve_write(connector="token:a", now=102.0, window=60.0, size=10, fits=fits)
    assert (again.id is not None, again.writes, again.bytes) == (True, 0, 0)


@pytest.mark.parametrize(("threads", "limit"), [(12, 5), (8, 1)])
def test_reserve_write_is_atomic_under_threads(db: StateDB, threads: int, limit: int) -> None:
    barrier = threading.Barrier(threads)
    results: list[int | None] = []
    errors: list[BaseException] = []
    lock = threading.Lock()

    def fits(writes: int, _used: int) -> bool:
        return writes < limit

    def work() -> None:
        try:
            barrier.wait()
            reservation = db.reserve_write(connector="token:a", now=100.0, window=60.0, size=1, fits=fits)
            with lock:
                results.append(reservation.id)
        except BaseException as exc:  # reported below
            errors.append(exc)
        finally:
            db.close()  # this thread's connection

    workers = [threading.Thread(target=work) for _ in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(timeout=60)
    assert errors == []
    assert len(results) == threads
    assert sum(r is not None for r in results) == limit
    assert db.query("SELECT count(*) FROM write_usage")[0][0] == limit


# ------------------------------------------------------------------- notices
def test_notice_due_rhythm(db: StateDB) -> None:
    def due(count: int, now: float, client: str = "phone") -> bool:
        return db.notice_due(environment="personal", login="owner", client=client, count=count, now=now, interval=100)

    assert due(0, 0.0) is False  # nothing waiting: nothing to say
    assert due(3, 10.0) is True  # first time something waits
    assert due(3, 50.0) is False  # same count, inside the interval
    assert due(3, 109.0) is False
    assert due(3, 110.0) is True  # the interval passed since the last notice
    assert due(3, 150.0) is False
    assert due(4, 151.0) is True  # the count changed: tell at once
    assert due(3, 152.0) is True  # changed again (down)
    assert due(3, 153.0, client="laptop") is True  # each client is told on its own
    assert due(0, 160.0) is False  # emptied
    assert due(3, 161.0) is True  # and back: the count changed


# ------------------------------------------------------------ session handles
def test_a_session_handle_lives_while_used(db: StateDB) -> None:
    db.create_handle(
        handle_hash="h1", session_id="s1", login="owner", client="laptop", environment="personal", project="p", now=0.0
    )
    row = db.touch_handle("h1", now=90.0, idle_seconds=100.0)
    assert (row["session_id"], row["login"], row["client"], row["project"]) == ("s1", "owner", "laptop", "p")
    assert db.touch_handle("h1", now=189.0, idle_seconds=100.0) is not None  # renewed at 90
    assert db.touch_handle("nope", now=189.0, idle_seconds=100.0) is None


def test_an_idle_session_handle_expires_and_is_deleted(db: StateDB) -> None:
    db.create_handle(
        handle_hash="h1", session_id="s1", login="owner", client="laptop", environment="personal", project=None, now=0.0
    )
    assert db.touch_handle("h1", now=100.5, idle_seconds=100.0) is None
    assert db.query("SELECT count(*) FROM session_handles")[0][0] == 0
    assert db.touch_handle("h1", now=100.6, idle_seconds=1e9) is None  # gone for good


# ---------------------------------------------------------------------- holds
def test_holds_set_replace_and_drop(db: StateDB) -> None:
    db.set_hold(environment="personal", path="inbox/log/a.md", version="v1", reason="r1", reviewer="rev", at=1.0)
    db.set_hold(environment="personal", path="inbox/log/b.md", version="v1", reason="r", reviewer="rev", at=1.0)
    db.set_hold(environment="household", path="inbox/log/a.md", version="v9", reason="r", reviewer="rev", at=1.0)
    db.set_hold(environment="personal", path="inbox/log/a.md", version="v2", reason="r2", reviewer="rev", at=2.0)
    holds = db.holds("personal")
    assert list(holds) == ["inbox/log/a.md", "inbox/log/b.md"]
    assert (holds["inbox/log/a.md"]["version"], holds["inbox/log/a.md"]["reason"]) == ("v2", "r2")
    db.drop_hold("personal", "inbox/log/a.md")
    assert list(db.holds("personal")) == ["inbox/log/b.md"]
    assert list(db.holds("household")) == ["inbox/log/a.md"]


def test_forgetting_an_item_drops_its_parts_and_hold(db: StateDB) -> None:
    part(db, "inbox/log/a.md")
    part(db, "inbox/log/b.md")
    db.set_hold(environment="personal", path="inbox/log/a.md", version="v", reason="r", reviewer="rev", at=1.0)
    db.forget_inbox_item("personal", "inbox/log/a.md")
    assert db.inbox_parts("personal", "inbox/log/a.md") == []
    assert db.holds("personal") == {}
    assert len(db.inbox_parts("personal", "inbox/log/b.md")) == 1


def test_copying_parts_carries_every_author(db: StateDB) -> None:
    part(db, "inbox/log/a.md", connector="token:a", at=1.0)
    part(db, "inbox/log/a.md", connector="token:b", at=2.0)
    db.copy_inbox_parts("personal", "inbox/log/a.md", "inbox/log/c.md")
    assert [r["connector"] for r in db.inbox_parts("personal", "inbox/log/c.md")] == ["token:a", "token:b"]
    assert len(db.inbox_parts("personal", "inbox/log/a.md")) == 2


# ----------------------------------------------------------- what it never holds
def test_the_database_never_holds_note_contents_tokens_or_handles(vault: Path) -> None:
    now = [1_700_000_000.0]
    config = load_config(vault)
    rt = Runtime(config, clock=lambda: now[0])
    notes = NotesService(rt)
    inbox = InboxService(notes)
    token, record = create_token(rt.state, name="phone", client_class="hosted", tier=None, login="owner", now=now[0])
    caller = verify_token(rt.state, token).caller(session="s")
    trusted_token, _ = create_token(
        rt.state, name="laptop", client_class="workstation", tier="trusted", login="owner", now=now[0]
    )
    trusted = verify_token(rt.state, trusted_token).caller(session="t")
    notes.write_note(trusted, "ideas/marker.md", "ZEBRAFISH-BODY-7f3a\n", "absent", confirmed=True)
    inbox.inbox_write(caller, "capture", "QUOKKA-INBOX-91c2\n", title="quokka")
    notes.search_notes(trusted, "ZEBRAFISH")
    started = SessionsService(notes, inbox).start(trusted, project="notegate")
    assert started.handle
    rt.close()
    data = b"".join(p.read_bytes() for p in config.state_dir.glob("state.sqlite*"))
    assert b"ideas/marker.md" in data  # the audit names the path (the test reads the right file)
    for secret in ("ZEBRAFISH-BODY-7f3a", "QUOKKA-INBOX-91c2", token, trusted_token, started.handle):
        assert secret.encode() not in data, secret[:12]
    assert token.removeprefix(f"ngt_{record.id}_").encode() not in data


def test_an_audit_row_keeps_a_path_with_a_lone_surrogate_as_its_escape(tmp_path) -> None:
    """A path that is not valid Unicode is refused by the path rules; its refusal must still be audited."""
    from notegate.state import StateDB

    db = StateDB(tmp_path / "state.sqlite")
    db.audit(
        now=1.0,
        environment="personal",
        login="owner",
        client="laptop",
        client_class="workstation",
        tier="trusted",
        session="s",
        tool="write_note",
        path="\ud800.md",
        outcome="path-not-text",
    )
    assert [r["path"] for r in db.query("SELECT path FROM audit")] == ["\\ud800.md"]


def test_a_database_made_before_schema_migrations_opens_and_records_them(tmp_path: Path) -> None:
    """What every server before the migration table left behind: today's tables, no schema_migrations."""
    from notegate.state import PERSONS_SCHEMA, SCHEMA

    path = tmp_path / "state.sqlite"
    old = sqlite3.connect(path)
    old.executescript(SCHEMA + PERSONS_SCHEMA)
    old.execute("INSERT INTO previews (key, expires_at) VALUES ('p', 10.0)")
    old.commit()
    old.close()
    db = StateDB(path)
    try:
        assert db.migrations() == sorted(MIGRATIONS)
        assert db.take_preview("p", now=5.0) is True
    finally:
        db.close()


def _audit(db: StateDB, at: float, path: str, tool: str = "read_note") -> None:
    db.audit(
        now=at, environment="personal", login="owner", client="phone", client_class="hosted", tier="restricted",
        session=None, tool=tool, path=path, outcome="ok",
    )  # fmt: skip


def test_audit_rows_filter_by_folder_and_page_back(db: StateDB) -> None:
    for i, path in enumerate(["inbox/a.md", "inbox/b.md", "inboxes.md", "inbox/c.md"]):
        _audit(db, 10.0 + i, path)
    folder = db.audit_rows(path="inbox")
    assert [r["path"] for r in folder] == ["inbox/a.md", "inbox/b.md", "inbox/c.md"]
    newest = db.audit_rows(limit=2)
    older = db.audit_rows(limit=10, before_id=newest[0]["id"])
    assert [r["path"] for r in older] == ["inbox/a.md", "inbox/b.md"]
    assert db.audit_rows(since=12.0, until=13.0, connector="phone")[0]["path"] == "inboxes.md"
    assert db.audit_rows(environment="other") == []
