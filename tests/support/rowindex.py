"""A search index filled straight from rows, for the index's own property tests (no vault, no git)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from notegate.vault.index import SearchIndex


def index_of_rows(path: Path, rows: list[tuple]) -> Iterator[SearchIndex]:
    """Rows as ``SearchIndex._insert`` takes them (path, folder, blob, last commit, private, inbox, text);
    statistics refreshed as after a build; closed when the generator is."""
    idx = SearchIndex(path, lambda p: (False, False), "test")
    with idx._tx() as db:
        idx._insert(db, rows)
    idx._refresh_stats()
    yield idx
    idx.close()
