"""Static bearer tokens on a real state database: format, exact verification, refusals, tier changes."""

from __future__ import annotations

import hashlib
import inspect
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from notegate.auth import tokens
from notegate.auth.tokens import create_token, list_tokens, revoke_token, set_token_tier, verify_token
from notegate.errors import NotegateError
from notegate.state import StateDB
from support.pgcluster import stored_bytes

TOKEN = re.compile(r"ngt_([0-9a-f]{16})_([A-Za-z0-9_-]{43})")
NOW = 1_700_000_000.0


@pytest.fixture
def db(tmp_path: Path, state_url: str):
    state = StateDB(tmp_path / "state.sqlite", url=state_url)
    yield state
    state.close()


def secret_of(token: str) -> str:
    """The secret half (it may itself contain ``_``; the id is hex)."""
    match = TOKEN.fullmatch(token)
    assert match is not None, token
    return match.group(2)


def mint(db: StateDB, **kw) -> tuple[str, tokens.TokenRecord]:
    args = {"name": "laptop", "client_class": "workstation", "tier": None, "login": "owner", "now": NOW} | kw
    return create_token(db, **args)


def test_token_is_prefix_id_and_secret(db: StateDB) -> None:
    token, record = mint(db)
    match = TOKEN.fullmatch(token)
    assert match is not None, token
    assert match.group(1) == record.id
    assert record.created_at == NOW and record.revoked_at is None and record.last_used_at is None


def test_two_tokens_never_share_id_or_secret(db: StateDB) -> None:
    first, a = mint(db, name="a")
    second, b = mint(db, name="b")
    assert a.id != b.id
    assert secret_of(first) != secret_of(second)


def test_verify_accepts_the_exact_token(db: StateDB) -> None:
    token, record = mint(db, login="alice", display_name="Alice", environment="personal")
    found = verify_token(db, token)
    assert found == record
    assert (found.login, found.display_name, found.environment) == ("alice", "Alice", "personal")


def test_verify_refuses_a_wrong_secret(db: StateDB) -> None:
    token, _ = mint(db)
    last = token[-1]
    assert verify_token(db, token[:-1] + ("A" if last != "A" else "B")) is None
    assert verify_token(db, token[:-1]) is None  # a prefix of the secret
    assert verify_token(db, token + "A") is None  # the secret plus one character


def test_verify_refuses_a_known_id_with_another_tokens_secret(db: StateDB) -> None:
    first, a = mint(db, name="a")
    second, _ = mint(db, name="b")
    assert verify_token(db, f"ngt_{a.id}_{secret_of(second)}") is None
    assert verify_token(db, first) is not None


def test_verify_refuses_a_revoked_token(db: StateDB) -> None:
    token, record = mint(db)
    assert revoke_token(db, record.id, now=NOW + 5) == 1
    assert verify_token(db, token) is None
    assert list_tokens(db)[0].revoked_at == NOW + 5
    assert revoke_token(db, record.id, now=NOW + 6) == 0  # already revoked: nothing more to revoke


def test_revoke_by_name_revokes_every_live_token_of_that_name(db: StateDB) -> None:
    one, _ = mint(db, name="phone")
    two, _ = mint(db, name="phone")
    other, _ = mint(db, name="laptop")
    assert revoke_token(db, "phone", now=NOW) == 2
    assert verify_token(db, one) is None and verify_token(db, two) is None
    assert verify_token(db, other) is not None


def test_verify_refuses_an_over_long_token(db: StateDB) -> None:
    token, _ = mint(db)
    assert verify_token(db, token + "x" * 200) is None
    assert verify_token(db, "ngt_" + "a" * 300) is None


@pytest.mark.parametrize(
    "text",
    ["", "ngt_", "ngt__", "ngt_abc", "ngt_abc_", "ngt__secret", "NGT_abc_def", "Bearer ngt_a_b", " ngt_a_b", "x" * 500],
)
def test_verify_refuses_malformed_strings(db: StateDB, text: str) -> None:
    mint(db)
    assert verify_token(db, text) is None


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(max_size=300))
def test_arbitrary_text_never_verifies_and_never_raises(db: StateDB, text: str) -> None:
    record = list_tokens(db)[0] if list_tokens(db) else mint(db)[1]
    assert verify_token(db, text) is None
    # the same text as the secret of a real id: still refused (it is not the secret)
    assert verify_token(db, f"ngt_{record.id}_{text}") is None


def test_a_lone_surrogate_never_raises(db: StateDB) -> None:
    _, record = mint(db)
    assert verify_token(db, f"ngt_{record.id}_\ud800") is None


def test_the_secret_is_compared_in_constant_time() -> None:
    """The comparison is hmac.compare_digest on hashes, and an unknown id still pays for one comparison."""
    source = inspect.getsource(verify_token)
    assert "hmac.compare_digest(" in source
    assert "==" not in source.replace("!=", "")


def test_the_database_never_holds_the_secret_or_the_token(db: StateDB, tmp_path: Path) -> None:
    token, record = mint(db)
    secret = secret_of(token)
    assert verify_token(db, token) is not None
    set_token_tier(db, record.id, "trusted")
    revoke_token(db, record.id, now=NOW + 1)
    data = stored_bytes(db)
    assert secret.encode() not in data
    assert token.encode() not in data
    assert hashlib.sha256(secret.encode()).hexdigest().encode() in data  # what is stored instead
    assert record.id.encode() in data


@pytest.mark.parametrize(
    ("kw", "fragment"),
    [
        ({"client_class": "browser"}, "unknown client class 'browser'"),
        ({"tier": "admin"}, "unknown tier 'admin'"),
        ({"client_class": "machine", "tier": "trusted"}, "the machine class and the machine tier go together"),
        ({"client_class": "workstation", "tier": "machine"}, "the machine class and the machine tier go together"),
        ({"client_class": "hosted", "tier": "machine"}, "the machine class and the machine tier go together"),
        ({"name": ""}, "a token name must be 1-100 printable characters"),
        ({"name": "x" * 101}, "a token name must be 1-100 printable characters"),
        ({"name": "two\nlines"}, "a token name must be 1-100 printable characters"),
        ({"name": "bell\x07"}, "a token name must be 1-100 printable characters"),
    ],
)
def test_create_refuses_bad_arguments(db: StateDB, kw: dict, fragment: str) -> None:
    with pytest.raises(NotegateError) as info:
        mint(db, **kw)
    assert info.value.rule == "bad-argument"
    assert info.value.explain().startswith(f"Refused [bad-argument]: {fragment}")
    assert list_tokens(db) == []  # nothing was stored


def test_a_name_of_exactly_100_printable_characters_is_accepted(db: StateDB) -> None:
    _, record = mint(db, name="n" * 100)
    assert record.name == "n" * 100


@pytest.mark.parametrize(
    ("client_class", "tier", "expected"),
    [
        ("hosted", None, "restricted"),
        ("workstation", None, "restricted"),
        ("machine", None, "machine"),
        ("machine", "machine", "machine"),
        ("hosted", "trusted", "trusted"),
        ("workstation", "restricted", "restricted"),
    ],
)
def test_class_and_tier_pairing(db: StateDB, client_class: str, tier: str | None, expected: str) -> None:
    token, record = mint(db, client_class=client_class, tier=tier)
    assert record.tier == expected
    assert verify_token(db, token).tier == expected


def test_display_name_defaults_to_the_login(db: StateDB) -> None:
    _, record = mint(db, login="bob")
    assert record.display_name == "bob"


def test_set_tier_keeps_the_id_and_so_the_connector(db: StateDB) -> None:
    token, record = mint(db, client_class="hosted")
    assert record.tier == "restricted"
    assert set_token_tier(db, record.id, "trusted") == 1
    after = verify_token(db, token)
    assert after.tier == "trusted"
    assert after.id == record.id and after.connector == record.connector == f"token:{record.id}"
    assert after.caller().connector == f"token:{record.id}"
    assert set_token_tier(db, "laptop", "restricted") == 1  # by name too
    assert verify_token(db, token).tier == "restricted"


def test_set_tier_leaves_machine_tokens_alone(db: StateDB) -> None:
    token, record = mint(db, client_class="machine")
    assert set_token_tier(db, record.id, "trusted") == 0
    assert verify_token(db, token).tier == "machine"


def test_set_tier_leaves_revoked_tokens_alone(db: StateDB) -> None:
    _, record = mint(db, client_class="hosted")
    revoke_token(db, record.id, now=NOW)
    assert set_token_tier(db, record.id, "trusted") == 0
    assert list_tokens(db)[0].tier == "restricted"


@pytest.mark.parametrize("tier", ["machine", "admin", "", "Trusted"])
def test_set_tier_refuses_unknown_tiers(db: StateDB, tier: str) -> None:
    _, record = mint(db, client_class="hosted")
    with pytest.raises(NotegateError) as info:
        set_token_tier(db, record.id, tier)
    assert info.value.rule == "bad-argument"
    assert info.value.explain() == f"Refused [bad-argument]: unknown tier '{tier}'. Use restricted or trusted."
    assert list_tokens(db)[0].tier == "restricted"


def test_claims_and_caller_carry_the_connector(db: StateDB) -> None:
    _, record = mint(db, name="chat", client_class="hosted", tier="trusted", login="al", environment="household")
    assert record.claims() == {
        "login": "al",
        "display_name": "al",
        "client_class": "hosted",
        "tier": "trusted",
        "environment": "household",
        "connector": f"token:{record.id}",
    }
    caller = record.caller(session="s-1")
    assert (caller.login, caller.client, caller.client_class, caller.tier) == ("al", "chat", "hosted", "trusted")
    assert (caller.session, caller.environment, caller.connector) == ("s-1", "household", f"token:{record.id}")
    assert caller.connector_id == f"token:{record.id}"
    assert record.caller().session == "-"


def test_list_tokens_in_creation_order(db: StateDB) -> None:
    mint(db, name="b", now=NOW + 2)
    mint(db, name="a", now=NOW + 1)
    assert [t.name for t in list_tokens(db)] == ["a", "b"]
