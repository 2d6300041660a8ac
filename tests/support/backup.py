"""Backups and restores through the CLI: an age key pair, a backup, a refusal with its exit status, a restore."""

from __future__ import annotations

import json
from pathlib import Path

import pyrage

from support import notegate

CHECKS = ["restore", "refs personal", "fsck personal", "state rows", "credential hashes", "index personal", "serve"]


def keypair(folder: Path, name: str = "key") -> tuple[Path, str]:
    identity = pyrage.x25519.Identity.generate()
    path = folder / f"{name}.txt"
    path.write_text(f"# created: for a test\n# public key: {identity.to_public()}\n{identity}\n", encoding="utf-8")
    path.chmod(0o600)
    return path, str(identity.to_public())


def make_backup(config: Path, to: Path, recipient: str) -> Path:
    done = notegate("backup", "--config", str(config), "--to", str(to), "--recipient", recipient, "--json")
    assert done.returncode == 0, done.stderr
    return Path(json.loads(done.stdout)["folder"])


def refused_with(done, rule: str) -> str:
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert f"Refused [{rule}]: " in done.stderr, done.stderr
    return done.stderr


def restore(backup: Path, *args: str):
    return notegate("restore", "--from", str(backup), *args)
