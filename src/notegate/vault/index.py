"""Full-text search over one environment: SQLite FTS5, kept in step with git by tree diffs.

Why incremental: the index records the commit it reflects; catching up is a tree diff between that
commit and the tip, so a write is searchable as soon as it is committed, and commits that reached the
origin from elsewhere are indexed on the next fetch, without rescanning the vault.

Visibility is decided by policy, not here: each row carries the ``private`` and ``inbox`` classes that
policy computed when it was indexed (re-computed when the policy fingerprint changes), so a search can
exclude what a caller may not see inside SQL instead of after ranking.

This module is the store (tables, catch-up, merging, sampling, the ranked statements); what a query, a row's
fields and a snippet are is string work, in the pure ``vault/query.py``; the rows read back (which notes are
indexed at which blob and commit, a note's last commit) are in ``vault/indexrows.py``.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Mapping
from contextlib import closing, nullcontext
from pathlib import Path

from notegate.sqlite import LocalSQLite
from notegate.vault import names, rowreader
from notegate.vault.canvas import is_canvas
from notegate.vault.hits import Describing, Hit, Ranked, Ranking
from notegate.vault.indexrows import IndexRows
from notegate.vault.query import (
    FIELDS,
    TOKENIZER,
    Term,
    field_values,
    indexed_text,
    parse_query,
    shown_tier,
)

# The query language lives in ``vault/query.py`` (pure); these names are still imported from here.
from notegate.vault.query import MATCH_TIERS as MATCH_TIERS
from notegate.vault.query import MAX_QUERY_TERMS as MAX_QUERY_TERMS
from notegate.vault.query import fts_query as fts_query
from notegate.vault.query import make_snippet as make_snippet
from notegate.vault.query import segmented as segmented
from notegate.vault.ranked import COMMON_SCORE as COMMON_SCORE
from notegate.vault.ranked import INBOX_HIDDEN as INBOX_HIDDEN
from notegate.vault.ranked import RankedStatements, merge_key
from notegate.vault.store import ABSENT, VaultStore, servable, servable_file
from notegate.vault.wordforms import STEMMER_VERSION

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
CREATE INDEX IF NOT EXISTS notes_inbox ON notes(id) WHERE inbox = 1;
"""
SCHEMA += names.SCHEMA  # a note's exact names (vault/names.py), kept with its row
#: ``stems``: every stem the forms columns hold (never removed: a stale one only runs a tier that finds less).
#: Why: "does a forms column hold ``the``" asked of FTS5 walks the posting list of ``the`` (every note) looking
#: for a row that has it in those columns; this answers by one index lookup.
SCHEMA += "CREATE TABLE IF NOT EXISTS stems (stem TEXT PRIMARY KEY) WITHOUT ROWID;\n"
#: The two FTS5 tables (public, private), created with the schema and again by :func:`_empty_tables`.
#:
#: Contentless (``content=''``): the tables hold the inverted index only, never a copy of the text.  Why: git
#: holds every note's bytes already, under the blob id ``notes.blob`` names; a copy in the index was ~70 % of
#: its size (565 of ~160 MB at 100,000 notes) and ~24 % of a first build's time, written twice through the WAL.
#: The price is FTS5's rule for contentless tables: a row is removed with the ``'delete'`` command and exactly
#: the values it was inserted with, so :meth:`SearchIndex._apply` reads the old blob back from git and rebuilds
#: those values with the same function (:func:`field_values`); snippets read the few hits' blobs from git.
_COLUMNS = ", ".join(name for name, _weight in FIELDS)  # the FTS tables' columns: the query module's fields
_MARKS = ", ".join("?" for _field in FIELDS)
FTS_TABLES = tuple(
    f"CREATE VIRTUAL TABLE IF NOT EXISTS {table} USING fts5({_COLUMNS}, content='', tokenize='{TOKENIZER}')"
    for table in ("fts", "fts_private")
)
#: The layout of the FTS tables and of the values :func:`field_values` makes, part of the fingerprint an index
#: is opened with: an index made by another layout (or by another ``field_values``, whose deletes would then not
#: match its rows) is emptied and rebuilt from git, as after a policy change.
#: 2: scripts written without spaces are cut into characters; 3: title, aliases, headings, tags, body and word
#: forms as fields, and the names table (the forms depend on the stemmer: a new one rebuilds the index); 4: the
#: ``marks`` column (vault/marks.py).
INDEX_FORMAT = f"contentless-4 stemmer-{STEMMER_VERSION}"
LANGUAGES_META = "languages"  # meta key: the Snowball algorithms of the indexed notes, comma-separated
SCHEMA += "".join(f"{statement};\n" for statement in FTS_TABLES)
HISTORY_WALK_LIMIT = 2000
#: A full build walks only this many recent commits for last-commit ids; older notes get theirs on first read
#: (``remember_last_commit``). Why: each walked commit is a tree diff that re-lists every folder it touched,
#: and an import's batches touch most folders: at 100,000 notes (51 commits) the walk was 46 of 122 s CPU.
FULL_BUILD_WALK_LIMIT = 16


Classifier = Callable[[str], tuple[bool, bool]]  # path -> (private, inbox)


INSERT_BATCH = 500
#: FTS5's pending-terms buffer during a first build (its ``hashsize`` option; SQLite's default is 1 MiB). Why:
#: each time the buffer fills, FTS5 writes a segment and merges segments as they pile up, so a 1 MiB buffer
#: over a 100,000-note vault's 300 MB of text writes hundreds of small segments and re-merges them level after
#: level; 16 MiB writes a sixteenth as many.  Same index content, same results; ~0.86x the build's CPU at
#: 100,000 notes (bench/profile_index.py build), for ~18 MB more peak memory while it runs.
FTS_HASHSIZE = 16 << 20
#: From this many blobs to read, a catch-up streams them through ``git cat-file`` (:meth:`VaultStore.stream_blobs`),
#: which inflates them on the other core; fewer are read in process (a child process costs ~2 ms to start).
STREAM_BLOBS_FROM = 2000
#: From this many notes to index, a catch-up reads each batch's rows in a child process while it inserts the
#: batch before (:mod:`notegate.vault.rowreader`: the two halves of a first build overlap on two cores).  A
#: smaller catch-up (a write's) reads them inline: the child costs ~0.2 s to start.
PIPELINE_FROM = 5000
#: Segment merging (:meth:`SearchIndex.compact`).  Why: a catch-up that indexes many notes in one transaction
#: (a first build, an import, a big fetch) leaves FTS5 a few large segments on its lowest levels, where each
#: write's tiny segment lands beside them; FTS5's own merging then rewrites them inside some later write's
#: commit: at 100,000 notes one commit in ~25 took 0.1-3.6 s, ~126 MB rewritten in 300 writes, all inside the
#: write lock.  Merged once into one segment (a level of its own), later writes merge only among themselves:
#: 1,500 writes on that index 6.4 s -> 0.66 s of commits, slowest 3,585 -> 22 ms.  The merge runs in steps of
#: ``COMPACT_STEP_PAGES`` pages, one short transaction each (~50 ms on this VM), so a write waits one step at
#: most; a crash between steps leaves a valid index that the next compaction continues.
COMPACT_AFTER = 1000  # changed paths in one catch-up from which the index is marked for a full merge
COMPACT_STEP_PAGES = 500
COMPACT_META = "compact"  # meta key: 'full' while a full merge is owed, 'merging' once it has begun
LISTING_CHANGES = 64  # above this many changed paths, _apply asks the store's listing instead of parsing each
COMMON_TERM_MIN_NOTES = 256  # below this, scoring every match is cheap anyway (992 notes holding `the`: 6 ms)
#: How a term's share of the notes is estimated (``_common_terms``): windows of consecutive rows of the table,
#: spread evenly over it, 512 notes in all (a share's standard error ~2 %); cost bounded whatever the size.
SAMPLE_WINDOWS = 8
SAMPLE_WIDTH = 64
COMMON_CACHE = 4096  # remembered verdicts (term, table, commit); cleared when full


class _OldRowUnreadable(Exception):
    """A row's old blob is gone from git (a rewritten history, then a gc): its exact values, which a
    contentless row's removal needs, cannot be rebuilt; the catch-up starts the index over instead."""


def _indexed(path: str, listing) -> bool:
    """Notes and canvas files are indexed (a canvas by its text nodes); no other file: binary bytes never
    reach the index, so a word inside an image is never a hit."""
    if listing is not None:
        return path in listing.notes or (is_canvas(path) and path in listing.attachments)
    return servable(path) or (is_canvas(path) and servable_file(path))


def _empty_tables(db: sqlite3.Connection) -> None:
    """Empty ``notes`` and both FTS tables (a rebuild, a policy change), the FTS tables by dropping and creating
    them again.  Why not ``DELETE FROM fts``: FTS5 deletes row by row, tokenizing every old body again to write
    a delete marker for each of its words (a second build's worth of work at 100,000 notes), and the markers
    stay in the index, slowing searches, until merges drop them."""
    db.execute("DELETE FROM notes")
    db.execute("DELETE FROM names")
    db.execute("DELETE FROM stems")
    db.execute("DELETE FROM meta WHERE key = ?", (LANGUAGES_META,))
    for table in ("fts", "fts_private"):
        db.execute(f"DROP TABLE IF EXISTS {table}")
    for statement in FTS_TABLES:
        db.execute(statement)


class SearchIndex(IndexRows, RankedStatements, Describing):
    """The FTS5 index of one environment's notes."""

    def __init__(self, path: Path, classify: Classifier, fingerprint: str) -> None:
        self.path = path
        self._classify = classify
        self._fingerprint = f"{fingerprint} {INDEX_FORMAT}"
        #: the store the index last caught up from: its blobs are the texts of the rows (for snippets)
        self._store: VaultStore | None = None
        self._lock = threading.Lock()
        #: table -> (notes, sample windows, notes in them); verdicts per (table, term, generation)
        self._stats: dict[str, tuple[int, tuple[tuple[int, int], ...], int]] = {}
        self._refreshed: dict[str, int] = {}  # table -> its notes at the last _refresh_stats
        self._common: dict[tuple[str, str, int], bool] = {}
        self._generation = 0
        self._languages: tuple[str, ...] | None = None  # LANGUAGES_META, read once
        self._db = LocalSQLite(path)
        self._conn = self._db.conn
        self._tx = self._db.tx
        self._conn().executescript(SCHEMA)
        if self._meta("policy") != self._fingerprint:
            self._reclassify()
        self._refresh_stats()

    # ------------------------------------------------------------ plumbing
    def close(self) -> None:
        self._db.close()

    def _reclassify(self) -> None:
        """The policy classifies paths differently now: start over (rows may move between the public and the
        private table); the next catch-up rebuilds the index from git."""
        with self._tx() as db:
            _empty_tables(db)
            db.execute("DELETE FROM meta WHERE key = 'commit'")
            db.execute("INSERT OR REPLACE INTO meta VALUES ('policy', ?)", (self._fingerprint,))

    # ------------------------------------------------------------ updating
    def catch_up(
        self,
        store: VaultStore,
        progress: Callable[[int], None] | None = None,
        *,
        known: Mapping[str, bytes] | None = None,
    ) -> int:
        """Bring the index to the store's tip. Returns how many notes changed.

        ``known`` (blob id -> the blob's bytes) is what a bulk write has just committed and still holds: a
        blob found there is not read back from git.  Why: after an import every new note is read again,
        from one of dozens of batch packs, inflated, only to be indexed (0.5 s of the 2.2 s catch-up at
        10,000 notes).  A blob id names its bytes, so bytes under their own id are what git holds; any
        other blob is read from git as before."""
        self._store = store
        head = store.head()
        if head == self.indexed_commit:
            return 0
        with self._lock:
            old = self.indexed_commit
            if head == old:
                return 0
            return self._apply(store, old, head, progress, known)

    def try_catch_up(self, store: VaultStore) -> bool:
        """:meth:`catch_up` unless another thread is at it (a first start's full build, minutes at 100k
        notes): then False at once, so a read answers from git instead of waiting for the whole build."""
        self._store = store
        head = store.head()
        if head == self.indexed_commit:
            return True
        if not self._lock.acquire(blocking=False):
            return False
        try:
            old = self.indexed_commit
            if head != old:
                self._apply(store, old, head, None)
            return True
        finally:
            self._lock.release()

    def rebuild(self, store: VaultStore, progress: Callable[[int], None] | None = None) -> int:
        self._store = store
        with self._lock:
            with self._tx() as db:
                _empty_tables(db)
                db.execute("DELETE FROM meta WHERE key = 'commit'")
            return self._apply(store, None, store.head(), progress)

    def _apply(
        self,
        store: VaultStore,
        old: str | None,
        new: str | None,
        progress: Callable[[int], None] | None,
        known: Mapping[str, bytes] | None = None,
    ) -> int:
        try:
            return self._apply_once(store, old, new, progress, known)
        except _OldRowUnreadable:  # rolled back: start over from git, as a rebuild does
            with self._tx() as db:
                _empty_tables(db)
                db.execute("DELETE FROM meta WHERE key = 'commit'")
            return self._apply_once(store, None, new, progress, known)

    def _apply_once(
        self,
        store: VaultStore,
        old: str | None,
        new: str | None,
        progress: Callable[[int], None] | None,
        known: Mapping[str, bytes] | None,
    ) -> int:
        if new is None:
            return 0
        empty = old is None and self.count() == 0
        listing = store.listing() if empty else None
        if listing is not None and listing.commit == new:
            # A first build: the listing (built when the environment opened) holds every path to index, so
            # no second walk of the whole tree (at 100,000 notes that walk was ~30 % of the build's CPU).
            changes = [*listing.notes.items(), *((p, b) for p, b in listing.attachments.items() if is_canvas(p))]
        else:
            changes = store.changed_notes(old, new)
            # A big change (a fetch): the listing has parsed these paths already.  A write's few paths are
            # parsed here instead: this runs inside the write lock, and the listing catches up when a reader
            # next asks, outside it (a catch-up costs the changed paths, not the vault: a shared listing).
            listing = store.listing() if len(changes) > LISTING_CHANGES else None
        current = listing is not None and listing.commit == new
        # A first build leaves the last-commit ids to after its commit (``_fill_last_commits``): nothing a
        # search returns needs them, and a read that finds none walks the history itself.
        last = {} if empty else self._last_commits(store, old, new, {p for p, _ in changes})
        count = 0
        added = {"fts": 0, "fts_private": 0}
        indexed = [blob != ABSENT and _indexed(path, listing if current else None) for path, blob in changes]
        needed = [b for (_p, b), i in zip(changes, indexed, strict=True) if i and not (known and b in known)]
        reader = rowreader.start(store.repo_dir) if len(needed) >= PIPELINE_FROM else None
        # With a reader, the child reads the blobs too (a catch-up's rows carry no text here).
        stream = store.stream_blobs(needed) if reader is None and len(needed) >= STREAM_BLOBS_FROM else None
        with (
            self._tx() as db,
            closing(stream) if stream is not None else nullcontext(),
            closing(reader) if reader is not None else nullcontext(),
        ):
            if empty:
                for table in ("fts", "fts_private"):
                    db.execute(f"INSERT INTO {table}({table}, rank) VALUES ('hashsize', ?)", (FTS_HASHSIZE,))  # noqa: S608
            batches = rowreader.Batches(
                lambda rows, made: self._insert(db, rows, made),
                lambda path, blob: indexed_text(path, store.read_unverified_blob_fast(blob)),
                reader,
            )
            rows: list[tuple] = []
            for (path, blob), wanted in zip(changes, indexed, strict=True):
                if not empty:
                    row = db.execute("SELECT id, private, blob FROM notes WHERE path = ?", (path,)).fetchone()
                    if row is not None:
                        table = "fts_private" if row[1] else "fts"
                        added[table] -= 1
                        self._delete_row(db, store, table, row[0], path, row[2])
                if not wanted:
                    continue
                data = known.get(blob) if known else None  # the bytes a bulk write just committed, by blob id
                if data is None and reader is None:  # from the tree diff, in the order of ``needed``
                    data = next(stream) if stream is not None else store.read_unverified_blob_fast(blob)
                text = indexed_text(path, data) if data is not None else None  # None: the reader reads it
                private, inbox = self._classify(path)
                added["fts_private" if private else "fts"] += 1
                folder = path.rsplit("/", 1)[0] if "/" in path else ""
                rows.append((path, folder, blob, last.get(path), int(private), int(inbox), text))
                count += 1
                if progress is not None:
                    progress(1)
                if len(rows) >= INSERT_BATCH:  # bounded memory: two batches' texts at most, whatever the build
                    batches.add(rows)
                    rows = []
            batches.add(rows)
            batches.finish()
            db.execute("INSERT OR REPLACE INTO meta VALUES ('commit', ?)", (new,))
            if len(changes) >= COMPACT_AFTER:  # owed with the rows that make it so: a crash cannot lose the mark
                db.execute("INSERT OR REPLACE INTO meta VALUES (?, 'full')", (COMPACT_META,))
        if empty or len(changes) > LISTING_CHANGES:
            self._refresh_stats()
        else:
            self._adjust_stats(added)
        if empty:
            self._fill_last_commits(store, new, {p for p, _ in changes})
        return count

    def compact(self, *, max_steps: int | None = None) -> int:
        """Merge the FTS5 segments in steps outside any write (see :data:`COMPACT_AFTER`); returns the steps
        that merged something.

        When a full merge is owed (``meta.compact``), the first step is FTS5's ``'merge'`` with a negative
        page count: it gathers every segment onto one new level and starts merging them, as ``'optimize'``
        does but in bounded steps.  Every later step (and a pass with nothing owed) has a positive count: it
        carries on the merge in progress, else merges levels holding several segments, so the merging a run
        of writes leaves pending is done here, beside them, not in one of their commits.  The pass ends, and
        the mark is cleared, when a step runs out of work before its budget; a pass stopped before that (its
        step limit, a crash) leaves the mark at ``merging``, and the next carries the merge on.  Why not
        negative steps throughout: each gathers every segment again, the new ones of writes made between
        steps too, and starts over, so under writes a full merge never ended.  Called by the server after
        its start-up catch-up and by ``maintain``."""
        owed = self._meta(COMPACT_META)
        pages = -COMPACT_STEP_PAGES if owed == "full" else COMPACT_STEP_PAGES
        limit = max_steps if max_steps is not None else self._compact_step_limit()
        steps = 0
        for _ in range(limit):
            with self._lock, self._tx() as db:
                written = []
                for table in ("fts", "fts_private"):
                    before = db.total_changes
                    db.execute(
                        f"INSERT INTO {table}({table}, rank) VALUES ('merge', ?)",  # noqa: S608 - fixed names
                        (pages,),
                    )
                    # The command itself counts one change; the pages FTS5 merged (written and dropped) the rest.
                    written.append(db.total_changes - before - 1)
                exhausted = all(n < COMPACT_STEP_PAGES for n in written)
                if exhausted and owed is not None:
                    db.execute("DELETE FROM meta WHERE key = ?", (COMPACT_META,))
                elif pages < 0:  # begun: a later pass (after a crash, or past its step limit) carries it on
                    db.execute("INSERT OR REPLACE INTO meta VALUES (?, 'merging')", (COMPACT_META,))
            if any(written):
                steps += 1
            if exhausted:
                break
            pages = COMPACT_STEP_PAGES  # the merge is under way: carry it on
        return steps

    def _compact_step_limit(self) -> int:
        """Enough steps to rewrite the whole file three times over (FTS5's pages are ~4 KB): a bound, so a
        merge that kept reporting changes could never spin."""
        conn = self._conn()
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        size = conn.execute("PRAGMA page_size").fetchone()[0]
        return 3 * (pages * size // (COMPACT_STEP_PAGES * 4000) + 1) + 8

    def _fill_last_commits(self, store: VaultStore, new: str, paths: set[str]) -> None:
        """A first build's last-commit ids, in a second transaction once the index is searchable: the newest of
        the last :data:`FULL_BUILD_WALK_LIMIT` commits that changed each path (older notes get theirs on first
        read).  Why not before: the walk (~1 s at 100,000 notes) delayed every search.  Only rows still without
        an id are set, as :meth:`remember_last_commit` does."""
        last = self._last_commits(store, None, new, paths, FULL_BUILD_WALK_LIMIT)
        if last:
            with self._tx() as db:
                db.executemany(
                    "UPDATE notes SET last_commit = ? WHERE path = ? AND last_commit IS NULL",
                    [(commit, path) for path, commit in last.items()],
                )

    @staticmethod
    def _delete_row(db: sqlite3.Connection, store: VaultStore, table: str, rowid: int, path: str, blob: str) -> None:
        """Remove one note's row: from its FTS table with the values it was inserted with (the old blob, read
        back from git: a contentless table keeps no copy), then from ``notes``."""
        try:
            data = store.read_unverified_blob_fast(blob)
        except (KeyError, ValueError) as exc:
            raise _OldRowUnreadable(path) from exc
        db.execute(
            f"INSERT INTO {table} ({table}, rowid, {_COLUMNS}) VALUES ('delete', ?, {_MARKS})",  # noqa: S608
            (rowid, *field_values(path, indexed_text(path, data))),
        )
        db.execute("DELETE FROM notes WHERE id = ?", (rowid,))
        names.delete(db, rowid)

    def _insert(self, db: sqlite3.Connection, rows: list[tuple], made: list[rowreader.NoteRow] | None = None) -> None:
        """Insert ``rows`` (path, folder, blob, last commit, private, inbox, text) and their FTS rows; ``made``:
        their :func:`note_row` values when read already (:class:`rowreader.Batches`)."""
        if not rows:
            return
        start = db.execute("SELECT coalesce(max(id), 0) FROM notes").fetchone()[0] + 1
        db.executemany(
            "INSERT INTO notes (id, path, folder, blob, last_commit, private, inbox) VALUES (?,?,?,?,?,?,?)",
            [(start + i, *row[:6]) for i, row in enumerate(rows)],
        )
        made = rowreader.rows_of([(row[0], row[6]) for row in rows]) if made is None else made
        names.insert(db, [(start + i, fields) for i, (_values, fields, _language) in enumerate(made)])
        for table, private in (("fts", 0), ("fts_private", 1)):
            db.executemany(
                f"INSERT INTO {table} (rowid, {_COLUMNS}) VALUES (?, {_MARKS})",  # noqa: S608 - fixed names
                [(start + i, *made[i][0]) for i, row in enumerate(rows) if row[4] == private],
            )
        forms = {stem for values, _f, _l in made for value in values[-2:] for stem in value.split()}
        db.executemany("INSERT OR IGNORE INTO stems VALUES (?)", [(stem,) for stem in forms])
        have = self.languages()
        new = {language for _v, _f, language in made if language and language not in have}
        if new:  # a query's words are stemmed in each language the index holds notes in
            self._languages = tuple(sorted({*have, *new}))
            db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (LANGUAGES_META, ",".join(self._languages)))

    def _last_commits(
        self, store: VaultStore, old: str | None, new: str, paths: set[str], walk: int = HISTORY_WALK_LIMIT
    ) -> dict[str, str]:
        """For each changed path, the newest commit in (old, new] that changed it (first-parent walk, at most
        ``walk`` commits)."""
        return store.last_changes(old, new, paths, walk)

    # ------------------------------------------------------------- reading
    def search(
        self,
        query: str,
        *,
        folder: str = "",
        limit: int = 20,
        include_private: bool = False,
        include_inbox: bool = False,
    ) -> list[Hit]:
        """:meth:`rank`, then :meth:`describe` every hit: the hits in order, each with its snippet and part."""
        ranking = self.rank(
            query, folder=folder, limit=limit, include_private=include_private, include_inbox=include_inbox
        )
        return self.describe(ranking)

    def rank(
        self,
        query: str,
        *,
        folder: str = "",
        limit: int = 20,
        include_private: bool = False,
        include_inbox: bool = False,
    ) -> Ranking:
        """The tiers of :func:`parse_query` in order, each ranked by bm25 and without the notes an earlier
        tier returned: the phrase, then all the words, until ``limit`` hits; any word only when neither found
        a note (a fallback: OR over common words scores most of the vault, 15-90 ms at 10,000 notes, and
        notes holding one word of several are noise next to notes holding them all).  Visibility (private
        table, inbox, folder) is part of every statement, before its LIMIT.  A note the query names exactly
        (its file name, first heading or an alias, any case: ``vault/names.py``) comes first.

        The hits come without their snippets and parts (:meth:`describe`).  Why apart: those read each hit's
        text from git, and a caller that keeps only some of the hits (the fusion with search by meaning
        drops keyword hits) should not pay for the others."""
        parsed = parse_query(query, self.languages())
        if parsed is None:
            return Ranking((), (), ())
        tables = ("fts", "fts_private") if include_private else ("fts",)
        parsed = parsed.keeping(self._held(tables, parsed.probes()), self._stems_held(parsed.stemmed_words()))
        taken: dict[str, list[int]] = {"fts": [], "fts_private": []}
        where, params = self._filters("fts", folder, include_inbox)
        if not include_private:
            where.append("n.private = 0")
        named = names.lookup(self._conn(), names.query_key(query), where, params, limit)
        for row in named:
            taken[row[4]].append(row[0])
        first = shown_tier(parsed.tiers()[0][0])
        ranked = [Ranked(r[0], r[1], -float(r[2]), bool(r[3]), first, r[5]) for r in named]
        for tier, expr in parsed.tiers():
            if len(ranked) >= limit or (tier == "any-word" and ranked):
                break
            found = self._run(
                tier, parsed.terms, expr, folder, limit - len(ranked), include_private, include_inbox, taken
            )
            ranked += [Ranked(r[0], r[1], -float(r[2]), bool(r[3]), shown_tier(tier)) for r in found]
        return Ranking(tuple(ranked), tuple(parsed.forms()), parsed.terms)

    def _run(
        self,
        tier: str,
        terms: tuple[Term, ...],
        expr: str,
        folder: str,
        limit: int,
        include_private: bool,
        include_inbox: bool,
        taken: dict[str, list[int]],
    ) -> list[tuple]:
        """The top rows of one tier over the tables this caller may search (merged by score).

        Rank and limit first; snippets are made afterwards for the few rows returned (FTS5 computes
        ``snippet()`` for every matching row before ``ORDER BY … LIMIT``, seconds for a word in every note).
        """
        tables = ("fts", "fts_private") if include_private else ("fts",)
        ranked: list[tuple] = []
        for table in tables:
            ranked += self._rank(table, tier, terms, expr, folder, limit, include_inbox, taken[table])
        if len(tables) > 1:  # merge the public and the private table's top rows (one table keeps its order)
            ranked = sorted(ranked, key=merge_key)[:limit]
        for row in ranked:
            taken[row[4]].append(row[0])
        return ranked

    def _held(self, tables: tuple[str, ...], probes: list[str]) -> set[str]:
        """The FTS5 expressions some row of ``tables`` matches: one statement, a first match each at most."""
        if not probes:
            return set()
        # Only integers and fixed names are interpolated; each expression is a bound parameter.
        union = " UNION ALL ".join(
            f"SELECT * FROM (SELECT {i} FROM {table} WHERE {table} MATCH ?{i + 1} LIMIT 1)"  # noqa: S608
            for table in tables
            for i in range(len(probes))
        )
        return {probes[row[0]] for row in self._conn().execute(union, probes)}

    def _stems_held(self, words: list[str]) -> set[str]:
        if not words:
            return set()
        marks = ",".join("?" for _ in words)
        return {r[0] for r in self._conn().execute(f"SELECT stem FROM stems WHERE stem IN ({marks})", words)}  # noqa: S608

    def languages(self) -> tuple[str, ...]:
        """The Snowball algorithms of the indexed notes (``LANGUAGES_META``): a query's words are stemmed in each."""
        if self._languages is None:
            value = self._meta(LANGUAGES_META)
            self._languages = tuple(value.split(",")) if value else ()
        return self._languages

    def _rank(
        self,
        table: str,
        tier: str,
        terms: tuple[Term, ...],
        expr: str,
        folder: str,
        limit: int,
        include_inbox: bool,
        exclude: list[int],
    ) -> list[tuple]:
        """The top rows of one FTS table. Private notes live in their own table, so the ranking statistics a
        restricted caller's search sees (document counts, word frequencies) never include them.

        Terms found in more than half of a large table's notes are left out of the ranking (never out of
        the match).  Why: FTS5's bm25 clamps such a term's IDF to 1e-6, so it adds nothing to any score, yet
        its first call walks the term's whole posting list (O(vault): 20-40 ms for ``the`` at 100,000 notes)
        and every matching row must be scored.  So: all words rank by the rarer words among the rows that
        hold every word; any word ranks the rows holding a rarer word, then the rest newest first; a query
        of common words only lists newest first (what bm25 would return is a near-tie anyway)."""
        filters, params = self._filters(table, folder, include_inbox)
        base = shown_tier(tier)  # a marked tier ranks as the tier it refines, its marks required
        exact = base in ("phrase", "all-words")  # the exact words; word forms and any word: their forms too
        common = set() if base == "phrase" else self._common_terms(table, terms, exact=exact)
        if not common:
            return self._select(table, "", expr, filters, params, exclude, limit)
        rare = [t.exact() if exact else t.fts() for i, t in enumerate(terms) if i not in common]
        if tier != "any-word" and rare:
            # Without the exact tier's column filter: with it, FTS5 reads the words' position lists column by
            # column (a common and a rare word: 2-2.6x the time).  The price: a word that is also the stem of
            # a title's or heading's other form matches that form here, at the forms columns' lower weight.
            # Word forms and any word: their forms too; a marked tier: its marks too (its whole expression).
            required = " AND ".join(t.exact() for t in terms) if tier == base and exact else expr
            return self._select(table, " AND ".join(rare), required, filters, params, exclude, limit)
        rows = self._select(table, " OR ".join(rare), "", filters, params, exclude, limit) if rare else []
        if len(rows) < limit:  # the rows holding only common words: newest first
            seen = exclude + [r[0] for r in rows]
            rows += self._select(table, "", expr, filters, params, seen, limit - len(rows), newest=True)
        return rows

    def _refresh_stats(self) -> None:
        """Count each table's notes and the notes in its sample windows (``_common_terms``).  Why here and
        not per search: at open and after a large change (a build, a big fetch) the counts cost ~10 ms at
        100,000 notes; a write's few rows adjust the totals instead (``_adjust_stats``), and the windows'
        counts may drift by those few rows: they only steer which words are ranked, never what matches.
        Another process rebuilding this file is seen at the next large change or open (ordering only)."""
        conn = self._conn()
        stats: dict[str, tuple[int, tuple[tuple[int, int], ...], int]] = {}
        for table, private in (("fts", 0), ("fts_private", 1)):
            # The windows are runs of SAMPLE_WIDTH consecutive rows *of this table*, spread over its rows.
            # Why not runs of rowids: a table's rowids need not be dense.  An import numbers the notes in its
            # own order, so the private notes (1 % of a vault) are scattered over the whole id range, and
            # windows of 64 consecutive ids held one private note in all: the private table's common words
            # were then ranked by bm25 over every match (the vault's largest notes first, 17 ms a search
            # at 100,000 notes instead of 2.5).  One pass over the ids: ~10 ms at 100,000 notes.
            ids = [row[0] for row in conn.execute("SELECT id FROM notes WHERE private = ? ORDER BY id", (private,))]
            total = len(ids)
            windows: tuple[tuple[int, int], ...] = ()
            sampled = 0
            if total >= COMMON_TERM_MIN_NOTES:
                step = max(SAMPLE_WIDTH, total // SAMPLE_WINDOWS)
                starts = range(0, total, step)[:SAMPLE_WINDOWS]
                windows = tuple((ids[k], ids[min(k + SAMPLE_WIDTH, total) - 1]) for k in starts)
                sampled = sum(min(SAMPLE_WIDTH, total - k) for k in starts)  # each window: exactly its rows
            stats[table] = (total, windows, sampled)
        self._stats = stats
        self._refreshed = {table: total for table, (total, _w, _n) in stats.items()}
        self._generation += 1

    def _adjust_stats(self, added: dict[str, int]) -> None:
        """A small change's effect on the totals (see :meth:`_refresh_stats`); cached verdicts expire.

        The windows are rows that were there at the last refresh, so a table that has since grown or shrunk
        by more than a tenth is sampled afresh: rows written later would otherwise never be sampled (a vault
        grown from a few notes by writes alone).  Amortized: one ~10 ms pass per tenth of the vault written."""
        self._stats = {t: (total + added.get(t, 0), w, n) for t, (total, w, n) in self._stats.items()}
        self._generation += 1
        for table, (total, _windows, _sampled) in self._stats.items():
            then = self._refreshed.get(table, 0)
            if abs(total - then) * 10 > then or (then < COMMON_TERM_MIN_NOTES <= total):
                self._refresh_stats()
                return

    def _common_terms(self, table: str, terms: tuple[Term, ...], *, exact: bool = False) -> set[int]:
        """The terms found in more than half of a large table's notes, by index.  Estimated from
        :data:`SAMPLE_WINDOWS` windows of :data:`SAMPLE_WIDTH` rowids spread over the table: one statement
        for every term at once, bounded work whatever the vault's size (counting every match walks the whole
        posting list: 40 ms for a word in every note at 100,000); remembered until the index changes."""
        total, windows, sampled = self._stats.get(table, (0, (), 0))
        if total < COMMON_TERM_MIN_NOTES or not sampled:
            if table == "fts" or not total:
                return set()
            return self._held_by_most(table, terms, exact, self._common_terms("fts", terms, exact=exact), total)
        generation = self._generation
        exprs = [t.exact() if exact else t.fts() for t in terms]
        # Read into a local map first: the shared cache may be cleared (when full, below, or by another thread's
        # search) between the look-up and the answer, and a verdict read once must not vanish meanwhile.
        verdicts = {e: self._common.get((table, e, generation)) for e in exprs}
        unknown = sorted(e for e, verdict in verdicts.items() if verdict is None)
        if unknown:
            # Only integers we computed and fixed names are interpolated; each term is a bound parameter.
            union = " UNION ALL ".join(
                f"SELECT {i} AS term, count(*) AS c FROM {table} WHERE {table} MATCH ?{i + 1} "  # noqa: S608
                f"AND rowid BETWEEN {a} AND {b}"
                for i in range(len(unknown))
                for a, b in windows
            )
            counts = dict(self._conn().execute(f"SELECT term, sum(c) FROM ({union}) GROUP BY term", unknown))  # noqa: S608
            if len(self._common) + len(unknown) > COMMON_CACHE:
                self._common.clear()
            for i, expr in enumerate(unknown):
                verdicts[expr] = self._common[(table, expr, generation)] = counts.get(i, 0) * 2 > sampled
        return {i for i, e in enumerate(exprs) if verdicts[e]}
