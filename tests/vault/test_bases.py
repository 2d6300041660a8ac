"""A ``.base`` file read and planned (vault/bases.py): the help's own example, the bounded YAML reader (size,
depth, aliases), filters joined as Obsidian joins them, sorts with empty values last, limits, groups, what
cannot be evaluated said in the view, the page's work budget; hypothesis: any text is a base or BaseError,
and planning any base over any files never raises."""

from __future__ import annotations

from datetime import datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from notegate.vault.bases import (
    MAX_BASE_BYTES,
    MAX_YAML_DEPTH,
    BaseError,
    Work,
    load_yaml,
    parse_base,
    pick_view,
    plan_view,
)
from notegate.vault.basexpr import DateValue, ExprError, FileFacts

NOW = datetime(2026, 1, 5)

#: The example of Obsidian's help page "Bases syntax", as written there.
HELP_EXAMPLE = """filters:
  or:
    - file.hasTag("tag")
    - and:
        - file.hasTag("book")
        - file.hasLink("Textbook")
    - not:
        - file.hasTag("book")
        - file.inFolder("Required Reading")
formulas:
  formatted_price: 'if(price, price.toFixed(2) + " dollars")'
  ppu: "(price / age).toFixed(2)"
properties:
  status:
    displayName: Status
  formula.formatted_price:
    displayName: "Price"
  file.ext:
    displayName: Extension
summaries:
  customAverage: 'values.mean().round(3)'
views:
  - type: table
    name: "My table"
    limit: 10
    groupBy:
      property: note.age
      direction: DESC
    filters:
      and:
        - 'status != "done"'
        - or:
            - "formula.ppu > 5"
            - "price > 2.1"
    order:
      - file.name
      - file.ext
      - note.age
      - formula.ppu
      - formula.formatted_price
    summaries:
      formula.ppu: Average
"""


def facts(path: str, **properties: object) -> FileFacts:
    tags = tuple(properties.pop("tags", ()))  # type: ignore[arg-type]
    links = tuple(properties.pop("links", ()))  # type: ignore[arg-type]
    return FileFacts(path, 10, None, properties, tags, links)


FILES = (
    facts("Books/A.md", price=30, age=2, status="open", tags=["book"], links=["Textbook.md"]),
    facts("Books/B.md", price=3, age=1, status="done", tags=["book"], links=["Textbook.md"]),
    facts("Books/C.md", price=12, age=4, status="open", tags=["tag"]),
    facts("Books/D.md", price=None, age=2, status="open", tags=["tag"]),
    facts("Required Reading/E.md", price=50, age=2, status="open", tags=["book"]),
    facts("Textbook.md"),
)


def plan(text: str, view: str | None = None, files=FILES, rows: int = 100, work: Work | None = None):
    spec = parse_base(text)
    chosen = pick_view(spec, view)
    assert chosen is not None
    return plan_view(spec, chosen, files, this=None, resolve=lambda t: t if t.endswith(".md") else t + ".md",
                     now=NOW, max_rows=rows, work=work)  # fmt: skip


def paths(result) -> list[str]:
    return [row.facts.path for row in result.rows]


def test_the_help_example_is_planned_as_obsidian_describes_it() -> None:
    result = plan(HELP_EXAMPLE)
    # or: tagged "tag" (C, D); book AND links Textbook (A, B); NOT (book OR in Required Reading) (C, D, Textbook)
    # then the view: status != done AND (ppu > 5 OR price > 2.1); grouped by age, descending
    # ("3.00" > 5 is false and "15.00" > 5 true: a numeric string compares with a number as a number)
    assert paths(result) == ["Books/C.md", "Books/A.md"]
    assert [name for _p, name in result.columns] == ["file name", "Extension", "age", "ppu", "Price"]
    assert result.rows[0].cells == ("C.md", "md", 4, "3.00", "12.00 dollars")
    assert result.summaries == {"formula.ppu": ("Average", None)}  # ppu is text ("3.00"): no number to average


@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        ('file.hasTag("book")', ["Books/A.md", "Books/B.md", "Required Reading/E.md"]),
        ('and:\n    - file.hasTag("book")\n    - \'status == "open"\'', ["Books/A.md", "Required Reading/E.md"]),
        ("or:\n    - 'price > 40'\n    - 'age == 1'", ["Books/B.md", "Required Reading/E.md"]),
        ('not:\n    - file.inFolder("Books")\n    - file.hasTag("tag")', ["Required Reading/E.md", "Textbook.md"]),
        ("'price.toFixed(0) == \"3\"'", ["Books/B.md"]),  # D's missing price fails the call: D is out
    ],
)
def test_filters_join_as_obsidian_joins_them(filters: str, expected: list[str]) -> None:
    assert paths(plan(f"filters:\n  {filters}\n")) == expected


def test_a_views_filters_and_the_bases_are_joined_with_and() -> None:
    text = 'filters: file.hasTag("book")\nviews:\n  - type: table\n    name: Open\n    filters: \'status == "open"\'\n'
    assert paths(plan(text, "open")) == ["Books/A.md", "Required Reading/E.md"]


def test_sorts_put_empty_values_last_in_either_direction_and_limits_apply() -> None:
    up = "views:\n  - type: table\n    sort:\n      - property: price\n        direction: ASC\n"
    assert paths(plan(up))[:5] == ["Books/B.md", "Books/C.md", "Books/A.md", "Required Reading/E.md", "Books/D.md"]
    down = up.replace("ASC", "DESC") + "    limit: 2\n"
    result = plan(down)
    assert paths(result) == ["Required Reading/E.md", "Books/A.md"] and result.matched == len(FILES)
    assert paths(plan(up, rows=1)) == ["Books/B.md"]


def test_groups_come_first_then_the_sort() -> None:
    text = (
        "views:\n  - type: table\n    groupBy:\n      property: age\n      direction: ASC\n"
        "    sort:\n      - property: file.name\n        direction: DESC\n"
    )
    result = plan(text)
    assert [row.group for row in result.rows] == [1, 2, 2, 2, 4, None]
    assert paths(result)[1:4] == ["Required Reading/E.md", "Books/D.md", "Books/A.md"]


def test_what_cannot_be_evaluated_is_said_in_the_view() -> None:
    bad_filter = plan("filters: 'file.name.matches(/a/)'\n")
    assert bad_filter.rows == [] and "unsupported here" in bad_filter.notes[0]
    broken = plan("filters: 'price >'\n")
    assert broken.rows == [] and "unreadable here" in broken.notes[0]
    bad_formula = plan("formulas:\n  x: 'html(\"<b>\")'\nviews:\n  - type: map\n    order: [file.name, formula.x]\n")
    assert all(row.cells[1] is None for row in bad_formula.rows)
    assert any("Formula x is not shown" in n for n in bad_formula.notes)
    assert "The map layout is shown as a table here." in bad_formula.notes
    backlinks = plan("filters: 'file.backlinks.length > 0'\nformulas:\n  b: file.backlinks\n")
    assert backlinks.rows == [] and "unsupported here (file.backlinks is not known" in backlinks.notes[0]
    cell = plan("views:\n  - order: [file.name, file.backlinks]\n")
    assert cell.rows and all(row.cells[1] is None for row in cell.rows)
    assert "Some values are not shown: file.backlinks is not known on this page." in cell.notes


def test_the_pages_work_budget_stops_a_costly_base() -> None:
    costly = (
        "formulas:\n  x: '[1,2,3,4,5,6,7,8].map([1,2,3,4,5,6,7,8].map(value * 2))'\nviews:\n  - order: [formula.x]\n"
    )
    many = tuple(facts(f"n{i:04d}.md") for i in range(2000))
    work = Work(50_000)
    result = plan(costly, files=many, rows=2000, work=work)
    assert result.stopped and work.left <= 0 and len(result.rows) < 2000


def test_the_yaml_reader_is_bounded() -> None:
    with pytest.raises(BaseError, match="aliases"):
        load_yaml('a: &a ["x","x"]\nb: &b [*a,*a]\nc: [*b,*b]\n')
    with pytest.raises(BaseError, match="nested"):
        load_yaml("a: " + "[" * (MAX_YAML_DEPTH + 1) + "]" * (MAX_YAML_DEPTH + 1))
    with pytest.raises(BaseError, match="larger"):
        load_yaml("a: " + "x" * MAX_BASE_BYTES)
    with pytest.raises(BaseError, match="not valid YAML"):
        load_yaml("a: [")
    with pytest.raises(BaseError, match="mapping"):
        parse_base("- a\n- b\n")


def test_python_tags_are_refused_by_the_safe_loader() -> None:
    with pytest.raises(BaseError):
        load_yaml("x: !!python/object/apply:os.system ['true']\n")


def test_an_empty_base_shows_every_file_in_one_table() -> None:
    result = plan("")
    assert result.view.kind == "table" and result.matched == len(FILES)


def test_dates_from_front_matter_compare_with_date_functions() -> None:
    dated = (facts("a.md", due=DateValue(datetime(2026, 1, 1), False)), facts("b.md", due="2026-02-01"))
    assert paths(plan("filters: 'due < date(\"2026-01-15\")'\n", files=dated)) == ["a.md"]


YAMLISH = st.sampled_from(
    ["filters:", "views:", "formulas:", "  - ", "  ", "and:", "or:", "not:", "type: table", "name: x", "order:",
     "sort:", "property: price", "direction: DESC", "limit: 2", "file.hasTag(\"book\")", "'price > 3'",
     "groupBy:", "image: cover", "x: 'price *'", "[", "]", "{", "}", "&a", "*a", "\n", "\n    ", ": ", "-"]
)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.lists(YAMLISH, max_size=25).map("".join))
def test_any_text_is_a_base_or_base_error_and_plans_without_raising(text: str) -> None:
    try:
        spec = parse_base(text)
    except BaseError:
        return
    for view in spec.views:
        try:
            plan_view(spec, view, FILES, this=None, resolve=lambda _t: None, now=NOW, max_rows=10)
        except ExprError as exc:  # pragma: no cover - the planner keeps every ExprError inside the view
            raise AssertionError(exc) from exc


def test_this_is_the_embedding_file_as_obsidians_backlinks_recipe_uses_it() -> None:
    """``file.hasLink(this.file)`` replicates the backlinks pane (Bases syntax, "Access properties with this")."""
    spec = parse_base("filters: file.hasLink(this.file)\n")
    textbook = next(f for f in FILES if f.path == "Textbook.md")
    result = plan_view(spec, spec.views[0], FILES, this=textbook, resolve=lambda _t: None, now=NOW, max_rows=10)
    assert paths(result) == ["Books/A.md", "Books/B.md"]
    folder = parse_base("filters: 'file.folder == this.file.folder'\n")
    here = plan_view(folder, folder.views[0], FILES, this=FILES[0], resolve=lambda _t: None, now=NOW, max_rows=10)
    assert paths(here) == ["Books/A.md", "Books/B.md", "Books/C.md", "Books/D.md"]


def test_summaries_fold_each_column_over_every_matched_file() -> None:
    text = """summaries:
  spread: 'values.filter(value != null).reduce(if(acc == null || value > acc, value, acc), null)'
views:
  - type: table
    order: [file.name, price, age, status]
    limit: 1
    summaries:
      price: Average
      age: Median
      status: Unique
      file.name: spread
"""
    result = plan(text)
    assert len(result.rows) == 1  # the limit shows one row; summaries fold all six files, as Obsidian does
    assert result.summaries == {
        "price": ("Average", 23.75),
        "age": ("Median", 2.0),
        "status": ("Unique", 2),
        "file.name": ("spread", "Textbook.md"),
    }
    empty = plan("views:\n  - order: [price]\n    summaries:\n      price: Filled\n")
    assert empty.summaries == {"price": ("Filled", 4)}
