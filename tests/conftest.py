"""Fixtures: real vault directories, runtimes and callers. No mocks of git, SQLite or HTTP."""

from __future__ import annotations

from pathlib import Path

import pytest

from notegate.config import load_config
from notegate.policy import Caller
from notegate.services.notes import NotesService
from notegate.services.runtime import Runtime
from notegate.services.vaultinit import init_directory


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    """A fresh `notegate init` directory; returns its config path."""
    return init_directory(tmp_path / "vault")


@pytest.fixture
def runtime(vault: Path):
    rt = Runtime(load_config(vault))
    yield rt
    rt.close()


@pytest.fixture
def notes(runtime: Runtime) -> NotesService:
    return NotesService(runtime)


def make_caller(
    tier: str = "trusted", client_class: str = "workstation", login: str = "owner", client: str = "laptop"
) -> Caller:
    return Caller(
        login=login,
        display_name=login.title(),
        client=client,
        client_class=client_class,
        tier=tier,
        session="test-session",
    )


@pytest.fixture
def trusted() -> Caller:
    return make_caller()


@pytest.fixture
def restricted() -> Caller:
    return make_caller(tier="restricted", client_class="hosted", login="phone", client="chat-app")
