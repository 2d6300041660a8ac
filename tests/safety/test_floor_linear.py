"""Every floor gate runs in linear time on hostile shapes up to the 1 MiB note limit (issue 8 item 3).

Measured with tests/support/timing.py: the CPU-time ratio between n and 8n (16 KiB and 128 KiB; linear ~8,
quadratic ~64, bound 20), never an absolute time. A review found ``<!--`` x 128 KiB taking 17.7 s in the
rendered view's comment regex; these shapes are the ones it tried.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from notegate.safety import floor_chars
from notegate.safety.floor import check_item, check_text, mentions_instruction_file
from notegate.safety.rendered import rendered_views
from support.timing import KIB, assert_catches_quadratic, assert_linear, fill

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
    # check_item on the comment flood is SHAPES["comment-open"] above
    "check_text": check_text,
    "names": mentions_instruction_file,
    "rendered": rendered_views,
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_check_item_grows_linearly_on_hostile_shapes(shape: str) -> None:
    assert_linear(check_item, lambda n: fill(SHAPES[shape], n))


@pytest.mark.parametrize("gate", sorted(GATES))
def test_each_gate_grows_linearly_on_the_comment_flood(gate: str) -> None:
    assert_linear(GATES[gate], lambda n: fill("<!--", n))


def test_a_one_mebibyte_comment_flood_is_linear_against_an_eighth() -> None:
    """The review's shape at the size limit: 128 KiB vs 1 MiB."""
    assert_linear(check_item, lambda n: fill("<!--", n), small=128 * KIB)


def test_the_ratio_catches_a_quadratic_scan() -> None:
    """The measuring stick at this file's sizes: a deliberately quadratic scan of a shape fails it."""
    assert_catches_quadratic(lambda n: fill(".m", n))


def test_flood_pattern_is_bounded() -> None:
    """The mark-flood regex is a single class with a fixed minimum: no nested quantifier to backtrack."""
    assert floor_chars._patterns().flood.pattern.endswith(f"]{{{floor_chars.MAX_STACKED_MARKS + 1},}}")
    assert floor_chars._patterns().flood.pattern.count("[") == 1
