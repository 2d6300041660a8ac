"""The line-break style of a note and the rewriting of an addition to it (append_note keeps one style).

Property: whatever LF/CRLF mix an addition brings, written with a style it has that style and no other,
and says the same text (only its line ends changed).
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from notegate.vault.lines import line_break_of, with_line_breaks


@pytest.mark.parametrize(
    ("text", "style"),
    [
        ("", None),
        ("one line", None),  # no line break: no style to follow
        ("a\n", "\n"),
        ("a\nb", "\n"),
        ("a\r\n", "\r\n"),
        ("a\r\nb", "\r\n"),  # the last line need not end: every break there is CRLF
        ("a\r\nb\n", None),  # mixed: no one style
        ("a\nb\r\n", None),
        ("a\rb", None),  # a bare CR is no style to follow
        ("a\r\rb\n", "\n"),  # ... and does not make an LF note a CRLF one
        ("a\u2028b\r\n", "\r\n"),  # Unicode boundaries are not counted
    ],
)
def test_line_break_of(text: str, style: str | None) -> None:
    assert line_break_of(text) == style


# Additions made of words and LF/CRLF breaks (a bare CR is left alone, so it is not generated here).
additions = st.lists(st.sampled_from(["x", "会", " ", "---", "\n", "\r\n"]), max_size=30).map("".join)
styles = st.sampled_from(["\n", "\r\n"])


@given(additions, styles)
def test_an_addition_written_with_a_style_has_exactly_that_style(text: str, style: str) -> None:
    written = with_line_breaks(text, style)
    assert line_break_of(written) == (style if "\n" in text else None)
    assert written.count("\n") == text.count("\n")  # as many lines as before
    assert written.replace("\r\n", "\n") == text.replace("\r\n", "\n")  # only the line ends changed
    assert with_line_breaks(written, style) == written


def test_other_boundaries_are_left_as_they_are() -> None:
    assert with_line_breaks("a\rb\u2028c\x85d\ne", "\r\n") == "a\rb\u2028c\x85d\r\ne"
