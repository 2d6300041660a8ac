"""How the owner's commands mint tokens (auth/tokens.issue_token): a name is free in its environment, and the
secret is delivered before the row that makes it valid exists. On a real state database."""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from notegate.auth.tokens import issue_token, list_tokens, revoke_token, verify_token, write_token_file
from notegate.errors import NotegateError
from notegate.policy import decide_token_name
from notegate.state import StateDB

NOW = 1_700_000_000.0


@pytest.fixture
def db(tmp_path: Path, state_url: str):
    state = StateDB(tmp_path / "state.sqlite", url=state_url)
    yield state
    state.close()


def issue(db: StateDB, delivered: list[str] | None = None, **kw):
    sink = delivered if delivered is not None else []
    args = {
        "name": "laptop",
        "client_class": "workstation",
        "tier": None,
        "login": "owner",
        "environment": "personal",
        "deliver": sink.append,
        "now": NOW,
    } | kw
    return issue_token(db, **args)


def test_the_delivered_value_is_the_live_token(db: StateDB) -> None:
    delivered: list[str] = []
    record = issue(db, delivered)
    [token] = delivered
    assert verify_token(db, token) == record


@pytest.mark.parametrize("again", ["laptop", "LAPTOP", "Laptop"])
def test_a_live_name_is_refused_in_its_environment(db: StateDB, again: str) -> None:
    issue(db)
    delivered: list[str] = []
    with pytest.raises(NotegateError) as refused:
        issue(db, delivered, name=again)
    assert refused.value.rule == "token-name-taken"
    assert refused.value.explain().startswith("Refused [token-name-taken]: a live token named")
    assert delivered == []  # refused before any secret exists
    assert len(list_tokens(db)) == 1


def test_the_same_name_in_another_environment_or_after_revoking_is_free(db: StateDB) -> None:
    issue(db)
    issue(db, environment="household")
    revoke_token(db, "laptop", now=NOW + 1)
    issue(db)
    assert sorted((r.environment, r.revoked_at is None) for r in list_tokens(db)) == [
        ("household", False),
        ("personal", False),
        ("personal", True),
    ]


def test_a_failed_delivery_stores_nothing(db: StateDB) -> None:
    def broken(_token: str) -> None:
        raise NotegateError("the disk is full", rule="token-output-failed")

    with pytest.raises(NotegateError) as refused:
        issue(db, deliver=broken)
    assert refused.value.rule == "token-output-failed"
    assert list_tokens(db) == []


def test_two_concurrent_creates_cannot_both_take_one_name(tmp_path: Path, state_url: str) -> None:
    """Both pass the first check (the barrier holds them inside deliver); the insert's own check stops one."""
    path = tmp_path / "state.sqlite"
    StateDB(path, url=state_url).close()
    barrier = threading.Barrier(2)
    outcomes: list[str] = []

    def create() -> None:
        state = StateDB(path, url=state_url)
        try:
            issue(state, deliver=lambda _t: barrier.wait(timeout=10))
            outcomes.append("created")
        except NotegateError as exc:
            outcomes.append(exc.rule)
        finally:
            state.close()

    threads = [threading.Thread(target=create) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert sorted(outcomes) == ["created", "token-name-taken"]
    state = StateDB(path, url=state_url)
    assert len(list_tokens(state)) == 1
    state.close()


@given(st.text(min_size=1, max_size=20), st.lists(st.text(max_size=20), max_size=5))
def test_decide_token_name_is_total_and_refuses_exactly_a_casefold_match(name: str, taken: list[str]) -> None:
    decision = decide_token_name(name, taken)
    clash = any(t.casefold() == name.casefold() for t in taken)
    assert decision.allowed is not clash
    assert decision.rule == ("token-name-taken" if clash else "token-name-free")


def test_write_token_file_creates_private_folders(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b" / "token"
    created = write_token_file(target, "ngt_x_y")
    assert created == [tmp_path / "a", tmp_path / "a" / "b"]
    assert target.read_text() == "ngt_x_y\n"
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o600
    assert all(stat.S_IMODE(os.stat(d).st_mode) == 0o700 for d in created)
    assert sorted(p.name for p in target.parent.iterdir()) == ["token"]  # no temporary file left


def test_write_token_file_failure_leaves_nothing(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(NotegateError) as refused:
        write_token_file(blocker / "sub" / "token", "ngt_x_y")
    assert refused.value.rule == "token-output-failed"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]
