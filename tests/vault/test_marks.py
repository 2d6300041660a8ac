"""Words written with marks the index folds (vault/marks.py): kept as written in the ``marks`` column, and a
query that writes the marks finds the exact form above the folded ones (issue 33: the exact form first)."""

from __future__ import annotations

import re
import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from notegate.vault.index import SearchIndex
from notegate.vault.marks import MAX_MARKED_WORDS, mark_token, marks_of
from notegate.vault.query import parse_query
from support.rowindex import index_of_rows
from support.timing import assert_catches_quadratic, assert_linear, fill

TOKEN = re.compile(r"x(?:[0-9a-f]{2})+")


@pytest.mark.parametrize(
    ("word", "marked"),
    [
        ("presente", False),  # ASCII: nothing to fold
        ("presenté", True),
        ("PRESENTÉ", True),
        ("naïve", True),
        ("đường", True),  # Vietnamese: ư and ờ decompose onto u and o
        ("мой", False),  # the tokenizer folds Latin letters only: й and и, ά and α stay apart already
        ("ά", False),
        ("straße", False),  # ß, ø: no mark to remove, indexed as written already
        ("øl", False),
        ("東京", False),  # unspaced scripts are cut into characters instead
        ("が", False),
    ],
)
def test_a_word_is_marked_only_when_the_index_would_fold_a_mark_of_it(word: str, marked: bool) -> None:
    assert (mark_token(word) is not None) is marked


def test_case_and_composition_do_not_change_the_token() -> None:
    composed = "presenté"
    decomposed = unicodedata.normalize("NFD", composed)
    assert decomposed != composed
    assert mark_token(composed) == mark_token(decomposed) == mark_token("PRESENTÉ") == "x70726573656e74c3a9"


@given(st.text(max_size=300))
def test_the_column_holds_only_tokens_of_the_texts_marked_words(text: str) -> None:
    value = marks_of(text)
    tokens = value.split(" ") if value else []
    assert tokens == sorted(set(tokens))
    assert all(TOKEN.fullmatch(token) for token in tokens)  # one word each, whatever the tokenizer does
    words = re.findall(r"[^\W_]+", unicodedata.normalize("NFC", text))  # the text's words, '_' a separator
    assert {t for t in map(mark_token, words) if t is not None} == set(tokens)
    assert all(mark_token(bytes.fromhex(token[1:]).decode()) == token for token in tokens)
    if text.isascii():
        assert value == ""


def test_a_row_keeps_a_bounded_number_of_marked_words_the_same_ones_every_time() -> None:
    """The cut keeps the first words seen: a contentless row is deleted by exactly the values it was inserted
    with, so the value must not depend on the process (string hashing is salted per process)."""
    text = " ".join(f"é{n:06d}" for n in range(MAX_MARKED_WORDS + 50))
    kept = marks_of(text).split()
    assert len(kept) == MAX_MARKED_WORDS
    assert kept == sorted(mark_token(f"é{n:06d}") for n in range(MAX_MARKED_WORDS))
    assert marks_of(text + " " + text[::-1]) == marks_of(text)  # the words seen first are kept, then sorted


SHAPES = {
    "prose": lambda n: fill("el informe presenté y después medí el alcance. ", n),
    "one word": lambda n: "é" * n,
    "distinct": lambda n: " ".join(f"é{i}" for i in range(n // 8)),
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_marks_of_is_linear_in_the_text(shape: str) -> None:
    assert_catches_quadratic(SHAPES[shape])
    assert_linear(marks_of, SHAPES[shape])


def _row(path: str, text: str, private: int = 0) -> tuple:
    return (path, path.rsplit("/", 1)[0], f"{abs(hash(path)):040x}"[:40], None, private, 0, text)


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory):
    filler = "otras palabras del informe " * 40
    rows = [_row(f"n/presente-{i}.md", f"# Nota {i}\n\nEl presente informe. {filler}\n") for i in range(12)]
    rows.append(_row("n/sandbox.md", f"# Sandbox\n\n{filler}\nLo presenté como exposición del cliente.\n"))
    rows.append(_row("fr/naive.md", "# Note\n\nune idée naïve " + "et d'autres mots " * 30 + "\n"))
    rows += [_row(f"fr/naive-{i}.md", f"# Autre {i}\n\nnaive idee\n") for i in range(5)]
    yield from index_of_rows(tmp_path_factory.mktemp("marks") / "index.sqlite", rows)


def test_a_word_written_with_its_marks_finds_its_exact_form_first(index: SearchIndex) -> None:
    hits = index.search("presenté", limit=10)
    assert hits[0].path == "n/sandbox.md" and hits[0].matched == "all-words"
    assert len(hits) == 10  # the folded form is still found, after it
    assert index.search("naïve", limit=3)[0].path == "fr/naive.md"


def test_a_word_written_without_marks_finds_every_form_as_before(index: SearchIndex) -> None:
    assert len(index.search("presente", limit=20)) == 13
    assert {h.path for h in index.search("naive", limit=10)} == {"fr/naive.md", *(f"fr/naive-{i}.md" for i in range(5))}


def test_a_phrase_and_several_words_with_marks_find_the_exact_form_first(index: SearchIndex) -> None:
    assert index.search('"lo presenté"', limit=3)[0].path == "n/sandbox.md"
    first = index.search("informe presenté", limit=3)[0]
    assert first.path == "n/sandbox.md" and first.matched == "all-words"


def test_a_prefix_word_has_no_exact_form() -> None:
    q = parse_query("presenté*")
    assert q is not None and q.terms[0].marks == ()
    q = parse_query("presenté")
    assert q is not None and q.terms[0].marks == ("x70726573656e74c3a9",)
    assert [tier for tier, _expr in q.tiers()] == ["all-words+marks", "all-words"]
