"""The search index's rows read back (a :class:`~notegate.vault.index.SearchIndex` mixin): which notes it
holds at which blob, the commit it reflects, and each note's last commit.

Why apart from ``vault/index.py``: the index module builds and searches the FTS5 tables (catch-up, merging,
sampling, ranking); the services also ask it plain questions of its ``notes`` and ``meta`` rows -- the history
asks for a note's last commit, the backup and search by meaning for every path at its blob, the metrics for a
count -- which need none of that.  Moved out of ``vault/index.py`` unchanged; only ``remember_last_commit``
writes, and only the one column a read fills in (a note's last commit, found by the history walk the read made).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from contextlib import AbstractContextManager


class IndexRows:
    _conn: Callable[[], sqlite3.Connection]
    _tx: Callable[[], AbstractContextManager[sqlite3.Connection]]

    def _meta(self, key: str) -> str | None:
        row = self._conn().execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    @property
    def indexed_commit(self) -> str | None:
        return self._meta("commit")

    def last_commit(self, path: str) -> str | None:
        row = self._conn().execute("SELECT last_commit FROM notes WHERE path = ?", (path,)).fetchone()
        return row[0] if row else None

    def count(self) -> int:
        return self._conn().execute("SELECT count(*) FROM notes").fetchone()[0]

    def paths(self) -> dict[str, str]:
        return dict(self._conn().execute("SELECT path, blob FROM notes").fetchall())

    def rows_at(self, paths: list[str] | None = None) -> tuple[str | None, dict[str, str]]:
        """The indexed commit and the (path -> blob) rows of ``paths`` (None: every row) in one read, so the
        rows are exactly that commit's: the vectors (:mod:`notegate.vault.meaning`) follow them from commit
        to commit, and rows read while a write moved the index on would belong to no commit."""
        conn = self._conn()
        conn.execute("BEGIN")
        try:
            commit = conn.execute("SELECT value FROM meta WHERE key = 'commit'").fetchone()
            if paths is None:
                return (commit and commit[0]), dict(conn.execute("SELECT path, blob FROM notes"))
            rows: dict[str, str] = {}
            for start in range(0, len(paths), 500):  # under SQLite's bound on a statement's parameters
                marks = ",".join("?" * len(paths[start : start + 500]))
                sql = f"SELECT path, blob FROM notes WHERE path IN ({marks})"  # noqa: S608
                rows.update(conn.execute(sql, paths[start : start + 500]))
            return (commit and commit[0]), rows
        finally:
            conn.execute("COMMIT")

    def remember_last_commit(self, path: str, commit: str) -> None:
        """Cache a note's last commit found by a history walk (full builds leave it to the first read)."""
        with self._tx() as db:
            db.execute("UPDATE notes SET last_commit = ? WHERE path = ? AND last_commit IS NULL", (commit, path))
