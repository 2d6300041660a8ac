"""Commit provenance (migration 4): who made each commit the server made, and the hook's read-only look."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from notegate.state.db import StateCore


class ProvenanceTables(StateCore):
    """The commit_provenance table."""

    # --------------------------------------------------- commit provenance
    def record_provenance(self, rows: list[dict[str, object]]) -> None:
        """Who made each of a group's commits (PROVENANCE_SCHEMA), in one transaction, before the push.
        A row for a commit whose push then lost the race names an id no history holds: it is never read."""
        if not rows:
            return
        columns = tuple(rows[0])
        marks = ", ".join("?" * len(columns))
        with self.tx() as db:
            db.executemany(
                f"INSERT INTO commit_provenance ({', '.join(columns)}) VALUES ({marks})"  # noqa: S608 - fixed names
                " ON CONFLICT (environment, commit_id) DO NOTHING",
                [tuple(row[c] for c in columns) for row in rows],
            )

    def provenance(self, environment: str, commit_ids: list[str]) -> dict[str, sqlite3.Row]:
        """The recorded rows of these commits (commit id -> row); a commit without one was not made here."""
        out: dict[str, sqlite3.Row] = {}
        for start in range(0, len(commit_ids), 500):
            chunk = commit_ids[start : start + 500]
            marks = ", ".join("?" * len(chunk))
            for row in self.query(
                f"SELECT * FROM commit_provenance WHERE environment = ? AND commit_id IN ({marks})",  # noqa: S608
                (environment, *chunk),
            ):
                out[row["commit_id"]] = row
        return out


def recorded_commits(path: Path, url: str, environment: str, commit_ids: list[str]) -> set[str]:
    """Which of ``commit_ids`` the server recorded as its own (``commit_provenance``), read without opening
    the database for writing: the origin's pre-receive hook asks, as whatever user git runs it as, and must
    never create, migrate or lock the server's state. A database it cannot read answers "none"."""
    if not commit_ids:
        return set()
    marks = ", ".join("?" * len(commit_ids))
    sql = f"SELECT commit_id FROM commit_provenance WHERE environment = ? AND commit_id IN ({marks})"  # noqa: S608
    params = (environment, *commit_ids)
    if url:
        from notegate.postgres import LocalPostgres

        db = LocalPostgres(url)
        try:
            return {str(row[0]) for row in db.query(sql, params)}
        finally:
            db.close()
    if not path.is_file():
        return set()
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    try:
        return {str(row[0]) for row in conn.execute(sql, params)}
    except sqlite3.OperationalError:  # no such table yet (a database from before migration 4)
        return set()
    finally:
        conn.close()
