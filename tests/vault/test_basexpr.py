"""Obsidian Bases' expression language (vault/basexpr.py, vault/basefuncs.py): every operator and function
against the help's own examples, hostile shapes refused by their bound, hypothesis properties (only
ExprError escapes; every evaluation ends within its budget) and the linear-time stick on large inputs."""

from __future__ import annotations

import contextlib
import time
from datetime import datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from notegate.vault.basefuncs import check
from notegate.vault.basexpr import (
    MAX_DEPTH,
    MAX_EXPR_CHARS,
    Context,
    DateValue,
    ExprError,
    FileFacts,
    LinkValue,
    Unsupported,
    display,
    evaluate,
    from_yaml,
    parse,
)
from support.timing import assert_catches_quadratic, assert_linear, fill

NOW = datetime(2026, 1, 5, 10, 30)
DUNE = FileFacts(
    path="Books/Sci-fi/Dune.md",
    size=186,
    mtime=datetime(2026, 1, 1, 8, 0),
    properties={
        "price": 12.5,
        "age": 5,
        "status": "reading",
        "author": LinkValue("Frank Herbert"),
        "finished": DateValue(datetime(2025, 3, 2), has_time=False),
        "genres": ["scifi", "classic"],
        "meta": {"pages": 412},
        "empty": "",
    },
    tags=("book", "scifi/desert"),
    links=("People/Frank Herbert.md",),
)
PATHS = {"Frank Herbert": "People/Frank Herbert.md", "People/Frank Herbert.md": "People/Frank Herbert.md"}
FORMULAS = {"ppu": parse("(price / age).toFixed(2)"), "loop": parse("formula.loop + 1")}


def run(text: str, facts: FileFacts = DUNE) -> object:
    node = parse(text)
    check(node)
    ctx = Context(facts, this=facts, formulas=FORMULAS, resolve=PATHS.get, at=NOW)
    return evaluate(node, ctx)


# (expression, expected value): the help pages' examples first, then each operator and function.
CASES = [
    ('file.hasTag("book")', True),
    ('file.hasTag("scifi")', True),  # a nested tag counts for its parent
    ('file.hasTag("sci")', False),
    ('file.hasTag("x", "book")', True),
    ('file.inFolder("Books")', True),
    ('file.inFolder("Book")', False),
    ('file.ext == "md"', True),
    ("file.name", "Dune.md"),
    ("file.basename", "Dune"),
    ("file.folder", "Books/Sci-fi"),
    ("file.path", "Books/Sci-fi/Dune.md"),
    ("file.size", 186),
    ('file.hasLink("Frank Herbert")', True),
    ('file.hasProperty("price")', True),
    ('file.hasProperty("nope")', False),
    ("file.ctime", None),
    ('file.mtime > now() - "1 week"', True),
    ('file.mtime > now() - "1d"', False),
    ('status != "done"', True),
    ('status == "reading" && price > 10', True),
    ("price > 2.1 || nope", True),
    ("!(price > 20)", True),
    ("-price", -12.5),
    ("(price / age).toFixed(2)", "2.50"),
    ('if(price, price.toFixed(2) + " dollars")', "12.50 dollars"),
    ('if(nope, "yes", "no")', "no"),
    ("if(nope, 1)", None),
    ("formula.ppu", "2.50"),
    ('note["price"] * 2', 25.0),
    ("note.age % 3", 2.0),
    ("1 + 2 * 3 - 4 / 2", 5.0),
    ("(1 + 2) * 3", 9),
    ('"a" + 1', "a1"),
    ("1 < 2 == true", True),
    ('date("2024-12-01") + "1M" + "4h" + "3m"', DateValue(datetime(2025, 1, 1, 4, 3))),
    ('date("2025-01-31") + "1 month"', DateValue(datetime(2025, 2, 28), has_time=False)),
    ('(date("2025-01-02") - date("2025-01-01"))', 86_400_000.0),
    ('date("2025-05-27").format("YYYY-MM-DD")', "2025-05-27"),
    ('date("2025-05-27 13:04:05").format("[on] D MMM YY, hh:mm:ss A")', "on 27 May 25, 01:04:05 PM"),
    ('date("2025-05-27 13:04:05").time()', "13:04:05"),
    ('date("2025-05-27 13:04:05").date() == date("2025-05-27")', True),
    ("finished.year", 2025),
    ("finished.month", 3),
    ("finished.relative()", "10 months ago"),
    ("finished < today()", True),
    ("now().hour", 10),
    ('duration("5h") * 2 == duration("10h")', True),
    ('"hello".contains("ell")', True),
    ('"hello".containsAll("h", "e")', True),
    ('"hello".containsAny("x", "y", "e")', True),
    ('"hello".endsWith("lo")', True),
    ('"hello".startsWith("he")', True),
    ('"".isEmpty()', True),
    ('"Hello".lower()', "hello"),
    ('"a:b:c:d".replace(":", "-")', "a-b-c-d"),
    ('"123".repeat(2)', "123123"),
    ('"hello".reverse()', "olleh"),
    ('"hello".slice(1, 4)', "ell"),
    ('"a,b,c,d".split(",", 3)', ["a", "b", "c"]),
    ('"hello world".title()', "Hello World"),
    ('"  hi  ".trim()', "hi"),
    ('"hello".length', 5),
    ("(-5).abs()", 5),
    ("(2.1).ceil()", 3),
    ("(2.9).floor()", 2),
    ("(2.5).round()", 3),
    ("(2.3333).round(2)", 2.33),
    ("(3.14159).toFixed(2)", "3.14"),
    ("5.isEmpty()", False),
    ("[1,2,3].contains(2)", True),
    ("[1,2,3].containsAll(2,3)", True),
    ("[1,2,3].containsAny(3,4)", True),
    ("[1,2,3,4].filter(value > 2)", [3, 4]),
    ("[1,[2,3]].flat()", [1, 2, 3]),
    ("[1,2,3].isEmpty()", False),
    ('[1,2,3].join(",")', "1,2,3"),
    ("[1,2,3,4].map(value + 1)", [2, 3, 4, 5]),
    ("[1,2,3].map(index)", [0, 1, 2]),
    ("[1,2,3].reduce(acc + value, 0)", 6),
    ("[1,5,3].reduce(if(acc == null || value > acc, value, acc), null)", 5),
    ("[1,2,3].reverse()", [3, 2, 1]),
    ("[1,2,3,4].slice(1,3)", [2, 3]),
    ("[3, 1, 2].sort()", [1, 2, 3]),
    ('["c", "a", "b"].sort()', ["a", "b", "c"]),
    ("[1,2,2,3].unique()", [1, 2, 3]),
    ("[1,2,3].length", 3),
    ("[1,2,3][0]", 1),
    ("[1,2,3][5]", None),
    ('genres.contains("scifi")', True),
    ("genres[1]", "classic"),
    ("meta.pages", 412),
    ('meta["pages"]', 412),
    ("{}.isEmpty()", True),
    ('{"a": 1, "b": 2}.keys()', ["a", "b"]),
    ('{"a": 1, "b": 2}.values()', [1, 2]),
    ("1.isTruthy()", True),
    ("empty.isTruthy()", False),
    ('"example".isType("string") && true.isType("boolean")', True),
    ("123.toString()", "123"),
    ('list("value")', ["value"]),
    ("list(genres)", ["scifi", "classic"]),
    ('number("3.4")', 3.4),
    ("number(true)", 1),
    ("max(1, 5, 3)", 5),
    ("min(1, 5, 3)", 1),
    ('escapeHTML("<b>")', "&lt;b&gt;"),
    ('author == link("Frank Herbert")', True),
    ('author == link("Someone else")', False),
    ("author.asFile().path", "People/Frank Herbert.md"),
    ('file.asLink("here").display', None),  # a link has no such field: empty, not an error
    ("this.file.name", "Dune.md"),
    ('contains(file.path, "Sci-fi")', True),  # the early beta's global form, still in real vaults
    ("nope", None),
    ("nope.isEmpty()", True),
    ("null == nope", True),
]


@pytest.mark.parametrize(("text", "expected"), CASES, ids=[c[0] for c in CASES])
def test_each_operator_and_function(text: str, expected: object) -> None:
    assert run(text) == expected


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("1 +", ExprError),
        ("(1", ExprError),
        ("'unclosed", ExprError),
        ("a ? b : c", ExprError),
        ("price.toFixed(2).lower(", ExprError),
        ("file.name.matches(/dune/)", Unsupported),  # a regular expression could backtrack for minutes
        ("/dune/.matches(file.name)", Unsupported),
        ('html("<script>")', Unsupported),
        ('image("x.png")', Unsupported),
        ('icon("plus")', Unsupported),
        ("random()", Unsupported),
        ("someplugin(1)", Unsupported),
        ("file.backlinks", Unsupported),
        ("formula.loop", ExprError),  # a formula that names itself
        ("price / 0", ExprError),
        ("price.lower()", ExprError),  # a string method on a number
        ('"x".repeat(100000)', ExprError),  # bounded output
        ('date("soon")', ExprError),
    ],
)
def test_what_is_refused_and_by_which_error(text: str, error: type[ExprError]) -> None:
    with pytest.raises(error):
        run(text)


def test_nesting_and_length_are_bounded() -> None:
    with pytest.raises(ExprError, match="nested"):
        parse("(" * (MAX_DEPTH + 1) + "1" + ")" * (MAX_DEPTH + 1))
    with pytest.raises(ExprError, match="nested"):
        parse("!" * (MAX_DEPTH + 1) + "true")
    assert parse("(" * (MAX_DEPTH - 1) + "1" + ")" * (MAX_DEPTH - 1)) == ("lit", 1)
    with pytest.raises(ExprError, match="longer"):
        parse("1" * (MAX_EXPR_CHARS + 1))


def test_a_long_flat_chain_is_one_node_not_a_deep_tree() -> None:
    """``a + a + …`` (and ``a.b.c…``) hold their operands in a list: evaluating 5,000 of them needs no
    recursion, so no RecursionError whatever the length."""
    node = parse(" + ".join(["1"] * 5000))
    assert node[0] == "binary" and len(node[3]) == 4999
    assert evaluate(node, Context(DUNE, budget=10_000)) == 5000


def test_numbers_stay_javascript_numbers() -> None:
    """No integer grows past a double: a giant one is slow to multiply and Python refuses to print it."""
    big = FileFacts("n.md", properties={"n": from_yaml(10**4000), "m": from_yaml(2**60)})
    assert big.properties["n"] is None and big.properties["m"] == float(2**60)
    assert run("9007199254740993 * 9007199254740993 * 1000") == 9007199254740993.0**2 * 1000
    with pytest.raises(ExprError, match="out of range"):
        run("1e300 * 1e300")
    assert display(run("m * m * m", big)) == "1.532495540865889e+54"


def test_exponential_work_stops_at_the_budget() -> None:
    nested = "[1,2,3,4]" + ".map([1,2,3,4]" * 12 + ")" * 12
    started = time.thread_time()
    with pytest.raises(ExprError, match="too much work"):
        run(nested)
    assert time.thread_time() - started < 2.0


EXPR_ALPHABET = st.sampled_from(
    [
        "price", "age", "status", "genres", "file", "note", "formula", "this", "value", "1", "2.5", '"x"', "'y'",
        "true", "null", ".", "(", ")", "[", "]", "{", "}", ",", ":", "+", "-", "*", "/", "%", "!", "==", "<",
        "&&", "||", "name", "hasTag", "map", "filter", "reduce", "toFixed", "if", "date", "now", "repeat",
        "split", "join", "flat", "ppu", " ", "\\", "/x/", "#", "$",
    ]
)  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(st.lists(EXPR_ALPHABET, max_size=30).map("".join))
def test_only_expr_error_escapes_and_every_evaluation_ends(text: str) -> None:
    try:
        node = parse(text)
        check(node)
    except ExprError:
        return
    started = time.thread_time()
    try:
        value = evaluate(node, Context(DUNE, this=DUNE, formulas=FORMULAS, resolve=PATHS.get, at=NOW))
        display(value)  # every value shows as text
    except ExprError:
        pass
    assert time.thread_time() - started < 2.0


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=60))
def test_any_text_parses_or_raises_expr_error(text: str) -> None:
    with contextlib.suppress(ExprError):
        parse(text)


def _parse_and_evaluate(text: str) -> None:
    with contextlib.suppress(ExprError):  # refusing fast is fine; slowly is not
        evaluate(parse(text), Context(DUNE, at=NOW, budget=10**6))


SHAPES = {
    "sum-chain": lambda n: fill("price + 1 * ", n - 1) + "1",
    "method-chain": lambda n: fill('"ab".lower()', n),
    "long-string": lambda n: '"' + fill("x", n - 2) + '"',
    "unclosed-strings": lambda n: fill('"x ', n),
    "open-parens": lambda n: fill("(", n),
    "nots": lambda n: fill("!", n),
    "list": lambda n: "[" + fill("1, ", n - 2) + "1]",
    "and-or": lambda n: fill("a && b || ", n - 1) + "c",
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_parsing_and_evaluating_is_linear(shape: str) -> None:
    assert_linear(_parse_and_evaluate, SHAPES[shape], small=4096)


def test_the_ratio_catches_a_quadratic_scan() -> None:
    assert_catches_quadratic(SHAPES["sum-chain"], small=4096)
