"""Full-text search over one environment: SQLite FTS5, kept in step with git by tree diffs.

Why incremental: the index records the commit it reflects; catching up is a tree diff between that
commit and the tip, so a write is searchable as soon as it is committed, and commits that reached the
origin from elsewhere are indexed on the next fetch, without rescanning the vault.

Visibility is decided by policy, not here: each row carries the ``private`` and ``inbox`` classes that
policy computed when it was indexed (re-computed when the policy fingerprint changes), so a search can
exclude what a caller may not see inside SQL instead of after ranking.
"""

from __future__ import annotations

import re
import sqlite3
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from notegate.sqlite import LocalSQLite
from notegate.vault.store import ABSENT, VaultStore, servable

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS notes (
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL UNIQUE,
    folder TEXT NOT NULL,
    blob TEXT NOT NULL,
    last_commit TEXT,
    private INTEGER NOT NULL DEFAULT 0,
    inbox INTEGER NOT NULL DEFAULT 0
);
CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(path, title, body, tokenize='unicode61 remove_diacritics 2');
CREATE VIRTUAL TABLE IF NOT EXISTS fts_private USING fts5(path, title, body, tokenize='unicode61 remove_diacritics 2');
"""
# BM25 column weights: path, title, body.  A hit in a note's name or title outranks one in its body.
BM25_WEIGHTS = (4.0, 8.0, 1.0)
HISTORY_WALK_LIMIT = 2000
_WORD = re.compile(r"\w+\*?", re.UNICODE)
_H1 = re.compile(r"^# +(.+?)\s*$", re.MULTILINE)


@dataclass(frozen=True)
class Hit:
    path: str
    snippet: str
    score: float
    inbox: bool


Classifier = Callable[[str], tuple[bool, bool]]  # path -> (private, inbox)


def fts_query(text: str, *, any_term: bool = False) -> str | None:
    """Turn free text into a safe FTS5 expression: every word quoted, ``word*`` kept as a prefix query."""
    terms = []
    for word in _WORD.findall(text)[:32]:
        prefix = word.endswith("*")
        word = word.rstrip("*")
        if not word:
            continue
        terms.append(f'"{word}"*' if prefix else f'"{word}"')
    if not terms:
        return None
    return (" OR " if any_term else " ").join(terms)


SNIPPET_RADIUS = 90
INSERT_BATCH = 500
COMMON_TERM_MIN_NOTES = 1000  # below this, scoring every match is cheap anyway


def query_terms(expr: str) -> list[str]:
    """The words of an FTS expression built by :func:`fts_query` (prefix terms keep their flag)."""
    return [m.group(1) + ("*" if m.group(2) else "") for m in re.finditer(r'"([^"]+)"(\*?)', expr)]


def make_snippet(body: str, terms: list[str]) -> str:
    """A short window around the first hit, hits in **bold**.

    Why not FTS5's ``snippet()``: it is super-linear in the number of hits, and a word present in every note
    makes the top-ranked (longest) notes cost hundreds of milliseconds each. This is one regex pass.
    """
    if not terms:
        return body[: 2 * SNIPPET_RADIUS]
    alternatives = "|".join(re.escape(t.rstrip("*")) + (r"\w*" if t.endswith("*") else r"\b") for t in terms)
    pattern = re.compile(rf"\b(?:{alternatives})", re.IGNORECASE)
    first = pattern.search(body)
    if first is None:
        return body[: 2 * SNIPPET_RADIUS].strip()
    start = max(0, first.start() - SNIPPET_RADIUS)
    end = min(len(body), first.end() + SNIPPET_RADIUS)
    window = pattern.sub(lambda m: f"**{m.group(0)}**", body[start:end])
    return ("…" if start else "") + window.strip() + ("…" if end < len(body) else "")


def title_of(path: str, text: str) -> str:
    stem = path.rsplit("/", 1)[-1].removesuffix(".md")
    match = _H1.search(text[:4000])
    return f"{stem} {match.group(1)}" if match else stem


class SearchIndex:
    """The FTS5 index of one environment's notes."""

    def __init__(self, path: Path, classify: Classifier, fingerprint: str) -> None:
        self.path = path
        self._classify = classify
        self._fingerprint = fingerprint
        self._lock = threading.Lock()
        self._sizes: dict[str, tuple[str | None, int]] = {}
        self._db = LocalSQLite(path)
        self._conn = self._db.conn
        self._tx = self._db.tx
        self._conn().executescript(SCHEMA)
        if self._meta("policy") != fingerprint:
            self._reclassify()

    # ------------------------------------------------------------ plumbing
    def _meta(self, key: str) -> str | None:
        row = self._conn().execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def close(self) -> None:
        self._db.close()

    def _reclassify(self) -> None:
        """The policy classifies paths differently now: start over (rows may move between the public and the
        private table); the next catch-up rebuilds the index from git."""
        with self._tx() as db:
            for table in ("notes", "fts", "fts_private"):
                db.execute(f"DELETE FROM {table}")  # noqa: S608 - fixed names
            db.execute("DELETE FROM meta WHERE key = 'commit'")
            db.execute("INSERT OR REPLACE INTO meta VALUES ('policy', ?)", (self._fingerprint,))

    # ------------------------------------------------------------ updating
    @property
    def indexed_commit(self) -> str | None:
        return self._meta("commit")

    def catch_up(self, store: VaultStore, progress: Callable[[int], None] | None = None) -> int:
        """Bring the index to the store's tip. Returns how many notes changed."""
        head = store.head()
        if head == self.indexed_commit:
            return 0
        with self._lock:
            old = self.indexed_commit
            if head == old:
                return 0
            return self._apply(store, old, head, progress)

    def rebuild(self, store: VaultStore, progress: Callable[[int], None] | None = None) -> int:
        with self._lock:
            with self._tx() as db:
                db.execute("DELETE FROM notes")
                db.execute("DELETE FROM fts")
                db.execute("DELETE FROM fts_private")
                db.execute("DELETE FROM meta WHERE key = 'commit'")
            return self._apply(store, None, store.head(), progress)

    def _apply(
        self, store: VaultStore, old: str | None, new: str | None, progress: Callable[[int], None] | None
    ) -> int:
        if new is None:
            return 0
        changes = store.changed_notes(old, new)
        listing = store.listing()
        known = listing.notes if listing.commit == new else None  # paths already parsed by the listing
        empty = old is None and self.count() == 0
        last = self._last_commits(store, old, new, {p for p, _ in changes})
        count = 0
        with self._tx() as db:
            rows: list[tuple] = []
            for path, blob in changes:
                if not empty:
                    row = db.execute("SELECT id FROM notes WHERE path = ?", (path,)).fetchone()
                    if row is not None:
                        db.execute("DELETE FROM fts WHERE rowid = ?", (row[0],))
                        db.execute("DELETE FROM fts_private WHERE rowid = ?", (row[0],))
                        db.execute("DELETE FROM notes WHERE id = ?", (row[0],))
                if blob == ABSENT or not (path in known if known is not None else servable(path)):
                    continue
                text = store.read_unverified_blob(blob).decode("utf-8", errors="replace")  # from the tree diff
                private, inbox = self._classify(path)
                folder = path.rsplit("/", 1)[0] if "/" in path else ""
                rows.append((path, folder, blob, last.get(path), int(private), int(inbox), text))
                count += 1
                if progress is not None:
                    progress(1)
                if len(rows) >= INSERT_BATCH:  # bounded memory: a 10k-note build never holds every text at once
                    self._insert(db, rows)
                    rows = []
            self._insert(db, rows)
            db.execute("INSERT OR REPLACE INTO meta VALUES ('commit', ?)", (new,))
        return count

    @staticmethod
    def _insert(db: sqlite3.Connection, rows: list[tuple]) -> None:
        if not rows:
            return
        start = db.execute("SELECT coalesce(max(id), 0) FROM notes").fetchone()[0] + 1
        db.executemany(
            "INSERT INTO notes (id, path, folder, blob, last_commit, private, inbox) VALUES (?,?,?,?,?,?,?)",
            [(start + i, *row[:6]) for i, row in enumerate(rows)],
        )
        for table, private in (("fts", 0), ("fts_private", 1)):
            db.executemany(
                f"INSERT INTO {table} (rowid, path, title, body) VALUES (?,?,?,?)",  # noqa: S608 - fixed names
                [
                    (
                        start + i,
                        row[0].replace("/", " ").replace("-", " ").replace("_", " "),
                        title_of(row[0], row[6]),
                        row[6],
                    )
                    for i, row in enumerate(rows)
                    if row[4] == private
                ],
            )

    def remember_last_commit(self, path: str, commit: str) -> None:
        """Cache a note's last commit found by a history walk (full builds leave it to the first read)."""
        with self._tx() as db:
            db.execute("UPDATE notes SET last_commit = ? WHERE path = ? AND last_commit IS NULL", (commit, path))

    def _last_commits(self, store: VaultStore, old: str | None, new: str, paths: set[str]) -> dict[str, str]:
        """For each changed path, the newest commit in (old, new] that changed it (first-parent walk)."""
        return store.last_changes(old, new, paths, HISTORY_WALK_LIMIT)

    # ------------------------------------------------------------- reading
    def last_commit(self, path: str) -> str | None:
        row = self._conn().execute("SELECT last_commit FROM notes WHERE path = ?", (path,)).fetchone()
        return row[0] if row else None

    def count(self) -> int:
        return self._conn().execute("SELECT count(*) FROM notes").fetchone()[0]

    def paths(self) -> dict[str, str]:
        return dict(self._conn().execute("SELECT path, blob FROM notes").fetchall())

    def search(
        self,
        query: str,
        *,
        folder: str = "",
        limit: int = 20,
        include_private: bool = False,
        include_inbox: bool = False,
    ) -> list[Hit]:
        for any_term in (False, True):
            expr = fts_query(query, any_term=any_term)
            if expr is None:
                return []
            hits = self._run(expr, folder, limit, include_private, include_inbox)
            if hits or " OR " in expr or " " not in expr:
                return hits
        return []

    def _run(self, expr: str, folder: str, limit: int, include_private: bool, include_inbox: bool) -> list[Hit]:
        """Rank and limit first, then build snippets for the few rows returned.

        FTS5 computes ``snippet()`` for every matching row before ``ORDER BY … LIMIT``; for a word that is in
        every note that costs seconds. Ranking alone is cheap, so snippets are made for the top rows only.
        """
        tables = ("fts", "fts_private") if include_private else ("fts",)
        ranked: list[tuple] = []
        for table in tables:
            ranked += self._rank(table, expr, folder, limit, include_inbox)
        if len(tables) > 1:  # merge the public and the private table's top rows (one table keeps its order)
            ranked = sorted(ranked, key=lambda r: r[2])[:limit]
        if not ranked:
            return []
        conn = self._conn()
        bodies: dict[int, str] = {}
        for table in tables:
            ids = [r[0] for r in ranked if r[4] == table]
            if ids:
                marks = ",".join("?" for _ in ids)
                bodies.update(
                    conn.execute(
                        f"SELECT rowid, body FROM {table} WHERE rowid IN ({marks})",  # noqa: S608 - placeholders
                        ids,
                    ).fetchall()
                )
        terms = query_terms(expr)
        snippets = {rowid: make_snippet(body, terms) for rowid, body in bodies.items()}
        return [Hit(path=r[1], snippet=snippets.get(r[0], ""), score=-float(r[2]), inbox=bool(r[3])) for r in ranked]

    def _rank(self, table: str, expr: str, folder: str, limit: int, include_inbox: bool) -> list[tuple]:
        """The top rows of one FTS table. Private notes live in their own table, so the ranking statistics a
        restricted caller's search sees (document counts, word frequencies) never include them."""
        where = [f"{table} MATCH ?"]
        params: list[object] = [expr]
        if folder:
            where.append("(n.folder = ? OR n.folder LIKE ? ESCAPE '\\')")
            escaped = folder.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
            params += [folder, f"{escaped}/%"]
        if not include_inbox:
            where.append("n.inbox = 0")
        weights = ", ".join(str(w) for w in BM25_WEIGHTS)
        order = "score"
        if self._too_common(table, expr):
            # bm25 gives a word found in most notes an IDF of ~0, so its "ranking" is noise that costs a full
            # scoring pass; newest rows first answers in a few rows instead.
            order = f"{table}.rowid DESC"
        # Only fixed fragments are interpolated; every value is a bound parameter.
        rank_sql = (
            f"SELECT {table}.rowid, n.path, bm25({table}, {weights}) AS score, n.inbox, '{table}' "  # noqa: S608
            f"FROM {table} JOIN notes n ON n.id = {table}.rowid WHERE {' AND '.join(where)} ORDER BY {order} LIMIT ?"
        )
        return self._conn().execute(rank_sql, [*params, limit]).fetchall()

    def _table_size(self, table: str) -> int:
        """Notes in one FTS table, counted once per indexed commit (every single-word search asks)."""
        commit = self.indexed_commit
        cached = self._sizes.get(table)
        if cached is not None and cached[0] == commit:
            return cached[1]
        private = 1 if table == "fts_private" else 0
        total = self._conn().execute("SELECT count(*) FROM notes WHERE private = ?", (private,)).fetchone()[0]
        self._sizes[table] = (commit, total)
        return total

    def _too_common(self, table: str, expr: str) -> bool:
        """Is this a single term found in more than half of a large table's notes?"""
        if " " in expr:
            return False
        conn = self._conn()
        total = self._table_size(table)
        if total < COMMON_TERM_MIN_NOTES:
            return False
        matches = conn.execute(f"SELECT count(*) FROM {table} WHERE {table} MATCH ?", (expr,)).fetchone()[0]  # noqa: S608
        return matches * 2 > total
