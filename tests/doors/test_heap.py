"""The server settles its start-up heap (doors/heap.py): frozen out of later collections, young collections rarer;
only ``notegate serve`` asks for it (an app served inside the tests' process leaves its collector alone)."""

from __future__ import annotations

import gc
import os
import platform
import subprocess
import sys

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


ARENAS_AFTER_THREADS = """
import ctypes, ctypes.util, os, sys, tempfile, threading
from notegate.doors import heap
bound = heap.bound_arenas() if sys.argv[1] == "bound" else None
def work():
    for _ in range(200):
        [bytearray(5000) for _ in range(50)]
threads = [threading.Thread(target=work) for _ in range(8)]
for t in threads: t.start()
for t in threads: t.join()
libc = ctypes.CDLL(ctypes.util.find_library("c"))
libc.fopen.restype = ctypes.c_void_p
libc.fopen.argtypes = (ctypes.c_char_p, ctypes.c_char_p)
libc.malloc_info.argtypes = (ctypes.c_int, ctypes.c_void_p)
libc.fclose.argtypes = (ctypes.c_void_p,)
path = os.path.join(tempfile.mkdtemp(), "info.xml")
stream = libc.fopen(path.encode(), b"w")
libc.malloc_info(0, stream)
libc.fclose(stream)
print(bound, open(path).read().count("<heap nr="))
"""


def _arenas(mode: str, **env: str) -> tuple[str, int]:
    clean = {k: v for k, v in os.environ.items() if k != "MALLOC_ARENA_MAX"}
    out = subprocess.run(
        [sys.executable, "-c", ARENAS_AFTER_THREADS, mode],
        env={**clean, **env},
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return out[0], int(out[1])


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="glibc's malloc only")
def test_the_server_keeps_two_malloc_arenas_whatever_its_threads() -> None:
    """Eight threads allocating: glibc gives each an arena of its own unless capped (each keeps what it once held:
    the server's peak RSS); capped, they share two.  An operator's MALLOC_ARENA_MAX is left as it is."""
    assert _arenas("bound") == ("True", heap.ARENAS)
    unbound = _arenas("free")
    assert unbound[0] == "None" and unbound[1] > heap.ARENAS
    assert _arenas("bound", MALLOC_ARENA_MAX="4")[0] == "False"
