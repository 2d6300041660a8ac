"""Issue 8 item 3: every gate's time grows linearly with its input, up to the 1 MiB size limit.

Measured as a ratio between two sizes (4x the input may cost well under 8x the time), never as
an absolute time: the suite runs on two busy cores.  Sizes start at 128 KiB where a 64 KiB input
would still sit in the CPU cache and make the small run look unfairly fast.  Each size is warmed up once and timed as
the best of three, which resists noise.  A quadratic rule shows up as a ratio near 16.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest

from notegate.safety.contentgates import ALL_GATES, scan_content
from notegate.safety.outputgate import check_output, rescan_text
from notegate.safety.secrets import scan_credentials

KIB = 1024
#: Hostile shapes: long runs of one character, repeated rule prefixes, alternating separators.
SHAPES = [
    "a", "=", "-", ":", "@", ".", "7", " ", "+", "\n", "_", "|", "ghp_", "sk-", "eyJ-", "-----BEGIN",
    "-----BEGIN RSA PRIVATE KEY-----\n", "password:", "password: ", "password:\n ", "https://", "@a.", "a-b_c.d",
    "QUJDRGVmZ2g0NTY3", "0123456789abcdef", "\\_", "&#95;", "<!--", "ignore ", "ignore-previous-", "curl ",
    "curl x |", "whichever assistant ", "\u026a\u200b", "a\n- ", "> a\n", "1 ",
]  # fmt: skip


def _best_of_three(scan: Callable[[str], object], text: str) -> float:
    scan(text)  # warm-up: caches, lazily built tables
    best = float("inf")
    for _ in range(3):
        started = time.perf_counter()
        scan(text)
        best = min(best, time.perf_counter() - started)
    return best


def _fill(unit: str, size: int) -> str:
    return (unit * (size // len(unit) + 1))[:size]


def _ratio(scan: Callable[[str], object], unit: str, small: int, large: int) -> float:
    """Time ratio large/small; measured again once if it looks bad (a quadratic rule stays bad)."""
    best = float("inf")
    for _ in range(2):
        t_small = _best_of_three(scan, _fill(unit, small))
        t_large = _best_of_three(scan, _fill(unit, large))
        best = min(best, t_large / max(t_small, 1e-4))
        if best < 8:
            break
    return best


@pytest.mark.parametrize("unit", SHAPES)
def test_all_gates_grow_linearly_on_hostile_shapes(unit: str) -> None:
    # 64 KiB against 256 KiB: linear is ~4x, quadratic ~16x.
    assert _ratio(scan_content, unit, 64 * KIB, 256 * KIB) < 8, unit


@pytest.mark.parametrize("gate", ALL_GATES)
def test_each_gate_grows_linearly_up_to_the_size_limit(gate: str) -> None:
    mixed = "".join(SHAPES)
    assert _ratio(lambda t: scan_content(t, (gate,)), mixed, 256 * KIB, 1024 * KIB) < 8, gate


@pytest.mark.parametrize("unit", ["ghp_", "QUJDRGVmZ2g0NTY3\n", "password:\n  ", "eyJ-"])
def test_credential_scanner_grows_linearly(unit: str) -> None:
    assert _ratio(scan_credentials, unit, 128 * KIB, 512 * KIB) < 8, unit


@pytest.mark.parametrize("unit", ["a", " ", "\n", "```\n", "\n```", "``` \n \n"])
def test_output_gate_parsing_grows_linearly(unit: str) -> None:
    # The schemas cap every string, so the costly part of check_output on a large answer is the
    # unwrapping (fences, envelopes) and the strict parse; rendered notes go through rescan_text.
    def gate(text: str) -> object:
        return check_output("```json\n" + text, "session", [])

    assert _ratio(gate, unit, 128 * KIB, 512 * KIB) < 8, unit


@pytest.mark.parametrize("unit", ["ghp_\n- ", "a\\_", "ignore\u200b"])
def test_rescan_of_rendered_text_grows_linearly(unit: str) -> None:
    assert _ratio(rescan_text, unit, 128 * KIB, 512 * KIB) < 8, unit
