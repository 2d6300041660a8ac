"""Fusing the keyword ranking with the meaning ranking (pure: lists in, one list out).

Reciprocal-rank fusion (Cormack, Clarke & Büttcher, SIGIR 2009): each list gives a note ``weight / (RRF_K +
rank)``; a note's fused score is the sum over the lists that hold it.  Why ranks and not scores: bm25 and a
cosine live on unrelated scales (bm25 grows with the query's length and the vault's statistics), and a
rank needs no calibration per vault.

Why keyword hits keep priority where they are strong: a query that names a rare token (an id, an error code, a file
name) or quotes a phrase is answered by the words themselves, and a semantic neighbour is only ever a near miss.  So
the keyword search's first hit stays first when it holds every word of the query; a note the query names and a
phrase hit are never outranked by a note outside those two; and at equal rank the keyword hit comes first (the lists
weigh the same, :data:`KEYWORD_WEIGHT`, and ties go to the keyword rank).  Measured on a real vault
(bench/RESULTS.md, "Search by meaning"): with the meaning list weighing less (0.85, 0.7, 0.5) its best note fell
below a full keyword list's tenth and the paraphrase gain halved; without the first hit kept first, exact-title
queries lost 0.09 of their MRR.  A note found by both lists rises above either alone: that is where meaning helps
the words (a title whose words differ in form).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

#: The part of the search that found a note only by its meaning (beside the keyword tiers of ``MATCH_TIERS``).
MEANING = "meaning"
#: RRF's constant: 60 is the value of the paper, used as is by most hybrid engines.
RRF_K = 60
KEYWORD_WEIGHT = 1.0
MEANING_WEIGHT = 1.0
#: A keyword hit the query names exactly (its file name, first heading or an alias, any case: vault/names.py),
#: passed to :func:`fuse` as its tier.  Issue 33: a query that names a note ranks it first; in a vault of
#: several languages several notes carry the name ("Tags" in eight folders), and every one of them stays above
#: a note only meaning found (measured: the Obsidian help vault's exact-title queries lost one note of 200 to
#: meaning neighbours before).
NAMED = "named"
#: The keyword tiers a note outside them never outranks (the query names it, or an exact phrase of it is in it).
PINNED_TIERS = frozenset({"phrase", NAMED})
#: The tiers whose first hit stays first: it holds every word of the query.
LEAD_TIERS = frozenset({"phrase", "all-words", NAMED})


@dataclass(frozen=True)
class Fused:
    path: str
    score: float
    keyword_rank: int | None  # 0-based rank in the keyword list, None when only meaning found it
    meaning_rank: int | None


def fuse(
    keyword: Sequence[tuple[str, str]],
    meaning: Sequence[str],
    limit: int,
) -> list[Fused]:
    """The fused top ``limit`` of ``keyword`` ((path, tier) in keyword order) and ``meaning`` (paths, best
    first).  Deterministic: ties go to the keyword rank, then the meaning rank, then the path."""
    scores: dict[str, float] = {}
    k_rank: dict[str, int] = {}
    m_rank: dict[str, int] = {}
    for rank, (path, _tier) in enumerate(keyword):
        if path not in k_rank:
            k_rank[path] = rank
            scores[path] = scores.get(path, 0.0) + KEYWORD_WEIGHT / (RRF_K + rank + 1)
    for rank, path in enumerate(meaning):
        if path not in m_rank:
            m_rank[path] = rank
            scores[path] = scores.get(path, 0.0) + MEANING_WEIGHT / (RRF_K + rank + 1)
    pinned = {path for path, tier in keyword if tier in PINNED_TIERS}
    lead = keyword[0][0] if keyword and keyword[0][1] in LEAD_TIERS else None
    big = len(k_rank) + len(m_rank) + 1

    def order(path: str) -> tuple[bool, bool, float, int, int, str]:
        return (path != lead, path not in pinned, -scores[path], k_rank.get(path, big), m_rank.get(path, big), path)

    ranked = sorted(scores, key=order)[:limit]
    return [Fused(p, scores[p], k_rank.get(p), m_rank.get(p)) for p in ranked]
