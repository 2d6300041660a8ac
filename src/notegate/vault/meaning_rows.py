"""Search by meaning's vectors in memory: an append-only int8 matrix that a write group changes by its own rows,
and the snapshots a query ranks without a lock.

Why not one matrix rebuilt per publication (before issue 33's incremental catch-up): every write group copied
every vector (2.6 MB at 10,000 notes, 25 MB at 100,000) to change one, and held the GIL meanwhile against the
request threads.  Here:

- **Rows are appended, never rewritten.**  A note's new vector goes to the next free row; its old row is marked
  dead in a boolean mask; a deleted note's row likewise.  The matrix has spare capacity and doubles when full
  (amortised: a row is copied a bounded number of times whatever the vault).  The spare rows are numpy zeros
  (calloc): a large block is fresh zero pages, resident only once a row is written there.
- **A snapshot** is (rows used, the matrix, the scales, the row paths, a copy of the mask).  Its rows below its
  count are never written again (new rows go above it; growth and compaction make new arrays, the old ones
  stay with the snapshots that hold them), so a query keeps ranking the snapshot it took while writes go on:
  no torn row, no lock on the query path.  A publication copies the mask (one byte a row), not the matrix.
- **Compaction** copies the live rows into fresh arrays once the dead ones exceed :data:`COMPACT_DEAD` of the
  rows used: a query's product never spends most of its time on dead rows, and the cost per write stays
  bounded (one compaction per ~a quarter of the rows replaced).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

FIRST_ROWS = 256  # candidates ranked by a partial sort; a full sort only if the caller's filter needs more
BLOCK_ROWS = 8192  # rows per block of the query's product: bounds its temporaries whatever the vault
MIN_CAPACITY = 1024  # rows allocated at the first growth
COMPACT_DEAD = 0.25  # compact when dead rows exceed this fraction of the rows used ...
COMPACT_MIN_DEAD = 256  # ... and are at least this many (a small vault is not compacted every few writes)


@dataclass(frozen=True)
class Snapshot:
    """What a query ranks: rows ``[0, used)`` of ``matrix`` (never written again), ``alive`` its own copy."""

    used: int
    live: int
    matrix: Any  # int8 (capacity, width)
    scales: Any  # float32 (capacity,)
    paths: list[str]  # row -> path; appended only, so its first ``used`` entries never change
    alive: Any  # bool (used,), this snapshot's own

    def ranked(self, query: Any) -> Iterator[tuple[str, float]]:
        """Every live row by cosine with ``query`` (a unit vector), best first, lazily: the first
        :data:`FIRST_ROWS` by a partial sort, the rest (a filter that let few through) by a full one."""
        used, live = self.used, self.live
        if not live:
            return
        scores = np.empty(used, dtype=np.float32)
        for start in range(0, used, BLOCK_ROWS):
            end = min(start + BLOCK_ROWS, used)  # never past ``used``: the rows above are being written
            # einsum, not ``@``: no BLAS call.  OpenBLAS wakes a thread per core for a product this small, and on
            # a busy 2-core machine that took 30 ms at 10,000 rows instead of 1.3 ms (bench/RESULTS.md).
            scores[start:end] = np.einsum("ij,j->i", self.matrix[start:end], query)
        scores *= self.scales[:used]
        if live < used:
            scores[~self.alive] = -np.inf  # a dead row sorts after every live one
        paths = self.paths
        seen: set[int] = set()
        if live > FIRST_ROWS:
            first = np.argpartition(-scores, FIRST_ROWS)[:FIRST_ROWS]
            first = first[np.argsort(-scores[first], kind="stable")]
            for i in first:
                yield paths[i], float(scores[i])
            seen = set(first.tolist())
        for i in np.argsort(-scores, kind="stable")[:live]:
            if int(i) not in seen:
                yield paths[i], float(scores[i])


EMPTY = Snapshot(0, 0, np.zeros((0, 1), dtype=np.int8), np.zeros(0, dtype=np.float32), [], np.zeros(0, dtype=bool))


class Rows:
    """The writer's side: path -> row, the arrays with spare capacity, the dead rows.  One writer at a time
    (the caller's lock); readers only ever see :meth:`snapshot`'s results."""

    def __init__(self) -> None:
        self._reset(0)

    def _reset(self, width: int) -> None:
        self.blobs: dict[str, str] = {}  # path -> the blob its live row was computed from
        self._row: dict[str, int] = {}
        self._paths: list[str] = []
        self._matrix = np.zeros((0, width), dtype=np.int8)
        self._scales = np.zeros(0, dtype=np.float32)
        self._alive = np.zeros(0, dtype=bool)
        self._used = 0
        self._dead = 0

    def __len__(self) -> int:
        return self._used - self._dead

    def put(self, rows: Sequence[tuple[str, str, float, bytes]]) -> None:
        """Append ``rows`` (path, blob, scale, int8 bytes); a path's earlier row dies."""
        if not rows:
            return
        width = len(rows[0][3])
        if width != self._matrix.shape[1]:
            if len(self):
                raise ValueError(f"a vector of {width} bytes among rows of {self._matrix.shape[1]}")
            self._reset(width)  # no live row: start over at this width
        start, end = self._used, self._used + len(rows)
        if end > len(self._matrix):
            self._grow(max(end + end // 4, 2 * len(self._matrix), MIN_CAPACITY))  # spare rows from the start
        self._matrix[start:end] = np.frombuffer(b"".join(r[3] for r in rows), dtype=np.int8).reshape(-1, width)
        self._scales[start:end] = [r[2] for r in rows]
        self._alive[start:end] = True
        for row, (path, blob, _scale, _vec) in enumerate(rows, start):
            old = self._row.get(path)
            if old is not None:
                self._alive[old] = False
                self._dead += 1
            self._row[path] = row
            self.blobs[path] = blob
            self._paths.append(path)
        self._used = end

    def drop(self, paths: Iterable[str]) -> None:
        for path in paths:
            row = self._row.pop(path, None)
            if row is not None:
                self._alive[row] = False
                self._dead += 1
                del self.blobs[path]

    def snapshot(self) -> Snapshot:
        """The rows as they are now, for queries (compacting first when dead rows pile up)."""
        if self._dead > COMPACT_MIN_DEAD and self._dead > COMPACT_DEAD * self._used:
            self._compact()
        if not self._used:
            return EMPTY
        return Snapshot(
            self._used, len(self), self._matrix, self._scales, self._paths, self._alive[: self._used].copy()
        )

    def _grow(self, capacity: int) -> None:
        """New arrays (the old ones stay with the snapshots holding them), the rows used copied over."""
        used = self._used
        matrix = np.zeros((capacity, self._matrix.shape[1]), dtype=np.int8)
        matrix[:used] = self._matrix[:used]
        scales = np.zeros(capacity, dtype=np.float32)
        scales[:used] = self._scales[:used]
        alive = np.zeros(capacity, dtype=bool)
        alive[:used] = self._alive[:used]
        self._matrix, self._scales, self._alive = matrix, scales, alive

    def _compact(self) -> None:
        keep = np.flatnonzero(self._alive[: self._used])
        capacity = max(len(self._matrix), MIN_CAPACITY)
        matrix = np.zeros((capacity, self._matrix.shape[1]), dtype=np.int8)
        matrix[: len(keep)] = self._matrix[keep]
        scales = np.zeros(capacity, dtype=np.float32)
        scales[: len(keep)] = self._scales[keep]
        alive = np.zeros(capacity, dtype=bool)
        alive[: len(keep)] = True
        self._paths = [self._paths[i] for i in keep.tolist()]  # a new list: the snapshots keep the old one
        self._row = {path: row for row, path in enumerate(self._paths)}
        self._matrix, self._scales, self._alive = matrix, scales, alive
        self._used, self._dead = len(keep), 0
