"""The server settles its start-up heap (doors/heap.py): frozen out of later collections, young collections rarer;
only ``notegate serve`` asks for it (an app served inside the tests' process leaves its collector alone)."""

from __future__ import annotations

import gc

import anyio
import pytest

from notegate.doors import heap
from notegate.doors.http import create_app
from notegate.services.runtime import Runtime


def test_settle_freezes_what_is_alive_and_collects_the_young_less_often() -> None:
    threshold = gc.get_threshold()
    try:
        heap.settle()
        assert gc.get_freeze_count() > 0
        assert gc.get_threshold() == (max(heap.YOUNG_THRESHOLD, threshold[0]), threshold[1], threshold[2])
    finally:
        gc.unfreeze()
        gc.set_threshold(*threshold)


@pytest.mark.parametrize("settle", [True, False])
def test_the_app_settles_its_heap_once_open_only_when_asked(
    runtime: Runtime, monkeypatch: pytest.MonkeyPatch, settle: bool
) -> None:
    seen: list[bool] = []
    monkeypatch.setattr(heap, "settle", lambda: seen.append(bool(runtime.config.environments)))
    app = create_app(runtime, settle_heap=settle)

    async def run() -> None:
        async with app.router.lifespan_context(app):
            pass

    anyio.run(run)
    assert seen == ([True] if settle else [])
