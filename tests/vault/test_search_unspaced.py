"""Scripts written without spaces (Chinese, Japanese, Korean): a word is found inside the run it stands in.

FTS5's unicode61 tokenizer takes such a run as one word, so before this a two-character word inside a
sentence was never a hit; each of their characters is now a word of the index, and a query word the phrase
of its characters (``notegate.vault.index.segmented``)."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from notegate.vault import query as query_module
from notegate.vault.index import SearchIndex, make_snippet, parse_query, segmented
from notegate.vault.store import Author, Change, VaultStore

AUTHOR = Author("Test", "owner")
NOTES = {
    "日本語メモ/東京の天気.md": "今日は晴れです。東京タワーに行きました。\n",
    "notes/beijing.md": "我们明天去北京大学看朋友。\n",
    "notes/seoul.md": "내일 서울에서 만나요.\n",
    "notes/apart.md": "京都と東北の話。\n",  # 京 and 東, never 東京
    "notes/english.md": "Tokyo is large; see 東京 above.\n",
}


def commit(store: VaultStore, files: dict[str, str | None]) -> None:
    changes = [Change(p, None if t is None else t.encode()) for p, t in files.items()]
    store.commit(changes, {p: store.blob_id(p) for p in files}, AUTHOR, "test")


def found(index: SearchIndex, query: str) -> set[str]:
    return {hit.path for hit in index.search(query, include_private=True, include_inbox=True)}


def test_a_word_is_found_inside_the_run_it_stands_in(index: SearchIndex, store: VaultStore) -> None:
    commit(store, NOTES)
    index.catch_up(store)
    assert found(index, "東京") == {"日本語メモ/東京の天気.md", "notes/english.md"}
    assert found(index, "晴れ") == {"日本語メモ/東京の天気.md"}
    assert found(index, "タワー") == {"日本語メモ/東京の天気.md"}
    assert found(index, "北京") == {"notes/beijing.md"}
    assert found(index, "서울") == {"notes/seoul.md"}  # a Korean word with its particle attached (서울에서)
    assert found(index, "天気") == {"日本語メモ/東京の天気.md"}  # in the note's name only
    assert found(index, "京都") == {"notes/apart.md"}
    assert found(index, "東北京") == set()  # the characters, but never together in one note


def test_characters_found_apart_are_no_hit_for_the_word(index: SearchIndex, store: VaultStore) -> None:
    """The word is the phrase of its characters: adjacent, in order; the note holding 京 and 東 apart is
    not a hit for 東京, nor for 京東."""
    commit(store, {"notes/apart.md": NOTES["notes/apart.md"]})
    index.catch_up(store)
    assert found(index, "京") == found(index, "東") == {"notes/apart.md"}
    assert found(index, "東京") == found(index, "京東") == set()


def test_a_word_of_latin_letters_next_to_one_of_han_is_found(index: SearchIndex, store: VaultStore) -> None:
    commit(store, {"notes/mixed.md": "東京Tokyo駅\n"})
    index.catch_up(store)
    assert found(index, "tokyo") == {"notes/mixed.md"}
    assert found(index, "tokyo駅") == {"notes/mixed.md"}
    assert found(index, "京tokyo") == {"notes/mixed.md"}


def test_an_edited_and_a_deleted_note_leave_no_row_behind(index: SearchIndex, store: VaultStore) -> None:
    """The contentless table removes a row only given the values it was inserted with: the segmented ones."""
    commit(store, {"notes/a.md": "東京タワー\n"})
    index.catch_up(store)
    commit(store, {"notes/a.md": "大阪城\n"})
    index.catch_up(store)
    assert found(index, "東京") == set() and found(index, "大阪") == {"notes/a.md"}
    commit(store, {"notes/a.md": None})
    index.catch_up(store)
    assert found(index, "大阪") == set() and index.count() == 8  # the demo vault's own notes


def test_the_snippet_marks_the_word_as_written() -> None:
    body = "今日は晴れです。東京タワーに行きました。"
    query = parse_query("東京")
    assert query is not None
    assert make_snippet(body, query.words()) == "今日は晴れです。**東京**タワーに行きました。"
    quoted = parse_query('"東京 タワー"')
    assert quoted is not None and quoted.tiers()[0][0] == "phrase"
    assert "**東京****タワー**" in make_snippet(body, quoted.words(), phrase=quoted.terms)


def test_one_written_word_is_one_term_of_the_all_words_tier() -> None:
    """東京 is one word to the caller: one term, the all-words tier, not a phrase of two words."""
    query = parse_query("東京 タワー")
    assert query is not None
    assert [t.words for t in query.terms] == [("東", "京"), ("タ", "ワ", "ー")]
    assert [t.marked() for t in query.terms] == [("東京",), ("タワー",)]
    assert [tier for tier, _expr in query.tiers()] == ["phrase", "all-words", "any-word"]


def test_segmented_cuts_only_unspaced_scripts() -> None:
    assert segmented("plain ascii text") == "plain ascii text"
    assert segmented("Crème brûlée, Ελληνικά, русский") == "Crème brûlée, Ελληνικά, русский"
    assert segmented("東京abc") == " 東  京 abc"


_HAN = "東京大阪北南山川日本語"


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(alphabet=_HAN, min_size=1, max_size=30), word=st.text(alphabet=_HAN, min_size=1, max_size=4))
def test_a_word_is_a_hit_exactly_when_the_text_holds_it(
    index: SearchIndex, store: VaultStore, text: str, word: str
) -> None:
    """For any run of Han characters and any word of them: found exactly when the word stands in the run."""
    commit(store, {"notes/run.md": text + "\n"})
    index.catch_up(store)
    hits = {hit.path for hit in index.search(word, folder="notes")}
    assert (hits == {"notes/run.md"}) == (word in text), (text, word, hits)


@given(word=st.text(alphabet=_HAN + "abc", min_size=1, max_size=6))
def test_a_query_word_becomes_the_index_words_of_its_segmented_text(word: str) -> None:
    query = parse_query(word)
    assert query is not None
    assert [w for t in query.terms for w in t.words] == segmented(word).split()
    assert "".join(query.words()) == word
    assert query_module._hit_pattern(query.words()).search(word) is not None
