"""Search by meaning: one vector per note from a static embedding model shipped in a wheel, kept beside the
search index and brought up to date in the background after each write.

Theory of operation:

- **The model** is WordLlama (``wordllama`` on PyPI, MIT): a static embedding table (one 256-dimension vector
  per token of a 32,000-token vocabulary, 16 MB of float16) inside its wheel, held as int8 rows (8 MB, one per
  process: :class:`Embedder`); a text's vector is the mean of its tokens' vectors.  The install step copies
  that table and its tokenizer out of the pinned wheel (:mod:`notegate.vault.meaning_model`); nothing is
  downloaded at run time, no PyTorch, ~0.1 ms to embed a query, ~150 notes a second on one core.  Chosen by
  measurement on a 6,289-note, 37-language vault (bench/RESULTS.md, "Search by meaning"): a multilingual
  64-dimension static model and two transformers (USE multilingual, multilingual-e5-small) were weaker or far
  too slow.
- **The vectors** live in their own SQLite file beside the index (``meaning.sqlite``: this Python's SQLite
  cannot load a vector extension, and none is needed): one row per note, keyed by path and the blob id it
  was computed from, 256 bytes (int8 with a per-row scale).  In memory they are one append-only int8 matrix
  (2.6 MB at 10,000 notes, :mod:`notegate.vault.meaning_rows`): a write group appends its rows and marks the
  old ones dead, and a query ranks the snapshot it took, a matrix-vector product in blocks, brute force, exact.
- **Follows git like the index**: a catch-up embeds the paths git changed between the commit the vectors were
  brought to and the index's (the index's own diff), reading the index's rows of exactly that commit; every
  row is compared only at a start, for a missing or foreign-model file (rebuilt from git), and after a note
  could not be read.  It runs in one background thread per environment, woken after every advance of main
  (wakes that pile up are one diff), at a lower CPU priority: a write is searchable by keyword when it is
  acknowledged, and by meaning a moment later.
- **Visibility** is not decided here: :meth:`MeaningIndex.search` takes the caller's filter and applies it to
  every candidate before it counts against the limit (private paths, the inbox, the folder), and the service
  checks each hit again as it checks keyword hits.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from notegate.sqlite import LocalSQLite
from notegate.vault.query import indexed_text, title_of

if TYPE_CHECKING:
    import numpy as np

    from notegate.vault.index import SearchIndex
    from notegate.vault.store import VaultStore

log = logging.getLogger("notegate")

#: Names the model and the text a vector is made of; a vectors file made otherwise is rebuilt.
MODEL_FINGERPRINT = "wordllama-0.4.0-l2_supercat-256-i8rows title+1500 int8-2"
#: How much of a note is embedded: its title and the start of its body.  Why not all of it: a static model's
#: vector is a mean, and a long note's mean drifts to its vault's common words; the start says what it is
#: about (measured: 1,000-4,000 characters within 0.03 recall of each other, 4x slower at 4,000).
NOTE_CHARS = 1500
EMBED_BATCH = 64  # notes embedded and written per transaction: a crash loses one batch; progress is visible
#: Tries at reading the index's rows of the commit a catch-up diffed to, when writes keep moving it meanwhile;
#: then the catch-up waits for the wake that came with the index's move.
CONSISTENT_TRIES = 4
#: Below this cosine a note is not a meaning hit at all (a query about nothing in the vault finds nothing).
#: Measured on the paraphrase set: the right note scored under 0.20 in 1 query of 10, and was then never in
#: the top 10 anyway (the 10th-best cosine: median 0.34).
MIN_COSINE = 0.20
#: The background thread's niceness (Linux: per thread); the embedder yields the cores to requests.
NICE = 10


def source_of(text: str) -> bytes:
    """The digest a vector's text is remembered by (16 bytes): equal texts, equal vectors."""
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).digest()


def note_text(path: str, data: bytes) -> str:
    """What a note is embedded by: its title and the start of its body, front matter left out (its keys
    are the same in every note and would pull every vector toward one another)."""
    text = indexed_text(path, data)
    if text.startswith("---\n"):
        end = text.find("\n---", 3)
        if end > 0:
            text = text[end + 4 :]
    return f"{title_of(path, text)}\n{text[:NOTE_CHARS]}"


class Embedder:
    """WordLlama's table and tokenizer, read from their installed files (:mod:`notegate.vault.meaning_model`);
    never the network.  One per process (:func:`shared_embedder`): every environment embeds with the same model.

    Why not the ``wordllama`` package: notegate needs one of its tables and its tokenizer description, not its
    code, and the package with its dependencies grew an install by ~70 MB more than those two files (issue 33
    allows 100 MB for all of search by meaning); importing it also cost ~29 MB of resident memory.  The
    tokenizer is :class:`notegate.vault.llama_bpe.LlamaBPE`, the same ids as wordllama's.

    The table is kept as int8 rows, each with its float32 scale (:func:`quantized`), 8 MB instead of the file's
    16 MB of float16: a text's vector is a mean over its tokens' rows, so each row's rounding (at most half a
    step of 1/127 of its largest value) averages out; measured against the float16 table on the Obsidian help
    vault's notes, cosine >= 0.9999 for every note, and the same recall (bench/RESULTS.md, nineteenth session)."""

    def __init__(self) -> None:
        import numpy

        from notegate.vault.meaning_model import load

        self._np = numpy
        table, self._tokenizer = load()
        self._rows, self._scales = quantized(table)

    def embed(self, texts: list[str]) -> np.ndarray:
        """Each text's unit vector: the mean of its tokens' rows (a text without tokens: zeros)."""
        np = self._np
        out = np.zeros((len(texts), self._rows.shape[1]), dtype=np.float32)
        for i, text in enumerate(texts):
            ids = np.asarray(self._tokenizer.encode(text), dtype=np.int64)
            ids = ids[ids < self._rows.shape[0]]
            if len(ids):
                mean = self._scales[ids] @ self._rows[ids].astype(np.float32) / len(ids)
                norm = float(np.linalg.norm(mean))
                out[i] = mean / norm if norm else mean
        return out


#: Rows of the table converted at a time (:func:`quantized`): bounds the float32 copy made on the way.
QUANTIZE_BLOCK = 2048


def quantized(table: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A float table as int8 rows and one float32 scale per row (``row ~ int8_row * scale``), symmetric: each
    row's largest magnitude becomes 127.  Block by block, so the float32 copy never holds the whole table."""
    import numpy as np

    rows = np.empty(table.shape, dtype=np.int8)
    scales = np.empty(table.shape[0], dtype=np.float32)
    for start in range(0, table.shape[0], QUANTIZE_BLOCK):
        block = table[start : start + QUANTIZE_BLOCK].astype(np.float32)
        peak = np.abs(block).max(axis=1)
        scale = np.where(peak > 0, peak / 127.0, 1.0).astype(np.float32)
        rows[start : start + QUANTIZE_BLOCK] = np.rint(block / scale[:, None])
        scales[start : start + QUANTIZE_BLOCK] = scale
    return rows, scales


_shared: Embedder | None = None
_shared_lock = threading.Lock()


def shared_embedder() -> Embedder:
    """The process's one :class:`Embedder`, loaded on first use (each environment's catch-up and query use it;
    it holds no state between calls, and the tokenizer's cache is a dict a thread reads or fills whole)."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = Embedder()
        return _shared


class Vectors:
    """The vectors file and its in-memory copy (:class:`notegate.vault.meaning_rows.Rows`, published as
    snapshots), and the commit of the index whose rows they were last brought to (``meta.commit``, written in the
    transaction of the rows that reached it: the file is the durable truth, memory is read from it at start)."""

    #: ``source``: the digest of the text the vector was made of (:func:`source_of`), so a write that leaves
    #: that text as it was (an append past its first :data:`NOTE_CHARS` characters: a log, a handoff) keeps its
    #: vector instead of being embedded again.
    VECTORS = """CREATE TABLE IF NOT EXISTS vectors (path TEXT PRIMARY KEY, blob TEXT NOT NULL, scale REAL NOT NULL,
                                                    vec BLOB NOT NULL, source BLOB)"""
    SCHEMA = f"CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);\n{VECTORS};\n"

    def __init__(self, path: Path) -> None:
        import numpy

        from notegate.vault.meaning_rows import Rows

        self._np = numpy
        self._db = LocalSQLite(path)
        conn = self._db.conn()
        conn.executescript(self.SCHEMA)
        row = conn.execute("SELECT value FROM meta WHERE key = 'model'").fetchone()
        if row is None or row[0] != MODEL_FINGERPRINT:
            with self._db.tx() as db:  # another model, or a file of an older layout: start over
                db.execute("DROP TABLE IF EXISTS vectors")
                db.execute(self.VECTORS)
                db.execute("DELETE FROM meta WHERE key = 'commit'")
                db.execute("INSERT OR REPLACE INTO meta VALUES ('model', ?)", (MODEL_FINGERPRINT,))
        row = conn.execute("SELECT value FROM meta WHERE key = 'commit'").fetchone()
        #: the index commit the rows were last brought to (None: unknown, the next catch-up compares them all)
        self.commit: str | None = row[0] if row else None
        self._lock = threading.Lock()  # the writers' side; a query reads its snapshot without it
        self._rows = Rows()
        self._rows.put(conn.execute("SELECT path, blob, scale, vec FROM vectors").fetchall())
        self._snapshot = self._rows.snapshot()

    def blobs(self, paths: Iterable[str] | None = None) -> dict[str, str]:
        """path -> the blob its vector was made from: of ``paths`` (those that have one), else of every note."""
        with self._lock:
            have = self._rows.blobs
            if paths is None:
                return dict(have)
            return {p: have[p] for p in paths if p in have}

    def __len__(self) -> int:
        return self._snapshot.live

    def sources(self, paths: list[str]) -> dict[str, tuple[bytes, float, bytes]]:
        """path -> (source digest, scale, int8 bytes) of the stored vectors of ``paths`` (those that have one)."""
        found: dict[str, tuple[bytes, float, bytes]] = {}
        conn = self._db.conn()
        for start in range(0, len(paths), 500):  # SQLite's bound parameters: a few hundred a statement
            chunk = paths[start : start + 500]
            marks = ",".join("?" for _ in chunk)
            query = f"SELECT path, source, scale, vec FROM vectors WHERE source IS NOT NULL AND path IN ({marks})"  # noqa: S608
            for path, source, scale, vec in conn.execute(query, chunk):
                found[path] = (source, scale, vec)
        return found

    def apply(
        self,
        put: dict[str, tuple[str, Any, bytes | None]],
        drop: Iterable[str],
        *,
        commit: str | None = None,
        publish: bool = True,
    ) -> None:
        """Write ``put`` (path -> (blob, vector, source digest); the vector a float one, or a stored one kept as
        it was: (scale, int8 bytes)), remove ``drop`` and, given one, record ``commit`` (the
        index commit these rows complete) in one transaction; then, with ``publish``, swap the in-memory
        snapshot (a search holds the old one until it is done: no lock on the query path).  A publication
        copies one byte a row (the live mask), never the vectors."""
        np = self._np
        rows = []
        for path, (blob, vec, source) in put.items():
            if isinstance(vec, tuple):
                scale, data = vec
            else:
                scale = float(np.abs(vec).max()) / 127 or 1.0
                data = np.round(vec / scale).astype(np.int8).tobytes()
            rows.append((path, blob, scale, data, source))
        dropped = list(drop)
        with self._db.tx() as db:
            db.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?, ?, ?, ?)", rows)
            db.executemany("DELETE FROM vectors WHERE path = ?", [(p,) for p in dropped])
            if commit is not None:
                db.execute("INSERT OR REPLACE INTO meta VALUES ('commit', ?)", (commit,))
        with self._lock:
            self._rows.drop(dropped)
            self._rows.put([row[:4] for row in rows])
            if commit is not None:
                self.commit = commit
            if publish:
                self._snapshot = self._rows.snapshot()

    def publish(self) -> None:
        with self._lock:
            self._snapshot = self._rows.snapshot()

    def ranked(self, query: Any) -> Iterable[tuple[str, float]]:
        """Every note by cosine with ``query`` (a unit vector), best first, lazily
        (:meth:`notegate.vault.meaning_rows.Snapshot.ranked`), from the snapshot published last."""
        return self._snapshot.ranked(query)

    def close(self) -> None:
        self._db.close()


def _has_commit(store: VaultStore, commit: str) -> bool:
    try:
        store.commit_info(commit)
    except (KeyError, ValueError):
        return False
    return True


class MeaningIndex:
    """One environment's vectors, kept in step with its search index by a background thread."""

    def __init__(self, path: Path, embedder: Callable[[], Embedder] = shared_embedder) -> None:
        self.path = path
        self._make_embedder = embedder
        self._embedder: Embedder | None = None
        self._embedder_lock = threading.Lock()
        self.vectors = Vectors(path)
        self._wanted = threading.Event()
        self._idle = threading.Event()
        self._idle.set()
        self._stop = False
        self._thread: threading.Thread | None = None
        self._source: tuple[VaultStore, SearchIndex] | None = None
        self._start_lock = threading.Lock()  # the thread's start, the wakes' count and the idle mark
        self._asked = 0
        self._full_due = True  # the first catch-up of a process compares every row (see :meth:`catch_up`)

    def embedder(self) -> Embedder:
        with self._embedder_lock:
            if self._embedder is None:
                self._embedder = self._make_embedder()
            return self._embedder

    # ------------------------------------------------------------ keeping up
    def wake(self, store: VaultStore, index: SearchIndex) -> None:
        """Main moved (a write, a fetch, the first build): catch up in the background. Never blocks.  Wakes
        that come while a catch-up runs are one more catch-up (an event, not a queue): it diffs from the
        vectors' commit to the index's latest, the union of what every one of them changed."""
        with self._start_lock:
            self._source = (store, index)
            self._asked += 1
            self._idle.clear()
            self._wanted.set()
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name=f"meaning-{self.path.parent.name}", daemon=True)
                self._thread.start()

    def wait_idle(self, timeout: float) -> bool:
        """True once every wake so far has been caught up (tests and benches; the server never waits)."""
        return self._idle.wait(timeout)

    def _run(self) -> None:
        with contextlib.suppress(AttributeError, OSError):  # this thread's priority only (Linux: a thread id)
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), NICE)
        while not self._stop:
            self._wanted.wait()
            if self._stop:
                break
            with self._start_lock:
                self._wanted.clear()
                asked, source = self._asked, self._source
            try:
                if source is not None:
                    self.catch_up(*source)
            except Exception:  # the vectors stay behind; the next advance tries again; keyword search is unaffected
                log.exception("meaning index: catch-up failed")
            with self._start_lock:
                if self._asked == asked:  # no wake came in meanwhile
                    self._idle.set()

    def catch_up(self, store: VaultStore, index: SearchIndex) -> int:
        """Bring the vectors to the index's rows: embed the notes whose (path, blob) the index holds and the
        vectors do not, drop the rest.  Returns how many were embedded.  Reads each note from git by its blob
        id, as the index does.

        Incremental: only the paths git says changed between the commit the vectors were last brought to and
        the index's commit (``store.changed_notes``, the diff the index's own catch-up uses: a pushed chain's
        recorded range, else a tree diff that skips unchanged subtrees) are looked at; wakes that came
        meanwhile are one diff to the index's latest commit.  Every row is compared instead (index rows vs
        vectors) when that commit is unknown or gone from git (a new or foreign-model file, a file from before
        this mark), after a note could not be read, and once per process (the first catch-up after a start
        checks the file against the index whatever it says)."""
        mine = None if self._full_due else self.vectors.commit
        if mine is not None and not _has_commit(store, mine):
            mine = None
        for _try in range(CONSISTENT_TRIES):
            at = index.indexed_commit
            if at is None or at == mine:  # the index is being built (its end wakes us), or nothing moved
                return 0
            paths = None if mine is None else [path for path, _blob in store.changed_notes(mine, at)]
            read_at, wanted = index.rows_at(paths)
            if read_at == at:  # the rows of exactly the commit diffed to
                break
        else:
            return 0  # writes moved the index under each read; each move woke us: the next pass tries again
        have = self.vectors.blobs(paths)
        drop = [p for p in have if p not in wanted]
        todo = [(p, b) for p, b in wanted.items() if have.get(p) != b]
        done = self._embed(store, todo, drop, at)
        if mine is None and done == len(todo) and not self._stop:
            self._full_due = False
        return done

    def _embed(self, store: VaultStore, todo: list[tuple[str, str]], drop: list[str], at: str) -> int:
        """Embed ``todo`` and drop ``drop`` in batches, publishing each; the last batch records ``at`` (not
        when a note could not be read, or the thread stops: then the next catch-up starts from the last mark,
        whose diff covers these paths again)."""
        done = 0
        failed = False
        for start in range(0, max(len(todo), 1), EMBED_BATCH):
            if self._stop:
                return done
            batch = []
            for path, blob in todo[start : start + EMBED_BATCH]:
                try:
                    text = note_text(path, store.read_unverified_blob_fast(blob))
                except (KeyError, ValueError):  # gone from git since the index listed it: compare all next time
                    failed = True
                    continue
                batch.append((path, blob, text, source_of(text)))
            # A note whose embedded text is unchanged (a write past its first NOTE_CHARS) keeps its vector.
            kept = self.vectors.sources([path for path, *_ in batch])
            fresh = [item for item in batch if kept.get(item[0], (None,))[0] != item[3]]
            vectors = self.embedder().embed([text for _p, _b, text, _s in fresh]) if fresh else []
            put = {path: (blob, vec, src) for (path, blob, _t, src), vec in zip(fresh, vectors, strict=True)}
            put.update({p: (b, kept[p][1:], src) for p, b, _t, src in batch if p not in put})
            last = start + EMBED_BATCH >= len(todo)
            self.vectors.apply(put, drop if start == 0 else (), commit=at if last and not failed else None)
            done += len(batch)
        if failed:
            self._full_due = True
        return done

    # ------------------------------------------------------------ reading
    def search(self, query: str, *, limit: int, visible: Callable[[str], bool]) -> list[tuple[str, float]]:
        """The ``limit`` notes nearest ``query`` in meaning that ``visible`` lets through, best first, each
        with its cosine (at least :data:`MIN_COSINE`)."""
        if not query.strip() or not len(self.vectors):
            return []
        vector = self.embedder().embed([query])[0]
        hits: list[tuple[str, float]] = []
        for path, score in self.vectors.ranked(vector):
            if score < MIN_COSINE or len(hits) >= limit:
                break
            if visible(path):
                hits.append((path, score))
        return hits

    def close(self) -> None:
        self._stop = True
        self._wanted.set()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=5)
        self.vectors.close()
