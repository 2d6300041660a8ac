"""Issue 33: a note's title, aliases, headings, tags and body weighed apart; other word forms found by Snowball
stems in the note's language, below the exact form; a query naming a note first; each hit says which part
matched, with a plain-text snippet."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from notegate.vault import names, notefields, query
from notegate.vault.index import SearchIndex
from notegate.vault.store import VaultStore
from notegate.vault.wordforms import language_of, stem_forms, stem_key, stems_of
from support.index import commit


def _top(index: SearchIndex, text: str) -> list[tuple[str, str]]:
    return [(h.path, h.part) for h in index.search(text, include_private=True, include_inbox=True)]


# (path, declared lang, text, Snowball algorithm): front matter first, then the first folder, then the script,
# then a vote of common words, else English
LANGUAGE_CASES = [
    ("notes/a.md", "", "", "english"),
    ("es/Guía.md", "", "", "spanish"),
    ("pt-br/Guia.md", "", "", "portuguese"),
    ("de/x.md", "fr", "", "french"),  # declared beats the folder
    ("x.md", "spanish", "", "spanish"),  # a language's name
    ("ja/ノート.md", "", "", None),  # a language without a Snowball stemmer: exact forms only
    ("zh-TW/x.md", "", "", None),
    ("doc/x.md", "", "", "english"),  # a three-letter folder is no language
    ("x.md", "pt_BR", "", "portuguese"),
    ("x.md", "", "Привет, как дела", "russian"),  # the script names it
    ("x.md", "", "東京タワーに行きました", None),
    ("notes/x.md", "", "Die Katze ist nicht auf dem Tisch und das ist gut", "german"),  # common words
    ("notes/x.md", "", "Le chat est dans la maison pour une nuit", "french"),
]


@pytest.mark.parametrize(("path", "declared", "text", "expected"), LANGUAGE_CASES)
def test_a_notes_language(path: str, declared: str, text: str, expected: str | None) -> None:
    assert language_of(path, declared, text) == expected


def test_front_matter_aliases_tags_and_lang_are_read_leniently() -> None:
    text = "---\naliases:\n  - Donate\n  - 'Support us'\ntags: [money, \"#help\"]\nlang: es\nnested:\n  a: b\n---\n"
    fields = notefields.note_fields("x/Pay.md", text + "# Pay up\n\n## How\n\nbody #inline\n")
    assert fields == notefields.NoteFields(
        name="Pay", heading="Pay up", aliases=("Donate", "Support us"), headings="Pay up\nHow",
        tags="money help inline", lang="es",
    )  # fmt: skip
    assert names.names_of(fields) == [
        ("pay", "title"),
        ("pay up", "title"),
        ("donate", "alias"),
        ("support us", "alias"),
    ]


def test_exact_form_outranks_a_stemmed_one_and_both_are_found(index: SearchIndex, store: VaultStore) -> None:
    commit(store, {"n/a.md": "# Contributions\n\nmatter\n", "n/b.md": "# We contribute\n\nhere\n", "n/c.md": "x\n"})
    index.catch_up(store)
    assert [(h.path, h.matched) for h in index.search("contributions")] == [
        ("n/a.md", "all-words"),
        ("n/b.md", "word-forms"),
    ]
    assert [p for p, _ in _top(index, "contribute")] == ["n/b.md", "n/a.md"]
    assert _top(index, '"contribute"') == [("n/b.md", "title")]  # a quoted word is searched as written


def test_a_stem_that_is_a_word_finds_its_other_forms(index: SearchIndex, store: VaultStore) -> None:
    """A stem equal to a word (``run``) is found as that word in a body, and as a form in names and headings;
    the body's own other forms are not stemmed (``runs`` in a body is found by its exact form only)."""
    commit(store, {"n/a.md": "I run daily\n", "n/Running.md": "is fun\n", "n/c.md": "## Runs\n\nfast\n"})
    index.catch_up(store)
    found = [p for p, _ in _top(index, "run")]
    assert found[0] == "n/a.md" and set(found) == {"n/a.md", "n/Running.md", "n/c.md"}
    assert _top(index, "running")[0] == ("n/Running.md", "title")
    assert {p for p, _ in _top(index, "running")} == {"n/a.md", "n/Running.md", "n/c.md"}


def test_a_query_naming_a_note_puts_it_first_in_any_case(index: SearchIndex, store: VaultStore) -> None:
    long = "# Long\n\n" + "internal links and their targets, internal link syntax. " * 50
    commit(
        store,
        {"a/Long.md": long, "a/Internal links.md": "How to link.\n", "b/x.md": "---\naliases: [Wiki Links]\n---\nx\n"},
    )
    index.catch_up(store)
    assert _top(index, "INTERNAL   links")[0] == ("a/Internal links.md", "title")
    assert _top(index, "wiki links")[0] == ("b/x.md", "alias")
    assert "b/x.md" not in [h.path for h in index.search("wiki links", folder="a")]  # a folder holds for names
    commit(store, {"b/x.md": "---\naliases: [Other]\n---\nx\n"})  # the old alias goes with the old row
    index.catch_up(store)
    assert ("b/x.md", "alias") not in _top(index, "wiki links")


def test_another_form_of_the_words_finds_the_note_by_its_title(index: SearchIndex, store: VaultStore) -> None:
    commit(store, {"a/Financial contributions.md": "money\n", "es/Contribuciones.md": "dinero para todos\n"})
    index.catch_up(store)
    assert index.languages() == ("english", "spanish")
    assert _top(index, "financially contribute") == [("a/Financial contributions.md", "title")]
    assert _top(index, "contribución")[0] == ("es/Contribuciones.md", "title")


def test_snippets_are_plain_text_with_the_match_in_bold() -> None:
    text = "---\naliases: [Donate]\n---\n# Head\n\n> [!note] See [[Other note|the **other** one]] or [x](http://e.x)\n"
    assert query.make_snippet(text, ["other"]) == "Head See the **other** one or x"
    assert query.make_snippet(text, ["donate"]).startswith("--- aliases: [**Donate**]")


# lower-case letters whose upper case is one letter that lowers back to them (not 'ı', 'ß'): any case names it
LETTER = st.characters(categories=["Ll"], max_codepoint=0x24F).filter(lambda c: c.upper().lower() == c)
WORD = st.text(alphabet=LETTER, min_size=3, max_size=10)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(title=st.lists(WORD, min_size=1, max_size=4), filler=st.lists(WORD, min_size=5, max_size=30))
def test_an_exact_title_query_ranks_its_note_first(
    index: SearchIndex, store: VaultStore, title: list[str], filler: list[str]
) -> None:
    """Whatever the words, a query that is a note's title finds that note first, above notes that repeat
    the title's words in their bodies many times (and whatever word forms the stemmer makes of them)."""
    name = " ".join(title)
    body = " ".join(filler + title * 20)
    commit(store, {f"t/{name}.md": "x\n", "t/rival.md": f"# Rival\n\n{body}\n", "t/other.md": f"{name} {body}\n"})
    index.catch_up(store)
    assert index.search(name.upper())[0].path == f"t/{name}.md"
    commit(store, {f"t/{name}.md": None, "t/rival.md": None, "t/other.md": None})


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=400), st.sampled_from(["notes/a.md", "es/b.md", "ja/c.md", "x.canvas"]))
def test_field_values_never_raise_and_are_the_same_each_time(text: str, path: str) -> None:
    """A contentless row is deleted with exactly the values it was inserted with: any text, same values."""
    values = query.field_values(path, text)
    assert len(values) == len(query.FIELDS) and all(isinstance(v, str) for v in values)
    assert values == query.field_values(path, text)
    row, fields, _language = query.note_row(path, text)
    assert row == values and all(key == names.name_key(key) for key, _part in names.names_of(fields))


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.characters(categories=["L"]), min_size=1, max_size=20))
def test_a_word_and_its_stem_agree_between_note_and_query(word: str) -> None:
    """The stem a query looks for is the one a note holding the word stores (or, equal to the word, none);
    a word whose lower case is several words ('İ' -> 'i' and a combining dot) looks for none."""
    for algorithm in ("english", "spanish", "russian", "german"):
        stored, wanted = stem_forms(word, algorithm).split(), list(stems_of(word, (algorithm,)))
        assert stored == wanted if stem_key(word) is not None else wanted == []


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300), st.lists(st.text(min_size=1, max_size=12), min_size=1, max_size=3))
def test_a_snippet_is_one_line_and_never_raises(text: str, words: list[str]) -> None:
    parsed = query.parse_query(" ".join(words), ("english",))
    snippet = query.make_snippet(text, parsed.forms() if parsed else [])
    assert "\n" not in snippet
