"""Fixtures for the git door: a real `notegate init` origin (hook installed) and a scratch repository."""

from __future__ import annotations

from pathlib import Path

import pytest

from notegate.config import load_config
from notegate.sync.hookfile import install_hook
from support.gitstreams import Origin, scratch_of


@pytest.fixture
def door(vault: Path, tmp_path: Path) -> Origin:
    """The `notegate init` directory of the ``vault`` fixture (a copy of one init made earlier, at
    tmp_path/vault) with its pre-receive hook installed again, as init does, so it names this copy's config."""
    origin = vault.parent / "origin.git"
    install_hook(origin, vault, load_config(vault).default_environment)
    return Origin(config=vault, origin=origin, scratch=scratch_of(origin, tmp_path / "scratch.git"))
