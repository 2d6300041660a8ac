"""Linear or not: one measuring stick for every test that proves a parser or gate runs in linear time.

Theory of operation.  A function is timed on one hostile shape at two sizes, ``n`` and ``8n``: linear code
takes ~8x as long, quadratic ~64x.  The verdict is the ratio of the best (lowest) sample at each size
against :data:`BOUND` (20, about the geometric middle), so neither a cache effect (a linear ratio of 10-12)
nor noise moves it across:

* Time is the CPU time of the calling thread (:func:`time.thread_time`), not the wall clock: on a shared
  machine a test process waits for a core most of the time, and waiting is not counted.  What load still
  does (a cold cache, a busy sibling core) only ever inflates a sample, so the best of several is close
  to the true cost.
* Samples are interleaved (small, large, small, large...), so a burst of load hits both sizes alike.
  A function faster than :data:`MIN_SAMPLE_SECONDS` at ``n`` is called in a loop, the same number of
  times at both sizes, so that one sample is never a handful of clock ticks.
* Early stop: one round settles "linear" when its ratio is under half the bound (a quadratic function
  would need its small sample inflated 6x for that, which CPU time never is); otherwise at least
  :data:`MIN_ROUNDS` rounds, then stop as soon as the ratio is under the bound (linear) or over twice the
  bound (quadratic); at most :data:`MAX_ROUNDS`.  Load can make a linear function look worse for a
  while, so the verdict "not linear" needs every round to say so.
* The cyclic garbage collector is off while samples are taken: a full collection walks every object of the
  process, so its cost follows the rest of the test session's heap, not the function (a parse making 26,000
  small tuples measured 25.9 inside the whole suite and under 12 alone).  Nothing is collected before
  either: with the collector off, garbage left by earlier tests costs the samples nothing, and a full
  collection of a worker's heap took ~0.2 s a measure (half of tests/safety's time: 227 measures, 46 s).
* A function over :data:`FAST_ENOUGH_BYTES_PER_SECOND` at ``8n`` passes whatever its ratio: at that speed
  its ratio is the input falling out of the CPU cache, and a quadratic scan of ``8n`` could not be that
  fast (the quadratic stand-in below runs at ~1 MB/s at 128 KiB).

Sizes: 16 KiB and 128 KiB by default.  A quadratic rule's extra work at 16 KiB is already ~16 K times the
linear work per character, so smaller than the review's 128 KiB shapes still shows it, at 1/20 of the cost.
Every file that uses the helper also shows, with its own sizes, that :func:`quadratic` fails it.
"""

from __future__ import annotations

import contextlib
import gc
import time
from collections.abc import Callable
from dataclasses import dataclass

KIB = 1024
SMALL = 16 * KIB
FACTOR = 8
#: Linear measures ~8, quadratic ~64.
BOUND = 20.0
#: The least CPU time one sample at the small size takes (the function is looped to reach it).
MIN_SAMPLE_SECONDS = 0.003
MIN_ROUNDS = 2
MAX_ROUNDS = 6
#: At 8n this fast, a function cannot be quadratic in any way that matters (see the module docstring).
FAST_ENOUGH_BYTES_PER_SECOND = 250e6


@dataclass(frozen=True)
class Measure:
    ratio: float  # best time at the large size over best time at the small size
    per_call: float  # CPU seconds per call at the large size
    large_chars: int
    rounds: int

    @property
    def linear(self) -> bool:
        return self.ratio < BOUND or self.large_chars / max(self.per_call, 1e-9) > FAST_ENOUGH_BYTES_PER_SECOND

    def __str__(self) -> str:
        return (
            f"ratio {self.ratio:.1f} for {FACTOR}x the input (bound {BOUND:g}), {self.per_call * 1e3:.2f} ms/call "
            f"at {self.large_chars} chars, {self.rounds} rounds"
        )


def fill(unit: str, size: int) -> str:
    """``unit`` repeated to exactly ``size`` characters."""
    return (unit * (size // len(unit) + 1))[:size]


def _quiet(fn: Callable[[str], object], text: str) -> None:
    with contextlib.suppress(ValueError):  # refusing fast is fine (FormatError is a ValueError); slowly is not
        fn(text)


def _sample(fn: Callable[[str], object], text: str, loops: int, clock: Callable[[], float]) -> float:
    started = clock()
    for _ in range(loops):
        _quiet(fn, text)
    return clock() - started


def measure(
    fn: Callable[[str], object],
    build: Callable[[int], str],
    small: int = SMALL,
    *,
    factor: int = FACTOR,
    clock: Callable[[], float] = time.thread_time,
) -> Measure:
    """Time ``fn`` on ``build(small)`` and ``build(factor * small)`` as the module docstring describes."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        return _measure(fn, build, small, factor, clock)
    finally:
        if enabled:
            gc.enable()


def _measure(
    fn: Callable[[str], object], build: Callable[[int], str], small: int, factor: int, clock: Callable[[], float]
) -> Measure:
    a, b = build(small), build(factor * small)
    assert len(b) >= 0.75 * factor * len(a), (len(a), len(b))
    first = _sample(fn, a, 1, clock)  # the warm-up: compiled patterns, lazily built tables
    once = min(first, _sample(fn, a, 1, clock))
    loops = max(1, min(10_000, int(MIN_SAMPLE_SECONDS / max(once, 1e-7)) + 1))
    best_small = best_large = float("inf")
    ratio = float("inf")
    rounds = 0
    while rounds < MAX_ROUNDS:
        rounds += 1
        best_small = min(best_small, _sample(fn, a, loops, clock))
        best_large = min(best_large, _sample(fn, b, loops, clock))
        ratio = best_large / max(best_small, 1e-9)
        if ratio < BOUND / 2 or (rounds >= MIN_ROUNDS and (ratio < BOUND or ratio > 2 * BOUND)):
            break
    return Measure(ratio, best_large / loops, len(b), rounds)


def assert_linear(fn: Callable[[str], object], build: Callable[[int], str], small: int = SMALL) -> Measure:
    """Fail unless ``fn`` grows linearly from ``build(small)`` to ``build(8 * small)``."""
    m = measure(fn, build, small)
    assert m.linear, str(m)
    return m


def quadratic(text: str) -> None:
    """A deliberately quadratic scan (each 64th position re-reads the rest, in C): the stand-in every
    linear-time test file must show it catches."""
    for i in range(0, len(text), 64):
        text.count("\x00", i)


def assert_catches_quadratic(build: Callable[[int], str], small: int = SMALL) -> Measure:
    """The measuring stick itself, at a file's own sizes: the quadratic stand-in must fail it."""
    m = measure(quadratic, build, small)
    assert not m.linear, str(m)
    return m
