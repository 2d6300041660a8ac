"""A LiveSync device's key pair, and the Setup URI that hands its private key to the device once.

notegate generates the pair, stores the public key (SPKI PEM) in the state database and shows the private key
(PKCS#8 PEM, what LiveSync's "JWT Key" setting takes for ES256/ES512) exactly once, inside the LiveSync
settings the owner imports on the device. Nothing here keeps it.

The Setup URI is LiveSync's own format (read from its common library and octagonal-wheels, not copied):
``obsidian://setuplivesync?settings=`` + encodeURIComponent of ``"%$" + base64(pbkdf2_salt(32) | iv(12) |
hkdf_salt(32) | AES-256-GCM(settings JSON))``, the key being HKDF-SHA-256(salt=hkdf_salt, info="") of
PBKDF2-SHA-256(passphrase, pbkdf2_salt, 310 000 iterations): the body end-to-end encryption writes
(:func:`notegate.livesync.e2ee.seal`, the one derivation), behind a PBKDF2 salt of its own instead of the
database's. The passphrase is printed beside the URI: the URI alone, pasted into a chat or a screenshot, does
not give the key away.
"""

from __future__ import annotations

import base64
import json
import os
import re
import secrets
from dataclasses import dataclass
from urllib.parse import quote

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from notegate.livesync.e2ee import PBKDF2_SALT_BYTES, master_key, seal, unseal

SETUP_URI_BASE = "obsidian://setuplivesync?settings="
#: LiveSync's prefix for a string encrypted with an ephemeral PBKDF2 salt (octagonal-wheels' hkdf module).
SALTED_PREFIX = "%$"
_CURVES = {"ES256": ec.SECP256R1, "ES512": ec.SECP521R1}
_DEVICE_NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,39}")


def is_livesync_device_name(name: str) -> bool:
    return bool(_DEVICE_NAME.fullmatch(name))


def new_kid(name: str) -> str:
    """A fresh kid for a device called ``name``: the name (for people reading the audit) and 8 random hex
    digits, so a device enrolled again after a revocation never shares the kid its old tokens name."""
    return f"{name}-{secrets.token_hex(4)}"


@dataclass(frozen=True)
class KeyPair:
    algorithm: str
    private_pem: str  # PKCS#8: shown once, never stored
    public_pem: str  # SPKI: what the state database keeps


def generate_key_pair(algorithm: str) -> KeyPair:
    curve = _CURVES[algorithm]
    key = ec.generate_private_key(curve())
    private_pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode("ascii")
    public_pem = (
        key.public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode("ascii")
    )
    return KeyPair(algorithm, private_pem, public_pem)


def device_settings(*, uri: str, database: str, kid: str, algorithm: str, private_pem: str, minutes: int = 5) -> dict:
    """The LiveSync settings a device needs to reach the gate with its own JWT (the names are LiveSync's)."""
    return {
        "remoteType": "",  # CouchDB
        "couchDB_URI": uri,
        "couchDB_DBNAME": database,
        "couchDB_USER": kid,
        "couchDB_PASSWORD": "",
        "useJWT": True,
        "jwtAlgorithm": algorithm,
        "jwtKey": private_pem,
        "jwtKid": kid,
        "jwtSub": kid,
        "jwtExpDuration": minutes,
    }


def encrypt_setting_string(text: str, passphrase: str) -> str:
    """``%$`` + base64(a fresh PBKDF2 salt | the sealed text): octagonal-wheels' ``encryptWithEphemeralSalt``."""
    pbkdf2_salt = os.urandom(PBKDF2_SALT_BYTES)
    sealed = seal(master_key(passphrase, pbkdf2_salt), text.encode("utf-8"))
    return SALTED_PREFIX + base64.b64encode(pbkdf2_salt + sealed).decode("ascii")


def decrypt_setting_string(sealed: str, passphrase: str) -> str:
    """The inverse (for tests and ``device add --check``); raises on a wrong passphrase or a damaged string."""
    if not sealed.startswith(SALTED_PREFIX):
        raise ValueError("not a salted LiveSync string")
    raw = base64.b64decode(sealed[len(SALTED_PREFIX) :])
    pbkdf2_salt, body = raw[:PBKDF2_SALT_BYTES], raw[PBKDF2_SALT_BYTES:]
    return unseal(master_key(passphrase, pbkdf2_salt), body).decode("utf-8")


def setup_uri(settings: dict, passphrase: str) -> str:
    """LiveSync's Setup URI for ``settings``, encrypted with ``passphrase`` (encodeURIComponent's safe set)."""
    sealed = encrypt_setting_string(json.dumps(settings), passphrase)
    return SETUP_URI_BASE + quote(sealed, safe="-_.!~*'()")


def new_passphrase() -> str:
    return secrets.token_urlsafe(18)
