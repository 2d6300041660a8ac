"""Tests for notegate.safety.floor: the corpus, reason text, the tables, properties (purity: test_layering)."""

from __future__ import annotations

import re
import unicodedata

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from notegate.safety import floor_chars, names, unicode_tables
from notegate.safety.floor import (
    MAX_REASONS,
    RULES,
    FloorVerdict,
    HoldReason,
    check_item,
    check_text,
    mentions_instruction_file,
)
from notegate.safety.names import DEFAULT_INSTRUCTION_FILES, fold_name
from support.floor_corpus import ENGLAND, HOSTILE, LEGIT, Case

PROPERTIES = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _source(case: Case, reason: HoldReason) -> str:
    return (case.path or "") if reason.where == "path" else case.text


# --------------------------------------------------------------------------------------------------------
# Corpus
# --------------------------------------------------------------------------------------------------------


def test_corpus_is_large_enough_and_ids_unique() -> None:
    assert len(HOSTILE) >= 90
    assert len(LEGIT) >= 30
    ids = [case.id for case in HOSTILE + LEGIT]
    assert len(ids) == len(set(ids))
    assert all(case.rules and case.rules <= set(RULES) for case in HOSTILE)


@pytest.mark.parametrize("case", HOSTILE, ids=lambda c: c.id)
def test_hostile_case_holds_with_expected_rules(case: Case) -> None:
    verdict = check_item(case.text, case.path)
    assert verdict.verdict == "hold"
    assert {r.rule for r in verdict.reasons} == case.rules, verdict.to_json()


@pytest.mark.parametrize("case", HOSTILE, ids=lambda c: c.id)
def test_hostile_reasons_name_code_point_and_position(case: Case) -> None:
    for reason in check_item(case.text, case.path).reasons:
        text = reason.as_text()
        assert text.isascii()
        assert text.startswith(f"{reason.rule}: ")
        assert reason.position is not None
        source = _source(case, reason)
        if reason.codepoint is not None:
            assert reason.codepoint.startswith("U+")
            assert source[reason.position] == chr(int(reason.codepoint[2:], 16))
            assert reason.codepoint in text
        else:  # an instruction-file name starts at the position
            assert any(fold_name(source[reason.position :]).startswith(fold_name(n)) for n in DEFAULT_INSTRUCTION_FILES)
        if reason.where == "text":
            line = source.count("\n", 0, reason.position) + 1
            column = reason.position - (source.rfind("\n", 0, reason.position) + 1) + 1
            assert (reason.line, reason.column) == (line, column)
            assert f"at {reason.position} (line {line}, col {column})" in text
        else:
            assert f"in path at {reason.position}" in text


@pytest.mark.parametrize("case", LEGIT, ids=lambda c: c.id)
def test_legitimate_text_passes(case: Case) -> None:
    verdict = check_item(case.text, case.path)
    assert verdict == FloorVerdict(reasons=())
    assert verdict.to_json() == {"verdict": "pass", "reasons": []}


# --------------------------------------------------------------------------------------------------------
# Reason text, verdict shape, the cap
# --------------------------------------------------------------------------------------------------------


def test_reason_text_matches_documented_example() -> None:
    verdict = check_item("Hello world!\u200b")
    assert verdict.to_json() == {
        "verdict": "hold",
        "reasons": ["invisible-char: U+200B ZERO WIDTH SPACE at 12 (line 1, col 13)"],
    }
    assert verdict.held


def test_positions_index_the_original_text_across_lines_and_normalisation() -> None:
    text = "ＡＢ line\r\nsecond \ufb01ne line\n\tthird \u202e and see \uff23\uff2c\uff21\uff35\uff24\uff25.md"
    reasons = check_item(text).reasons
    bidi = next(r for r in reasons if r.rule == "bidi-control")
    assert (bidi.position, bidi.line, bidi.column) == (text.index("\u202e"), 3, 8)
    name = next(r for r in reasons if r.rule == "instruction-file")
    assert (name.position, name.line) == (text.index("\uff23"), 3)
    assert name.as_text() == f"instruction-file: names CLAUDE.md at {name.position} (line 3, col 18)"


def test_path_reasons_say_path() -> None:
    verdict = check_item("ok", path="inbox/x\u200b/CLAUDE.md")
    assert [r.as_text() for r in verdict.reasons] == [
        "invisible-char: U+200B ZERO WIDTH SPACE in path at 7",
        "instruction-file-path: path names CLAUDE.md in path at 9",
    ]


def test_reasons_are_capped_and_every_rule_is_listed() -> None:
    text = "\u200b" * 500 + " see AGENTS.md " + "\x00" * 500 + "\ue000"
    verdict = check_item(text, path="p/.cursorrules")
    assert len(verdict.reasons) == MAX_REASONS
    assert verdict.omitted == 500 + 1 + 500 + 1 + 1 - MAX_REASONS
    assert {r.rule for r in verdict.reasons} == {
        "invisible-char",
        "instruction-file",
        "control-char",
        "private-use",
        "instruction-file-path",
    }
    lines = verdict.to_json()["reasons"]
    assert isinstance(lines, list)
    assert lines[-1] == f"... and {verdict.omitted} more reasons not listed"
    assert len(check_text(text)) == MAX_REASONS


def test_rules_past_the_cap_are_found_inside_and_after_long_runs() -> None:
    text = "\x00" * 30 + "\ue000" + "ok " + ENGLAND + "\u200d!" + ENGLAND + "\U000e0067"
    verdict = check_item(text)
    assert verdict.omitted == 30 + 1 + 1 + 1 - MAX_REASONS
    firsts = {r.rule: r.position for r in verdict.reasons}
    assert firsts["private-use"] == 30
    assert firsts["invisible-char"] == text.index("\u200d")
    assert firsts["tag-char"] == len(text) - 1


def test_text_and_name_functions_are_separate() -> None:
    assert check_text("see CLAUDE.md") == ()
    assert [r.rule for r in check_text("a\u200bb")] == ["invisible-char"]
    assert [r.position for r in mentions_instruction_file("x CLAUDE.md and agents.md")] == [2, 16]
    assert mentions_instruction_file("a\u200bb") == ()


def test_custom_instruction_file_lists() -> None:
    assert check_item("see CLAUDE.md", instruction_files=()).verdict == "pass"
    held = check_item("see RULES.txt", instruction_files=["RULES.txt"])
    assert [r.as_text() for r in held.reasons] == ["instruction-file: names RULES.txt at 4 (line 1, col 5)"]
    assert check_item("see CLAUDE.md", instruction_files=("RULES.txt",)).verdict == "pass"


@pytest.mark.parametrize("names", [("",), ("\u200b",), ("\u65e5\u672c.md",)], ids=["empty", "invisible", "cjk"])
def test_unusable_instruction_file_names_are_a_caller_error(names: tuple[str, ...]) -> None:
    with pytest.raises(ValueError, match="instruction-file name"):
        check_item("x", instruction_files=names)


def test_validate_instruction_files_for_start_up() -> None:
    assert names.validate_instruction_files(["CLAUDE.md", "CLAUDE.md", "x.txt"]) == ("CLAUDE.md", "x.txt")
    assert names.validate_instruction_files([]) == ()
    with pytest.raises(ValueError, match="instruction-file name"):
        names.validate_instruction_files(["\u200b"])


def test_wrong_types_are_a_caller_error() -> None:
    with pytest.raises(TypeError):
        check_item(b"bytes")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        check_item("x", path=3)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        check_item("x", instruction_files="CLAUDE.md")
    with pytest.raises(TypeError):
        check_item("x", instruction_files=[None])  # type: ignore[list-item]


def test_skeleton_examples() -> None:
    expected = "claude.rnd"
    for spelling in (
        "CLAUDE.md",
        "claude.MD",
        "\uff23\uff2c\uff21\uff35\uff24\uff25.md",
        "\u0421L\u0410UD\u0415.md",
        "CIAUDE.md",
        "c1aude.md",
        "cla\u0301ude.rnd",
        "\U0001d402\U0001d40b\U0001d400\U0001d414\U0001d403\U0001d404.md",
    ):
        assert fold_name(spelling) == expected, spelling
    assert fold_name("GEMINI.md") == fold_name("gemlnl.md") == fold_name("GEM\u0399N\u0399.md")
    assert fold_name("README.md") != fold_name("CLAUDE.md")


# --------------------------------------------------------------------------------------------------------
# Purity and tables
# --------------------------------------------------------------------------------------------------------

# Purity (imports, no I/O) is checked for every module by tests/test_layering.py.


def _ranges(code_points: list[int]) -> str:
    runs: list[list[int]] = []
    for cp in code_points:
        if runs and cp == runs[-1][1] + 1:
            runs[-1][1] = cp
        else:
            runs.append([cp, cp])
    return " ".join(f"{a:04X}" if a == b else f"{a:04X}-{b:04X}" for a, b in runs)


def test_generated_tables_match_the_interpreters_unicode() -> None:
    """Regenerate the ``_GC_*`` and ``_VIRAMA`` literals; on mismatch, the message holds the new ones."""
    assert unicodedata.unidata_version == unicode_tables.UNICODE_VERSION
    by_category: dict[str, list[int]] = {}
    virama = []
    for cp in range(0x110000):
        ch = chr(cp)
        by_category.setdefault(unicodedata.category(ch), []).append(cp)
        if unicodedata.combining(ch) == 9:
            virama.append(cp)
    expected = {f"_GC_{c.upper()}": _ranges(by_category[c]) for c in ("Cc", "Cf", "Co", "Cs", "Cn")}
    expected["_VIRAMA"] = _ranges(virama)
    actual = {name: " ".join(getattr(unicode_tables, name).split()) for name in expected}
    assert actual == expected


def test_table_rows_use_known_rules_and_parse() -> None:
    keys = [row.key for row in unicode_tables.CHARACTER_CLASSES]
    assert len(keys) == len(set(keys))
    for row in unicode_tables.CHARACTER_CLASSES:
        assert row.rule is None or row.rule in RULES
        assert row.source
        for lo, hi in unicode_tables.parse_ranges(row.ranges):
            assert 0 <= lo <= hi <= 0x10FFFF
    for cp in (0x115F, 0x1160, 0x3164, 0xFFA0, 0x00AD, 0x034F, 0x180F, 0xFE0F, 0xE0100, 0xE0FFF):
        assert floor_chars._rule_of(cp) is not None, hex(cp)


def test_nfkc_never_turns_allowed_characters_into_held_ones() -> None:
    """Why scanning the original text is enough: NFKC cannot produce a held character from others."""
    offenders = [
        hex(cp)
        for cp in range(0x110000)
        if unicodedata.decomposition(chr(cp))
        and floor_chars._rule_of(cp) is None
        and any(floor_chars._rule_of(ord(c)) is not None for c in unicodedata.normalize("NFKC", chr(cp)))
    ]
    assert offenders == []


def test_nothing_above_u1ffff_folds_to_ascii() -> None:
    """Why the name-fold inverse only scans below U+20000."""
    offenders = [
        hex(cp)
        for cp in range(0x20000, 0x110000)
        if chr(cp).casefold() != chr(cp)
        or (unicodedata.decomposition(chr(cp)) and any(c.isascii() for c in names._fold_char(chr(cp))))
    ]
    assert offenders == []


# --------------------------------------------------------------------------------------------------------
# Properties
# --------------------------------------------------------------------------------------------------------

ANY_CHAR = st.characters(min_codepoint=0, max_codepoint=0x10FFFF, exclude_categories=())
CONTEXTUAL = {0x0D, 0x200C, 0x200D, 0xFE00, 0xFE01, 0xFE02, 0xFE0E, 0xFE0F} | set(range(0xE0000, 0xE0080))
CONTEXTUAL |= set(range(0xE0100, 0xE01F0))  # ideographic variation selectors
ALWAYS_HELD_RANGES = [(lo, hi) for lo, hi in floor_chars._HELD]


@st.composite
def always_held_code_points(draw: st.DrawFn) -> int:
    lo, hi = draw(st.sampled_from(ALWAYS_HELD_RANGES))
    cp = draw(st.integers(lo, hi))
    if cp in CONTEXTUAL:
        cp = 0x200B
    return cp


@PROPERTIES
@given(text=st.text(ANY_CHAR, max_size=80), path=st.none() | st.text(ANY_CHAR, max_size=30))
def test_any_str_gets_a_verdict_and_only_documented_reasons(text: str, path: str | None) -> None:
    verdict = check_item(text, path)
    assert verdict.verdict in ("pass", "hold")
    assert len(verdict.reasons) <= MAX_REASONS
    assert verdict.omitted == 0 or len(verdict.reasons) == MAX_REASONS
    for reason in verdict.reasons:
        assert reason.rule in RULES
        assert reason.as_text().isascii()
    for ch in {*text, *(path or "")}:
        cp = ord(ch)
        if floor_chars._rule_of(cp) is not None and cp not in CONTEXTUAL:
            assert verdict.held


@PROPERTIES
@given(case=st.sampled_from(LEGIT), cp=always_held_code_points(), where=st.floats(0, 1))
def test_inserting_an_always_held_code_point_holds(case: Case, cp: int, where: float) -> None:
    at = int(len(case.text) * where)
    text = case.text[:at] + chr(cp) + case.text[at:]
    verdict = check_item(text, case.path)
    assert verdict.held
    assert any(r.position == at and r.codepoint == f"U+{cp:04X}" for r in verdict.reasons), verdict.to_json()


@PROPERTIES
@given(text=st.text(ANY_CHAR, max_size=60))
def test_check_item_is_deterministic(text: str) -> None:
    first = check_item(text, "inbox/captures/x.md")
    assert first == check_item(text, "inbox/captures/x.md")
    assert first.to_json() == check_item(text, "inbox/captures/x.md").to_json()


NAME_ALPHABET = [
    *"claudeCLAUDE.mdMagentsAGENTSgeminiGEMINIrn1I|0o cursorules/windsurf-",
    "\u0421",  # CYRILLIC CAPITAL ES -> c
    "\u0410",  # CYRILLIC CAPITAL A -> a
    "\u0435",  # CYRILLIC SMALL IE -> e
    "\u0399",  # GREEK CAPITAL IOTA -> l
    "\u0131",  # DOTLESS I -> l
    "\u200b",  # folds to nothing
    "\u0301",  # combining acute: folds to nothing
    "\u00e1",  # a with acute -> a
    "\uff23",  # FULLWIDTH C -> c
    "\u2024",  # ONE DOT LEADER -> .
    "\u2488",  # DIGIT ONE FULL STOP -> l.
    "\u33a1",  # SQUARE M SQUARED -> rn2
    "\ufb01",  # LATIN SMALL LIGATURE FI -> fl
    "\u00df",  # SHARP S -> ss
    "\u2013",  # EN DASH -> -
]


@PROPERTIES
@given(text=st.text(st.sampled_from(NAME_ALPHABET), max_size=18))
def test_name_search_equals_brute_force_skeleton_definition(text: str) -> None:
    folds = [fold_name(ch) for ch in text]
    expected = set()
    for name in DEFAULT_INSTRUCTION_FILES:
        target = fold_name(name)
        for i in range(len(text)):
            if not folds[i]:
                continue
            for j in range(i + 1, len(text) + 1):
                if "".join(folds[i:j]) == target:
                    expected.add((i, f"names {name}"))
    found = {(r.position, r.detail) for r in mentions_instruction_file(text)}
    assert found == expected


@PROPERTIES
@given(name=st.sampled_from(DEFAULT_INSTRUCTION_FILES), prefix=st.text(max_size=5), suffix=st.text(max_size=5))
def test_any_case_of_a_name_in_any_context_holds(name: str, prefix: str, suffix: str) -> None:
    for spelling in (name, name.upper(), name.lower(), name.swapcase()):
        verdict = check_item(prefix + spelling + suffix)
        assert "instruction-file" in {r.rule for r in verdict.reasons}


FLOOD_ALPHABET = [
    "a",
    " ",
    "\n",
    "\x00",
    "\x1b",
    "\u200b",
    "\u200d",  # contextual: allowed between pictographs
    "\ufe0f",  # contextual: allowed after an emoji-variation base
    "\u2764",  # emoji-variation base
    "\U0001f468",  # pictograph
    "\ue000",
    "\U000f0000",
    "\u0378",
    "\u2028",
    "\u202e",
    "\U000e0061",
    "\U000e0067",
    ENGLAND_FLAG := "\U0001f3f4\U000e0067\U000e0062\U000e0065\U000e006e\U000e0067\U000e007f",
    "CLAUDE.md",
]


def _reference_findings(text: str) -> list[tuple[int, str]]:
    """One step per character: the slow definition the run-based scan must agree with."""
    bmp, astral = re.compile(floor_chars._patterns().held_bmp), re.compile(floor_chars._patterns().held_astral)
    allowed = set()
    for m in re.finditer(re.escape(ENGLAND_FLAG[0]) + "(?=" + re.escape(ENGLAND_FLAG[1:]) + ")", text):
        allowed.update(range(m.start() + 1, m.start() + len(ENGLAND_FLAG)))
    out = []
    for i, ch in enumerate(text):
        pattern = bmp if ord(ch) <= 0xFFFF else astral
        if i not in allowed and pattern.match(text, i):
            out.append((i, floor_chars._rule_of(ord(ch)) or "?"))
    return out


@PROPERTIES
@given(parts=st.lists(st.sampled_from(FLOOD_ALPHABET), max_size=120))
def test_counts_and_first_of_each_rule_match_a_per_character_reference(parts: list[str]) -> None:
    text = "".join(parts)
    reference = _reference_findings(text)
    names = len(mentions_instruction_file(text))
    verdict = check_item(text)
    assert len(verdict.reasons) + verdict.omitted == len(reference) + names
    chars = [r for r in verdict.reasons if r.codepoint is not None]
    first_of_rule: dict[str, int] = {}
    for position, rule in reference:
        first_of_rule.setdefault(rule, position)
    assert {r.rule for r in chars} == set(first_of_rule)
    for rule, position in first_of_rule.items():
        assert min(r.position or 0 for r in chars if r.rule == rule) == position
    for reason in chars:
        assert (reason.position, reason.rule) in reference
    listed = {(r.position, r.rule) for r in chars}
    assert all((p, r) in listed for p, r in reference[: min(len(reference), MAX_REASONS - len(first_of_rule))])


@pytest.mark.parametrize(
    "text",
    [
        r"CLAUDE\.md",  # Markdown escape renders as CLAUDE.md
        "CLAUDE&#46;md",  # HTML entity
        "CLAUDE&period;md",
        "CLAUDE<!-- -->.md",  # an HTML comment splitting the name
        "**CLAUDE**.md",  # emphasis around the name
        "**C**LAUDE.md",
        "CLAUDE.**md**",
        "CLAUDE\u00b7md",  # middle dot
        "CLAUDE\u3002md",  # ideographic full stop
        "Please also update AGENTS.override.md",  # names added after review
        "see .goosehints and CONVENTIONS.md",
    ],
)
def test_names_that_appear_only_once_rendered_are_held(text: str) -> None:
    """Found in review: names a reader sees once Markdown/HTML is rendered."""
    verdict = check_item(text)
    assert verdict.held and any(r.rule.startswith("instruction-file") for r in verdict.reasons)


@pytest.mark.parametrize(
    "text",
    [
        "a_normal_note about my_project",
        "The **bold** claim and snake_case_names.md",
        "Use `make test` &amp; `make run`.",
        "See *the docs*. Then **run** it.",
    ],
)
def test_ordinary_markdown_still_passes(text: str) -> None:
    assert not check_item(text).held
