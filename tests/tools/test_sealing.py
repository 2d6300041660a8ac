"""Sealed upstream credentials: the process that stores one can never read it back; only the tools process's
key opens it; a sealed value copied to another mount opens nothing."""

from __future__ import annotations

import ast
import gc
import time
from pathlib import Path

import pyrage
import pytest

from notegate.config import load_config
from notegate.errors import NotegateError
from notegate.services.runtime import Runtime
from notegate.state import StateDB
from notegate.tools.sealing import SEAL_PURPOSE, CredentialSealer, Opener, keygen, read_key_file, write_key_file

SECRET = "the-upstream-password-5678"
SRC = Path(__file__).resolve().parents[2] / "src" / "notegate"
#: The only modules that may open a sealed credential (the tools process), and backups' own restore, which
#: opens a backup with an identity file the owner passes on the command line (another key, another job).
#: The tools process's modules, and two that open something else with a key of their own: a backup's restore
#: (the owner's age identity) and the LiveSync Setup URI's reader (AES-GCM under the passphrase printed with it).
MAY_OPEN = {
    "tools/sealing.py",
    "tools/app.py",
    "tools/remote.py",
    "cli/tools.py",
    "services/restore.py",
    "livesync/keys.py",
    "livesync/e2ee.py",  # LiveSync documents under the bridge's passphrase (AES-GCM), never a tools credential
}


@pytest.fixture
def sealed(vault: Path, tmp_path: Path):
    state = StateDB.for_config(load_config(vault))
    identity, recipient = keygen()
    state.set_tools_key(SEAL_PURPOSE, recipient, time.time())
    state.add_mount(
        {
            "name": "gh",
            "catalog": "github",
            "account": "me",
            "environment": "personal",
            "variables": ("TOKEN",),
            "write_tools": (),
            "created_at": 0.0,
        }
    )
    state.add_mount(
        {
            "name": "other",
            "catalog": "github",
            "account": "you",
            "environment": "personal",
            "variables": ("TOKEN",),
            "write_tools": (),
            "created_at": 0.0,
        }
    )
    CredentialSealer(state).store("gh", "TOKEN", SECRET, time.time())
    key = tmp_path / "tools.key"
    write_key_file(key, identity)
    yield state, key
    state.close()


def test_the_tools_key_opens_a_stored_credential(sealed) -> None:
    state, key = sealed
    assert read_key_file(key).open("gh", "TOKEN", state.sealed_credentials("gh")["TOKEN"]) == SECRET


def test_a_sealed_value_moved_to_another_mount_opens_nothing(sealed) -> None:
    state, key = sealed
    value = state.sealed_credentials("gh")["TOKEN"]
    state.store_sealed_credential("other", "TOKEN", value, time.time())
    with pytest.raises(NotegateError) as refused:
        read_key_file(key).open("other", "TOKEN", state.sealed_credentials("other")["TOKEN"])
    assert refused.value.rule == "tools-credential-unopenable"


def test_another_key_opens_nothing(sealed) -> None:
    state, _key = sealed
    with pytest.raises(NotegateError) as refused:
        Opener(keygen()[0]).open("gh", "TOKEN", state.sealed_credentials("gh")["TOKEN"])
    assert refused.value.rule == "tools-credential-unopenable"


def test_a_key_file_others_may_read_is_refused(tmp_path: Path) -> None:
    key = tmp_path / "k"
    write_key_file(key, keygen()[0])
    key.chmod(0o644)
    with pytest.raises(NotegateError) as refused:
        read_key_file(key)
    assert refused.value.rule == "tools-key-file"


def test_the_database_and_config_hold_no_identity_and_no_clear_credential(sealed, vault: Path) -> None:
    state, _key = sealed
    copy = vault.parent / "copy.sqlite"
    state.backup_to(copy)
    everything = copy.read_bytes() + vault.read_bytes()
    assert SECRET.encode() not in everything and b"AGE-SECRET-KEY" not in everything
    # Every stored value that is text, tried as an identity: none opens the credential.
    sealed_value = state.sealed_credentials("gh")["TOKEN"]
    for row in state.query("SELECT public_key FROM tools_keys"):
        with pytest.raises((pyrage.IdentityError, ValueError, NotegateError)):
            Opener(row[0]).open("gh", "TOKEN", sealed_value)


def test_the_knowledge_service_holds_no_private_key_after_storing(sealed, vault: Path) -> None:
    """Build the knowledge service (the MCP door, the console: one app) in this process and store a credential
    through its state: afterwards no object in the process is an age identity or holds one as text."""
    from notegate.doors.http import create_app

    _state, _key = sealed
    runtime = Runtime(load_config(vault))
    create_app(runtime)
    CredentialSealer(runtime.state).store("gh", "TOKEN", SECRET + "-again", time.time())
    gc.collect()
    for obj in gc.get_objects():
        assert not isinstance(obj, (pyrage.x25519.Identity, Opener)), "a private key is held"
    runtime.close()


def test_no_code_path_outside_the_tools_process_opens_a_credential() -> None:
    """Scan the source: only the tools process's modules (and backups' restore, another key) name the
    opener, the key file reader, an age identity or age's decrypt."""
    names = {"Opener", "read_key_file", "decrypt", "decrypt_file", "decrypt_io", "Identity"}
    found = set()
    for path in SRC.rglob("*.py"):
        rel = path.relative_to(SRC).as_posix()
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            name = node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else None
            if name in names and rel not in MAY_OPEN:
                found.add((rel, name))
    assert found == set()
