"""A crashing upstream is restarted with backoff (the wait doubles per crash in a row), never in a loop, and a
call while it is down is refused at once by its rule."""

from __future__ import annotations

import shutil
from pathlib import Path

import anyio
import pytest

from notegate.errors import NotegateError
from notegate.tools.install import Launch
from notegate.tools.upstream import Upstream

pytestmark = pytest.mark.anyio


async def _nothing(_upstream: Upstream) -> None:
    return None


async def test_a_crashing_upstream_restarts_with_doubling_waits(tmp_path: Path) -> None:
    false = shutil.which("false")
    assert false is not None
    upstream = Upstream(
        mount="broken",
        launch=Launch((false,), tmp_path),
        environment=dict,
        on_listing=_nothing,
        restart_seconds=0.05,
    )
    with anyio.move_on_after(1.6):
        await upstream.run()
    # waits 0.05, 0.1, 0.2, 0.4, 0.8: at most six starts in 1.6 s (a loop would make hundreds)
    assert 3 <= upstream.restarts <= 6, upstream.restarts
    assert upstream.crashes == upstream.restarts and upstream.status == "down"
    with pytest.raises(NotegateError) as refused:
        await upstream.call("anything", {}, 1.0)
    assert refused.value.rule == "tools-upstream-down"
