"""Issue 8 item 3: every gate's time grows linearly with its input, up to the 1 MiB size limit.

Measured with tests/support/timing.py: the CPU-time ratio between n and 8n (16 KiB and 128 KiB by default;
linear ~8, quadratic ~64, bound 20), never an absolute time: the suite runs on two busy cores.
"""

from __future__ import annotations

import pytest

from notegate.safety.contentgates import ALL_GATES, scan_content
from notegate.safety.outputgate import check_output, rescan_text
from notegate.safety.secrets import scan_credentials
from support.timing import KIB, assert_catches_quadratic, assert_linear, fill

#: Hostile shapes: long runs of one character, repeated rule prefixes, alternating separators.
SHAPES = [
    "a", "=", "-", ":", "@", ".", "7", " ", "+", "\n", "_", "|", "ghp_", "sk-", "eyJ-", "-----BEGIN",
    "-----BEGIN RSA PRIVATE KEY-----\n", "password:", "password: ", "password:\n ", "https://", "@a.", "a-b_c.d",
    "QUJDRGVmZ2g0NTY3", "0123456789abcdef", "\\_", "&#95;", "<!--", "ignore ", "ignore-previous-", "curl ",
    "curl x |", "whichever assistant ", "\u026a\u200b", "a\n- ", "> a\n", "1 ",
]  # fmt: skip


@pytest.mark.parametrize("unit", SHAPES)
def test_all_gates_grow_linearly_on_hostile_shapes(unit: str) -> None:
    assert_linear(scan_content, lambda n: fill(unit, n))


@pytest.mark.parametrize("gate", ALL_GATES)
def test_each_gate_grows_linearly_up_to_the_size_limit(gate: str) -> None:
    mixed = "".join(SHAPES)
    assert_linear(lambda t: scan_content(t, (gate,)), lambda n: fill(mixed, n), small=128 * KIB)


@pytest.mark.parametrize("unit", ["ghp_", "QUJDRGVmZ2g0NTY3\n", "password:\n  ", "eyJ-"])
def test_credential_scanner_grows_linearly(unit: str) -> None:
    assert_linear(scan_credentials, lambda n: fill(unit, n))


@pytest.mark.parametrize("unit", ["a", " ", "\n", "```\n", "\n```", "``` \n \n"])
def test_output_gate_parsing_grows_linearly(unit: str) -> None:
    # The schemas cap every string, so the costly part of check_output on a large answer is the
    # unwrapping (fences, envelopes) and the strict parse; rendered notes go through rescan_text.
    def gate(text: str) -> object:
        return check_output("```json\n" + text, "session", [])

    assert_linear(gate, lambda n: fill(unit, n))


@pytest.mark.parametrize("unit", ["ghp_\n- ", "a\\_", "ignore\u200b"])
def test_rescan_of_rendered_text_grows_linearly(unit: str) -> None:
    assert_linear(rescan_text, lambda n: fill(unit, n))


def test_the_ratio_catches_a_quadratic_scan() -> None:
    """The measuring stick at this file's sizes: a deliberately quadratic scan of a shape fails it."""
    assert_catches_quadratic(lambda n: fill("ghp_", n))
