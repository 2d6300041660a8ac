"""Fixtures shared by the index tests: a runtime on the suite's vault, its store (index not built), and a
fresh index beside it. A test module that needs another ``store`` or ``index`` defines its own."""

from __future__ import annotations

from pathlib import Path

import pytest

from notegate.services.runtime import Runtime, policy_fingerprint
from notegate.vault.index import SearchIndex
from notegate.vault.store import VaultStore


@pytest.fixture
def rt(runtime: Runtime) -> Runtime:
    """The suite's ``runtime`` fixture (tests/conftest.py), under the short name the index tests use."""
    return runtime


@pytest.fixture
def store(rt: Runtime) -> VaultStore:
    return rt.environment(None, index_now=False).store


@pytest.fixture
def index(rt: Runtime, tmp_path: Path):
    idx = SearchIndex(tmp_path / "index.sqlite", rt.classify, policy_fingerprint(rt.policy))
    yield idx
    idx.close()
