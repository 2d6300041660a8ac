"""Upstream credentials, sealed: encrypted to a public key the database holds, opened only by the tools process.

Theory of operation
-------------------
* ``notegate tools keygen`` makes one age X25519 identity (the same construction as ``notegate backup``:
  X25519, HKDF-SHA256, ChaCha20-Poly1305, via pyrage). The identity is written once to a file the owner hands
  to the tools process as its credential file (systemd ``LoadCredential``, a Kubernetes secret); the
  recipient (the public half) goes to ``tools_keys`` as purpose 'seal'. No config key, no vault note and no
  table ever holds the identity.
* Any process with the database can seal (:class:`CredentialSealer`): the console, the CLI, the knowledge
  service. None of them can open: there is no code path from a sealed value back to clear text but
  :class:`Opener`, which needs the identity, and only ``notegate tools serve`` builds one (from its key
  file). So a credential stored a second ago cannot be read back by the process that stored it; there is no
  "show secret", only "store again".
* What is sealed binds the credential to its place: the plaintext names the mount and the variable, and the
  opener refuses a sealed value found under another (copying a row from one mount to another in the database
  opens nothing).
* A database copy plus the config reveal nothing: both hold only recipients and sealed bytes.
"""

from __future__ import annotations

import base64
import json
import os
import stat
from pathlib import Path

import pyrage

from notegate.errors import NotegateError

#: The purpose under which ``tools_keys`` holds the recipient credentials are sealed to.
SEAL_PURPOSE = "seal"
#: The name a systemd unit gives the key file (``LoadCredential=notegate-tools-key:/etc/notegate/tools.key``):
#: the CLI finds it in ``$CREDENTIALS_DIRECTORY`` under this name.
KEY_CREDENTIAL_NAME = "notegate-tools-key"


def keygen() -> tuple[str, str]:
    """A new identity and its recipient, as age writes them (``AGE-SECRET-KEY-1…``, ``age1…``)."""
    identity = pyrage.x25519.Identity.generate()
    return str(identity), str(identity.to_public())


def _plaintext(mount: str, variable: str, value: str) -> bytes:
    return json.dumps({"mount": mount, "variable": variable, "value": value}, separators=(",", ":")).encode()


def seal(recipient: str, mount: str, variable: str, value: str) -> str:
    """``value`` sealed to ``recipient`` for (mount, variable): base64 of an age file."""
    try:
        to = pyrage.x25519.Recipient.from_str(recipient)
    except (pyrage.RecipientError, ValueError) as exc:
        raise NotegateError("the stored seal recipient is not an age recipient", rule="tools-seal-key-missing") from exc
    return base64.b64encode(pyrage.encrypt(_plaintext(mount, variable, value), [to])).decode("ascii")


class CredentialSealer:
    """Stores credentials for mounts: seals each to the database's recipient. Write-only by construction: it
    holds no identity and has no method that returns a stored value."""

    def __init__(self, state) -> None:
        self.state = state

    def store(self, mount: str, variable: str, value: str, now: float) -> None:
        recipient = self.state.tools_key(SEAL_PURPOSE)
        if not recipient:
            raise NotegateError("no seal key is stored yet, so nothing can be sealed", rule="tools-seal-key-missing")
        mounts = {m["name"]: m for m in self.state.mounts()}
        if mount not in mounts:
            raise NotegateError(f"there is no mount named '{mount}'", rule="tools-unknown")
        if variable not in mounts[mount]["variables"]:
            raise NotegateError(f"the mount '{mount}' declares no variable {variable}", rule="tools-mount-invalid")
        self.state.store_sealed_credential(mount, variable, seal(recipient, mount, variable, value), now)


class Opener:
    """Opens sealed credentials: the tools process's alone (it is built from the key file at its start)."""

    def __init__(self, identity: str) -> None:
        try:
            self._identity = pyrage.x25519.Identity.from_str(identity.strip())
        except (pyrage.IdentityError, ValueError) as exc:
            raise NotegateError("the key file holds no age identity", rule="tools-key-file") from exc
        self.recipient = str(self._identity.to_public())

    def __repr__(self) -> str:  # never the identity, whatever prints this
        return f"Opener(recipient={self.recipient})"

    def open(self, mount: str, variable: str, sealed: str) -> str:
        """The clear value of one sealed credential stored for (mount, variable)."""
        try:
            data = json.loads(pyrage.decrypt(base64.b64decode(sealed), [self._identity]))
        except (pyrage.DecryptError, ValueError) as exc:
            raise NotegateError(
                f"the credential {variable} of mount '{mount}' cannot be opened with this key",
                rule="tools-credential-unopenable",
            ) from exc
        if data.get("mount") != mount or data.get("variable") != variable or not isinstance(data.get("value"), str):
            raise NotegateError(
                f"the credential stored as {variable} of mount '{mount}' was sealed for another place",
                rule="tools-credential-unopenable",
            )
        return data["value"]


def read_key_file(path: Path) -> Opener:
    """The tools process's opener from its key file; a file others may read is refused (it is the one secret
    that opens every upstream credential)."""
    try:
        mode = path.stat().st_mode
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise NotegateError(f"the key file cannot be read ({exc.strerror})", rule="tools-key-file") from exc
    if mode & stat.S_IROTH:
        raise NotegateError("the key file is readable by every user (chmod 600 it)", rule="tools-key-file")
    return Opener(text)


def write_key_file(path: Path, identity: str) -> None:
    """Write a new identity to a file only its owner reads (refusing to replace one)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(identity + "\n")
