"""The server's heap, settled once it has started: what it loaded at start is kept out of every later collection.

Why: Python's cyclic garbage collector walks every tracked object of a generation when it collects it.  After
start the server holds a large, long-lived heap (the SDK's and pydantic's models, Starlette, every
environment's listing and tree caches); each *full* collection walked all of it again, and under 32 MCP
writers the collector took ~1.9 ms of the server's ~7.5 ms of CPU per commit (a callback timing
``gc.callbacks``: 1.3 ms in full collections, 0.6 in the younger two).  ``gc.freeze()`` moves everything alive
at that moment to a permanent generation the collector never walks (CPython's documented use: call it once
the process has loaded what it keeps, so later collections stay small), and a larger first threshold makes
collections of the youngest generation rarer: a request allocates thousands of short-lived objects
(h11 events, pydantic models, asyncio handles), nearly all freed by reference counting before they would
be collected.

What does not change: reference counting frees every object the moment it is unused, frozen or not; cycles
made after start are collected as before (only less often at the youngest generation); a frozen object that
later becomes garbage in a cycle stays, which for what exists at start (modules, classes, caches meant to
live as long as the process) is what it would do anyway.

:func:`bound_arenas` is the other half, the C heap: glibc's malloc gives threads that allocate at once arenas
of their own, up to eight per core, and each keeps the memory it once held.  The server's threads (the event
loop, the worker threads, the group commit's flushes) allocate at once all the time, and run mostly one at a
time anyway (the GIL).  Two arenas: 16-18 MB less peak RSS at 10,000 notes under 32 MCP writers (bench/RESULTS.md,
eighteenth session), no measurable change in commits/s.  An operator's own ``MALLOC_ARENA_MAX`` wins.
"""

from __future__ import annotations

import ctypes
import gc
import os

#: Allocations (net of frees) between collections of the youngest generation; CPython's default is 700.
#: 10,000 keeps a request's short-lived objects out of most collections; the older thresholds stay.
YOUNG_THRESHOLD = 10_000


#: glibc's ``mallopt`` parameter for the most arenas (``M_ARENA_MAX`` in malloc.h), and the server's value.
M_ARENA_MAX = -8
ARENAS = 2


def bound_arenas(arenas: int = ARENAS) -> bool:
    """Cap glibc malloc's arenas for this process (see the module's docstring); True when the cap was set.
    Called first by ``notegate serve``, before its threads exist (arenas made earlier stay).  Not glibc (musl,
    macOS), or ``MALLOC_ARENA_MAX`` set by the operator: left as it is."""
    if "MALLOC_ARENA_MAX" in os.environ:
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt  # the C library this process already runs on
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    return mallopt(M_ARENA_MAX, arenas) == 1


def settle() -> None:
    """Collect once, freeze what is left (the start-up heap), and collect the youngest generation less often.
    Called by the server once its environments are open, before it serves."""
    gc.collect()
    gc.freeze()
    _young, middle, old = gc.get_threshold()
    gc.set_threshold(max(YOUNG_THRESHOLD, _young), middle, old)
