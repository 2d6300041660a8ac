"""Fixtures for the git door: a real `notegate init` origin (hook installed) and a scratch repository."""

from __future__ import annotations

from pathlib import Path

import pytest

from notegate.services.vaultinit import init_directory
from sync.gitstreams import Origin, scratch_of


@pytest.fixture
def door(tmp_path: Path) -> Origin:
    config = init_directory(tmp_path / "vault")
    origin = tmp_path / "vault" / "origin.git"
    return Origin(config=config, origin=origin, scratch=scratch_of(origin, tmp_path / "scratch.git"))
