"""A search's hits are described exactly as before issue 33's describe-cost work (hypothesis, old beside new).

Why: describing the hits (a snippet and a part for each of up to 20) was a third of a search's CPU, so it
takes shortcuts: the front matter's end read once per hit for both, white space collapsed by ``str.split``
instead of a regex pass, the terms' check made once per search.  Each snippet string (its marks, its
ellipses) and each part must be what the code before gave, for every note and query: the old code is kept as
the reference (tests/support/describe_reference.py) and run side by side with the new on generated notes
(front matter with aliases, tags and a language; headings; Markdown; CJK, combining marks, case-changing
letters; long notes past the first-chunk scan) and queries (words, prefixes, phrases, word forms).
"""

from __future__ import annotations

import re
import sys

from hypothesis import given, settings
from hypothesis import strategies as st

from notegate.vault.frontmatter import front_matter_end
from notegate.vault.notefields import part_of
from notegate.vault.query import _bold, _marked, _one_space, hit_pattern, make_snippet, parse_query, plain
from support import describe_reference as old

VOCAB = ["release", "Release", "RELEASE", "releases", "plan", "plans", "planning", "the", "東京", "タワー", "東",
         "café", "cafe\u0301", "naïve", "İstanbul", "straße", "ſtar", "star", "run", "runs", "x", "_", "9"]  # fmt: skip
MARKS = [" ", "  ", "\n", "\n\n", "\t", ".", ",", "-", "'", '"', "# ", "## ", "> ", "- ", "* ", "- [x] ", "**", "__",
         "==", "~~", "`", "[[", "]]", "|", "](", "(", ")", "[", "]", "<b>", "</b>", "#", "\u3000", "\xa0", "\x1c",
         "\u0301", "", "", ""]  # fmt: skip
BODIES = st.lists(st.tuples(st.sampled_from(VOCAB), st.sampled_from(MARKS)), max_size=40).map(
    lambda pairs: "".join(w + s for w, s in pairs)
)
KEYS = ["aliases", "alias", "Aliases", "tags", "tag", "lang", "title", "created", "  aliases"]
VALUES = st.one_of(
    st.sampled_from(VOCAB),
    st.lists(st.sampled_from(VOCAB), max_size=3).map(lambda v: "[" + ", ".join(v) + "]"),
    st.lists(st.sampled_from(VOCAB), min_size=1, max_size=3).map(lambda v: "".join(f"\n  - {x}" for x in v)),
    st.sampled_from(VOCAB).map(lambda v: f'"{v}"'),
)
FRONT = st.one_of(
    st.just(""),
    st.lists(st.tuples(st.sampled_from(KEYS), VALUES), max_size=4).map(
        lambda kv: "---\n" + "".join(f"{k}: {v}\n" for k, v in kv) + "---\n"
    ),
)


@st.composite
def notes(draw: st.DrawFn) -> str:
    """Front matter (or none, or an unclosed one), a body, sometimes a long one (past the first 4096
    characters, where a first hit is looked for in the whole note)."""
    front = draw(FRONT)
    body = draw(BODIES)
    if draw(st.booleans()):
        body = draw(BODIES) + " filler" * draw(st.sampled_from([0, 600, 700])) + body
    if front and draw(st.integers(0, 9)) == 0:
        front = front.removesuffix("---\n")  # never closed: all of it is body
    return front + body


QUERIES = st.lists(
    st.one_of(
        st.sampled_from(VOCAB).filter(lambda w: w not in ("_",)),
        st.sampled_from(["rel*", "plan*", "東*", "caf*", "ru*"]),
        st.lists(st.sampled_from(VOCAB), min_size=2, max_size=3).map(lambda ws: '"' + " ".join(ws) + '"'),
    ),
    min_size=1,
    max_size=3,
).map(" ".join)
LANGUAGES = st.sampled_from([(), ("english",), ("english", "german")])
PATHS = st.sampled_from(["notes/release plan.md", "東京.md", "a/b/x.canvas", "plain.md", "cafe\u0301.md"])


@settings(max_examples=600, deadline=None)
@given(notes(), QUERIES, LANGUAGES, PATHS)
def test_every_snippet_and_part_is_the_old_ones(text: str, said: str, languages: tuple[str, ...], path: str) -> None:
    query = parse_query(said, languages)
    if query is None:
        return
    words = query.forms()
    pattern = hit_pattern(words) if words else None
    end = front_matter_end(text)
    for phrase in (None, query.terms):
        want = old.make_snippet(text, words, phrase=phrase)
        assert make_snippet(text, words, phrase=phrase) == want
        assert make_snippet(text, words, phrase=phrase, skip=end) == want
    assert part_of(path, text, pattern, end) == old.part_of(path, text, pattern)
    assert part_of(path, text, pattern) == old.part_of(path, text, pattern)


@settings(max_examples=400, deadline=None)
@given(notes())
def test_plain_is_the_old_plain(text: str) -> None:
    assert plain(text) == old.plain(text)
    assert plain(text[:180]) == old.plain(text[:180])
    assert make_snippet(text, []) == old.make_snippet(text, [])


@settings(max_examples=400, deadline=None)
@given(st.text(st.sampled_from([" ", "\t", "\n", "\r", "\x1c", "\x85", "\xa0", "\u2028", "\u3000", "a", "é", "東"])))
def test_one_space_is_the_regex_pass(text: str) -> None:
    assert _one_space(text) == re.sub(r"\s+", " ", text)


def test_str_split_cuts_where_the_regex_white_space_is() -> None:
    """``_one_space`` rests on ``\\s`` and ``str.isspace`` being the same set of characters: every code point."""
    space = re.compile(r"\s")
    differ = [c for c in map(chr, range(sys.maxunicode + 1)) if (space.fullmatch(c) is not None) != c.isspace()]
    assert differ == []


ASCII_WINDOWS = st.lists(
    st.sampled_from(
        [
            "the",
            "The",
            "THE",
            "them",
            "bathe",
            "other",
            "run",
            "Runs",
            "x",
            "_",
            "9",
            " ",
            "-",
            "**",
            "é",
            "K",
            "\u212a",
            "ſ",
        ]
    ),
    max_size=30,
).map("".join)


@settings(max_examples=400, deadline=None)
@given(
    ASCII_WINDOWS,
    st.lists(
        st.sampled_from(["the", "them", "th*", "he", "run*", "x", "9", "bath*", "é", "k", "ſ"]), min_size=1, max_size=4
    ),
)
def test_hits_marked_lowered_are_the_patterns_marks(text: str, terms: list[str]) -> None:
    """Overlapping terms, prefixes, a match inside a word before one that starts a word, and the windows and
    terms outside ASCII (``é``; ``ſ`` and the Kelvin sign, which ignoring case pairs with ``s`` and ``k``)."""
    pattern = hit_pattern(terms)
    assert _marked(text, terms, pattern) == pattern.sub(_bold, text)
