"""The one section iterator: spans against a naive reference, on hostile text; fences do not hide headings."""

from __future__ import annotations

import itertools
import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from notegate.vault.formats import section
from notegate.vault.formats.sections import Section, section_text, sections

FAST = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
PIECES = ["#", "# ", "## ", "### ", "#x", " ## ", "\\## ", "```", "~~~", "\n", "\n", "\r\n", "\r", "\u2028", " ", "\t"]
texts = st.lists(st.one_of(st.sampled_from(PIECES), st.text(max_size=4)), max_size=24).map("".join)
_HEADING = re.compile(r"(#{1,2})(?:[ \t]+(.*?))?[ \t\r]*")


def _reference(text: str, start: int) -> list[tuple[int, str, int, int]]:
    """(level, title, start, body) of each heading, the slow obvious way: split on '\\n', full-match a pattern."""
    found = []
    offset = 0
    for line in text.split("\n"):
        end = offset + len(line)
        match = _HEADING.fullmatch(line)
        if offset >= start and match:
            body = end + 1 if end < len(text) else end
            found.append((len(match.group(1)), (match.group(2) or "").rstrip(" \t\r"), offset, body))
        offset = end + 1
    return found


@FAST
@given(texts, st.integers(min_value=0, max_value=30))
def test_spans_match_the_reference_and_tile_the_text(text: str, start: int) -> None:
    start = min(start, len(text))
    found = list(sections(text, start))
    assert [(s.level, s.title, s.start, s.body) for s in found] == _reference(text, start)
    for here, after in itertools.pairwise(found):
        assert here.end == after.start and not here.last
    if found:
        assert found[-1].end == len(text) and found[-1].last


def test_a_code_fence_does_not_hide_a_heading() -> None:
    """Structure must not depend on whether a fence in free text is closed."""
    text = "## a\n```\n## b\n```\n"
    assert [s.title for s in sections(text)] == ["a", "b"]


def test_section_text_undoes_the_layout_separator_and_the_escaping() -> None:
    text = "## a\n\\## not a heading\n\n## b\nlast\n"
    first, second = sections(text)
    assert isinstance(first, Section)
    assert section_text(text, first) == "## not a heading"
    assert section_text(text, second) == "last"
    assert section(text, "a") == "## not a heading"
    assert section(text, "c") is None
