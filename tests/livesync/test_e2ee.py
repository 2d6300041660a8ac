"""LiveSync's end-to-end encryption in the bridge's codec (notegate.livesync.e2ee): any file sealed reads back
the same, nothing of it readable without the passphrase; a damaged or foreign document is refused by its rule.
(tests/livesync/test_compat.py proves the format against LiveSync's own code.)"""

from __future__ import annotations

import ast
import base64
import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from notegate.livesync import documents, e2ee, keys

SALT = bytes(range(32))
CIPHER = e2ee.Cipher("the passphrase", SALT)
PATHS = st.sampled_from(["Notes/Ärger 日本.md", "a.md", "_drafts/x.md", "pics/a.png", "docs/b.pdf", "c.canvas"])


@settings(max_examples=60, deadline=None)
@given(PATHS, st.one_of(st.text(max_size=3000).map(str.encode), st.binary(max_size=600_000)), st.booleans())
def test_any_file_sealed_reads_back_the_same_and_shows_nothing(path: str, data: bytes, obfuscate: bool) -> None:
    if path.endswith(".md"):
        data = data.decode("utf-8", "replace").encode()
    meta, chunks = documents.write_file(path, data, ctime=1, mtime=2, cipher=CIPHER, obfuscate=obfuscate)
    note = documents.read_note(meta, {c["_id"]: c for c in chunks}, CIPHER)
    assert note.data == data and note.path == path
    assert all(c["_id"].startswith(e2ee.ENCRYPTED_CHUNK_PREFIX) and c["e_"] is True for c in chunks)
    assert (meta["path"] == path) is not obfuscate
    if obfuscate:
        assert meta["_id"].startswith("f:") and path.lower() not in str(meta)
    if data:
        with pytest.raises(documents.DocumentError) as refused:
            documents.read_note(meta, {c["_id"]: c for c in chunks})
        assert refused.value.rule == "livesync-document-unsupported"


def test_a_damaged_chunk_another_passphrase_and_the_retired_scheme_are_refused_by_rule() -> None:
    meta, chunks = documents.write_file("a.md", b"secret\n", ctime=1, mtime=2, cipher=CIPHER)
    raw = bytearray(base64.b64decode(chunks[0]["data"][2:]))
    raw[-1] ^= 1
    damaged = {**chunks[0], "data": "%=" + base64.b64encode(bytes(raw)).decode()}
    for cipher, chunk, rule in (
        (CIPHER, damaged, "livesync-passphrase-mismatch"),
        (e2ee.Cipher("another passphrase", SALT), chunks[0], "livesync-passphrase-mismatch"),
        (
            CIPHER,
            {**chunks[0], "data": "%" + base64.b64encode(os.urandom(64)).decode()},
            "livesync-document-unsupported",
        ),
    ):
        with pytest.raises(documents.DocumentError) as refused:
            documents.read_note(meta, {chunk["_id"]: chunk}, cipher)
        assert refused.value.rule == rule


def test_the_obfuscated_id_is_livesyncs() -> None:
    # path2id_base: "f:" + sha256hex(sha256hex(passphrase) + ":" + lower-cased path); the value LiveSync's own
    # code gave "A/b.md" with passphrase "pw" (test_compat proves the rest against it)
    assert e2ee.Cipher("pw", SALT).obfuscated_id("A/b.md") == (
        "f:cb03569457c51b55220177eb1da490842859275f446af9924b1f9a081dc51011"
    )
    assert repr(CIPHER) == "Cipher(<passphrase held>)"


def test_livesyncs_key_derivation_is_written_once() -> None:
    """The Setup URI (keys.py) and the documents (e2ee.py) are one scheme, octagonal-wheels' HKDF body: keys.py
    had its own copy of PBKDF2, HKDF and AES-GCM. Only e2ee.py derives or seals now (read by its imports)."""
    package = Path(e2ee.__file__).parent
    primitives = ("PBKDF2HMAC", "HKDF", "AESGCM")
    holders = sorted(
        {
            module.name
            for module in package.glob("*.py")
            for node in ast.walk(ast.parse(module.read_text(encoding="utf-8")))
            if isinstance(node, ast.ImportFrom) and any(alias.name in primitives for alias in node.names)
        }
    )
    assert holders == ["e2ee.py"], holders


@settings(max_examples=5, deadline=None)  # PBKDF2's 310,000 rounds per example
@given(st.text(max_size=200), st.text(min_size=1, max_size=40))
def test_a_setup_string_is_a_v2_body_behind_its_own_salt(text: str, passphrase: str) -> None:
    """What keys.py writes opens with the documents' cipher under its PBKDF2 salt, and the reverse: one format."""
    sealed = keys.encrypt_setting_string(text, passphrase)
    raw = base64.b64decode(sealed.removeprefix(keys.SALTED_PREFIX))
    salt, body = raw[: e2ee.PBKDF2_SALT_BYTES], raw[e2ee.PBKDF2_SALT_BYTES :]
    cipher = e2ee.Cipher(passphrase, salt)
    assert cipher.decrypt(e2ee.HKDF_PREFIX + base64.b64encode(body).decode()) == text
    body = base64.b64decode(cipher.encrypt(text).removeprefix(e2ee.HKDF_PREFIX))
    again = keys.SALTED_PREFIX + base64.b64encode(salt + body).decode()
    assert keys.decrypt_setting_string(again, passphrase) == text
