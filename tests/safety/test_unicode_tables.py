"""unicode_tables is the only copy of the Unicode data, for one named version, and every reader agrees on it."""

from __future__ import annotations

import ast
import unicodedata
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from notegate.errors import PathRejected
from notegate.safety import unicode_tables
from notegate.safety.floor import check_item
from notegate.safety.names import fold_name
from notegate.safety.textview import normalise
from notegate.vault.paths import NotePath

SRC = Path(unicode_tables.__file__).parents[1]
READERS = [*sorted((SRC / "safety").glob("*.py")), SRC / "vault" / "paths.py"]
TABLE_WORDS = ("IGNORABLE", "CONFUSABLE", "LOOKALIKES", "CONTROL_NAMES", "_COMBINING")
DEFAULT_IGNORABLE = [cp for lo, hi in unicode_tables.DEFAULT_IGNORABLE_RANGES for cp in range(lo, hi + 1)]


def test_the_tables_name_the_interpreters_unicode_version() -> None:
    assert unicodedata.unidata_version == unicode_tables.UNICODE_VERSION


@pytest.mark.parametrize("path", [p for p in READERS if p.name != "unicode_tables.py"], ids=lambda p: p.name)
def test_no_other_module_keeps_its_own_table(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    assigned = [
        target.id
        for node in tree.body
        if isinstance(node, (ast.Assign, ast.AnnAssign))
        for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
        if isinstance(target, ast.Name)
    ]
    copies = [name for name in assigned if any(word in name.upper() for word in TABLE_WORDS)]
    # Compiled patterns built from an imported table are not copies of it.
    assert [name for name in copies if name not in {"_DOT_LOOKALIKE"}] == []


def test_slash_lookalike_symbols_agree_between_name_folding_and_paths() -> None:
    slash_like = dict(unicode_tables.CONFUSABLE_PROTOTYPES)["/"]
    symbols = {ch for ch in slash_like if not unicodedata.category(ch).startswith("L")}
    assert symbols <= unicode_tables.SEPARATOR_LOOKALIKES


def _floor_rule(cp: int) -> str:
    """The rule the table says holds ``cp``: the first row with a rule that contains it."""
    for row in unicode_tables.CHARACTER_CLASSES:
        if row.rule and any(lo <= cp <= hi for lo, hi in unicode_tables.parse_ranges(row.ranges)):
            return row.rule
    raise AssertionError(hex(cp))


@settings(max_examples=300, deadline=None)
@given(cp=st.sampled_from(DEFAULT_IGNORABLE))
def test_every_reader_treats_a_default_ignorable_the_same(cp: int) -> None:
    """Paths refuse it, the gates' view drops it, the name fold drops it, the floor holds it."""
    ch = chr(cp)
    with pytest.raises(PathRejected) as info:
        NotePath.parse(f"notes/a{ch}b.md")
    assert info.value.rule == "path-invisible-char"
    assert normalise(f"gh{ch}p_x").text == "ghp_x"
    assert fold_name(f"CLAU{ch}DE.md") == fold_name("CLAUDE.md")
    verdict = check_item(f"a{ch}b")
    assert [r.rule for r in verdict.reasons] == [_floor_rule(cp)]
