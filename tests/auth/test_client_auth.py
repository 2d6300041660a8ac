"""DCR client secrets at rest: an older database's clear secrets are hashed at open (and no byte of them stays
in the file), new registrations store only the hash, and the comparison is total."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

import anyio
import pytest
from hypothesis import given
from hypothesis import strategies as st
from mcp.shared.auth import OAuthClientInformationFull
from pydantic import AnyUrl

from notegate.auth.client_auth import MAX_SECRET_CHARS, secret_matches
from notegate.auth.oauth import NotegateOAuthProvider
from notegate.config import load_config
from notegate.state import StateDB

SECRET = "5ecret" + "ab" * 29  # what the SDK mints: 64 hex-ish characters, here easy to grep
CALLBACK = "http://127.0.0.1:33333/callback"

#: oauth_clients as the first OAuth release created it: no secret_hash, the secret inside info_json.
OLD_TABLE = (
    "CREATE TABLE oauth_clients (client_id TEXT PRIMARY KEY, info_json TEXT NOT NULL, created_at REAL NOT NULL,"
    " last_used_at REAL NOT NULL)"
)


def _info(client_id: str, secret: str | None, method: str = "client_secret_post") -> str:
    return OAuthClientInformationFull(
        client_id=client_id,
        client_secret=secret,
        client_name="old client",
        redirect_uris=[AnyUrl(CALLBACK)],
        token_endpoint_auth_method=method,
    ).model_dump_json()


def _files(path: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(path.parent.glob(path.name + "*")))


def test_an_older_database_is_hashed_at_open_and_keeps_no_byte_of_the_secret(tmp_path: Path, vault: Path) -> None:
    path = tmp_path / "state.sqlite"
    old = sqlite3.connect(path, isolation_level=None)
    old.execute("PRAGMA journal_mode=WAL")
    old.execute(OLD_TABLE)
    old.execute("INSERT INTO oauth_clients VALUES (?,?,?,?)", ("c-old", _info("c-old", SECRET), 1.0, 1.0))
    old.execute("INSERT INTO oauth_clients VALUES (?,?,?,?)", ("c-public", _info("c-public", None, "none"), 1.0, 1.0))
    for i in range(20):  # touches, as the server made them: old copies of the row linger in free space
        old.execute("UPDATE oauth_clients SET last_used_at = ? WHERE client_id = 'c-old'", (float(i),))
    old.close()
    assert SECRET.encode() in _files(path)

    state = StateDB(path)
    try:
        assert SECRET.encode() not in _files(path)
        row = state.oauth_client("c-old")
        assert row["secret_hash"] == hashlib.sha256(SECRET.encode()).hexdigest()
        assert json.loads(row["info_json"])["client_secret"] is None
        assert state.oauth_client("c-public")["secret_hash"] is None
        provider = NotegateOAuthProvider(state, load_config(vault), issuer="http://x", resource="http://x/mcp")
        client = provider.client_sync("c-old")
        assert client is not None and client.client_secret is None
        assert secret_matches(client.secret_hash, SECRET) and not secret_matches(client.secret_hash, SECRET + "x")
    finally:
        state.close()
    again = StateDB(path)  # a second open finds nothing to migrate and changes nothing
    try:
        assert again.oauth_client("c-old")["secret_hash"] == hashlib.sha256(SECRET.encode()).hexdigest()
    finally:
        again.close()


def test_a_new_registration_stores_only_the_hash(tmp_path: Path, vault: Path) -> None:
    state = StateDB(tmp_path / "state.sqlite")
    try:
        provider = NotegateOAuthProvider(state, load_config(vault), issuer="http://x", resource="http://x/mcp")
        info = OAuthClientInformationFull.model_validate_json(_info("c-new", SECRET))
        anyio.run(provider.register_client, info)
        assert info.client_secret == SECRET  # the SDK answers the registration with it: untouched
        row = state.oauth_client("c-new")
        assert row["secret_hash"] == hashlib.sha256(SECRET.encode()).hexdigest()
        assert SECRET not in row["info_json"]
    finally:
        state.close()
    assert SECRET.encode() not in _files(tmp_path / "state.sqlite")


@given(stored=st.none() | st.text(max_size=70), presented=st.none() | st.text(max_size=MAX_SECRET_CHARS + 5))
def test_secret_matches_is_total_and_exact(stored: str | None, presented: str | None) -> None:
    """Any stored value, any presented string (lone surrogates too): a bool, never an exception; True only
    for the secret whose SHA-256 is stored."""
    got = secret_matches(stored, presented)
    want = (
        bool(stored)
        and bool(presented)
        and len(presented) <= MAX_SECRET_CHARS
        and hashlib.sha256(presented.encode("utf-8", "surrogatepass")).hexdigest() == stored
    )
    assert got is want


@pytest.mark.parametrize("presented", [SECRET, SECRET.upper(), "", None, "x" * (MAX_SECRET_CHARS + 1)])
def test_secret_matches_examples(presented: str | None) -> None:
    stored = hashlib.sha256(SECRET.encode()).hexdigest()
    assert secret_matches(stored, presented) is (presented == SECRET)
    assert secret_matches(None, presented) is False
