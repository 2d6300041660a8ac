"""The hybrid search: the keyword hits of the index fused by rank with the notes nearest in meaning.

The service calls :func:`with_meaning` after the keyword search, with the caller's view: the meaning list
is filtered by the same rules before fusion (private paths only for callers who see them, the inbox only
when asked, the folder), so a note a caller may not see can neither appear nor push a visible note out.
A meaning hit whose note is gone from the tip (deleted since it was embedded) is dropped.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from notegate.policy import Policy
from notegate.vault.fusion import MEANING, NAMED, fuse
from notegate.vault.hits import Hit, Ranking
from notegate.vault.query import indexed_text, make_snippet, parse_query
from notegate.vault.store import ABSENT

if TYPE_CHECKING:
    from notegate.services.runtime import Environment


def view_filter(policy: Policy, folder: str, include_private: bool, include_inbox: bool) -> Callable[[str], bool]:
    """The caller's view as a predicate on paths: the rules the index applies inside SQL to keyword hits."""
    prefix = f"{folder}/" if folder else ""

    def visible(path: str) -> bool:
        if prefix and not path.startswith(prefix):
            return False
        if not include_private and policy.is_private(path):
            return False
        return include_inbox or not policy.is_inbox(path)

    return visible


def with_meaning(
    env: Environment,
    policy: Policy,
    query: str,
    ranking: Ranking,
    *,
    folder: str,
    limit: int,
    include_private: bool,
    include_inbox: bool,
) -> tuple[list[Hit], bool]:
    """The keyword search's hits (``ranking``, best first) fused with the meaning search's, the first ``limit``
    each described (snippet, part); the keyword hits alone when the environment has no meaning index.  Also
    whether more notes were found than ``limit`` (``ranking`` holds up to ``limit + 1`` for that): only the
    hits shown are described, as each reads its note from git and scans it."""
    meaning = env.meaning
    keyword = ranking.hits
    near: list[tuple[str, float]] = []
    if meaning is not None:
        visible = view_filter(policy, folder, include_private, include_inbox)
        # Enough of the meaning list to fill ``limit + 1`` whatever the overlap: its note at rank r has r notes
        # of its own list above it, and only those the keyword list also holds can have dropped out of the top.
        near = meaning.search(query, limit=limit + 1 + len(keyword), visible=visible)
    if not near:
        return env.index.describe(replace(ranking, hits=keyword[:limit])), len(keyword) > limit
    cosine = dict(near)
    # A named hit (``part`` set: the query is its name) is pinned above the notes only meaning found.
    fused = fuse([(h.path, NAMED if h.part else h.tier) for h in keyword], [p for p, _s in near], limit + 1)
    more = len(fused) > limit
    fused = fused[:limit]
    # Only the keyword hits the fusion kept are described: each reads its note from git and scans it.
    kept = {item.path for item in fused if item.keyword_rank is not None}
    by_path = {h.path: h for h in env.index.describe(ranking, kept)}
    listing = env.store.listing()
    parsed = parse_query(query)
    words = parsed.words() if parsed is not None else []
    out: list[Hit] = []
    for item in fused:
        hit = by_path.get(item.path)
        if hit is not None:
            out.append(hit)
            continue
        blob = listing.notes.get(item.path) or listing.attachments.get(item.path, ABSENT)
        if blob == ABSENT:
            continue  # deleted since it was embedded: the background catch-up drops its vector
        out.append(
            Hit(
                path=item.path,
                snippet=_snippet(env, item.path, blob, words),
                score=cosine[item.path],  # a meaning hit's score is its cosine with the query
                inbox=policy.is_inbox(item.path),
                matched=MEANING,
                part=MEANING,  # found by meaning, not by a word in one of its parts
            )
        )
    return out, more


def _snippet(env: Environment, path: str, blob: str, words: list[str]) -> str:
    """A meaning hit's snippet, from its blob at the tip (the listing's: no tree walk)."""
    try:
        text = indexed_text(path, env.store.read_unverified_blob_fast(blob))
    except (KeyError, ValueError):
        return ""
    return make_snippet(text, words)
