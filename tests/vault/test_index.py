"""The FTS5 index on a real vault: built from git, kept in step by tree diffs, visibility inside SQL."""

from __future__ import annotations

import re
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from notegate.services.runtime import Runtime
from notegate.vault import query as query_module
from notegate.vault.index import SearchIndex, fts_query, make_snippet
from notegate.vault.store import ABSENT, Change, VaultStore
from support.index import AUTHOR, commit


def paths_of(hits) -> list[str]:
    return [h.path for h in hits]


def test_build_indexes_every_servable_note_at_the_tip(index: SearchIndex, store: VaultStore) -> None:
    listing = store.listing()
    assert index.indexed_commit is None and index.count() == 0
    assert index.catch_up(store) == len(listing.notes) == 8
    assert index.indexed_commit == store.head()
    assert index.paths() == listing.notes
    assert index.catch_up(store) == 0  # nothing new


def test_hidden_and_non_markdown_paths_are_not_indexed(index: SearchIndex, store: VaultStore) -> None:
    commit(store, {".obsidian/x.md": "ferret\n", "notes/a.txt": "ferret\n", "notes/b.md": "ferret\n"})
    index.catch_up(store)
    assert set(index.paths()) == set(store.listing().notes)
    assert paths_of(index.search("ferret", include_private=True, include_inbox=True)) == ["notes/b.md"]


def test_catch_up_follows_an_add(index: SearchIndex, store: VaultStore) -> None:
    index.catch_up(store)
    head = commit(store, {"ideas/otter.md": "# Otter\nriver otters hold hands\n"})
    assert index.catch_up(store) == 1
    assert index.indexed_commit == head
    assert paths_of(index.search("otters")) == ["ideas/otter.md"]


def test_catch_up_follows_a_change(index: SearchIndex, store: VaultStore) -> None:
    commit(store, {"ideas/otter.md": "river otters\n"})
    index.catch_up(store)
    commit(store, {"ideas/otter.md": "sea lions now\n"})
    assert index.catch_up(store) == 1
    assert index.search("river") == []  # not "otters": its word form names the note (otter.md) still
    assert paths_of(index.search("lions")) == ["ideas/otter.md"]
    assert index.paths()["ideas/otter.md"] == store.blob_id("ideas/otter.md")


def test_catch_up_follows_a_delete(index: SearchIndex, store: VaultStore) -> None:
    commit(store, {"ideas/otter.md": "river otters\n"})
    index.catch_up(store)
    before = index.count()
    commit(store, {"ideas/otter.md": None})
    assert index.catch_up(store) == 0  # nothing (re)inserted
    assert index.count() == before - 1
    assert index.search("river") == []  # not "otters": its word form names the note (otter.md) still
    assert "ideas/otter.md" not in index.paths()


def test_catch_up_follows_a_move(index: SearchIndex, store: VaultStore) -> None:
    commit(store, {"ideas/otter.md": "river otters\n"})
    index.catch_up(store)
    moved = commit(store, {"ideas/otter.md": None, "archive/otter.md": "river otters\n"})
    assert index.catch_up(store) == 1
    assert paths_of(index.search("otters")) == ["archive/otter.md"]
    assert index.last_commit("archive/otter.md") == moved
    assert index.last_commit("ideas/otter.md") is None


def test_private_notes_are_found_only_by_a_private_search(index: SearchIndex, store: VaultStore) -> None:
    commit(store, {"private/diary.md": "platypus secrets\n", "PRIVATE/shout.md": "platypus loud\n"})
    index.catch_up(store)
    assert index.search("platypus") == []
    assert index.search("platypus*", include_inbox=True) == []
    assert sorted(paths_of(index.search("platypus", include_private=True))) == ["PRIVATE/shout.md", "private/diary.md"]


def test_private_notes_never_change_a_public_searchs_ranking(index: SearchIndex, store: VaultStore) -> None:
    commit(store, {"ideas/w.md": "wombat burrow digging\n", "ideas/other.md": "a wombat and a burrow\n"})
    index.catch_up(store)
    before = [(h.path, h.score) for h in index.search("wombat")]
    commit(store, {f"private/w{i}.md": "wombat " * (i + 1) + "\n" for i in range(6)})
    index.catch_up(store)
    assert [(h.path, h.score) for h in index.search("wombat")] == before
    with_private = index.search("wombat", include_private=True, limit=50)
    assert len(with_private) == 8  # the private ones are there, in their own table


def test_inbox_is_excluded_unless_asked(index: SearchIndex, store: VaultStore) -> None:
    commit(store, {"inbox/captures/kiwi.md": "kiwi bird sighting\n", "ideas/kiwi.md": "kiwi fruit\n"})
    index.catch_up(store)
    assert paths_of(index.search("kiwi")) == ["ideas/kiwi.md"]
    hits = {h.path: h.inbox for h in index.search("kiwi", include_inbox=True)}
    assert hits == {"inbox/captures/kiwi.md": True, "ideas/kiwi.md": False}


def test_folder_filter_takes_the_folder_and_its_subfolders_only(index: SearchIndex, store: VaultStore) -> None:
    commit(
        store,
        {
            "projects/a.md": "heron\n",
            "projects/sub/b.md": "heron\n",
            "projectsx/c.md": "heron\n",
            "a_b/d.md": "heron\n",
            "axb/e.md": "heron\n",
            "f.md": "heron\n",
        },
    )
    index.catch_up(store)
    assert sorted(paths_of(index.search("heron", folder="projects"))) == ["projects/a.md", "projects/sub/b.md"]
    assert paths_of(index.search("heron", folder="projects/sub")) == ["projects/sub/b.md"]
    assert paths_of(index.search("heron", folder="a_b")) == ["a_b/d.md"]  # '_' is not a LIKE wildcard here
    assert len(index.search("heron")) == 6


def test_a_hit_carries_a_snippet_with_the_words_in_bold(index: SearchIndex, store: VaultStore) -> None:
    body = "intro " * 40 + "the lynx prowls at night " + "outro " * 40
    commit(store, {"ideas/lynx.md": body})
    index.catch_up(store)
    (hit,) = index.search("lynx")
    assert "the **lynx** prowls" in hit.snippet
    assert hit.snippet.startswith("…") and hit.snippet.endswith("…")
    assert len(hit.snippet) < 250


def test_make_snippet_marks_prefix_and_whole_words() -> None:
    assert make_snippet("cats and catalogs and cat", ["cat"]) == "cats and catalogs and **cat**"
    assert make_snippet("cats and catalogs", ["cat*"]) == "**cats** and **catalogs**"
    assert make_snippet("no hit here", ["zzz"]) == "no hit here"
    assert make_snippet("x" * 500, []) == "x" * 180


def test_title_and_path_outrank_the_body(index: SearchIndex, store: VaultStore) -> None:
    commit(
        store,
        {"ideas/gecko.md": "# Notes\nsomething else\n", "ideas/t.md": "# Gecko\nplain\n", "ideas/b.md": "a gecko\n"},
    )
    index.catch_up(store)
    assert paths_of(index.search("gecko"))[-1] == "ideas/b.md"


def test_last_commit_is_the_newest_commit_that_changed_the_note(index: SearchIndex, store: VaultStore) -> None:
    first = commit(store, {"ideas/a.md": "one\n"})
    index.catch_up(store)
    assert index.last_commit("ideas/a.md") == first
    commit(store, {"ideas/b.md": "other\n"})
    index.catch_up(store)
    assert index.last_commit("ideas/a.md") == first
    third = commit(store, {"ideas/a.md": "two\n"})
    index.catch_up(store)
    assert index.last_commit("ideas/a.md") == third
    assert index.last_commit("ideas/none.md") is None


def test_rebuild_starts_over_from_the_tip(index: SearchIndex, store: VaultStore) -> None:
    commit(store, {"ideas/a.md": "narwhal\n"})
    index.catch_up(store)
    assert index.rebuild(store) == len(store.listing().notes) == 9
    assert index.indexed_commit == store.head()
    assert paths_of(index.search("narwhal")) == ["ideas/a.md"]


def test_a_new_policy_fingerprint_reclassifies_every_row(rt: Runtime, store: VaultStore, tmp_path: Path) -> None:
    commit(store, {"ideas/a.md": "marmot\n"})
    path = tmp_path / "fp.sqlite"
    public = SearchIndex(path, lambda p: (False, False), "fp-public")
    public.catch_up(store)
    assert paths_of(public.search("marmot")) == ["ideas/a.md"]
    public.close()
    same = SearchIndex(path, lambda p: (False, False), "fp-public")
    assert same.count() == 9 and same.indexed_commit == store.head()  # same policy: rows kept
    same.close()
    hidden = SearchIndex(path, lambda p: (p.startswith("ideas/"), False), "fp-ideas-private")
    assert hidden.count() == 0 and hidden.indexed_commit is None  # rows dropped, to be rebuilt
    hidden.catch_up(store)
    assert hidden.search("marmot") == []
    assert paths_of(hidden.search("marmot", include_private=True)) == ["ideas/a.md"]
    hidden.close()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(max_size=80))
def test_any_query_text_searches_without_error(index: SearchIndex, store: VaultStore, text: str) -> None:
    if index.indexed_commit is None:
        index.catch_up(store)
    expr = fts_query(text)
    hits = index.search(text, include_private=True, include_inbox=True)
    if expr is None:
        assert hits == []
    for flag in (False, True):
        assert index.search(text, include_private=flag, folder="a%b_\\") == []  # no such folder


def test_fts_query_quotes_every_word() -> None:
    assert fts_query('NEAR(a b) "x" OR y*') == '"NEAR" AND "a" AND "b" AND "x" AND "OR" AND "y"*'
    assert fts_query("a b", any_term=True) == '"a" OR "b"'
    assert fts_query("!!! ***") is None
    assert fts_query(" ".join(f"w{i}" for i in range(40))).count('"') == 64  # at most 32 words


def test_a_two_word_query_falls_back_to_any_word(index: SearchIndex, store: VaultStore) -> None:
    commit(store, {"ideas/a.md": "badger\n", "ideas/b.md": "badger mole\n", "ideas/c.md": "mole and badger\n"})
    index.catch_up(store)
    hits = index.search("badger mole")
    # the phrase first, then all the words apart; some of them only when no note holds them all
    assert [(h.path, h.matched) for h in hits] == [("ideas/b.md", "phrase"), ("ideas/c.md", "all-words")]
    assert {(h.path, h.matched) for h in index.search("badger vole")} == {
        ("ideas/a.md", "any-word"),
        ("ideas/b.md", "any-word"),
        ("ideas/c.md", "any-word"),
    }


def test_a_written_note_is_searchable_through_the_runtime(rt: Runtime, store: VaultStore) -> None:
    env = rt.environment(None)
    store.commit([Change("ideas/q.md", b"quetzal\n")], {"ideas/q.md": ABSENT}, AUTHOR, "m", on_advance=env.on_advance)
    assert paths_of(env.index.search("quetzal")) == ["ideas/q.md"]


def _first_word_reference(body: str, terms: list[str]):
    """The one pattern the snippet's first hit was found with before (the oracle for ``_first_word``)."""
    alternatives = "|".join(query_module._word_pattern(t) for t in terms)
    return re.search(rf"\b(?:{alternatives})", body, re.IGNORECASE)


_SNIPPET_TEXT = st.text(alphabet=st.sampled_from("abcAB _-.1éÉøİ\n"), max_size=80)
_SNIPPET_TERM = st.text(alphabet=st.sampled_from("abAé1"), min_size=1, max_size=3).map(
    lambda w: w if w[0].isalnum() else "a" + w
)


@given(body=_SNIPPET_TEXT, terms=st.lists(st.tuples(_SNIPPET_TERM, st.booleans()), min_size=1, max_size=3))
def test_a_snippets_first_hit_is_where_the_one_pattern_finds_it(body: str, terms) -> None:
    """The lowered scan (``_first_word``) starts and ends where ``\\b(?:…)`` with IGNORECASE does, for any
    text: letters whose lower case is longer (İ) take the one pattern itself."""
    words = [w + ("*" if prefix else "") for w, prefix in terms]
    found, expected = query_module._first_word(body, words), _first_word_reference(body, words)
    assert (found and found.span()) == (expected and expected.span())
