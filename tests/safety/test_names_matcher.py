"""The instruction-file name search over stand-in characters finds exactly what the old search found.

names.py compiles its patterns over one stand-in character per fold class and translates the text to them
(milliseconds); names_reference.py keeps the version that compiled the same patterns over the classes
themselves (seconds). Same hits, for the default list and for other lists, on text drawn from every fold
class the names use, the characters that fold to nothing, the stand-ins themselves and anything else.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from notegate.safety import names
from support import names_reference

PROPERTIES = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

INVERSE, DELETED = names._fold_inverse()
STAND_IN, NOTHING, NEUTRAL = names._stand_ins(INVERSE, DELETED)
_USED = {c for n in names.DEFAULT_INSTRUCTION_FILES for c in names.fold_name(n)}
#: Characters of every fold class the default names can use (a token made only of their characters).
NAME_CHARS = sorted(ch for t, chars in INVERSE.items() if set(t) <= _USED for ch in chars)
TRICKY = sorted(DELETED)[::97] + [*STAND_IN.values()][::7] + [NOTHING, NEUTRAL, "\ue000", "\uf8ff"]
ALPHABET = st.one_of(st.sampled_from(NAME_CHARS), st.sampled_from(TRICKY), st.characters(), st.sampled_from(" .-/"))
OTHER_LISTS = (
    ("CLAUDE.md",),
    ("README.md", ".github/instructions", "x"),
    ("AGENTS.md", "AGENT.md", "AGENTS.override.md"),
    ("mm", "rn.md", "l1I.md"),
)


def _seed_names(draw: st.DrawFn, listed: tuple[str, ...]) -> str:
    """Text around spellings of the names (so hits occur), with characters from the alphabet between."""
    parts = draw(st.lists(st.one_of(st.text(ALPHABET, max_size=6), st.sampled_from(listed)), max_size=8))
    return "".join(parts)


@st.composite
def texts(draw: st.DrawFn, listed: tuple[str, ...] = names.DEFAULT_INSTRUCTION_FILES) -> str:
    return _seed_names(draw, listed)


@PROPERTIES
@given(text=st.one_of(texts(), st.text(ALPHABET, max_size=40)))
def test_default_list_hits_equal_the_reference(text: str) -> None:
    listed = names.DEFAULT_INSTRUCTION_FILES
    assert names.name_hits(text, listed) == names_reference.name_hits(text, listed)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(listed=st.sampled_from(OTHER_LISTS), data=st.data())
def test_other_lists_hit_equal_the_reference(listed: tuple[str, ...], data: st.DataObject) -> None:
    text = data.draw(st.one_of(texts(listed), st.text(ALPHABET, max_size=30)))
    assert names.name_hits(text, listed) == names_reference.name_hits(text, listed)


def test_look_alike_spellings_equal_the_reference() -> None:
    text = "See \u0421L\u0410UD\u0415.md, \uff23\uff2c\uff21\uff35\uff24\uff25.md, c\u200bla\u0301ude\u2024rnd, " * 3
    listed = names.DEFAULT_INSTRUCTION_FILES
    assert names.name_hits(text, listed) == names_reference.name_hits(text, listed)
    assert len(names.name_hits(text, listed)) == 9


def test_stand_ins_are_distinct_and_in_no_fold_class() -> None:
    used = [*STAND_IN.values(), NOTHING, NEUTRAL]
    assert len(set(used)) == len(used) == len(INVERSE) + 2
    members = DELETED.union(*INVERSE.values())
    assert not members & set(used)
    table = names._name_matcher(names.DEFAULT_INSTRUCTION_FILES).table
    assert all(len(v) == 1 for v in table.values())  # one character for one: positions are unchanged
    assert {chr(k) for k, v in table.items() if v == NEUTRAL} == set(used) - {NEUTRAL}


def test_the_inverse_fold_equals_the_one_computed_character_by_character() -> None:
    assert names._fold_inverse() == names_reference._fold_inverse()
    assert names._fold_each(["m", "\u2488", "\u200b", "A\u0301"]) == ["rn", "l.", "", "a"]
