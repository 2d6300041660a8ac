"""A search's hits as a caller sees them (a :class:`~notegate.vault.index.SearchIndex` mixin): the ranked rows
first, then, for the hits kept, the snippet and the part each matched in, made from the note's text in git.

Why two steps: the ranking is SQL over the index alone, while a hit's snippet and part read its text from
git and scan it; a caller that keeps only some of the ranked hits (the fusion with search by meaning drops
keyword hits it outranks) describes those it keeps and no others.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Container
from dataclasses import dataclass
from typing import TYPE_CHECKING

from notegate.vault import query
from notegate.vault.notefields import part_of
from notegate.vault.query import Term, hit_pattern, indexed_text, make_snippet

if TYPE_CHECKING:
    from notegate.vault.store import VaultStore


@dataclass(frozen=True)
class Hit:
    path: str
    snippet: str
    score: float
    inbox: bool
    matched: str = "all-words"  # the tier that found it (MATCH_TIERS)
    part: str = "body"  # the part its words are in (notefields.PARTS)


@dataclass(frozen=True)
class Ranked:
    """One hit as :meth:`SearchIndex.rank` orders it, before its snippet and part are made."""

    rowid: int
    path: str
    score: float
    inbox: bool
    tier: str
    part: str = ""  # a named hit's part ('title', 'alias': names.lookup); '' for a hit found by its words


@dataclass(frozen=True)
class Ranking:
    """What :meth:`SearchIndex.rank` found: the hits in order, and what their snippets and parts are made by."""

    hits: tuple[Ranked, ...]
    words: tuple[str, ...]  # the query's words, then each form as a prefix (``Query.forms``)
    terms: tuple[Term, ...]  # the query's terms (a phrase hit's snippet shows the whole phrase)


class Describing:
    _conn: Callable[[], sqlite3.Connection]
    _store: VaultStore | None

    def describe(self, ranking: Ranking, keep: Container[str] | None = None) -> list[Hit]:
        """The hits of ``ranking`` (only those whose path is in ``keep``, when given), in its order, each with
        its snippet and the part it matched in (a named hit: the part its name is; else the first part holding
        a word or form of the query).  One statement for their blob ids, one read from git each."""
        rows = [r for r in ranking.hits if keep is None or r.path in keep]
        if not rows:
            return []
        words = list(ranking.words)
        bodies = self._bodies([r.rowid for r in rows])
        pattern = hit_pattern(words) if words else None
        hits = []
        for r in rows:
            body = bodies.get(r.rowid, "")
            # A named hit's snippet is the words' (it was found by its name, in whichever tier comes first).
            phrase = ranking.terms if r.tier == "phrase" and not r.part else None
            # Where the front matter ends, read once for the snippet and the part; looked up in ``query``, as a
            # snippet's own reading is (tests count the hits described by it).
            end = query.front_matter_end(body)
            hits.append(
                Hit(
                    path=r.path,
                    snippet=make_snippet(body, words, phrase=phrase, skip=end),
                    score=r.score,
                    inbox=r.inbox,
                    matched=r.tier,
                    part=r.part or part_of(r.path, body, pattern, end),
                )
            )
        return hits

    def _bodies(self, ids: list[int]) -> dict[int, str]:
        """The indexed text of each row (by id), read from git by its blob id: a contentless FTS table holds
        none.  A row whose blob cannot be read (no store yet, an object gone) has no snippet, and is still a hit."""
        store = self._store
        if store is None or not ids:
            return {}
        marks = ",".join("?" for _ in ids)
        rows = self._conn().execute(f"SELECT id, path, blob FROM notes WHERE id IN ({marks})", ids).fetchall()  # noqa: S608
        bodies: dict[int, str] = {}
        for rowid, path, blob in rows:
            try:
                bodies[rowid] = indexed_text(path, store.read_unverified_blob_fast(blob))
            except (KeyError, ValueError):
                continue
        return bodies
