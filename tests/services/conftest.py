"""Fixtures the service tests share: a runtime on a fresh vault whose clock the test moves by hand."""

from __future__ import annotations

from pathlib import Path

import pytest

from notegate.config import load_config
from notegate.services.runtime import Runtime


@pytest.fixture
def clock() -> list[float]:
    """The runtime's clock: ``clock[0] += 3601`` moves time on an hour, no sleeping."""
    return [1_800_000_000.0]


@pytest.fixture
def rt(vault: Path, clock: list[float]):
    runtime = Runtime(load_config(vault), clock=lambda: clock[0])
    yield runtime
    runtime.close()
