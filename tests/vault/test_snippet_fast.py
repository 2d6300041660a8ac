"""The shortcuts a search's snippets and parts take give exactly what their definitions give (hypothesis).

Why: every hit of a search is described (its snippet, its part) from the note's text, so these run twenty
times a search and take shortcuts: a long ASCII note is scanned in its first chunk before the whole of it,
a markup pass is skipped when its window holds none of the strings every match holds, the first heading is
found by a literal-prefixed pattern.  Each is checked against the plain definition it replaces, over texts
made of the characters that matter to it (word boundaries at the chunk's edge, case, markup, newlines).
"""

from __future__ import annotations

import re
from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st

from notegate.vault import query
from notegate.vault.notefields import _H1, _title
from notegate.vault.query import _first_word, _hit_pattern, _lowered_pattern, make_snippet, plain


def reference_first_word(body: str, terms: list[str]) -> re.Match[str] | None:
    """The definition: the whole text lowered and scanned (the code before the chunk), else the one pattern."""
    low = body.lower()
    if len(low) != len(body) or not all(
        t[:1] and query._WORD_START.match(t) and not query._starts_unspaced(t) for t in terms
    ):
        return _hit_pattern(terms).search(body)
    for match in _lowered_pattern(tuple(terms)).finditer(low):
        if match.start() == 0 or not query._WORD_START.match(low, match.start() - 1):
            return match
    return None


def reference_plain(text: str) -> str:
    """The definition: every markup pass, whatever the window holds."""
    for pattern, repl, _triggers in query._MARKUP:
        text = pattern.sub(repl, text)
    return re.sub(r"\s+", " ", text)


WORDISH = st.sampled_from(["the", "The", "THE", "them", "bathe", "other", "run", "runs", "x", "_", "9", "é"])
SEPARATORS = st.sampled_from([" ", "\n", ".", "-", "'", "", "", "İ"])
BODIES = st.lists(st.tuples(WORDISH, SEPARATORS), max_size=30).map(lambda pairs: "".join(w + s for w, s in pairs))
TERMS = st.lists(st.sampled_from(["the", "them", "run", "run*", "ru*", "x", "é", "bath"]), min_size=1, max_size=3)


@settings(max_examples=200, deadline=None)
@given(BODIES, TERMS, st.integers(1, 24))
def test_the_first_word_in_a_chunk_is_the_first_word_of_the_whole_text(body: str, terms: list[str], chunk: int) -> None:
    """Chunks as small as one character, so every kind of edge is met: a word cut by the chunk's end, a
    prefix term running into it, a match ending exactly there, a non-ASCII text (never chunked)."""
    with mock.patch.object(query, "FIRST_CHUNK", chunk):
        got = _first_word(body, terms)
    want = reference_first_word(body, terms)
    assert (got.span() if got else None) == (want.span() if want else None), (body, terms, chunk)


OVERLAPPING = st.lists(st.sampled_from(["the", "them", "th*", "he", "other", "bath*", "x"]), min_size=2, max_size=4)


@settings(max_examples=200, deadline=None)
@given(BODIES, OVERLAPPING)
def test_several_terms_found_by_find_are_the_first_word_and_the_same_alternative(body: str, terms: list[str]) -> None:
    """Several terms are looked for one by one with ``str.find`` (``_first_start``): the first word-starting
    match, and the alternative the one pattern picks there (a term that is a prefix of another, a prefix
    term, a term found inside a word before it starts one)."""
    got = _first_word(body, terms)
    want = reference_first_word(body, terms)
    assert ((got.span(), got.group(0)) if got else None) == ((want.span(), want.group(0)) if want else None)


@settings(max_examples=120, deadline=None)
@given(BODIES, TERMS)
def test_a_snippet_with_a_small_chunk_is_the_snippet(body: str, terms: list[str]) -> None:
    with mock.patch.object(query, "FIRST_CHUNK", 5):
        small = make_snippet(body, terms)
    assert small == make_snippet(body, terms)


MARKUP = st.sampled_from(
    ["[[", "]]", "[", "]", "(", ")", "](", "|", "!", "#", "## ", "> ", ">", "[!note]", "- ", "* ", "+ ", "- [x] ",
     "**", "*", "__", "_", "==", "~~", "`", "``", "<b>", "<", ">", "\n", "\t", "  ", " ", "word", "é"]
)  # fmt: skip
WINDOWS = st.lists(MARKUP, max_size=30).map("".join)


@settings(max_examples=200, deadline=None)
@given(WINDOWS)
def test_plain_skipping_passes_by_their_triggers_is_plain(text: str) -> None:
    assert plain(text) == reference_plain(text)


HEADS = st.lists(
    st.sampled_from(["# ", "#", "## ", " # ", "\n", "\r", " ", "\t", "Title", "x", "#x", "é"]), max_size=25
)


@settings(max_examples=200, deadline=None)
@given(HEADS.map("".join))
def test_the_first_heading_is_the_multiline_patterns_first(text: str) -> None:
    want = _H1.search(text)
    assert _title("a/note.md", text) == ("note", want.group(1) if want else "")
