"""Exact naming: a query that is a note's name (its file name, first heading or an alias, in any case) finds
that note first, by one index lookup, whatever bm25 says of longer notes that mention the words (issue 33).

Why a table of its own beside the FTS index: "is this text exactly one of the note's names" is an equality
on a normalised key, which an ordinary SQLite index answers in microseconds; bm25 over the title field ranks
a short note named *Internal links* well, but not reliably above a note holding the words many times.

The table lives in the search index's file and is kept by its store (``vault/index.py``): rows go in and out
with the note's FTS row, in the same transaction, and are emptied with it.
"""

from __future__ import annotations

import sqlite3
import unicodedata

from notegate.vault.notefields import NoteFields

SCHEMA = """
CREATE TABLE IF NOT EXISTS names (name TEXT NOT NULL, id INTEGER NOT NULL, part TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS names_name ON names(name);
CREATE INDEX IF NOT EXISTS names_id ON names(id);
"""
#: The score of a hit found by its name: above any bm25 score (bm25 scores of FTS5 are far below this).
NAMED_SCORE = -1000.0
MAX_NAME_CHARS = 300  # a longer query names no note (file names are shorter): no lookup


def name_key(text: str) -> str:
    """A name or a query as compared: NFC, case-folded, runs of white space made one space."""
    return " ".join(unicodedata.normalize("NFC", text).casefold().split())


def query_key(query: str) -> str:
    """The key a query is looked up by: its text without the quotes and the trailing ``*`` a search gives
    meaning to; '' for a query that cannot be a name (too long, a control character, a lone surrogate)."""
    key = name_key(query.replace('"', " ").rstrip("*"))
    if len(key) > MAX_NAME_CHARS or not key.isprintable() or any("\ud800" <= c <= "\udfff" for c in key):
        return ""
    return key


def names_of(fields: NoteFields) -> list[tuple[str, str]]:
    """(key, part) for each name of a note: its file name and first heading ("title"), its aliases ("alias");
    each key once, the title's first."""
    found: dict[str, str] = {}
    for value, part in ((fields.name, "title"), (fields.heading, "title"), *((a, "alias") for a in fields.aliases)):
        key = name_key(value)
        if key and key not in found:
            found[key] = part
    return list(found.items())


def insert(db: sqlite3.Connection, rows: list[tuple[int, NoteFields]]) -> None:
    db.executemany(
        "INSERT INTO names (name, id, part) VALUES (?, ?, ?)",
        [(key, rowid, part) for rowid, fields in rows for key, part in names_of(fields)],
    )


def delete(db: sqlite3.Connection, rowid: int) -> None:
    db.execute("DELETE FROM names WHERE id = ?", (rowid,))


def lookup(
    db: sqlite3.Connection, key: str, where: list[str], params: list[object], limit: int
) -> list[tuple[int, str, float, int, str, str]]:
    """(id, path, score, inbox, table, part) of the notes named ``key`` that pass ``where`` (the search's
    visibility conditions over ``notes n``), oldest first; at most ``limit``."""
    if not key:
        return []
    # Only the fixed conditions the store builds are interpolated; every value is a bound parameter.
    sql = (
        f"SELECT n.id, n.path, {NAMED_SCORE}, n.inbox, "  # noqa: S608
        "CASE n.private WHEN 1 THEN 'fts_private' ELSE 'fts' END, min(m.part) "
        "FROM names m JOIN notes n ON n.id = m.id WHERE " + " AND ".join(["m.name = ?", *where]) + " "
        "GROUP BY n.id ORDER BY n.id LIMIT ?"
    )
    return db.execute(sql, [key, *params, limit]).fetchall()
