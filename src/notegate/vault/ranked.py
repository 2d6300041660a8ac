"""The ranked statements of a search (a :class:`~notegate.vault.index.SearchIndex` mixin): the visibility
conditions every statement carries, and the one SELECT that ranks an FTS table's rows by bm25 (or lists them
newest first).  Moved out of ``vault/index.py`` unchanged, so the store stays one readable module."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from notegate.vault.query import FIELDS, Term

INBOX_HIDDEN = "n.inbox = 0"  # the filter that hides the inbox (``_filters``; rewritten by ``_select``)
#: The score of a row listed newest first because its only words are common: FTS5's clamped IDF.
COMMON_SCORE = -1e-6


def merge_key(row: tuple) -> tuple[float, int]:
    """The order of the public and the private table's top rows merged (``SearchIndex._run``): by score, and
    rows listed newest first (``COMMON_SCORE``) newest first across both (the ids are the notes').

    With it, a private table too small to sample lists a word newest first when the word is common among
    the vault's notes and in half or more of its own, where FTS5 clamps its IDF (``SearchIndex._common_terms``).
    Why: such a word was ranked by bm25 among the few private notes, at ~2e-6 a note (a near-tie), which
    outranked the listing's fixed score: a trusted caller searching a word in most notes got every private
    note first, whatever their age (and described the vault's longest private notes: at 10,000 notes, 20 of
    its 98 private ones, one of 113 KB).  A word rare among the private notes still ranks them by bm25."""
    return (row[2], -row[0] if row[2] == COMMON_SCORE else 0)


class RankedStatements:
    #: Rank inside the FTS table before joining ``notes`` (``_select``); False: the joined statement, the
    #: reference the equivalence tests compare against.
    RANK_FIRST = True
    _conn: Callable[[], sqlite3.Connection]

    def _held_by_most(self, table: str, terms: tuple[Term, ...], exact: bool, public: set[int], total: int) -> set[int]:
        """Of the terms common among the vault's notes (``public``, by index), those in half or more of a
        private table too small to sample (``total`` rows), counted exactly (a few hundred rows at most): where
        FTS5 clamps their IDF.  Such a term is listed newest first there too (:func:`merge_key` says why)."""
        count = f"SELECT count(*) FROM {table} WHERE {table} MATCH ?"  # noqa: S608 - a fixed name
        held = self._conn().execute
        return {
            i
            for i in public
            if held(count, (terms[i].exact() if exact else terms[i].fts(),)).fetchone()[0] * 2 >= total
        }

    def _filters(self, table: str, folder: str, include_inbox: bool) -> tuple[list[str], list[object]]:
        """The visibility conditions every statement of a search carries (before its LIMIT)."""
        where: list[str] = []
        params: list[object] = []
        if folder:
            where.append("(n.folder = ? OR n.folder LIKE ? ESCAPE '\\')")
            escaped = folder.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
            params += [folder, f"{escaped}/%"]
        if not include_inbox:
            where.append(INBOX_HIDDEN)
        return where, params

    def _select(
        self,
        table: str,
        rank_expr: str,
        match_expr: str,
        filters: list[str],
        params: list[object],
        exclude: list[int],
        limit: int,
        *,
        newest: bool = False,
    ) -> list[tuple]:
        """One ranked statement: rows matching ``rank_expr`` (scored by bm25 over it) and, when given,
        ``match_expr`` too (a sub-select: its words are required but not scored); or, ``newest``, the rows
        matching ``match_expr`` newest first, unscored (bm25 of common words only is ~0: FTS5's clamp)."""
        where = list(filters)
        values: list[object] = list(params)
        if newest:
            where.insert(0, f"{table} MATCH ?")
            values.insert(0, match_expr)
        else:
            where.insert(0, f"{table} MATCH ?")
            values.insert(0, rank_expr or match_expr)
            if rank_expr and match_expr:
                # '+': the rowid as an expression, so the planner filters the ranked match's rows by the list
                # (built once) instead of driving by it: given the bare rowid, it looked each listed row up and
                # ran the MATCH again for it ('can myrkpol' at 10,000 notes: 1,114 rows, 51 ms -> 1.3 ms).
                where.append(f"+{table}.rowid IN (SELECT rowid FROM {table} WHERE {table} MATCH ?)")  # noqa: S608
                values.append(match_expr)
        if exclude:  # found by an earlier tier (at most `limit` rows, so a bounded list)
            where.append(f"{table}.rowid NOT IN ({','.join('?' for _ in exclude)})")
            values += exclude
        weights = ", ".join(str(weight) for _name, weight in FIELDS)  # bm25() takes them in column order
        score = f"{COMMON_SCORE}" if newest else f"bm25({table}, {weights})"
        order = f"{table}.rowid DESC" if newest else "score"
        # Only fixed fragments are interpolated; every value is a bound parameter.
        if self.RANK_FIRST and all(f == INBOX_HIDDEN for f in filters):
            # Rank and limit inside the FTS table, then look the few rows up in ``notes``.  Why: joining
            # first looks every match up in ``notes`` before the LIMIT (two rare words at 100,000 notes:
            # 2,719 matches, ~24 ms); the inbox filter stays before the LIMIT, as a NOT IN over the partial
            # index ``notes_inbox`` (the inbox's ids only).  A folder filter needs ``notes``: joined below.
            inner = [w for w in where if w != INBOX_HIDDEN]
            if INBOX_HIDDEN in filters:
                inner.append(f"{table}.rowid NOT IN (SELECT id FROM notes WHERE inbox = 1)")  # noqa: S608 - fixed names
            outer = "r.rowid DESC" if newest else "r.score"
            rank_sql = (
                f"SELECT r.rowid, n.path, r.score, n.inbox, '{table}' FROM ("  # noqa: S608
                f"SELECT {table}.rowid AS rowid, {score} AS score FROM {table} WHERE {' AND '.join(inner)} "
                f"ORDER BY {order} LIMIT ?) r JOIN notes n ON n.id = r.rowid ORDER BY {outer}"
            )
        else:
            rank_sql = (
                f"SELECT {table}.rowid, n.path, {score} AS score, n.inbox, '{table}' "  # noqa: S608
                f"FROM {table} JOIN notes n ON n.id = {table}.rowid WHERE {' AND '.join(where)} "
                f"ORDER BY {order} LIMIT ?"
            )
        return self._conn().execute(rank_sql, [*values, limit]).fetchall()
