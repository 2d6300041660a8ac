"""Fixtures shared by the index tests: a runtime on the suite's vault, its store (index not built), and a
fresh index beside it. A test module that needs another ``store`` or ``index`` defines its own."""

from __future__ import annotations

from pathlib import Path

import pytest

from notegate.config import load_config
from notegate.services.runtime import Runtime, policy_fingerprint
from notegate.vault.index import SearchIndex
from notegate.vault.store import VaultStore


@pytest.fixture
def rt(vault: Path):
    runtime = Runtime(load_config(vault))
    yield runtime
    runtime.close()


@pytest.fixture
def store(rt: Runtime) -> VaultStore:
    return rt.environment(None, index_now=False).store


@pytest.fixture
def index(rt: Runtime, tmp_path: Path):
    idx = SearchIndex(tmp_path / "index.sqlite", rt.classify, policy_fingerprint(rt.policy))
    yield idx
    idx.close()
