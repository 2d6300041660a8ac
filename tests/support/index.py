"""Search index helpers: commit files to a store, and the index's rows per note."""

from __future__ import annotations

from notegate.vault.index import SearchIndex
from notegate.vault.store import Author, Change, VaultStore

AUTHOR = Author("Test", "owner")


def commit(store: VaultStore, files: dict[str, str | None], message: str = "test") -> str:
    changes = [Change(p, None if t is None else t.encode()) for p, t in files.items()]
    expect = {p: store.blob_id(p) for p in files}
    return store.commit(changes, expect, AUTHOR, message).commit


def instances(idx: SearchIndex) -> dict[str, set[tuple]]:
    """Every token of both tables, as (path, column, offset, term): FTS5's own ``fts5vocab`` view of the
    index, rowids replaced by paths (two builds number rows differently).  A delete made with other values
    than its row's insert leaves tokens behind (or removes others), and shows here."""
    conn = idx._conn()
    paths = dict(conn.execute("SELECT id, path FROM notes"))
    out: dict[str, set[tuple]] = {}
    for table in ("fts", "fts_private"):
        conn.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.v_{table} USING fts5vocab(main, {table}, instance)")
        rows = conn.execute(f"SELECT doc, col, offset, term FROM temp.v_{table}").fetchall()
        out[table] = {(paths.get(doc, f"<gone row {doc}>"), col, off, term) for doc, col, off, term in rows}
    return out
