"""Console sessions and CSRF tokens: parsers never raise and accept only what was minted (hypothesis),
sessions are hashed, expire at 12 h with the injected clock, and die with their passkey."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from notegate.auth.websession import (
    MAX_SESSION_SECONDS,
    PRE_PREFIX,
    SESSION_PREFIX,
    CookiePolicy,
    WebSessions,
    check_csrf,
    check_origin,
    csrf_token,
    is_loopback,
    mint_secret,
    parse_next,
    parse_secret,
)
from notegate.errors import NotegateError
from notegate.state import StateDB
from support.pgcluster import stored_bytes


@given(st.one_of(st.text(max_size=80), st.binary(max_size=60), st.none(), st.integers()))
def test_parse_secret_never_raises_and_accepts_only_the_shape(raw) -> None:
    parsed = parse_secret(raw, SESSION_PREFIX)
    assert parsed is None or (parsed == raw and len(raw) == len(SESSION_PREFIX) + 43)


@given(st.sampled_from([SESSION_PREFIX, PRE_PREFIX, "nge_"]))
def test_a_minted_secret_parses_as_itself_and_only_under_its_prefix(prefix: str) -> None:
    secret = mint_secret(prefix)
    assert parse_secret(secret, prefix) == secret
    assert parse_secret(secret + "x", prefix) is None
    assert parse_secret(secret[:-1], prefix) is None
    other = SESSION_PREFIX if prefix != SESSION_PREFIX else PRE_PREFIX
    assert parse_secret(secret, other) is None


@given(st.text(max_size=60))
def test_csrf_only_the_binding_s_token_passes(presented: str) -> None:
    binding = mint_secret(SESSION_PREFIX)
    if presented == csrf_token(binding):
        check_csrf(binding, presented)
        return
    with pytest.raises(NotegateError) as refused:
        check_csrf(binding, presented)
    assert refused.value.rule == ("csrf-missing" if presented == "" else "csrf-invalid")


def test_csrf_tokens_are_per_binding() -> None:
    a, b = mint_secret(SESSION_PREFIX), mint_secret(SESSION_PREFIX)
    check_csrf(a, csrf_token(a))
    for binding, presented, rule in [
        (a, None, "csrf-missing"),
        (a, csrf_token(b), "csrf-invalid"),
        (None, csrf_token(a), "csrf-invalid"),
    ]:
        with pytest.raises(NotegateError) as refused:
            check_csrf(binding, presented)
        assert refused.value.rule == rule


@given(st.text(max_size=100))
def test_parse_next_only_ever_answers_a_local_path(raw: str) -> None:
    parsed = parse_next(raw)
    assert parsed is None or (parsed == raw and raw.startswith("/") and not raw.startswith(("//", "/\\")))


@pytest.mark.parametrize(
    ("raw", "ok"),
    [
        ("/oauth/consent?request=abc", True),
        ("/passkeys", True),
        ("//evil.example/", False),  # protocol-relative: another host
        ("/\\evil.example", False),  # browsers read a backslash as a slash
        ("https://evil.example/", False),
        ("javascript:alert(1)", False),
        ("/ok\nSet-Cookie: x", False),
        ("", False),
    ],
)
def test_parse_next_table(raw: str, ok: bool) -> None:
    assert (parse_next(raw) is not None) is ok


@pytest.mark.parametrize(
    ("origin", "site", "refused"),
    [
        ("http://localhost:1", "same-origin", False),
        ("null", "same-origin", False),  # our own form under Referrer-Policy: no-referrer
        ("http://localhost:1", "cross-site", True),
        ("http://localhost:1", "same-site", True),
        (None, None, False),
        ("null", None, False),
        ("https://evil.example", None, True),
    ],
)
def test_check_origin(origin, site, refused: bool) -> None:
    if not refused:
        check_origin(origin, site, "http://localhost:1")
        return
    with pytest.raises(NotegateError) as exc:
        check_origin(origin, site, "http://localhost:1")
    assert exc.value.rule == "origin-mismatch"


def test_cookies_are_secure_with_the_host_prefix_off_loopback() -> None:
    assert is_loopback("") and is_loopback("http://localhost:8765") and is_loopback("http://127.0.0.1:1")
    assert not is_loopback("https://notes.example.org")
    public = CookiePolicy(secure=True)
    header = public.header(public.session_name, "v", 100)
    assert public.session_name.startswith("__Host-")
    assert header == f"{public.session_name}=v; Path=/; Max-Age=100; HttpOnly; SameSite=Strict; Secure"
    local = CookiePolicy(secure=False)
    assert (
        local.header(local.session_name, "v", 5) == "notegate-session=v; Path=/; Max-Age=5; HttpOnly; SameSite=Strict"
    )


def _passkey(db: StateDB, passkey_id: str = "pk_1") -> None:
    db.insert_passkey(
        {
            "id": passkey_id,
            "login": "owner",
            "credential_id": passkey_id.encode(),
            "public_key": b"k",
            "user_handle": b"h",
            "sign_count": 0,
            "name": "n",
            "created_at": 0.0,
        }
    )


def test_sessions_are_hashed_expire_and_die_with_their_passkey(tmp_path, state_url: str) -> None:
    db = StateDB(tmp_path / "state.sqlite", url=state_url)
    _passkey(db)
    sessions = WebSessions(db, lifetime=10 * MAX_SESSION_SECONDS)
    assert sessions.lifetime == MAX_SESSION_SECONDS  # never longer than 12 h
    opened = sessions.open(login="owner", passkey_id="pk_1", now=1000.0)
    assert sessions.current(opened.secret, now=1000.0 + MAX_SESSION_SECONDS - 1).login == "owner"
    assert sessions.current(opened.secret, now=1000.0 + MAX_SESSION_SECONDS) is None
    assert sessions.current("ngs_" + "A" * 43, now=1000.0) is None
    assert sessions.current("garbage", now=1000.0) is None
    assert opened.secret.encode() not in stored_bytes(db)
    again = sessions.open(login="owner", passkey_id="pk_1", now=2000.0)
    assert db.revoke_passkey("pk_1", now=2001.0) == 1
    assert sessions.current(again.secret, now=2002.0) is None
    fresh = WebSessions(db)
    _passkey(db, "pk_2")
    third = fresh.open(login="owner", passkey_id="pk_2", now=0.0)
    fresh.close(third.secret)
    assert fresh.current(third.secret, now=1.0) is None
    db.close()
