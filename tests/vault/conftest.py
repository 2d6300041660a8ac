"""Fixtures shared by the vault tests: a runtime on the suite's vault, its store (index not built), and a
fresh index beside it; and for the store's own tests a bare ``origin`` and a ``seeded_store`` pushing to it.
A test module that needs another ``store``, ``origin`` or ``index`` defines its own."""

from __future__ import annotations

from pathlib import Path

import pygit2
import pytest

from notegate.services.runtime import Runtime, policy_fingerprint
from notegate.vault.index import SearchIndex
from notegate.vault.store import Author, Change, VaultStore

SEED_AUTHOR = Author("Tester", "tester")


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


@pytest.fixture
def origin(tmp_path: Path) -> Path:
    """A bare origin on this machine, ``main`` its head and no commit yet."""
    path = tmp_path / "origin.git"
    pygit2.init_repository(str(path), bare=True, initial_head="main")
    return path


@pytest.fixture
def seeded_store(tmp_path: Path, origin: Path) -> VaultStore:
    """A store pushing to ``origin`` (a module's own ``origin`` if it defines one), with two notes committed:
    ``a.md`` and ``dir/b.md``."""
    s = VaultStore.create("personal", tmp_path / "srv" / "vault.git", str(origin))
    s.commit([Change("a.md", b"alpha\n"), Change("dir/b.md", b"beta\n")], {}, SEED_AUTHOR, "seed")
    return s
