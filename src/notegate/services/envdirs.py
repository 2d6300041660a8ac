"""Where each environment's files live under the server's state directory: one fact, read by the runtime
that opens them, the doctor and the backup that check them, and the disk-space check that measures them.

Why a module of its own: the disk-space check (services/diskspace.py) must name the clone's disk, and the
runtime must recognise a full disk; with the layout in the runtime the two imported each other."""

from __future__ import annotations

from pathlib import Path

#: The server's own clone of an environment's origin, inside :func:`env_dir`.
CLONE_NAME = "vault.git"


def env_dir(state_dir: Path, name: str) -> Path:
    """Where one environment's clone, index and write lock live (the doctor looks here too)."""
    return state_dir / "envs" / name
