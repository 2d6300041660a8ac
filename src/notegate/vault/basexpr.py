"""Obsidian Bases' expression language: the evaluator over one file's facts (pure); the parser is
:mod:`notegate.vault.baseparse` (re-exported here).

Theory of operation.  A ``.base`` file (and a ```` ```base ```` block) is text anyone who can write to the vault
chose, so its filters and formulas are parsed here, never handed to ``eval``.  The grammar is the one
Obsidian's help documents ("Bases syntax", "Functions"): JavaScript-like literals, ``note.x`` / ``file.x`` /
``formula.x`` / ``this`` / bare property names, ``.field``, ``[index]``, ``f(args)`` and ``x.method(args)``,
unary ``!`` and ``-``, ``* / %``, ``+ -``, comparisons, ``&& ||``.

Bounds, each a named constant:

* an expression is at most :data:`MAX_EXPR_CHARS` characters and nests (parentheses, unary operators,
  arguments) at most :data:`MAX_DEPTH` deep; a chain of the same precedence (``a + b + c …``, ``a.b.c…``) is
  one node holding a list, evaluated by a loop, so the tree's depth never grows with the text's length and
  parsing is linear (one tokenizer pass, one token look at a time);
* an evaluation visits at most ``budget`` nodes (:data:`STEP_BUDGET` per cell by default), strings and lists
  it builds stay under :data:`MAX_VALUE_LEN`, and a formula that names itself (directly or not) is an error;
* only :class:`ExprError` escapes (a ``ValueError``); :class:`Unsupported` is the one for syntax Obsidian has
  that this page does not evaluate (regular expressions, ``html()``, icons, plugin functions), so a view can
  say "unsupported" instead of showing something misleading.

Values are Python's: ``None``, ``bool``, ``int``/``float``, ``str``, ``list``, ``dict``, and :class:`DateValue`,
:class:`Duration`, :class:`LinkValue`, :class:`FileValue`.  Time is a parameter (``now``), never read here.
"""

from __future__ import annotations

import calendar
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta

from notegate.vault.baseparse import MAX_DEPTH, MAX_EXPR_CHARS, ExprError, Node, Unsupported, parse

__all__ = [
    "MAX_DEPTH",
    "MAX_EXPR_CHARS",
    "MAX_VALUE_LEN",
    "STEP_BUDGET",
    "Context",
    "DateValue",
    "Duration",
    "ExprError",
    "FileFacts",
    "FileValue",
    "LinkValue",
    "Node",
    "Unsupported",
    "display",
    "evaluate",
    "from_yaml",
    "parse",
    "truthy",
]

#: Nodes one evaluation may visit (a cell, a filter on one file); list methods count every element.
STEP_BUDGET = 20_000
#: The longest string or list an expression may build (``"a".repeat(1e9)`` stops here).
MAX_VALUE_LEN = 64 << 10
#: How deep formulas may name other formulas.
MAX_FORMULA_DEPTH = 8


# ------------------------------------------------------------------------------------------------ values
@dataclass(frozen=True)
class DateValue:
    moment: datetime  # naive, read as UTC
    has_time: bool = True


@dataclass(frozen=True)
class Duration:
    months: int = 0
    ms: float = 0.0


@dataclass(frozen=True)
class LinkValue:
    target: str  # as written, without [[ ]] or a |display
    display: str = ""


@dataclass(frozen=True)
class FileFacts:
    """What a base may know about one file: its path, size, last change, properties, tags and links."""

    path: str
    size: int = 0
    mtime: datetime | None = None
    properties: Mapping[str, object] = field(default_factory=dict)
    tags: tuple[str, ...] = ()
    links: tuple[str, ...] = ()  # resolved vault paths where they resolve, else the target as written
    embeds: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        return self.path.rsplit("/", 1)[-1]

    @property
    def folder(self) -> str:
        return self.path.rpartition("/")[0]

    @property
    def ext(self) -> str:
        name = self.name
        return name.rsplit(".", 1)[-1] if "." in name.lstrip(".") else ""

    @property
    def basename(self) -> str:
        name = self.name
        return name[: -len(self.ext) - 1] if self.ext else name


@dataclass(frozen=True)
class FileValue:
    facts: FileFacts


_LINK = re.compile(r"!?\[\[([^\[\]|#\n]*)(?:#[^\[\]|\n]*)?(?:\|([^\[\]\n]*))?\]\]\Z")
_ISO_DATE = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,6}))?)?)?(Z|[+-]\d{2}:?\d{2})?\Z"
)


def _date_of(text: str) -> DateValue | None:
    match = _ISO_DATE.match(text.strip())
    if match is None:
        return None
    y, mo, d, h, mi, s, frac, zone = match.groups()
    try:
        moment = datetime(
            int(y), int(mo), int(d), int(h or 0), int(mi or 0), int(s or 0), int((frac or "0").ljust(6, "0"))
        )
    except ValueError:
        return None
    if zone and zone != "Z":
        sign = 1 if zone[0] == "+" else -1
        digits = zone[1:].replace(":", "")
        moment -= sign * timedelta(hours=int(digits[:2]), minutes=int(digits[2:]))
    return DateValue(moment, has_time=h is not None)


def from_yaml(value: object, depth: int = 0) -> object:
    """A front-matter value as a Bases value: dates become :class:`DateValue`, ``"[[x]]"`` a link."""
    if depth > 8:
        return None
    if isinstance(value, datetime):
        moment = value.astimezone(UTC).replace(tzinfo=None) if value.tzinfo else value
        return DateValue(moment, True)
    if isinstance(value, date):
        return DateValue(datetime(value.year, value.month, value.day), False)
    if isinstance(value, str):
        match = _LINK.match(value.strip())
        return LinkValue(match.group(1).strip(), (match.group(2) or "").strip()) if match else value
    if isinstance(value, list):
        return [from_yaml(v, depth + 1) for v in value[:MAX_VALUE_LEN]]
    if isinstance(value, dict):
        return {str(k): from_yaml(v, depth + 1) for k, v in value.items()}
    if isinstance(value, int) and not isinstance(value, bool):
        return _js_number(value)
    if value is None or isinstance(value, bool | float):
        return value
    return str(value)


def _js_number(value: int | float) -> int | float | None:
    """A number as JavaScript holds it: integers past 2**53 become floats, and past a float's range, nothing
    (so no value ever grows into a giant integer that is slow to multiply or cannot be printed)."""
    if isinstance(value, int) and abs(value) > 2**53:
        try:
            value = float(value)
        except OverflowError:
            return None
    return value


# ------------------------------------------------------------------------------------------------ evaluation
@dataclass
class Context:
    """What an evaluation sees: the file (``file``, ``note``), ``this``, the base's formulas, how a link
    resolves (to a vault path or None), the time, and the work left."""

    file: FileFacts
    this: FileFacts | None = None
    formulas: Mapping[str, Node | ExprError] = field(default_factory=dict)
    resolve: Callable[[str], str | None] = lambda _target: None
    at: datetime = datetime(1970, 1, 1)  # the time the view is drawn (now())
    budget: int = STEP_BUDGET
    locals: dict[str, object] = field(default_factory=dict)
    computing: tuple[str, ...] = ()
    cache: dict[str, object] = field(default_factory=dict)

    def step(self, n: int = 1) -> None:
        self.budget -= n
        if self.budget < 0:
            raise ExprError("too much work for one value")


def truthy(value: object) -> bool:
    if value is None or value is False:
        return False
    if isinstance(value, int | float):
        return value != 0 and not math.isnan(value)
    if isinstance(value, str):
        return value != ""
    return True


def _bounded(value: object) -> object:
    if isinstance(value, str | list) and len(value) > MAX_VALUE_LEN:
        raise ExprError(f"a value longer than {MAX_VALUE_LEN}")
    return value


def _number(value: object) -> float | int | None:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int | float):
        return value
    if isinstance(value, DateValue):
        return _epoch_ms(value)
    if isinstance(value, str):
        try:
            return float(value.strip()) if value.strip() else None
        except ValueError:
            return None
    return None


def _epoch_ms(value: DateValue) -> float:
    return (value.moment - datetime(1970, 1, 1)).total_seconds() * 1000


_UNITS = {
    "y": (12, 0), "year": (12, 0), "years": (12, 0),
    "M": (1, 0), "month": (1, 0), "months": (1, 0),
    "w": (0, 604_800_000), "week": (0, 604_800_000), "weeks": (0, 604_800_000),
    "d": (0, 86_400_000), "day": (0, 86_400_000), "days": (0, 86_400_000),
    "h": (0, 3_600_000), "hour": (0, 3_600_000), "hours": (0, 3_600_000),
    "m": (0, 60_000), "minute": (0, 60_000), "minutes": (0, 60_000),
    "s": (0, 1000), "second": (0, 1000), "seconds": (0, 1000),
}  # fmt: skip
_DURATION = re.compile(r"\s*([+-]?\d+(?:\.\d+)?)\s*([A-Za-z]+)\s*")


def _duration(value: object) -> Duration | None:
    if isinstance(value, Duration):
        return value
    if not isinstance(value, str) or len(value) > 200:
        return None
    months, ms, pos = 0, 0.0, 0
    while pos < len(value):
        match = _DURATION.match(value, pos)
        if match is None or match.group(2) not in _UNITS:
            return None
        per_month, per_ms = _UNITS[match.group(2)]
        amount = float(match.group(1))
        if per_month:
            months += int(amount * per_month)
        ms += amount * per_ms
        pos = match.end()
    return Duration(months, ms) if pos else None


def _shift(value: DateValue, by: Duration, sign: int) -> DateValue:
    moment = value.moment
    if by.months:
        total = moment.year * 12 + moment.month - 1 + sign * by.months
        year, month = divmod(total, 12)
        if not 1 <= year <= 9999:
            raise ExprError("date out of range")
        moment = moment.replace(
            year=year, month=month + 1, day=min(moment.day, calendar.monthrange(year, month + 1)[1])
        )
    try:
        moment += timedelta(milliseconds=sign * by.ms)
    except OverflowError as exc:
        raise ExprError("date out of range") from exc
    return DateValue(moment, value.has_time or bool(by.ms % 86_400_000))


def _as_date(value: object) -> DateValue | None:
    if isinstance(value, DateValue):
        return value
    if isinstance(value, str):
        return _date_of(value)
    return None


def _same_file(ctx: Context, a: object, b: object) -> bool | None:
    """Links and files compare by the file they name (Bases syntax, "Files and links")."""

    def path(v: object) -> str | None:
        if isinstance(v, FileValue):
            return v.facts.path
        if isinstance(v, LinkValue):
            return ctx.resolve(v.target) or "\0" + v.target
        return None

    pa, pb = path(a), path(b)
    if pa is None and pb is None:
        return None
    if pa is None or pb is None:
        other = b if pa is not None else a
        return isinstance(other, str) and (pa or pb) in (ctx.resolve(other), "\0" + other)
    return pa == pb


def _equal(ctx: Context, a: object, b: object) -> bool:
    same = _same_file(ctx, a, b)
    if same is not None:
        return same
    if isinstance(a, DateValue) or isinstance(b, DateValue):
        da, db = _as_date(a), _as_date(b)
        return da is not None and db is not None and da.moment == db.moment
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_equal(ctx, x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


def _order(a: object, b: object) -> int | None:
    """-1, 0 or 1 when ``a`` and ``b`` compare (numbers, strings, dates), else None."""
    if isinstance(a, DateValue) or isinstance(b, DateValue):
        da, db = _as_date(a), _as_date(b)
        if da is None or db is None:
            return None
        a, b = da.moment, db.moment
    elif isinstance(a, str) != isinstance(b, str):  # "15.00" > 5: a numeric string compares as a number
        a, b = _number(a), _number(b)
        if a is None or b is None:
            return None
    elif not (isinstance(a, int | float) and isinstance(b, int | float)) and not (
        isinstance(a, str) and isinstance(b, str)
    ):
        return None
    return (a > b) - (a < b)  # type: ignore[operator]


def _binary(ctx: Context, op: str, a: object, b: object) -> object:
    if op in ("==", "!="):
        return _equal(ctx, a, b) == (op == "==")
    if op in ("<", "<=", ">", ">="):
        c = _order(a, b)
        return c is not None and {"<": c < 0, "<=": c <= 0, ">": c > 0, ">=": c >= 0}[op]
    if isinstance(a, DateValue) and op in "+-":
        if op == "-" and _as_date(b) is not None and not isinstance(b, Duration) and _duration(b) is None:
            return _epoch_ms(a) - _epoch_ms(_as_date(b))  # type: ignore[arg-type]
        by = _duration(b)
        if by is None:
            raise ExprError("a date moves only by a duration")
        return _shift(a, by, 1 if op == "+" else -1)
    if isinstance(a, Duration) and op in "*/" and isinstance(b, int | float) and not isinstance(b, bool):
        if op == "/" and b == 0:
            raise ExprError("division by zero")
        f = b if op == "*" else 1 / b
        return Duration(int(a.months * f), a.ms * f)
    if op == "+" and (isinstance(a, str) or isinstance(b, str)):
        return _bounded(display(a) + display(b))
    if op == "+" and isinstance(a, list) and isinstance(b, list):
        return _bounded(a + b)
    x, y = _number(a), _number(b)
    if x is None or y is None or isinstance(a, str) or isinstance(b, str):
        raise ExprError(f"{op} needs numbers")
    if op in "/%" and y == 0:
        raise ExprError("division by zero")
    result = {"+": lambda: x + y, "-": lambda: x - y, "*": lambda: x * y, "/": lambda: x / y}.get(op)
    value = _js_number(result() if result else math.fmod(x, y))
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        raise ExprError("number out of range")
    return value


def evaluate(node: Node, ctx: Context) -> object:
    """The value of ``node`` for ``ctx``; raises only :class:`ExprError`."""
    try:
        return _eval(node, ctx)
    except ExprError:
        raise
    except (ValueError, TypeError, OverflowError, ArithmeticError, IndexError, KeyError) as exc:
        raise ExprError(f"cannot evaluate: {type(exc).__name__}") from None
    except RecursionError:
        raise ExprError("nested too deep") from None


def _eval(node: Node, ctx: Context) -> object:
    ctx.step()
    kind = node[0]
    if kind == "lit":
        return node[1]
    if kind == "name":
        return _name(ctx, node[1])
    if kind == "binary":
        _, _level, first, rest = node
        value = _eval(first, ctx)
        for op, operand in rest:
            if op == "&&":
                value = _eval(operand, ctx) if truthy(value) else value
            elif op == "||":
                value = value if truthy(value) else _eval(operand, ctx)
            else:
                value = _binary(ctx, op, value, _eval(operand, ctx))
        return value
    if kind == "unary":
        value = _eval(node[2], ctx)
        if node[1] == "!":
            return not truthy(value)
        number = _number(value)
        if number is None or isinstance(value, str):
            raise ExprError(f"{node[1]} needs a number")
        return -number if node[1] == "-" else number
    if kind == "list":
        return _bounded([_eval(item, ctx) for item in node[1]])
    if kind == "object":
        return {key: _eval(value, ctx) for key, value in node[1]}
    if kind == "call":
        return _funcs.call_global(ctx, node[1], node[2])
    if kind == "chain":
        return _chain(ctx, node)
    raise ExprError("unknown node")


def _name(ctx: Context, name: str) -> object:
    if name in ctx.locals:
        return ctx.locals[name]
    if name == "file":
        return FileValue(ctx.file)
    if name == "this":
        return FileValue(ctx.this) if ctx.this is not None else None
    if name in ("note", "formula"):
        return _Scope(name)
    return ctx.file.properties.get(name)


@dataclass(frozen=True)
class _Scope:
    """``note`` or ``formula`` before its ``.name``."""

    kind: str


def formula(ctx: Context, name: str) -> object:
    """The value of the base's formula ``name`` for this file (each computed once per file, cycles refused)."""
    if name in ctx.cache:
        return ctx.cache[name]
    found = ctx.formulas.get(name)
    if found is None:
        return None
    if isinstance(found, ExprError):
        raise found
    if name in ctx.computing or len(ctx.computing) >= MAX_FORMULA_DEPTH:
        raise ExprError(f"formula {name} refers to itself")
    ctx.computing = (*ctx.computing, name)
    try:
        value = _eval(found, ctx)
    finally:
        ctx.computing = ctx.computing[:-1]
    ctx.cache[name] = value
    return value


def _chain(ctx: Context, node: Node) -> object:
    _, base, steps = node
    value = _eval(base, ctx)
    for step in steps:
        ctx.step()
        if isinstance(value, _Scope):
            if step[0] == "get":
                key = step[1]
            elif step[0] == "index":
                key = display(_eval(step[1], ctx))
            else:
                raise ExprError(f"{value.kind} has no methods")
            value = formula(ctx, key) if value.kind == "formula" else ctx.file.properties.get(key)
        elif step[0] == "get":
            value = _funcs.get_field(ctx, value, step[1])
        elif step[0] == "index":
            value = _index(value, _eval(step[1], ctx))
        else:
            value = _funcs.call_method(ctx, value, step[1], step[2])
    if isinstance(value, _Scope):
        raise ExprError(f"{value.kind} needs a property name")
    return value


def _index(value: object, key: object) -> object:
    if isinstance(value, list) and isinstance(key, int | float) and not isinstance(key, bool):
        i = int(key)
        return value[i] if -len(value) <= i < len(value) and i == key else None
    if isinstance(value, dict):
        return value.get(display(key))
    if isinstance(value, str) and isinstance(key, int) and not isinstance(key, bool):
        return value[key] if 0 <= key < len(value) else None
    return None


# ------------------------------------------------------------------------------------------------ display
def _number_text(value: float | int) -> str:
    if isinstance(value, int) or (value.is_integer() and abs(value) < 1e21):
        return str(int(value))
    return repr(value)


def display(value: object) -> str:
    """A value as text, as a view shows it (``toString()``)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return _number_text(value)
    if isinstance(value, str):
        return value
    if isinstance(value, DateValue):
        return value.moment.strftime("%Y-%m-%d %H:%M" if value.has_time else "%Y-%m-%d")
    if isinstance(value, Duration):
        return f"{value.months} months {value.ms / 1000:g} s" if value.months else f"{value.ms / 1000:g} s"
    if isinstance(value, LinkValue):
        return value.display or value.target.rsplit("/", 1)[-1]
    if isinstance(value, FileValue):
        return value.facts.basename
    if isinstance(value, list):
        return ", ".join(display(v) for v in value[:1000])
    if isinstance(value, dict):
        return ", ".join(f"{k}: {display(v)}" for k, v in list(value.items())[:100])
    return ""


# The functions need the values above; they live in their own module (one job each) and are bound last.
from notegate.vault import basefuncs as _funcs  # noqa: E402 - a cycle: looked up at call time
