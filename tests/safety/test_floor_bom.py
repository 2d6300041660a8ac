"""A file's leading UTF-8 byte order mark is an encoding mark, not a hidden character: with
``encoding_mark=True`` (a whole file, as the git door's content rules pass it) exactly one U+FEFF at
offset 0 is let through; a second one, or one anywhere else, still holds ``invisible-char`` at its true
position.  Without it (an inbox item's text) the BOM holds as before."""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from notegate.safety.floor import check_item

BOM = "\ufeff"


def found(text: str, **kw) -> list[tuple[str, str | None, int | None, int | None, int | None]]:
    return [(r.rule, r.codepoint, r.position, r.line, r.column) for r in check_item(text, **kw).reasons]


def test_one_leading_bom_of_a_file_passes() -> None:
    assert not check_item(BOM + "# Note\n", path="projects/p.md", encoding_mark=True).held


def test_the_bom_of_an_item_still_holds() -> None:
    assert found(BOM + "# Note\n") == [("invisible-char", "U+FEFF", 0, 1, 1)]


def test_a_second_bom_at_the_start_holds_at_its_own_position() -> None:
    assert found(BOM + BOM + "# Note\n", encoding_mark=True) == [("invisible-char", "U+FEFF", 1, 1, 2)]


def test_a_bom_anywhere_else_holds() -> None:
    assert found("# Note\n" + BOM + "x\n", encoding_mark=True) == [("invisible-char", "U+FEFF", 7, 2, 1)]
    assert found("x" + BOM, encoding_mark=True) == [("invisible-char", "U+FEFF", 1, 1, 2)]


def test_the_leading_bom_hides_nothing_after_it() -> None:
    assert found(BOM + "\u200b# Note", encoding_mark=True) == [("invisible-char", "U+200B", 1, 1, 2)]
    assert [r.rule for r in check_item(BOM + "see CLAUDE.md\n", encoding_mark=True).reasons] == ["instruction-file"]


# Characters whose verdicts depend on what precedes them (ZWJ, ZWNJ, VS16 after an emoji, a virama, a letter),
# a BOM, other held ones, and plain text.
TEXT = st.text(
    st.sampled_from(
        [
            "a",
            " ",
            "\n",
            BOM,
            "\u200b",
            "\u200d",
            "\u200c",
            "\ufe0f",
            "\u0915",
            "\u094d",
            "\u0628",
            "\U0001f600",
            "\u2764",
            "\u202e",
            "é",
        ]
    ),
    max_size=40,
)


@settings(max_examples=400, deadline=None)
@given(TEXT)
@example("\u200b" * 20 + BOM)  # a BOM past the cap on findings (20): found by CI, not reported
def test_the_leading_bom_of_a_file_changes_nothing_else(text: str) -> None:
    """Every finding of ``text`` is found after a leading BOM too, one position on, and nothing else is: so
    each U+FEFF but the one at offset 0 still holds, as ``invisible-char``."""
    with_mark = [(r.rule, r.codepoint, r.position) for r in check_item(BOM + text, encoding_mark=True).reasons]
    alone = [(r.rule, r.codepoint, r.position + 1) for r in check_item(text).reasons]
    assert with_mark == alone
    boms = [p for rule, cp, p in with_mark if cp == "U+FEFF"]
    assert all(rule == "invisible-char" for rule, cp, _ in with_mark if cp == "U+FEFF")
    last = with_mark[-1][2] if with_mark else -1  # findings are listed in order, up to the floor's cap
    assert boms == [i + 1 for i, c in enumerate(text) if c == BOM and i + 1 <= last]


@settings(max_examples=200, deadline=None)
@given(TEXT)
def test_without_the_file_flag_a_leading_bom_always_holds(text: str) -> None:
    assert found(BOM + text)[0][:3] == ("invisible-char", "U+FEFF", 0)
