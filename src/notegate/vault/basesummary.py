"""A Bases view's summaries: one value per column over every matched file (Obsidian help, "Bases syntax",
"Default Summary Formulas"), or a base's own summary formula over ``values`` (pure).

Why its own module: the planner (:mod:`notegate.vault.bases`) decides rows; a summary only folds a column's
values.  Every default of the help's table is here; a custom one is an expression evaluated once with
``values`` bound to the column's values, within the page's work budget like any other value.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from datetime import datetime

from notegate.vault.baseparse import ExprError
from notegate.vault.basexpr import Context, DateValue, FileFacts, Node, display, evaluate

__all__ = ["DEFAULTS", "summarize"]


def _numbers(values: list[object]) -> list[float]:
    return [float(v) for v in values if isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)]


def _dates(values: list[object]) -> list[DateValue]:
    return [v for v in values if isinstance(v, DateValue)]


def _empty(value: object) -> bool:
    return value is None or value == "" or value == []


def _when(folded: Callable[[list[float]], float]) -> Callable[[list[object]], object]:
    def run(values: list[object]) -> object:
        numbers = _numbers(values)
        return round(folded(numbers), 6) if numbers else None

    return run


def _median(ns: list[float]) -> float:
    ordered = sorted(ns)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def _stddev(ns: list[float]) -> float:
    """The population standard deviation (what Obsidian's Stddev shows for a whole column)."""
    mean = sum(ns) / len(ns)
    return math.sqrt(sum((n - mean) ** 2 for n in ns) / len(ns))


def _date_range(values: list[object]) -> object:
    dates = _dates(values)
    if not dates:
        return _when(lambda ns: max(ns) - min(ns))(values)
    days = (max(d.moment for d in dates) - min(d.moment for d in dates)).total_seconds() / 86400
    return f"{days:g} days"


#: The help's default summaries, by the name a view's ``summaries`` gives them.
DEFAULTS: dict[str, Callable[[list[object]], object]] = {
    "Average": _when(lambda ns: sum(ns) / len(ns)),
    "Min": _when(min),
    "Max": _when(max),
    "Sum": _when(sum),
    "Range": _date_range,
    "Median": _when(_median),
    "Stddev": _when(_stddev),
    "Earliest": lambda vs: min(_dates(vs), key=lambda d: d.moment, default=None),
    "Latest": lambda vs: max(_dates(vs), key=lambda d: d.moment, default=None),
    "Checked": lambda vs: sum(1 for v in vs if v is True),
    "Unchecked": lambda vs: sum(1 for v in vs if v is False),
    "Empty": lambda vs: sum(1 for v in vs if _empty(v)),
    "Filled": lambda vs: sum(1 for v in vs if not _empty(v)),
    "Unique": lambda vs: len({display(v) for v in vs if not _empty(v)}),
}


def summarize(
    name: str, values: list[object], custom: dict[str, Node], now: datetime, budget: int
) -> tuple[object, int]:
    """The summary ``name`` of ``values`` and the steps it cost: a default (one step a value), or the base's
    own formula over ``values`` (None when it cannot be computed: an unknown name, or a formula that fails or
    runs out of ``budget``)."""
    if name in DEFAULTS:
        return DEFAULTS[name](values), len(values)
    node = custom.get(name)
    if node is None:
        return None, 0
    ctx = Context(FileFacts(""), at=now, budget=budget, locals={"values": values})
    try:
        return evaluate(node, ctx), budget - max(ctx.budget, 0)
    except ExprError:
        return None, budget - max(ctx.budget, 0)
