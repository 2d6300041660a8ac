"""Every floor gate runs in linear time on hostile shapes up to the 1 MiB note limit (issue 8 item 3).

Measured as a ratio between two input sizes (n and 4n), never an absolute time: after a warm-up, the best of
three runs at each size, and the ratio must stay under 8 (quadratic would be 16). A review found
``<!--`` x 128 KiB taking 17.7 s in the rendered view's comment regex; these shapes are the ones it tried.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest

from notegate.safety import floor_chars
from notegate.safety.floor import check_item, check_text, mentions_instruction_file
from notegate.safety.rendered import rendered_views

SMALL = 128 * 1024
LARGE = 4 * SMALL
MAX_RATIO = 8.0

SHAPES = {
    "comment-open": "<!--",
    "lt": "<",
    "bracket": "[",
    "link-open": "](",
    "entity-open": "&#",
    "entity-named": "&amp",
    "quote": '"',
    "backslash": "\\",
    "stars": "*",
    "underscores": "_",
    "spaces": " ",
    "newline-spaces": "\n   ",
    "name-prefix": "CLAUDE.",
    "dot-m": ".m",
    "dot-zwsp": ".\u200b",
    "star-dot": "*.",
    "tag-open": "<a ",
    "tag": "<b>",
    "combining": "\u0301",
    "base-marks": "a\u0301\u0302",
    "cr": "\r",
    "blank": "\u2003",
    "ivs": "\u845b\U000e0100",
}

GATES: dict[str, Callable[[str], object]] = {
    "check_item": check_item,
    "check_text": check_text,
    "names": mentions_instruction_file,
    "rendered": rendered_views,
}


def _best_of_three(fn: Callable[[str], object], text: str, repeat: int = 1) -> float:
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        for _ in range(repeat):
            fn(text)
        best = min(best, time.perf_counter() - start)
    return best


def _ratio(fn: Callable[[str], object], unit: str) -> float:
    """Best-of-three time at 4n over best-of-three at n; on a busy machine, the lowest of up to three tries.

    A fast gate is called ``repeat`` times per sample so the small input takes at least 20 ms (a timer
    tick or a context switch cannot dominate). Noise only ever inflates one try; a quadratic gate gives
    about 16 on every try.
    """
    small = (unit * (SMALL // len(unit) + 1))[:SMALL]
    large = (unit * (LARGE // len(unit) + 1))[:LARGE]
    once = _best_of_three(fn, small)  # also the warm-up: compiled patterns, caches
    repeat = max(1, min(50, int(0.02 / max(once, 1e-6)) + 1))
    ratios = []
    for _ in range(3):
        ratios.append(_best_of_three(fn, large, repeat) / _best_of_three(fn, small, repeat))
        if ratios[-1] < MAX_RATIO:
            break
    return min(ratios)


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_check_item_grows_linearly_on_hostile_shapes(shape: str) -> None:
    assert _ratio(check_item, SHAPES[shape]) < MAX_RATIO


@pytest.mark.parametrize("gate", sorted(GATES))
def test_each_gate_grows_linearly_on_the_comment_flood(gate: str) -> None:
    assert _ratio(GATES[gate], "<!--") < MAX_RATIO


def test_a_one_mebibyte_comment_flood_is_linear_against_a_quarter() -> None:
    """The review's shape at the size limit: 256 KiB vs 1 MiB."""
    unit, quarter = "<!--", 256 * 1024
    check_item(unit * 16)
    small = _best_of_three(check_item, unit * (quarter // 4))
    large = _best_of_three(check_item, unit * quarter)
    assert large / max(small, 1e-4) < MAX_RATIO


def test_flood_pattern_is_bounded() -> None:
    """The mark-flood regex is a single class with a fixed minimum: no nested quantifier to backtrack."""
    assert floor_chars._FLOOD_RE.pattern.endswith(f"]{{{floor_chars.MAX_STACKED_MARKS + 1},}}")
    assert floor_chars._FLOOD_RE.pattern.count("[") == 1
