"""Fixtures for hook tests: one real server per module (tests isolate by project name), tokens, homes."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path

import pytest

from notegate.hooks.project import slug
from notegate.services.vaultinit import init_directory
from support import running
from support.hookrun import Served

_names = itertools.count(1)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """A fresh `notegate init` vault served by a real `notegate serve` subprocess."""
    config = init_directory(tmp_path_factory.mktemp("hookvault") / "vault")
    with running(config) as server:
        yield Served(config, server)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    return path


@pytest.fixture
def project_name(request: pytest.FixtureRequest) -> str:
    """A project name unique to the test, so tests sharing a server never see each other's notes."""
    return slug(f"p{next(_names)}-{request.node.name.removeprefix('test_')[:40]}") or "project"
