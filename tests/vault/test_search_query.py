"""The caller's query text never becomes FTS5 syntax: parsing, the three tiers, hostile input, linear time.

Properties: for any string, every expression built holds only our syntax (quoted words, ``*``, ``+``,
``AND``, ``OR``), so no column filter, ``NEAR``, ``^``, ``-`` or parenthesis of the caller's survives; and a
search answers with hits or a clean empty list, never an SQLite error.  Time: a search costs in proportion
to its text (at most MAX_QUERY_TERMS terms are read), measured with tests/support/timing.py's ratio.
"""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from notegate.config import load_config
from notegate.services.runtime import Runtime, policy_fingerprint
from notegate.vault.index import MATCH_TIERS, MAX_QUERY_TERMS, SearchIndex, Term, make_snippet, parse_query
from notegate.vault.query import EXACT_COLUMNS, exact_only
from notegate.vault.store import Author, Change, VaultStore
from support.timing import assert_catches_quadratic, assert_linear, fill

# One term as we write it: a quoted run of word characters (letters, digits, combining marks) and single
# spaces, optionally a prefix star.  Nothing else may appear inside or between terms but our joiners.
_MARKS = "\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f"
_TERM = rf'"(?:[^\W_]|[{_MARKS}])+(?: (?:[^\W_]|[{_MARKS}])+)*"\*?'
# A word with its other forms is a group of terms: ("word" OR "form"); the exact tiers are held to the exact
# columns by our one column filter around the whole expression (query.exact_only).
_ALT = rf"(?:{_TERM}|\({_TERM}(?: OR {_TERM})*\))"
_EXPR = rf"{_ALT}(?:(?: \+ | AND | OR ){_ALT})*"
# A marked tier (query.MARKED_TIERS) adds its words written with marks, as the marks column's tokens: ``x`` and
# lower-case hex, nothing a caller can write into it (vault/marks.py).
_MARKED = r'(?: AND "x[0-9a-f]+")*'
GRAMMAR = re.compile(rf"(?:{_EXPR}|{re.escape(EXACT_COLUMNS)} : \({_EXPR}\)){_MARKED}")
SYNTAX = [
    '"', "*", "-", "NEAR", "NEAR(", "NEAR/3", ":", "(", ")", "^", "AND", "OR", "NOT", "+", "title:", "body:",
    "{path title}:", "path : x", "'", "\\", "_", "\u0301", "\x00", "  ", "hand", "zebra*", "é", "日本",
]  # fmt: skip
hostile = st.lists(st.sampled_from(SYNTAX) | st.text(max_size=6), max_size=20).map(" ".join) | st.text(max_size=80)


@pytest.fixture
def store(vault: Path):
    rt = Runtime(load_config(vault))
    yield rt, rt.environment(None, index_now=False).store
    rt.close()


@pytest.fixture
def index(store, tmp_path: Path):
    rt, vault_store = store
    idx = SearchIndex(tmp_path / "index.sqlite", rt.classify, policy_fingerprint(rt.policy))
    commit(
        vault_store,
        {
            "ideas/zebra.md": "# Zebra\nstripes and a release plan\n",
            "private/zebra.md": "zebra diary\n",
            "inbox/captures/z.md": "zebra capture\n",
            "ideas/tools.md": "a handbook, a handle and title: body\n",
        },
    )
    idx.catch_up(vault_store)
    yield idx
    idx.close()


def commit(store: VaultStore, files: dict[str, str]) -> None:
    store.commit(
        [Change(p, t.encode()) for p, t in files.items()], {p: store.blob_id(p) for p in files}, Author("T", "o"), "m"
    )


# ------------------------------------------------------------------ parsing
def test_words_prefixes_and_quoted_phrases() -> None:
    q = parse_query('release plan* "exact phrase"* x')
    assert q is not None
    assert q.terms == (Term(("release",)), Term(("plan",), True), Term(("exact", "phrase"), True), Term(("x",)))
    assert q.tiers() == [
        ("phrase", '"release" + "plan"* + "exact phrase"* + "x"'),  # no column filter: see Query.tiers
        ("all-words", exact_only('"release" AND "plan"* AND "exact phrase"* AND "x"')),
        ("any-word", '"release" OR "plan"* OR "exact phrase"* OR "x"'),
    ]


def test_one_term_has_one_tier() -> None:
    assert parse_query("hand*").tiers() == [("all-words", exact_only('"hand"*'))]
    assert parse_query('"merge conflict"').tiers() == [("phrase", '"merge conflict"')]
    # a word with other forms: its exact tier, then its forms (issue 33)
    forms = parse_query("contributions", ("english",))
    assert forms.tiers() == [
        ("all-words", exact_only('"contributions"')),
        ("word-forms", '("contributions" OR "contribut")'),
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("title:lighthouse", ["title", "lighthouse"]),  # a column filter is two words
        ("NEAR(a b, 3)", ["NEAR", "a", "b", "3"]),  # NEAR is a word
        ("a -b ^c", ["a", "b", "c"]),  # no NOT, no initial-token anchor
        ("foo_bar e-mail", ["foo", "bar", "e", "mail"]),  # '_' and '-' separate, as in the tokenizer
        ('"unclosed phrase runs to the end', ["unclosed phrase runs to the end"]),
        ('"" "  " ***', None),  # no word at all
        ("cafe\u0301", ["café"]),  # NFC first
    ],
)
def test_syntax_characters_are_only_separators(text: str, expected: list[str] | None) -> None:
    q = parse_query(text)
    assert (None if q is None else [" ".join(t.words) for t in q.terms]) == expected


def test_at_most_max_query_terms_words_are_read() -> None:
    q = parse_query(" ".join(f"w{i}" for i in range(100)))
    assert q is not None and len(q.terms) == MAX_QUERY_TERMS
    q = parse_query('"' + " ".join(f"p{i}" for i in range(40)) + '" tail')
    assert q is not None and q.terms == (Term(tuple(f"p{i}" for i in range(MAX_QUERY_TERMS))),)  # a phrase counts


@settings(max_examples=250, deadline=None)
@given(text=hostile)
def test_every_expression_holds_only_our_syntax(text: str) -> None:
    q = parse_query(text, ("english", "spanish", "russian"))
    if q is None:
        return
    for _, expr in q.tiers():
        assert GRAMMAR.fullmatch(expr), expr
    assert sum(len(t.words) for t in q.terms) <= MAX_QUERY_TERMS


# ------------------------------------------------------------------ searching
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=hostile)
def test_any_text_answers_hits_or_nothing_never_an_sqlite_error(index: SearchIndex, text: str) -> None:
    for private in (False, True):
        for inbox in (False, True):
            try:
                hits = index.search(text, include_private=private, include_inbox=inbox, folder="ideas" * private)
            except sqlite3.Error as exc:  # pragma: no cover - the property's failure
                pytest.fail(f"{text!r}: {exc}")
            assert all(h.matched in MATCH_TIERS for h in hits)
            assert len({h.path for h in hits}) == len(hits)
            assert private or not any(h.path.startswith("private/") for h in hits)
            assert inbox or not any(h.path.startswith("inbox/") for h in hits)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(around=st.lists(st.sampled_from([s for s in SYNTAX if '"' not in s]), max_size=6))
def test_a_word_among_syntax_is_still_found(index: SearchIndex, around: list[str]) -> None:
    text = " ".join([*around[:3], "zebra", *around[3:]])
    assert "ideas/zebra.md" in [h.path for h in index.search(text)]


def test_a_lone_surrogate_or_nul_is_no_error(index: SearchIndex) -> None:
    assert [h.path for h in index.search("\ud800zebra\x00")] == ["ideas/zebra.md"]
    assert index.search("\ud800\x00") == []


def test_column_filters_never_apply(index: SearchIndex) -> None:
    # 'title:' would limit an FTS5 match to the title column; here it is the word 'title' (in a body)
    assert [h.path for h in index.search("title: body")] == ["ideas/tools.md"]
    assert [(h.path, h.matched) for h in index.search("path:zebra")] == [("ideas/zebra.md", "any-word")]


def test_a_prefix_is_ranked_with_real_scores(index: SearchIndex) -> None:
    hits = index.search("hand*")
    assert "ideas/tools.md" in [h.path for h in hits]
    assert all(h.score > 0 for h in hits) and [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_statements_per_search_do_not_grow_with_terms(index: SearchIndex) -> None:
    """Four tiers at most, each one statement per table, plus one to fetch bodies, one for a note the query
    names exactly and one for the word forms the index holds (issue 33): whatever the term count."""
    statements: list[str] = []
    conn = index._conn()
    conn.set_trace_callback(lambda sql: sql.startswith("--") or statements.append(sql))  # ours, not FTS5's
    try:
        for n in (2, 8, 32, 200):
            statements.clear()
            index.search(" ".join(["zebra", *(f"w{i}" for i in range(n - 1))]), include_private=True, limit=50)
            assert len(statements) <= 4 * 2 + 3, (n, "\n".join(statements))
    finally:
        conn.set_trace_callback(None)


# ------------------------------------------------------------------ time
SHAPES = {
    "quotes": lambda n: fill('"', n),
    "open quote then words": lambda n: '"' + fill("a b ", n - 1),
    "prefix words": lambda n: fill("hand* ", n),
    "syntax soup": lambda n: fill("(NEAR -:^ title: ", n),
    "no word": lambda n: fill("-*:", n),
    # MAX_QUERY_TERMS words whose length grows with n: cost in proportion to the text, not its square
    "long words": lambda n: " ".join(fill("release", n // MAX_QUERY_TERMS - 1) for _ in range(MAX_QUERY_TERMS)),
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_a_search_costs_in_proportion_to_its_text(index: SearchIndex, shape: str) -> None:
    assert_linear(lambda text: index.search(text, include_private=True, include_inbox=True), SHAPES[shape])


def test_a_phrase_snippet_costs_in_proportion_to_the_body() -> None:
    q = parse_query("release plan")
    assert q is not None
    words = q.words()
    for build in (lambda n: fill("release ", n), lambda n: fill("release , ;", n) + "release plan"):
        assert_linear(lambda body: make_snippet(body, words, phrase=q.terms), build)


def test_the_measuring_stick_catches_quadratic_at_these_sizes() -> None:
    assert_catches_quadratic(SHAPES["syntax soup"])  # every shape above uses the default 16 KiB / 128 KiB
