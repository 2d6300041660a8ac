"""The linear-time measuring stick (tests/support/timing.py) tells linear from quadratic, under load too."""

from __future__ import annotations

import re

from support.timing import BOUND, assert_catches_quadratic, fill, measure

_WORD = re.compile(r"[a-z]+")


def _linear_python(text: str) -> None:
    """Linear, and slow per character (a Python loop), like most gates."""
    for _ in text:
        pass


def _linear_regex(text: str) -> None:
    """Linear, fast (in C): many short matches."""
    _WORD.findall(text)


def test_a_quadratic_scan_fails() -> None:
    """Failed on its ratio, not excused as fast enough (the stand-in runs at ~1 MB/s)."""
    m = assert_catches_quadratic(lambda n: fill("ab ", n))
    assert m.ratio > BOUND


def test_linear_functions_pass() -> None:
    for fn in (_linear_python, _linear_regex):
        m = measure(fn, lambda n: fill("ab ", n))
        assert m.linear and m.ratio < BOUND, (fn.__name__, str(m))
