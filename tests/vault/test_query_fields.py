"""The fields a note is searched by (``vault/query.py``: ``FIELDS``, ``field_values``) and the FTS tables the
store makes from them agree: one value per field, in the tables' column order, and a new layout of the rows
goes with a new ``INDEX_FORMAT`` (an index of another layout is rebuilt from git, never misread)."""

from __future__ import annotations

import sqlite3

from hypothesis import given
from hypothesis import strategies as st

from notegate.vault import index as index_module
from notegate.vault import query as query_module
from notegate.vault import wordforms


@given(path=st.text(min_size=1, max_size=40), text=st.text(max_size=200))
def test_a_row_has_one_value_for_each_field(path: str, text: str) -> None:
    values = query_module.field_values(path, text)
    assert len(values) == len(query_module.FIELDS)
    assert all(isinstance(v, str) for v in values)


def test_the_tables_columns_are_the_fields_in_order() -> None:
    db = sqlite3.connect(":memory:")
    db.executescript(index_module.SCHEMA)
    for table in ("fts", "fts_private"):
        columns = [row[1] for row in db.execute(f"PRAGMA table_info({table})")]
        assert columns == [name for name, _weight in query_module.FIELDS]


def test_the_row_layout_is_pinned_to_the_index_format() -> None:
    """Changing the fields or the tokenizer changes what rows hold: change ``INDEX_FORMAT`` with them (and
    this line), so existing indexes start over from git instead of deleting rows by values they never held."""
    layout = ([name for name, _weight in query_module.FIELDS], query_module.TOKENIZER)
    assert (index_module.INDEX_FORMAT, layout) == (
        f"contentless-4 stemmer-{wordforms.STEMMER_VERSION}",
        (
            ["path", "title", "aliases", "headings", "tags", "body", "name_forms", "heading_forms", "marks"],
            "unicode61 remove_diacritics 2",
        ),
    )
