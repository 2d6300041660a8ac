"""LiveSync's end-to-end encryption, as its current default (E2EE "V2") writes it: the bridge's cipher.

Read in LiveSync's common library (``src/pouchdb/encryption.ts``, ``src/string_and_binary/path.ts``) and
octagonal-wheels (``encryption/hkdf``), not copied; tests/livesync/test_compat.py proves it against that code:

* a **chunk** ``{_id: "h:+…", type: "leaf", e_: true, data: "%=" + base64(iv(12) | hkdf_salt(32) |
  AES-256-GCM(text, tag 128))}``; the key is HKDF-SHA-256(salt=hkdf_salt, info="") of the master key
  PBKDF2-HMAC-SHA-256(passphrase, pbkdf2_salt, 310 000 iterations, 32 bytes);
* the **PBKDF2 salt** is one per database, in ``_local/obsidian_livesync_sync_parameters`` (``pbkdf2salt``,
  base64): devices and the bridge share it, so the master key is derived once per process, not per chunk;
* with **path obfuscation** the metadata document's id is ``f:`` + SHA-256 hex of (SHA-256 hex of the
  passphrase + ``:`` + the path, lower-cased when case-insensitive) and its ``path`` is ``/\\:`` + the encrypted
  JSON ``{path, mtime, ctime, size, children}`` (the clear fields zeroed, ``children`` emptied);
* the older "V1" scheme (``%`` without ``=``) is not written by current LiveSync; its documents are refused by
  name (``livesync-document-unsupported``) rather than guessed at.

The primitives are the ``cryptography`` package's. The key derivation and the sealed body are written once,
here (:func:`master_key`, :func:`seal`, :func:`unseal`): the Setup URI (:mod:`notegate.livesync.keys`) is the
same body behind a PBKDF2 salt of its own.
The passphrase is the bridge process's secret: it never reaches a log line, an error, the config or the vault.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import os
from functools import lru_cache

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from cryptography.hazmat.primitives.kdf.pbkdf2 import PBKDF2HMAC

from notegate.livesync.documents import (
    EDEN_HKDF_KEY,
    ENCRYPTED_CHUNK_PREFIX,
    ENCRYPTED_META_PREFIX,
    OBFUSCATED_PREFIX,
    DocumentError,
)

#: The ``_local`` document holding the database's PBKDF2 salt (LiveSync's DOCID_SYNC_PARAMETERS).
SYNC_PARAMETERS = "_local/obsidian_livesync_sync_parameters"
#: LiveSync's protocol version for V2 encryption (ProtocolVersions.ADVANCED_E2EE).
PROTOCOL_ADVANCED_E2EE = 2
HKDF_PREFIX = "%="
V1_PREFIX = "%"
PBKDF2_ITERATIONS = 310_000
IV_BYTES, HKDF_SALT_BYTES, PBKDF2_SALT_BYTES = 12, 32, 32


def master_key(passphrase: str, pbkdf2_salt: bytes) -> bytes:
    """LiveSync's master key: PBKDF2-HMAC-SHA-256(passphrase, salt, 310 000 rounds, 32 bytes). The one
    derivation of the package: documents (the database's salt) and the Setup URI (a salt of its own,
    :mod:`notegate.livesync.keys`) both start here."""
    return PBKDF2HMAC(hashes.SHA256(), 32, pbkdf2_salt, PBKDF2_ITERATIONS).derive(passphrase.encode("utf-8"))


#: PBKDF2 is slow by design: a Cipher derives once per passphrase and database salt, not per chunk.
_master_key = lru_cache(maxsize=4)(master_key)


def seal(master: bytes, plain: bytes) -> bytes:
    """``iv(12) | hkdf_salt(32) | AES-256-GCM(plain)`` under HKDF-SHA-256(master, hkdf_salt, info="") with a fresh
    salt and iv: octagonal-wheels' HKDF body, under a V2 document's ``%=`` and, after its PBKDF2 salt, inside a
    Setup URI's ``%$``."""
    hkdf_salt, iv = os.urandom(HKDF_SALT_BYTES), os.urandom(IV_BYTES)
    return iv + hkdf_salt + AESGCM(_data_key(master, hkdf_salt)).encrypt(iv, plain, None)


def unseal(master: bytes, raw: bytes) -> bytes:
    """The inverse of :func:`seal`: raises ``InvalidTag`` when the key does not open it, ValueError when it is
    too short to hold its iv, salt and tag."""
    if len(raw) < IV_BYTES + HKDF_SALT_BYTES + 16:
        raise ValueError("too short to hold its iv, key salt and tag")
    iv, hkdf_salt, sealed = raw[:IV_BYTES], raw[IV_BYTES:][:HKDF_SALT_BYTES], raw[IV_BYTES + HKDF_SALT_BYTES :]
    return AESGCM(_data_key(master, hkdf_salt)).decrypt(iv, sealed, None)


def _data_key(master: bytes, hkdf_salt: bytes) -> bytes:
    return HKDF(hashes.SHA256(), 32, hkdf_salt, b"").derive(master)


def new_sync_parameters() -> dict:
    """The sync parameters LiveSync creates when a database has none yet (a fresh random PBKDF2 salt)."""
    return {
        "_id": SYNC_PARAMETERS,
        "type": "sync-parameters",
        "protocolVersion": PROTOCOL_ADVANCED_E2EE,
        "pbkdf2salt": base64.b64encode(os.urandom(PBKDF2_SALT_BYTES)).decode("ascii"),
    }


def salt_of(parameters: dict) -> bytes:
    try:
        salt = base64.b64decode(str(parameters.get("pbkdf2salt", "")), validate=True)
    except (binascii.Error, ValueError) as exc:
        raise DocumentError("the database's PBKDF2 salt is not base64", rule="livesync-document-unsupported") from exc
    if len(salt) != PBKDF2_SALT_BYTES:
        raise DocumentError("the database has no usable PBKDF2 salt", rule="livesync-document-unsupported")
    return salt


class Cipher:
    """One database's encryption: the passphrase (held, never shown) and the database's PBKDF2 salt."""

    def __init__(self, passphrase: str, pbkdf2_salt: bytes) -> None:
        self._passphrase = passphrase
        self.salt = pbkdf2_salt
        self._master = _master_key(passphrase, pbkdf2_salt)
        # A key for chunk ids only (never for data): equal pieces share an id, and the id tells nothing about a
        # piece to whoever lacks the passphrase. Derived apart from the data keys by HKDF's info.
        self._id_key = HKDF(hashes.SHA256(), 32, pbkdf2_salt, b"notegate livesync chunk id").derive(self._master)
        self._path_secret = hashlib.sha256(passphrase.encode("utf-8")).hexdigest()

    def __repr__(self) -> str:  # never the passphrase
        return "Cipher(<passphrase held>)"

    def encrypt(self, text: str) -> str:
        return HKDF_PREFIX + base64.b64encode(seal(self._master, text.encode("utf-8"))).decode("ascii")

    def decrypt(self, data: str) -> str:
        if not data.startswith(HKDF_PREFIX):
            scheme = "LiveSync's older V1 encryption" if data.startswith(V1_PREFIX) else "an unknown encryption"
            raise DocumentError(f"the document uses {scheme}", rule="livesync-document-unsupported")
        try:
            raw = base64.b64decode(data[len(HKDF_PREFIX) :], validate=True)
        except (binascii.Error, ValueError) as exc:
            raise DocumentError(
                "an encrypted document that is not base64", rule="livesync-document-unsupported"
            ) from exc
        try:
            plain = unseal(self._master, raw)
        except ValueError as exc:
            raise DocumentError(
                "an encrypted document too short to hold its key salt", rule="livesync-document-unsupported"
            ) from exc
        except InvalidTag as exc:
            raise DocumentError(
                "the passphrase does not open the document", rule="livesync-passphrase-mismatch"
            ) from exc
        try:
            return plain.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise DocumentError("a decrypted document that is not UTF-8", rule="livesync-document-unsupported") from exc

    def chunk_id(self, piece: str) -> str:
        """``h:+`` (LiveSync's mark of an encrypted chunk) and a keyed hash of the piece (32 hex digits)."""
        return ENCRYPTED_CHUNK_PREFIX + hmac.new(self._id_key, piece.encode("utf-8"), hashlib.sha256).hexdigest()[:32]

    def obfuscated_id(self, path: str, *, case_insensitive: bool = True) -> str:
        """LiveSync's document id for ``path`` with path obfuscation on (path2id_base; a path without ``:``)."""
        name = path.lower() if case_insensitive else path
        return OBFUSCATED_PREFIX + hashlib.sha256(f"{self._path_secret}:{name}".encode()).hexdigest()

    def seal_meta(self, meta: dict) -> dict:
        """The metadata document as path obfuscation stores it: its facts inside the encrypted ``path``."""
        facts = {
            "path": meta["path"],
            "mtime": meta["mtime"],
            "ctime": meta["ctime"],
            "size": meta["size"],
            "children": meta.get("children", []),
        }
        sealed = ENCRYPTED_META_PREFIX + self.encrypt(json.dumps(facts, ensure_ascii=False, separators=(",", ":")))
        return {**meta, "path": sealed, "mtime": 0, "ctime": 0, "size": 0, "children": []}

    def open_meta(self, meta: dict) -> dict:
        """The metadata document with its sealed facts (path obfuscation) and encrypted eden opened."""
        out = dict(meta)
        path = meta.get("path")
        if isinstance(path, str) and path.startswith(ENCRYPTED_META_PREFIX):
            try:
                facts = json.loads(self.decrypt(path[len(ENCRYPTED_META_PREFIX) :]))
            except ValueError as exc:
                raise DocumentError(
                    "sealed note facts that are not JSON", rule="livesync-document-unsupported"
                ) from exc
            if not isinstance(facts, dict) or not isinstance(facts.get("path"), str):
                raise DocumentError("sealed note facts without a path", rule="livesync-document-unsupported")
            out.update({k: facts[k] for k in ("path", "mtime", "ctime", "size", "children") if k in facts})
        eden = meta.get("eden")
        if isinstance(eden, dict) and isinstance(eden.get(EDEN_HKDF_KEY), dict):
            try:
                opened = json.loads(self.decrypt(str(eden[EDEN_HKDF_KEY].get("data", ""))))
            except ValueError as exc:
                raise DocumentError("an encrypted eden that is not JSON", rule="livesync-document-unsupported") from exc
            out["eden"] = opened if isinstance(opened, dict) else {}
        return out

    def open_chunk(self, chunk: dict) -> dict:
        if chunk.get("e_") is not True:
            return chunk
        data = chunk.get("data")
        if not isinstance(data, str):
            raise DocumentError("an encrypted chunk without data", rule="livesync-document-unsupported")
        return {k: v for k, v in chunk.items() if k != "e_"} | {"data": self.decrypt(data)}

    def seal_chunk(self, chunk: dict) -> dict:
        return {**chunk, "data": self.encrypt(chunk["data"]), "e_": True}
