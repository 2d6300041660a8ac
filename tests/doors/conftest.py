"""A real `notegate serve` subprocess on the test's vault, for every door test that needs one."""

from __future__ import annotations

from pathlib import Path

import pytest

from support import running


@pytest.fixture
def served(vault: Path):
    with running(vault) as server:
        yield server
