"""Two replicas on one PostgreSQL: every place that relied on SQLite's single writer still has one winner.

Each test opens two StateDB instances on one database (two "replicas": two pools, two sets of connections)
and lets threads of both race on one claim behind a barrier. SQLite held these by ``BEGIN IMMEDIATE``; here
they hold by a single UPDATE/DELETE … RETURNING, INSERT … ON CONFLICT DO NOTHING, or a claim's advisory lock.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from notegate.policy import decide_token_name
from notegate.state import MIGRATIONS, StateDB

RACERS = 8
NOW = 1_000.0


@pytest.fixture
def replicas(pg_cluster, tmp_path: Path):
    url = pg_cluster.new_database()
    pair = (StateDB(tmp_path / "a.sqlite", url=url), StateDB(tmp_path / "b.sqlite", url=url))
    yield pair
    for db in pair:
        db.close()


def race(replicas: tuple[StateDB, StateDB], attempt: Callable[[StateDB, int], object]) -> list[object]:
    """Run ``attempt(replica, i)`` from RACERS threads at once, alternating replicas; their results."""
    barrier = threading.Barrier(RACERS)
    results: list[object] = [None] * RACERS
    errors: list[BaseException] = []

    def work(i: int) -> None:
        try:
            barrier.wait()
            results[i] = attempt(replicas[i % 2], i)
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(RACERS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert errors == []
    return results


def test_the_schema_is_made_once_by_replicas_starting_together(pg_cluster, tmp_path: Path) -> None:
    url = pg_cluster.new_database()
    opened = race((None, None), lambda _r, i: StateDB(tmp_path / f"{i}.sqlite", url=url))  # type: ignore[arg-type]
    try:
        assert opened[0].migrations() == sorted(MIGRATIONS)
        assert len(opened[0].query("SELECT * FROM schema_migrations")) == len(MIGRATIONS)
    finally:
        for db in opened:
            db.close()


def test_first_confirm_of_a_preview_wins(replicas) -> None:
    replicas[0].remember_preview("p1", expires_at=NOW + 60, now=NOW)
    assert race(replicas, lambda db, _i: db.take_preview("p1", now=NOW)).count(True) == 1


def test_the_dcr_cap_holds_across_replicas(replicas) -> None:
    def register(db: StateDB, i: int) -> bool:
        return db.oauth_register_client(
            f"client-{i}", "{}", NOW, fits=lambda count, _idle: "keep" if count < 3 else None
        )

    assert race(replicas, register).count(True) == 3
    assert replicas[1].query("SELECT COUNT(*) FROM oauth_clients")[0][0] == 3

    def evicting(db: StateDB, i: int) -> bool:  # at the cap, each one evicts a never-consented one
        return db.oauth_register_client(
            f"flood-{i}", "{}", NOW + 1, fits=lambda count, idle: "keep" if count < 3 else ("evict" if idle else None)
        )

    assert race(replicas, evicting).count(True) == RACERS  # none refused: each evicted one
    assert replicas[1].query("SELECT COUNT(*) FROM oauth_clients")[0][0] == 3


def test_pending_consents_stay_at_their_caps_across_replicas(replicas) -> None:
    def ask(db: StateDB, i: int) -> int:
        return db.oauth_insert_pending(
            request_hash=f"r{i}",
            client_id=f"c{i % 3}",
            client_name="n",
            params_json="{}",
            now=NOW + i,
            live_after=NOW - 600,
            max_total=5,
            max_per_client=2,
        )

    race(replicas, ask)
    rows = replicas[1].query("SELECT client_id FROM oauth_pending")
    assert len(rows) == 5 and all([r[0] for r in rows].count(f"c{n}") <= 2 for n in range(3))


def test_the_write_quota_holds_across_replicas(replicas) -> None:
    def reserve(db: StateDB, _i: int) -> int | None:
        reservation = db.reserve_write(
            connector="token:a", now=NOW, window=60.0, size=10, fits=lambda writes, _b: writes < 5
        )
        return reservation.id

    ids = race(replicas, reserve)
    assert len([i for i in ids if i is not None]) == 5
    assert len(set(ids) - {None}) == 5


def test_an_idempotency_key_is_recorded_once(replicas) -> None:
    def record(db: StateDB, i: int) -> bool:
        return db.record_contract_call(
            environment="personal",
            contract="health-daily",
            key="k1",
            input_hash=f"h{i}",
            fields={},
            commit_id=None,
            connector="token:m",
            now=NOW,
        )

    assert race(replicas, record).count(True) == 1
    (row,) = replicas[0].query("SELECT input_hash FROM contract_calls")
    assert row[0].startswith("h")


def test_migration_3_on_postgres_keys_records_per_connector_and_keeps_old_rows(pg_cluster, tmp_path: Path) -> None:
    """A PostgreSQL database at schema version 2 (one record per key; tasks without authors) takes migration 3
    at the next start: the old record stays its connector's, another connector records the same key."""
    url = pg_cluster.new_database()
    db = StateDB(tmp_path / "a.sqlite", url=url)
    with db.tx() as tx:  # back to version 2's shape
        tx.execute("ALTER TABLE contract_calls DROP CONSTRAINT contract_calls_pkey")
        tx.execute("ALTER TABLE contract_calls ADD PRIMARY KEY (environment, contract, key)")
        for column in ("connector", "client", "login"):
            tx.execute(f"ALTER TABLE tasks DROP COLUMN {column}")
        tx.execute("DELETE FROM schema_migrations WHERE version = 3")
    record = dict(environment="personal", contract="capture", key="k1", fields={}, commit_id=None, now=NOW)
    assert db.record_contract_call(input_hash="h-a", connector="token:a", **record) is True
    assert db.record_contract_call(input_hash="h-b", connector="token:b", **record) is False  # the old key
    db.close()
    db = StateDB(tmp_path / "b.sqlite", url=url)
    try:
        assert db.migrations() == sorted(MIGRATIONS)
        kept = db.contract_call(environment="personal", contract="capture", connector="token:a", key="k1")
        assert kept is not None and kept["input_hash"] == "h-a"
        assert db.record_contract_call(input_hash="h-b", connector="token:b", **record) is True
        assert db.record_contract_call(input_hash="h-c", connector="token:a", **record) is False
        db.open_task(environment="personal", kind="k", key="x", text="t", now=NOW)
        assert db.tasks("personal")[0]["connector"] == ""
    finally:
        db.close()


def test_an_enrol_link_is_used_once(replicas) -> None:
    replicas[0].insert_enrol_link(token_hash="e1", login="alice", now=NOW, expires_at=NOW + 900)
    assert race(replicas, lambda db, _i: db.use_enrol_link("e1", now=NOW + 1)).count(True) == 1


def _request(i: int, connector: str = "oauth:fam-a") -> dict[str, object]:
    return {
        "link_hash": f"link-{i}",
        "grant_id": f"grant-{i}",
        "grant_hash": f"ghash-{i}",
        "code": "ABCD",
        "reason": "edit rules",
        "connector": connector,
        "login": "owner",
        "client": "claude.ai",
        "client_class": "hosted",
        "environment": "personal",
        "conversation": None,
        "created_at": NOW,
        "expires_at": NOW + 600,
    }


def test_an_elevation_is_answered_once(replicas) -> None:
    assert replicas[0].elevation_insert_request(_request(0), now=NOW, fits=lambda n: True)

    def answer(db: StateDB, i: int) -> bool:
        return db.elevation_answer("link-0", outcome="approved" if i % 2 else "denied", now=NOW + 1) is not None

    assert race(replicas, answer).count(True) == 1


def test_the_pending_elevation_cap_holds_across_replicas(replicas) -> None:
    def ask(db: StateDB, i: int) -> bool:
        return db.elevation_insert_request(_request(i), now=NOW, fits=lambda pending: pending < 2)

    assert race(replicas, ask).count(True) == 2


def test_an_oauth_code_and_a_refresh_token_are_spent_once(replicas) -> None:
    replicas[0].oauth_insert_code(code_hash="c1", family_id="f1", client_id="x", params_json="{}", expires_at=NOW + 60)
    assert race(replicas, lambda db, _i: db.oauth_use_code("c1", NOW)).count(True) == 1
    replicas[0].oauth_insert_token(
        token_hash="r1",
        kind="refresh",
        family_id="f1",
        client_id="x",
        scopes="notes",
        resource=None,
        expires_at=NOW + 60,
        now=NOW,
    )
    assert race(replicas, lambda db, _i: db.oauth_use_refresh("r1", NOW)).count(True) == 1


def test_a_consent_request_is_answered_once(replicas) -> None:
    replicas[0].oauth_insert_pending(request_hash="q1", client_id="x", client_name="X", params_json="{}", now=NOW)
    assert sum(r is not None for r in race(replicas, lambda db, _i: db.oauth_answer_pending("q1", NOW))) == 1


def test_a_webauthn_challenge_is_taken_once(replicas) -> None:
    replicas[0].put_challenge(
        binding_hash="b1", purpose="login", challenge=b"\x01" * 32, login=None, user_handle=None, now=NOW,
        expires_at=NOW + 60,
    )  # fmt: skip
    taken = race(replicas, lambda db, _i: db.take_challenge(binding_hash="b1", purpose="login", now=NOW))
    assert [bytes(r["challenge"]) for r in taken if r is not None] == [b"\x01" * 32]


def test_a_token_name_is_taken_once(replicas) -> None:
    def create(db: StateDB, i: int) -> bool:
        row = {
            "id": f"id{i}",
            "name": "laptop",
            "login": "owner",
            "display_name": "Owner",
            "client_class": "workstation",
            "tier": "restricted",
            "environment": "personal",
            "secret_hash": f"s{i}",
            "created_at": NOW,
            "contracts": "",
        }
        return db.insert_token_checked(row, lambda names: decide_token_name("laptop", names))

    decisions = race(replicas, create)
    assert [d.allowed for d in decisions].count(True) == 1
    assert {d.rule for d in decisions if not d.allowed} == {"token-name-taken"}


def test_an_open_task_is_opened_once(replicas) -> None:
    def open_task(db: StateDB, _i: int) -> int:
        return db.open_task(environment="personal", kind="fetch-refused", key="tip", text="t", now=NOW)

    assert len(set(race(replicas, open_task))) == 1
    assert len(replicas[0].tasks("personal")) == 1


def test_a_grant_expiry_is_audited_once(replicas) -> None:
    replicas[0].elevation_insert_grant(
        {
            "grant_id": "g1", "grant_hash": "gh1", "connector": "oauth:fam-a", "login": "owner",
            "client": "claude.ai", "environment": "personal", "conversation": None, "approved_by": "owner",
            "created_at": NOW, "expires_at": NOW + 1,
        }
    )  # fmt: skip
    assert race(replicas, lambda db, _i: db.elevation_mark_expiry_audited("g1")).count(True) == 1


def test_a_notice_is_due_once(replicas) -> None:
    def due(db: StateDB, _i: int) -> bool:
        return db.notice_due(environment="personal", login="owner", client="c", count=3, now=NOW, interval=600)

    assert race(replicas, due).count(True) == 1


def test_a_session_handle_minted_on_one_replica_is_accepted_on_the_other(replicas) -> None:
    replicas[0].create_handle(
        handle_hash="hh", session_id="s1", login="owner", client="c", environment="personal", project=None, now=NOW
    )
    row = replicas[1].touch_handle("hh", now=NOW + 5, idle_seconds=60)
    assert row is not None and row["session_id"] == "s1"
    assert replicas[0].touch_handle("hh", now=NOW + 100, idle_seconds=60) is None


def test_an_unreachable_server_refuses_start_without_naming_the_url(tmp_path: Path) -> None:
    from notegate.errors import NotegateError
    from notegate.postgres import LocalPostgres

    url = f"postgresql://notegate:hunter2-secret@/notegate?host={tmp_path}"  # no server listens there
    with pytest.raises(NotegateError) as info:
        LocalPostgres(url, wait_seconds=1)
    assert info.value.rule == "state-unavailable"
    assert "hunter2" not in info.value.explain() and str(tmp_path) not in info.value.explain()


def test_a_backup_of_postgres_state_is_a_sqlite_copy_of_every_row(replicas, tmp_path: Path) -> None:
    live = replicas[0]
    live.oauth_register_client("c1", "{}", NOW, fits=lambda n, idle: "keep", secret_hash="sh")
    live.put_challenge(
        binding_hash="b1", purpose="login", challenge=b"\x00\xff", login=None, user_handle=None, now=NOW,
        expires_at=NOW + 60,
    )  # fmt: skip
    live.audit(
        now=NOW, environment="personal", login="owner", client="c", client_class="hosted", tier="restricted",
        session=None, tool="read_note", path="a.md", outcome="ok",
    )  # fmt: skip
    copy_path = tmp_path / "copy.sqlite"
    live.backup_to(copy_path)
    copy = StateDB(copy_path)
    try:
        assert copy.dialect == "sqlite"
        assert copy.table_counts() == live.table_counts()
        assert copy.secret_digests() == live.secret_digests()
        assert bytes(copy.take_challenge(binding_hash="b1", purpose="login", now=NOW)["challenge"]) == b"\x00\xff"
    finally:
        copy.close()


# -- the real CLI and two real servers on one PostgreSQL ------------------------------------------------------
def _on_postgres(vault: Path, url: str) -> None:
    with vault.open("a") as config:
        config.write(f'\n[state]\nurl = "{url}"\n')


@pytest.mark.anyio
async def test_a_token_made_by_the_cli_works_on_both_servers_and_a_handle_crosses(pg_cluster, vault: Path) -> None:
    """`notegate token create` writes into PostgreSQL (not state.sqlite); two `notegate serve` processes on it
    accept that token, and a session handle minted by one is accepted by the other."""
    import re

    from support import Server, mcp_http, mint, notegate

    url = pg_cluster.new_database()
    _on_postgres(vault, url)
    sqlite_tokens = len(StateDB(vault.parent / "state" / "state.sqlite").tokens())
    made = notegate("token", "create", "--config", str(vault), "--name", "desk", "--class", "workstation")
    assert made.returncode == 0, made.stderr
    (token,) = re.findall(r"ngt_[0-9a-f]+_[A-Za-z0-9_-]+", made.stdout)
    shared = StateDB(vault.parent / "unused.sqlite", url=url)
    try:
        assert [t["name"] for t in shared.tokens()] == ["desk"]
    finally:
        shared.close()
    assert len(StateDB(vault.parent / "state" / "state.sqlite").tokens()) == sqlite_tokens
    hosted = mint(vault, name="phone", client_class="hosted")
    first, second = Server(vault).start(), Server(vault).start()
    try:
        for server in (first, second):
            async with mcp_http(server.url, token) as client:
                listed = await client.call_tool("list_notes", {})
                assert not listed.is_error
        async with mcp_http(first.url, hosted, start_session=True) as on_first:
            handle = on_first.handle
        async with mcp_http(second.url, hosted) as on_second:
            read = await on_second.call_tool("list_notes", {"handle": handle})
            assert not read.is_error
            refused = await on_second.call_tool("list_notes", {"handle": "ngs_" + "A" * 43})  # never minted
            assert refused.is_error and "Refused [session-handle-expired]: " in refused.content[0].text
    finally:
        first.stop()
        second.stop()


# ------------------------------------------------------------------------------------------- push lock
def test_pushes_of_two_replicas_to_one_environment_queue_in_arrival_order(replicas) -> None:
    """The push lock (VaultStore.push_lock): while one replica pushes, the others wait, and they are served
    in the order they came, so the replica that just pushed cannot overtake one already waiting."""
    first, second = replicas
    order: list[str] = []

    def push(db: StateDB, name: str, started: threading.Event | None = None) -> None:
        if started is not None:
            started.set()
        with db.push_lock("personal") as waited:
            order.append(name)
            waits.append(waited)

    waits: list[bool] = []
    with first.push_lock("personal") as holder_waited:
        arrivals = []
        for i, db in enumerate((second, first, second)):
            started = threading.Event()
            thread = threading.Thread(target=push, args=(db, f"w{i}", started))
            thread.start()
            started.wait(10)
            _wait_for_waiters(first, i + 1)
            arrivals.append(thread)
        order.append("holder")
    for thread in arrivals:
        thread.join(30)
    assert order == ["holder", "w0", "w1", "w2"]
    # Each waiter says it waited (so its store fetches the tip the holder pushed first); the holder did not.
    assert (holder_waited, waits) == (False, [True, True, True])
    with first.push_lock("household") as other, second.push_lock("personal") as free:
        assert (other, free) == (False, False)  # another environment's push is not held up


def _wait_for_waiters(db: StateDB, count: int) -> None:
    """Until ``count`` sessions wait for an advisory lock (pg_locks), so each arrives strictly after the last."""
    import time

    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        rows = db.query("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted")
        if int(rows[0][0]) >= count:
            return
        time.sleep(0.01)
    raise AssertionError(f"{count} waiters never queued")


def test_a_push_lock_not_had_in_time_lets_the_push_go_on(replicas, monkeypatch) -> None:
    """The lock is for fairness only: a replica that holds it too long delays the other by at most
    PUSH_LOCK_WAIT_SECONDS, then the other pushes anyway (the origin's compare-and-swap decides)."""
    import time

    import notegate.state.db

    monkeypatch.setattr(notegate.state.db, "PUSH_LOCK_WAIT_SECONDS", 0.2)
    first, second = replicas
    with first.push_lock("personal"):
        began = time.monotonic()
        with second.push_lock("personal"):
            waited = time.monotonic() - began
    assert 0.15 <= waited < 5
    with second.push_lock("personal"):  # the connection came back usable: the lock is free again at once
        pass


def test_an_error_inside_the_push_lock_is_raised_and_the_lock_released(replicas) -> None:
    first, second = replicas
    with pytest.raises(RuntimeError, match="push failed"), first.push_lock("personal"):
        raise RuntimeError("push failed")
    with second.push_lock("personal"):
        assert int(second.query("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'")[0][0]) == 1


def test_the_push_lock_on_sqlite_holds_nothing(tmp_path: Path) -> None:
    db = StateDB(tmp_path / "state.sqlite")
    try:
        with db.push_lock("personal") as a, db.push_lock("personal") as b:  # one process: the write lock queues
            assert (a, b) == (False, False)
    finally:
        db.close()
