"""Reciprocal-rank fusion of the keyword and the meaning rankings (pure)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from notegate.vault.fusion import NAMED, fuse

TIERS = (NAMED, "phrase", "all-words", "any-word")
paths = st.sampled_from([f"n{i}.md" for i in range(12)])


def test_a_note_both_lists_hold_rises_and_a_lone_keyword_hit_stays_first() -> None:
    fused = fuse([("a.md", "all-words"), ("b.md", "all-words"), ("x.md", "all-words")], ["c.md", "x.md"], 10)
    assert [f.path for f in fused] == ["a.md", "x.md", "c.md", "b.md"]  # the first hit holds every word: first
    assert (fused[1].keyword_rank, fused[1].meaning_rank) == (2, 1)
    loose = fuse([("a.md", "any-word"), ("b.md", "any-word")], ["c.md", "b.md"], 10)
    assert [f.path for f in loose] == ["b.md", "a.md", "c.md"]
    # A rare token: one keyword hit, and the meaning list's best neighbour of it comes after it.
    assert [f.path for f in fuse([("id-4711.md", "all-words")], ["near.md", "id-4711.md"], 10)][:1] == ["id-4711.md"]
    assert [f.path for f in fuse([("x.md", "any-word")], ["y.md"], 10)] == ["x.md", "y.md"]


def test_a_phrase_hit_is_never_outranked_by_a_note_outside_the_phrase_tier() -> None:
    fused = fuse([("p.md", "phrase"), ("q.md", "all-words")], ["q.md", "r.md"], 10)
    assert [f.path for f in fused] == ["p.md", "q.md", "r.md"]


def test_every_note_the_query_names_stays_above_the_notes_only_meaning_found() -> None:
    """Eight notes called "Tags" (one per language folder) and strong meaning neighbours: every named note first."""
    named = [(f"{lang}/Tags.md", NAMED) for lang in ("da", "de", "en", "fr", "it", "ja", "km", "nl")]
    meaning = ["Release notes/v0.10.7.md", "en/Tags view.md", "de/Tags.md", "de/Tag-Übersicht.md"]
    fused = [f.path for f in fuse([*named, ("en/Search.md", "all-words")], meaning, 10)]
    assert set(fused[:8]) == {p for p, _t in named}
    assert fused[0] == "da/Tags.md"  # the first named hit stays first; de/Tags.md, held by both, rises among them
    assert fused[8:] == ["Release notes/v0.10.7.md", "en/Tags view.md"]  # then rank fusion as before
    assert fused.index("de/Tags.md") == 1


@given(
    keyword=st.lists(st.tuples(paths, st.sampled_from(TIERS)), max_size=10, unique_by=lambda t: t[0]),
    meaning=st.lists(paths, max_size=10, unique=True),
    limit=st.integers(min_value=1, max_value=25),
)
def test_fusion_is_a_bounded_ranking_of_the_inputs_that_keeps_the_keyword_lead(keyword, meaning, limit) -> None:
    keyword = sorted(keyword, key=lambda t: TIERS.index(t[1]))  # the index returns tiers in order
    fused = fuse(keyword, meaning, limit)
    out = [f.path for f in fused]
    everything = {p for p, _t in keyword} | set(meaning)
    assert len(out) == len(set(out)) == min(limit, len(everything))
    assert set(out) <= everything
    lead = keyword[0][0] if keyword and keyword[0][1] != "any-word" else None
    pinned = {p for p, t in keyword if t in ("phrase", NAMED)}
    ranked = [f.score for f in fused if f.path != lead and f.path not in pinned]
    assert ranked == sorted(ranked, reverse=True)
    phrase = [p for p, t in keyword if t in ("phrase", NAMED)]
    assert out[: min(len(phrase), limit)] == [p for p in out if p in phrase][: min(len(phrase), limit)]
    if keyword and keyword[0][1] != "any-word":  # a first hit holding every word stays first
        assert out[0] == keyword[0][0]
    if keyword:  # and no note only meaning found comes before it
        only_meaning = [i for i, p in enumerate(out) if p not in {k for k, _t in keyword}]
        assert not only_meaning or out.index(keyword[0][0]) < only_meaning[0]
