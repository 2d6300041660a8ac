"""The floor's new Unicode classes, re-derived from ``unicodedata`` and checked as properties over the tables.

Each class is worked out from the data (General_Category, decompositions, names), not from examples: blank
spaces (Zs), combining-mark floods (Mn/Me), bare CR, ideographic and standardized variation sequences.
"""

from __future__ import annotations

import unicodedata

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from notegate.safety import floor_chars, unicode_tables
from notegate.safety.floor import check_item
from support.floor_corpus import LEGIT

PROPERTIES = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _cps(spec: str) -> set[int]:
    return {cp for lo, hi in unicode_tables.parse_ranges(spec) for cp in range(lo, hi + 1)}


BLANK = sorted(_cps(unicode_tables._BLANK))
ALLOWED_SPACES = sorted(_cps(unicode_tables.BLANK_ALLOWED))
MARKS = sorted(cp for cp in _cps(unicode_tables._GC_MN_ME) if floor_chars._rule_of(cp) is None)
IDEOGRAPHS = sorted(cp for a, b in floor_chars.CLASS_RANGES["unified-ideograph"] for cp in range(a, b + 1))
IVS = list(range(0xE0100, 0xE01F0))
VS_BASES = {
    k: sorted(cp for a, b in floor_chars.CLASS_RANGES[f"vs{k}-base"] for cp in range(a, b + 1)) for k in (1, 2, 3)
}


def _boundary(text: str, where: float) -> int:
    """An insertion point that splits no emoji, joiner or mark sequence: the start, the end, or after a space."""
    points = [0, len(text), *(i + 1 for i, ch in enumerate(text) if ch == " ")]
    return sorted(points)[int(where * (len(points) - 1))]


PLAIN = st.sampled_from([c.text for c in LEGIT if "\r" not in c.text and c.path is None])


def test_blank_row_is_zs_minus_the_allowed_four_plus_blank_glyphs() -> None:
    zs = {cp for cp in range(0x110000) if unicodedata.category(chr(cp)) == "Zs"}
    extras = {0x2800, 0x16FE4, 0x1D159}
    assert set(BLANK) == (zs - set(ALLOWED_SPACES)) | extras
    assert [unicodedata.name(chr(cp)) for cp in sorted(extras)] == [
        "BRAILLE PATTERN BLANK",
        "KHITAN SMALL SCRIPT FILLER",
        "MUSICAL SYMBOL NULL NOTEHEAD",
    ]
    for cp in BLANK:
        assert floor_chars._rule_of(cp) == "blank-char", hex(cp)


def test_marks_row_is_mn_and_me() -> None:
    expected = {cp for cp in range(0x110000) if unicodedata.category(chr(cp)) in ("Mn", "Me")}
    assert _cps(unicode_tables._GC_MN_ME) == expected


def test_stacked_marks_limit_is_above_any_decomposition() -> None:
    """The data-driven floor under the limit: the longest run of non-starters in any NFKD decomposition."""
    longest = 0
    for cp in range(0x110000):
        run = 0
        for ch in unicodedata.normalize("NFKD", chr(cp)):
            run = run + 1 if unicodedata.combining(ch) else 0
            longest = max(longest, run)
    assert longest == 3
    assert longest < unicode_tables.MAX_STACKED_MARKS < 30  # UAX #15 stream-safe limit


def test_unified_ideographs_match_the_names_and_compatibility_block() -> None:
    named = {cp for cp in range(0x110000) if unicodedata.name(chr(cp), "").startswith("CJK UNIFIED IDEOGRAPH-")}
    in_compat = {0xFA0E, 0xFA0F, 0xFA11, 0xFA13, 0xFA14, 0xFA1F, 0xFA21, 0xFA23, 0xFA24, 0xFA27, 0xFA28, 0xFA29}
    assert set(IDEOGRAPHS) == named | in_compat


def test_cjk_standardized_variants_follow_the_compatibility_decompositions() -> None:
    """U+F900 is <U+8C48, VS1>; U+6A02 has three compatibility forms, so VS1, VS2 and VS3."""
    assert 0x8C48 in VS_BASES[1]
    assert {0x6A02} <= set(VS_BASES[1]) & set(VS_BASES[2]) & set(VS_BASES[3])
    assert 0x2229 in VS_BASES[1] and 0x2229 not in VS_BASES[2]
    assert len(VS_BASES[1]) >= 900


@PROPERTIES
@given(text=PLAIN, cp=st.sampled_from(BLANK), where=st.floats(0, 1))
def test_every_blank_char_holds_anywhere(text: str, cp: int, where: float) -> None:
    at = _boundary(text, where)
    reasons = check_item(text[:at] + chr(cp) + text[at:]).reasons
    assert any(r.rule == "blank-char" and r.position == at and r.codepoint == f"U+{cp:04X}" for r in reasons)


@PROPERTIES
@given(text=PLAIN, cp=st.sampled_from(ALLOWED_SPACES), where=st.floats(0, 1))
def test_allowed_spaces_pass(text: str, cp: int, where: float) -> None:
    at = _boundary(text, where)
    assert not check_item(text[:at] + chr(cp) + text[at:]).held


@PROPERTIES
@given(marks=st.lists(st.sampled_from(MARKS), min_size=1, max_size=unicode_tables.MAX_STACKED_MARKS))
def test_up_to_the_limit_of_marks_passes(marks: list[str]) -> None:
    assert not check_item("x" + "".join(map(chr, marks)) + " y").held


@PROPERTIES
@given(marks=st.lists(st.sampled_from(MARKS), min_size=unicode_tables.MAX_STACKED_MARKS + 1, max_size=60))
def test_more_marks_than_the_limit_hold_as_a_flood(marks: list[int]) -> None:
    text = "x" + "".join(map(chr, marks)) + " y"
    reasons = [r for r in check_item(text).reasons if r.rule == "combining-flood"]
    assert len(reasons) == 1
    assert reasons[0].position == 1 + unicode_tables.MAX_STACKED_MARKS
    assert f"of {len(marks)} stacked on one base" in reasons[0].detail


@PROPERTIES
@given(base=st.sampled_from(IDEOGRAPHS), vs=st.sampled_from(IVS), other=st.sampled_from(IVS))
def test_one_ivs_after_any_unified_ideograph_passes_two_hold(base: int, vs: int, other: int) -> None:
    assert not check_item(f"\u540d{chr(base)}{chr(vs)}\u524d").held
    held = check_item(f"{chr(base)}{chr(vs)}{chr(other)}").reasons
    assert [(r.rule, r.position) for r in held] == [("variation-selector", 2)]


@PROPERTIES
@given(vs=st.sampled_from(IVS), base=st.sampled_from("aZ9.\u3042\u30a2\uac00\u0416\u2229"))
def test_ivs_after_a_non_ideograph_holds(vs: int, base: str) -> None:
    assert [r.rule for r in check_item(base + chr(vs)).reasons] == ["variation-selector"]


@PROPERTIES
@given(k=st.sampled_from((1, 2, 3)), data=st.data())
def test_standardized_variants_pass_on_their_bases_only(k: int, data: st.DataObject) -> None:
    base = data.draw(st.sampled_from(VS_BASES[k]))
    selector = chr(0xFDFF + k)
    assert not check_item(chr(base) + selector).held
    other = data.draw(
        st.integers(0x21, 0x2FFFF).filter(lambda cp: cp not in VS_BASES[k] and floor_chars._rule_of(cp) is None)
    )
    assert "variation-selector" in {r.rule for r in check_item(chr(other) + selector).reasons}


@PROPERTIES
@given(text=PLAIN, where=st.floats(0, 1), follow=st.sampled_from(["", "x", "\r", " "]))
def test_bare_cr_holds_and_crlf_passes(text: str, where: float, follow: str) -> None:
    at = _boundary(text, where)
    assert not check_item(text[:at] + "\r\n" + text[at:]).held
    bare = text[:at] + "\r" + follow + text[at:]
    if bare[at + 1 : at + 2] != "\n":
        reasons = check_item(bare).reasons
        assert any(r.rule == "control-char" and r.position == at and r.codepoint == "U+000D" for r in reasons)
