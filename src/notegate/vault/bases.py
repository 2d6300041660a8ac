"""An Obsidian Bases file (``.base``) read and planned: YAML in, the rows of a view out (pure).

What a base is (Obsidian help, "Bases syntax"): YAML with ``filters`` (a statement, or ``and`` / ``or`` /
``not`` lists of them, nested), ``formulas`` (name -> expression), ``properties`` (display names) and
``views`` (``type`` table / cards / list / …, ``name``, ``filters``, ``order``, ``sort``, ``groupBy``,
``limit``).  Every file of the vault the viewer can see is a candidate; the base's filters and the view's
are joined with *and*.

Safety: the YAML is loaded with the safe loader only, after an event scan that refuses anchors and aliases
(no "billion laughs"), more than :data:`MAX_YAML_DEPTH` levels or :data:`MAX_YAML_EVENTS` nodes, and only
when the text is under :data:`MAX_BASE_BYTES`.  Expressions are :mod:`notegate.vault.basexpr` trees.  A
view whose filters use something this page cannot evaluate shows no rows and says so (a partial filter
would show files the base excludes); a formula it cannot evaluate shows its column empty with the reason.
The whole plan has a work budget (:data:`PLAN_STEPS`); past it the view says where it stopped.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

import yaml

from notegate.errors import NotegateError
from notegate.vault.basefuncs import check, get_field
from notegate.vault.basesummary import summarize
from notegate.vault.basexpr import (
    STEP_BUDGET,
    Context,
    DateValue,
    ExprError,
    FileFacts,
    FileValue,
    Node,
    Unsupported,
    display,
    evaluate,
    formula,
    parse,
    truthy,
)

__all__ = [
    "MAX_BASE_BYTES",
    "BaseError",
    "BaseSpec",
    "Row",
    "ViewResult",
    "ViewSpec",
    "Work",
    "load_yaml",
    "parse_base",
    "plan_view",
]

MAX_BASE_BYTES = 64 << 10
MAX_YAML_DEPTH = 24
MAX_YAML_EVENTS = 20_000
#: Expression steps one view may spend over all files (about a second of Python).
PLAN_STEPS = 2_000_000
MAX_VIEWS = 50
MAX_COLUMNS = 40
_SafeLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class BaseError(NotegateError):
    """A base (or a front matter) this page cannot read: not YAML, too big, too deep, aliases. Caught by the
    planner and the view, which show it as a note inside the view: it never refuses the page."""

    rule = "base-unreadable"


def load_yaml(text: str, max_bytes: int = MAX_BASE_BYTES) -> object:
    """``text`` as plain data (dicts, lists, scalars, dates), bounded as the module docstring says."""
    if len(text.encode("utf-8", "surrogatepass")) > max_bytes:
        raise BaseError(f"larger than {max_bytes} bytes")
    depth = events = 0
    try:
        for event in yaml.parse(text, Loader=_SafeLoader):
            events += 1
            if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
                raise BaseError("YAML anchors and aliases are not read here")
            if isinstance(event, yaml.CollectionStartEvent):
                depth += 1
                if depth > MAX_YAML_DEPTH:
                    raise BaseError(f"nested more than {MAX_YAML_DEPTH} deep")
            elif isinstance(event, yaml.CollectionEndEvent):
                depth -= 1
            if events > MAX_YAML_EVENTS:
                raise BaseError(f"more than {MAX_YAML_EVENTS} YAML nodes")
        return yaml.load(text, Loader=_SafeLoader)  # noqa: S506 - the safe loader (C or Python)
    except BaseError:
        raise
    except (yaml.YAMLError, ValueError, TypeError, OverflowError, RecursionError) as exc:
        raise BaseError(f"not valid YAML ({type(exc).__name__})") from None


# ------------------------------------------------------------------------------------------------ the spec
#: A filter: ("expr", node) | ("bad", ExprError) | ("and" | "or" | "not", [filters]).
Filter = tuple


def _filter(raw: object, depth: int = 0) -> Filter | None:
    if raw is None:
        return None
    if depth > MAX_YAML_DEPTH:
        return ("bad", ExprError("filters nested too deep"))
    if isinstance(raw, dict):
        if len(raw) != 1 or next(iter(raw)) not in ("and", "or", "not"):
            return ("bad", ExprError("a filter group is one of and, or, not"))
        key, items = next(iter(raw.items()))
        items = items if isinstance(items, list) else [items]
        return (key, [f for f in (_filter(item, depth + 1) for item in items) if f is not None])
    if isinstance(raw, bool):
        raw = "true" if raw else "false"
    try:
        node = parse(raw)
        check(node)
        return ("expr", node)
    except ExprError as exc:
        return ("bad", exc)


def _problems(f: Filter | None) -> list[ExprError]:
    if f is None:
        return []
    if f[0] == "bad":
        return [f[1]]
    if f[0] == "expr":
        return []
    return [p for child in f[1] for p in _problems(child)]


def _passes(f: Filter | None, ctx: Context) -> bool:
    if f is None:
        return True
    if f[0] == "expr":
        try:
            return truthy(evaluate(f[1], ctx))
        except ExprError as exc:
            if ctx.budget < 0 or isinstance(exc, Unsupported):
                raise
            return False  # a statement that fails for this file (a missing value's method) excludes it
    if f[0] == "and":
        return all(_passes(c, ctx) for c in f[1])
    if f[0] == "or":
        return any(_passes(c, ctx) for c in f[1])
    if f[0] == "not":
        return not any(_passes(c, ctx) for c in f[1])
    return False


def _property_id(raw: object) -> str:
    text = display(raw).strip() if not isinstance(raw, str) else raw.strip()
    return text[5:] if text.startswith("note.") else text


@dataclass(frozen=True)
class ViewSpec:
    name: str
    kind: str
    filters: Filter | None
    order: tuple[str, ...]
    sort: tuple[tuple[str, bool], ...]  # (property, descending)
    group_by: tuple[str, bool] | None
    limit: int | None
    image: str | None
    summaries: tuple[tuple[str, str], ...]  # (property, summary name)


@dataclass(frozen=True)
class BaseSpec:
    filters: Filter | None
    formulas: dict[str, Node | ExprError]
    names: dict[str, str]
    views: tuple[ViewSpec, ...]
    summaries: dict[str, Node] = field(default_factory=dict)  # the base's own summary formulas, by name


def _sorts(raw: object) -> tuple[tuple[str, bool], ...]:
    out = []
    for item in raw if isinstance(raw, list) else []:
        if isinstance(item, dict):
            prop = item.get("property", item.get("column"))
            if isinstance(prop, str):
                out.append((_property_id(prop), str(item.get("direction", "ASC")).upper() == "DESC"))
    return tuple(out[:10])


def _view(raw: dict, index: int) -> ViewSpec:
    order = raw.get("order")
    group = raw.get("groupBy")
    limit = raw.get("limit")
    image = raw.get("image")
    return ViewSpec(
        name=display(raw.get("name")) or f"View {index + 1}",
        kind=display(raw.get("type")) or "table",
        filters=_filter(raw.get("filters")),
        order=tuple(_property_id(p) for p in (order if isinstance(order, list) else [])[:MAX_COLUMNS]),
        sort=_sorts(raw.get("sort")),
        group_by=(
            (_property_id(group["property"]), str(group.get("direction", "ASC")).upper() == "DESC")
            if isinstance(group, dict) and isinstance(group.get("property"), str)
            else None
        ),
        limit=limit if isinstance(limit, int) and not isinstance(limit, bool) and limit > 0 else None,
        image=_property_id(image) if isinstance(image, str) else None,
        summaries=tuple(
            (_property_id(k), display(v))
            for k, v in (raw["summaries"].items() if isinstance(raw.get("summaries"), dict) else ())
        )[:MAX_COLUMNS],
    )


def parse_base(text: str) -> BaseSpec:
    """A ``.base`` file's text as a :class:`BaseSpec`, or :class:`BaseError` when it is not a base at all."""
    data = load_yaml(text)
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise BaseError("a base is a YAML mapping")
    formulas: dict[str, Node | ExprError] = {}
    raw_formulas = data.get("formulas")
    for name, expr in raw_formulas.items() if isinstance(raw_formulas, dict) else ():
        try:
            node = parse(expr)
            check(node)
            formulas[str(name)] = node
        except ExprError as exc:
            formulas[str(name)] = exc
    names: dict[str, str] = {}
    raw_props = data.get("properties")
    for prop, conf in raw_props.items() if isinstance(raw_props, dict) else ():
        if isinstance(conf, dict) and conf.get("displayName") is not None:
            names[_property_id(str(prop))] = display(conf["displayName"])[:200]
    raw_views = data.get("views")
    views = tuple(
        _view(v, i)
        for i, v in enumerate(raw_views[:MAX_VIEWS] if isinstance(raw_views, list) else ())
        if isinstance(v, dict)
    )
    if not views:
        views = (ViewSpec("Table", "table", None, (), (), None, None, None, ()),)
    summaries: dict[str, Node] = {}
    raw_summaries = data.get("summaries")
    for name, expr in raw_summaries.items() if isinstance(raw_summaries, dict) else ():
        try:
            node = parse(expr)
            check(node)
            summaries[str(name)] = node
        except ExprError:
            continue  # a summary this page cannot compute shows empty
    return BaseSpec(_filter(data.get("filters")), formulas, names, views, summaries)


# ------------------------------------------------------------------------------------------------ the plan
@dataclass(frozen=True)
class Row:
    facts: FileFacts
    cells: tuple[object, ...]
    image: object = None
    group: object = None


@dataclass
class ViewResult:
    view: ViewSpec
    columns: list[tuple[str, str]]  # (property id, heading)
    rows: list[Row] = field(default_factory=list)
    summaries: dict[str, tuple[str, object]] = field(default_factory=dict)  # property -> (name, value)
    matched: int = 0  # files that passed the filters (before the limits)
    notes: list[str] = field(default_factory=list)
    stopped: bool = False


def label(spec: BaseSpec, prop: str) -> str:
    if prop in spec.names:
        return spec.names[prop]
    if prop == "file.name":
        return "file name"
    return prop.removeprefix("formula.").removeprefix("file.")


def _value(ctx: Context, prop: str) -> object:
    if prop.startswith("formula."):
        return formula(ctx, prop[8:])
    if prop.startswith("file."):
        return get_field(ctx, FileValue(ctx.file), prop[5:])
    if prop == "this" or prop.startswith("this."):
        return None
    return ctx.file.properties.get(prop)


def _empty(value: object) -> bool:
    return value is None or value == "" or value == []


def _sort_key(value: object) -> tuple:
    """Numbers and dates by value, before text (case-folded); empty values are set apart by the caller."""
    if isinstance(value, bool | int | float):
        return (0, float(value), "")
    if isinstance(value, DateValue):
        return (0, (value.moment - datetime(1970, 1, 1)).total_seconds(), "")
    return (1, 0.0, display(value).casefold())


def _sorted(items: list, value: Callable[[object], object], descending: bool) -> list:
    """``items`` by ``value``, stable, with empty values last in either direction (as Obsidian shows them)."""
    keyed = [(value(item), item) for item in items]
    filled = [pair for pair in keyed if not _empty(pair[0])]
    filled.sort(key=lambda pair: _sort_key(pair[0]), reverse=descending)
    return [item for _v, item in filled] + [item for v, item in keyed if _empty(v)]


def pick_view(spec: BaseSpec, name: str | None) -> ViewSpec | None:
    """The view named ``name`` (case-insensitive), or the first view when no name is given."""
    if not name:
        return spec.views[0]
    wanted = name.strip().casefold()
    return next((v for v in spec.views if v.name.strip().casefold() == wanted), None)


class Work:
    """The expression steps one page may still spend (:data:`PLAN_STEPS`), shared by all of its views: every
    filter, sort key and cell draws from it, so no base costs a page more than about a second."""

    def __init__(self, steps: int = PLAN_STEPS) -> None:
        self.left = steps
        self.unsupported = ""  # the first thing met that this page does not evaluate (a field, say)

    def value(self, ctx: Context, run: Callable[[Context], object], default: object = None) -> object:
        """``run(ctx)`` within what is left (and one value's own :data:`STEP_BUDGET`); ``default`` when it
        fails or the page's work is spent."""
        if self.left <= 0:
            return default
        ctx.budget = start = min(STEP_BUDGET, self.left)
        try:
            return run(ctx)
        except Unsupported as exc:
            self.unsupported = self.unsupported or str(exc)
            return default
        except ExprError:
            return default
        finally:
            self.left -= start - max(ctx.budget, 0) if ctx.budget >= 0 else start


def plan_view(
    spec: BaseSpec,
    view: ViewSpec,
    files: Sequence[FileFacts],
    *,
    this: FileFacts | None,
    resolve: Callable[[str], str | None],
    now: datetime,
    max_rows: int,
    work: Work | None = None,
) -> ViewResult:
    """The rows ``view`` shows over ``files`` (which the caller may all see), at most ``max_rows``."""
    work = work if work is not None else Work()
    columns = [p for p in (view.order or ("file.name",)) if p][:MAX_COLUMNS]
    result = ViewResult(view, [(p, label(spec, p)) for p in columns])
    problems = _problems(spec.filters) + _problems(view.filters)
    if problems:
        kind = "unsupported" if any(isinstance(p, Unsupported) for p in problems) else "unreadable"
        result.notes.append(f"This view's filters are {kind} here ({problems[0]}): no rows are shown.")
        return result
    for name, node in spec.formulas.items():
        if isinstance(node, ExprError) and f"formula.{name}" in columns:
            result.notes.append(f"Formula {name} is not shown: {node}.")
    if view.kind not in ("table", "cards", "list"):
        result.notes.append(f"The {view.kind} layout is shown as a table here.")
    matched: list[tuple[FileFacts, Context]] = []
    work.unsupported = ""
    for facts in files:
        if work.left <= 0:
            break
        ctx = Context(facts, this, spec.formulas, resolve, now)
        if work.value(ctx, lambda c: _passes(spec.filters, c) and _passes(view.filters, c), False):
            matched.append((facts, ctx))
        if work.unsupported:  # found only when evaluated (a field such as file.backlinks): no partial rows
            result.notes.append(f"This view's filters are unsupported here ({work.unsupported}): no rows are shown.")
            return result
    result.matched = len(matched)

    def cell(ctx: Context, prop: str) -> object:
        return work.value(ctx, lambda c: _value(c, prop))

    keys = ([view.group_by] if view.group_by else []) + list(view.sort)
    for prop, descending in reversed(keys):  # stable sorts, the last key first: the first key wins
        matched = _sorted(matched, lambda fc, p=prop: cell(fc[1], p), descending)
    for facts, ctx in matched[: min(view.limit or max_rows, max_rows)]:
        if work.left <= 0:
            break  # a row of empty cells would say the files have no values
        cells = tuple(cell(ctx, p) for p in columns)
        image = cell(ctx, view.image) if view.image else None
        group = cell(ctx, view.group_by[0]) if view.group_by else None
        result.rows.append(Row(facts, cells, image, group))
    for prop, name in view.summaries:
        if work.left <= 0:
            break
        values = [cell(ctx, prop) for _facts, ctx in matched]
        budget = min(STEP_BUDGET * 10, max(work.left, 0))
        value, spent = summarize(name, values, spec.summaries, now, budget)
        result.summaries[prop] = (name, value)
        work.left -= spent
    if work.unsupported:
        result.notes.append(f"Some values are not shown: {work.unsupported}.")
    if work.left <= 0:
        result.stopped = True
        result.notes.append("Stopped early: this page's bases need more work than one page may spend.")
    return result
