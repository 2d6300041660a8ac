"""The reviewer's view of untrusted text: every character that would act instead of show is shown as a
marker (hypothesis properties), the rest is unchanged, and the pass is linear in the input."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from notegate.doors.web.visible import visible
from support.timing import assert_catches_quadratic, assert_linear

HIDDEN = {"Cc", "Cf", "Co", "Cs", "Cn", "Zl", "Zp"}


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("looks fine\u202eevil", "looks fine⟨U+202E⟩evil"),  # right-to-left override: 'evil' would read 'live'
        ("a\u200bb", "a⟨U+200B⟩b"),  # zero-width space
        ("\x1b[31mred", "⟨U+001B⟩[31mred"),  # ANSI escape
        ("tag\U000e0041", "tag⟨U+E0041⟩"),  # tag character
        ("emoji\ufe0f", "emoji⟨U+FE0F⟩"),  # variation selector
        ("line\u2028sep", "line⟨U+2028⟩sep"),
        ("keep\n\ttabs", "keep\n\ttabs"),
        ("<script>", "<script>"),  # markup is the template's autoescape's job
        (None, ""),
    ],
)
def test_hiding_characters_are_shown(raw: str | None, shown: str) -> None:
    assert visible(raw) == shown


@given(st.text())
def test_nothing_hiding_survives(text: str) -> None:
    out = visible(text)
    assert all(ch in "\n\t" or unicodedata.category(ch) not in HIDDEN for ch in out)
    assert not any(0xFE00 <= ord(ch) <= 0xFE0F for ch in out)


@given(st.text(st.characters(blacklist_categories=tuple(HIDDEN))))
def test_plain_text_is_unchanged(text: str) -> None:
    if not any(0xFE00 <= ord(ch) <= 0xFE0F or 0xE0100 <= ord(ch) <= 0xE01EF for ch in text):
        assert visible(text) == text


def test_linear_in_the_input() -> None:
    assert_linear(visible, lambda n: ("a\u202e" * n)[:n])
    assert_catches_quadratic(lambda n: ("a\u202e" * n)[:n])
