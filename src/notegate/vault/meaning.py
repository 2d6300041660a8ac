"""Search by meaning: one vector per note from a static embedding model shipped in a wheel, kept beside the
search index and brought up to date in the background after each write.

Theory of operation:

- **The model** is WordLlama (``wordllama`` on PyPI, MIT): a static embedding table (one 256-dimension vector
  per token of a 32,000-token vocabulary, 16 MB) inside its wheel; a text's vector is the mean of its tokens'
  vectors.  The install step copies that table and its tokenizer out of the pinned wheel
  (:mod:`notegate.vault.meaning_model`); nothing is downloaded at run time, no PyTorch, ~0.1 ms to embed a
  query, ~150 notes a second on one core.  Chosen by measurement on a 6,289-note, 37-language vault
  (bench/RESULTS.md, "Search by meaning"): a multilingual 64-dimension static model and two transformers
  (USE multilingual, multilingual-e5-small) were weaker or far too slow.
- **The vectors** live in their own SQLite file beside the index (``meaning.sqlite``: this Python's SQLite
  cannot load a vector extension, and none is needed): one row per note, keyed by path and the blob id it
  was computed from, 256 bytes (int8 with a per-row scale).  In memory they are one int8 matrix (2.6 MB at
  10,000 notes); a query is a matrix-vector product in blocks, brute force, exact.
- **Follows git like the index**: a catch-up compares the index's (path, blob) rows with its own and embeds
  the difference; a missing or foreign-model file is rebuilt from git.  It runs in one background thread per
  environment, woken after every advance of main, at a lower CPU priority: a write is searchable by keyword
  when it is acknowledged, and by meaning a moment later.
- **Visibility** is not decided here: :meth:`MeaningIndex.search` takes the caller's filter and applies it to
  every candidate before it counts against the limit (private paths, the inbox, the folder), and the service
  checks each hit again as it checks keyword hits.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
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
MODEL_FINGERPRINT = "wordllama-0.4.0-l2_supercat-256-f16 title+1500 int8-1"
#: How much of a note is embedded: its title and the start of its body.  Why not all of it: a static model's
#: vector is a mean, and a long note's mean drifts to its vault's common words; the start says what it is
#: about (measured: 1,000-4,000 characters within 0.03 recall of each other, 4x slower at 4,000).
NOTE_CHARS = 1500
#: A long catch-up (a first build) makes its vectors searchable this often, not after every batch: each
#: publication copies every row (at 100,000 notes, 25 MB) and batches come every ~0.3 s.
PUBLISH_SECONDS = 2.0
EMBED_BATCH = 64  # notes embedded and written per transaction: a crash loses one batch; progress is visible
FIRST_ROWS = 256  # candidates ranked by a partial sort; a full sort only if the caller's filter needs more
BLOCK_ROWS = 8192  # rows per block of the query's product: bounds its temporaries whatever the vault
#: Below this cosine a note is not a meaning hit at all (a query about nothing in the vault finds nothing).
#: Measured on the paraphrase set: the right note scored under 0.20 in 1 query of 10, and was then never in
#: the top 10 anyway (the 10th-best cosine: median 0.34).
MIN_COSINE = 0.20
#: The background thread's niceness (Linux: per thread); the embedder yields the cores to requests.
NICE = 10


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
    never the network.

    Why not the ``wordllama`` package: notegate needs one of its tables and its tokenizer description, not its
    code, and the package with its dependencies grew an install by ~70 MB more than those two files (issue 33
    allows 100 MB for all of search by meaning); importing it also cost ~29 MB of resident memory.  The table
    stays in float16 as stored (16 MB) and the tokenizer is :class:`notegate.vault.llama_bpe.LlamaBPE`: the
    same vectors as wordllama's ``embed(norm=True)``, to float16's precision."""

    def __init__(self) -> None:
        import numpy

        from notegate.vault.meaning_model import load

        self._np = numpy
        self._table, self._tokenizer = load()

    def embed(self, texts: list[str]) -> np.ndarray:
        """Each text's unit vector: the mean of its tokens' rows (a text without tokens: zeros)."""
        np = self._np
        out = np.zeros((len(texts), self._table.shape[1]), dtype=np.float32)
        for i, text in enumerate(texts):
            ids = np.asarray(self._tokenizer.encode(text), dtype=np.int64)
            ids = ids[ids < self._table.shape[0]]
            if len(ids):
                mean = self._table[ids].astype(np.float32).mean(axis=0)
                norm = float(np.linalg.norm(mean))
                out[i] = mean / norm if norm else mean
        return out


class Vectors:
    """The vectors file and its in-memory copy (an int8 matrix, a scale per row, the rows' paths)."""

    SCHEMA = """
    CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
    CREATE TABLE IF NOT EXISTS vectors (path TEXT PRIMARY KEY, blob TEXT NOT NULL, scale REAL NOT NULL,
                                        vec BLOB NOT NULL);
    """

    def __init__(self, path: Path) -> None:
        import numpy

        self._np = numpy
        self._db = LocalSQLite(path)
        conn = self._db.conn()
        conn.executescript(self.SCHEMA)
        row = conn.execute("SELECT value FROM meta WHERE key = 'model'").fetchone()
        if row is None or row[0] != MODEL_FINGERPRINT:
            with self._db.tx() as db:
                db.execute("DELETE FROM vectors")
                db.execute("INSERT OR REPLACE INTO meta VALUES ('model', ?)", (MODEL_FINGERPRINT,))
        self._lock = threading.Lock()
        self._blobs: dict[str, str] = {}
        self._rows: dict[str, tuple[float, bytes]] = {}
        for path_, blob, scale, vec in conn.execute("SELECT path, blob, scale, vec FROM vectors"):
            self._blobs[path_] = blob
            self._rows[path_] = (scale, vec)
        self._snapshot: tuple[list[str], Any, Any] = self._build()

    def blobs(self) -> dict[str, str]:
        with self._lock:
            return dict(self._blobs)

    def __len__(self) -> int:
        return len(self._snapshot[0])

    def apply(self, put: dict[str, tuple[str, Any]], drop: Iterable[str], *, publish: bool = True) -> None:
        """Write ``put`` (path -> (blob, float vector)) and remove ``drop`` in one transaction, then, with
        ``publish``, swap the in-memory snapshot (a search holds the old one until it is done: no lock on the
        query path).  A long catch-up publishes every :data:`PUBLISH_SECONDS`: each snapshot copies every row."""
        np = self._np
        rows = []
        for path, (blob, vec) in put.items():
            scale = float(np.abs(vec).max()) / 127 or 1.0
            rows.append((path, blob, scale, np.round(vec / scale).astype(np.int8).tobytes()))
        dropped = list(drop)
        with self._db.tx() as db:
            db.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?, ?, ?)", rows)
            db.executemany("DELETE FROM vectors WHERE path = ?", [(p,) for p in dropped])
        with self._lock:
            for path, blob, scale, vec in rows:
                self._blobs[path] = blob
                self._rows[path] = (scale, vec)
            for path in dropped:
                self._blobs.pop(path, None)
                self._rows.pop(path, None)
            if publish:
                self._snapshot = self._build()

    def publish(self) -> None:
        with self._lock:
            self._snapshot = self._build()

    def _build(self) -> tuple[list[str], Any, Any]:
        np = self._np
        paths = list(self._rows)
        if not paths:
            return paths, np.zeros((0, 1), dtype=np.int8), np.zeros(0, dtype=np.float32)
        matrix = np.frombuffer(b"".join(self._rows[p][1] for p in paths), dtype=np.int8).reshape(len(paths), -1)
        scales = np.array([self._rows[p][0] for p in paths], dtype=np.float32)
        return paths, matrix, scales

    def ranked(self, query: Any) -> Iterable[tuple[str, float]]:
        """Every row by cosine with ``query`` (a unit vector), best first, lazily: the first
        :data:`FIRST_ROWS` by a partial sort, the rest (a filter that let few through) by a full one."""
        np = self._np
        paths, matrix, scales = self._snapshot
        if not paths:
            return
        scores = np.empty(len(paths), dtype=np.float32)
        for start in range(0, len(paths), BLOCK_ROWS):
            # einsum, not ``@``: no BLAS call.  OpenBLAS wakes a thread per core for a product this small, and on
            # a busy 2-core machine that took 30 ms at 10,000 rows instead of 1.3 ms (bench/RESULTS.md).
            scores[start : start + BLOCK_ROWS] = np.einsum("ij,j->i", matrix[start : start + BLOCK_ROWS], query)
        scores *= scales
        if len(paths) > FIRST_ROWS:
            first = np.argpartition(-scores, FIRST_ROWS)[:FIRST_ROWS]
            first = first[np.argsort(-scores[first], kind="stable")]
            for i in first:
                yield paths[i], float(scores[i])
            seen = set(first.tolist())
        else:
            seen = set()
        for i in np.argsort(-scores, kind="stable"):
            if int(i) not in seen:
                yield paths[i], float(scores[i])

    def close(self) -> None:
        self._db.close()


class MeaningIndex:
    """One environment's vectors, kept in step with its search index by a background thread."""

    def __init__(self, path: Path, embedder: Callable[[], Embedder] = Embedder) -> None:
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

    def embedder(self) -> Embedder:
        with self._embedder_lock:
            if self._embedder is None:
                self._embedder = self._make_embedder()
            return self._embedder

    # ------------------------------------------------------------ keeping up
    def wake(self, store: VaultStore, index: SearchIndex) -> None:
        """Main moved (a write, a fetch, the first build): catch up in the background. Never blocks."""
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
        """Embed the notes whose (path, blob) the index holds and the vectors do not; drop the rest.
        Returns how many were embedded.  Reads each note from git by its blob id, as the index does."""
        wanted = index.paths()
        have = self.vectors.blobs()
        drop = [p for p in have if p not in wanted]
        todo = [(p, b) for p, b in wanted.items() if have.get(p) != b]
        if drop:
            self.vectors.apply({}, drop)
        done = 0
        published = time.monotonic()
        for start in range(0, len(todo), EMBED_BATCH):
            if self._stop:
                break
            batch = []
            for path, blob in todo[start : start + EMBED_BATCH]:
                try:
                    batch.append((path, blob, note_text(path, store.read_unverified_blob_fast(blob))))
                except (KeyError, ValueError):  # gone from git since the index listed it: the next catch-up
                    continue
            if not batch:
                continue
            vectors = self.embedder().embed([text for _p, _b, text in batch])
            put = {path: (blob, vec) for (path, blob, _t), vec in zip(batch, vectors, strict=True)}
            now = time.monotonic()
            self.vectors.apply(put, (), publish=now - published >= PUBLISH_SECONDS)
            published = now if now - published >= PUBLISH_SECONDS else published
            done += len(batch)
        if todo:
            self.vectors.publish()
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
