"""The vault formats' Unicode sets live in safety/unicode_tables (the one copy) and say what the code relies on."""

from __future__ import annotations

import unicodedata
from datetime import date

from notegate.safety import unicode_tables
from notegate.safety.unicode_tables import (
    FRONT_MATTER_UNSAFE,
    INLINE_FORBIDDEN_CATEGORIES,
    LINE_BOUNDARIES,
    SUMMARY_BLANKED_CATEGORIES,
    parse_ranges,
)
from notegate.vault import frontmatter, lines
from notegate.vault.formats import SessionRef

ALL = [chr(cp) for cp in range(0x110000)]


def _chars(spec: str) -> set[str]:
    return {chr(cp) for lo, hi in parse_ranges(spec) for cp in range(lo, hi + 1)}


def test_line_boundaries_are_what_splitlines_honours() -> None:
    assert _chars(LINE_BOUNDARIES) == {ch for ch in ALL if len(f"a{ch}b".splitlines()) == 2}
    assert _chars(LINE_BOUNDARIES) == lines.BOUNDARY_CHARS
    assert {ch for ch in ALL if lines.BOUNDARY_RE.fullmatch(ch)} == _chars(LINE_BOUNDARIES)


def test_printable_characters_are_never_in_the_forbidden_categories() -> None:
    """check_inline's fast path (``str.isprintable``) is sound: it never passes a forbidden category."""
    assert all(unicodedata.category(ch) not in INLINE_FORBIDDEN_CATEGORIES for ch in ALL if ch.isprintable())


def test_front_matter_unsafe_is_controls_but_tab_separators_surrogates_and_two_noncharacters() -> None:
    expected = {
        ch
        for ch in ALL
        if (unicodedata.category(ch) in ("Cc", "Cs", "Zl", "Zp") and ch != "\t") or ch in "\ufffe\uffff"
    }
    assert _chars(FRONT_MATTER_UNSAFE) == expected
    assert {ch for ch in ALL if frontmatter._UNSAFE.fullmatch(ch)} == expected


def test_a_session_summary_blanks_controls_and_format_characters() -> None:
    assert SUMMARY_BLANKED_CATEGORIES <= INLINE_FORBIDDEN_CATEGORIES
    ref = SessionRef("sessions/p/a.md", date(2026, 1, 1), "one\u200btwo\x00three\u2028four")
    assert ref.summary == "one two three four"


def test_the_sets_are_named_for_the_tables_unicode_version() -> None:
    assert unicodedata.unidata_version == unicode_tables.UNICODE_VERSION
