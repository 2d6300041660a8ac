"""``health-daily``: a phone's export for one day becomes the ``## Health`` table of that day's journal note.

The key is the date and the exporter's marker.  Every value is converted with ``pint`` to the unit the vault
records for its metric (:data:`VAULT_UNITS`); a unit pint does not know, one of another dimension, or a value
outside the policy's plausible range (:func:`notegate.policy.decide_health_value`) is dropped loudly: named in
the response, the audit row and a task note for the owner, never recorded at the wrong scale.  A new export of
the same day (another marker) replaces the section whole; the rest of the note is left as it was.
"""

from __future__ import annotations

import math
import threading
from typing import Any

import pint

from notegate.contracts import Dropped, Plan, PlanContext, PlannedNote
from notegate.policy import HEALTH_RANGES, Policy, decide_health_value

NAME = "health-daily"
DESCRIPTION = "A phone health export for one day -> the ## Health table of journal/YYYY/YYYY-MM-DD.md."
MAX_BODY_BYTES = 16 << 10
HEADING = "## Health"

#: The unit the vault records each metric in (pint spellings); the plausible ranges are the policy's.
VAULT_UNITS: dict[str, str] = {
    "steps": "count",
    "weight": "kg",
    "sleep": "hour",
    "resting_heart_rate": "count / minute",
    "heart_rate": "count / minute",
    "distance": "km",
    "active_energy": "kcal",
    "water": "liter",
    "body_fat": "percent",
    "blood_oxygen": "percent",
}
#: How a unit is written in the table.
SHOWN_UNITS = {"count": "count", "hour": "h", "count / minute": "bpm", "liter": "L", "percent": "%"}
assert set(VAULT_UNITS) == set(HEALTH_RANGES)

_registry: pint.UnitRegistry | None = None
_registry_lock = threading.Lock()


def registry() -> pint.UnitRegistry:
    """One unit registry per process (building one takes about a second), with the spellings exporters use."""
    global _registry
    with _registry_lock:
        if _registry is None:
            units = pint.UnitRegistry(autoconvert_offset_to_baseunit=False)
            units.define("bpm = count / minute")
            units.define("steps = count")
            _registry = units
        return _registry


def convert(value: float, unit: str, target: str) -> float | None:
    """``value unit`` in ``target``, or None when pint cannot convert it (unknown unit, other dimension)."""
    units = registry()
    try:
        quantity = units.Quantity(value, units.parse_units(unit.strip()))
        converted = float(quantity.to(target).magnitude)
    except (pint.errors.PintError, ValueError, TypeError, AttributeError, KeyError, AssertionError, ArithmeticError):
        return None  # pint's parser asserts on some malformed expressions: every one is "cannot convert"
    return converted if math.isfinite(converted) else None


def key(value: dict[str, Any]) -> str:
    return f"{value['date']}/{value['marker']}"


def journal_path(policy: Policy, date: str) -> str:
    return f"{policy.journal_folder}/{date[:4]}/{date}.md"


def _shown(number: float) -> str:
    text = f"{round(number, 2):.10g}"
    return "0" if text == "-0" else text


def replace_section(text: str, section: str) -> str:
    """``text`` with its ``## Health`` section (up to the next heading of level 1 or 2) replaced by
    ``section``, or ``section`` appended. One pass over the lines."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.rstrip() == HEADING), None)
    if start is None:
        body = text.rstrip("\n")
        return (body + "\n\n" if body else "") + section
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith(("# ", "## "))), len(lines))
    before = "\n".join(lines[:start]).rstrip("\n")
    after = "\n".join(lines[end:])
    out = (before + "\n\n" if before else "") + section
    return out + ("\n" + after + ("\n" if not after.endswith("\n") else "") if after else "")


def plan(value: dict[str, Any], ctx: PlanContext) -> Plan:
    date, marker = value["date"], value["marker"]
    rows: list[tuple[str, str, str, str]] = []
    dropped: list[Dropped] = []
    seen: set[str] = set()
    for index, metric in enumerate(value["metrics"]):
        pointer = f"/metrics/{index}"
        name, raw, unit = metric["name"], float(metric["value"]), metric["unit"]
        target = VAULT_UNITS.get(name)
        if target is None:
            decision = decide_health_value(name, raw)
            dropped.append(Dropped(pointer, decision.rule, decision.reason))
            continue
        if name in seen:
            dropped.append(Dropped(pointer, "health-implausible-value", f"{name} is given twice; the first counts."))
            continue
        converted = convert(raw, unit, target)
        if converted is None:
            dropped.append(
                Dropped(
                    pointer,
                    rule="health-unit-unconvertible",
                    reason=f"{name}: the unit {unit[:32]!r} does not convert to {SHOWN_UNITS.get(target, target)}.",
                )
            )
            continue
        decision = decide_health_value(name, converted)
        if not decision.allowed:
            dropped.append(Dropped(pointer, decision.rule, decision.reason))
            continue
        seen.add(name)
        same = convert(1.0, unit, target) == 1.0
        rows.append((name, _shown(converted), SHOWN_UNITS.get(target, target), "" if same else f"{_shown(raw)} {unit}"))
    path = journal_path(ctx.policy, date)
    if not rows:
        return Plan(summary=f"health {date}: nothing recordable", notes=(), dropped=tuple(dropped))
    table = [
        HEADING,
        "",
        f"_Daily export {marker} (health-daily contract); replaced whole by the next export of this day._",
        "",
        "| metric | value | unit | sent as |",
        "| --- | --- | --- | --- |",
        *(f"| {n} | {v} | {u} | {s} |" for n, v, u, s in rows),
    ]
    if dropped:
        table += ["", f"_{len(dropped)} value(s) not recorded (unit or range); see the owner's task list._"]
    section = "\n".join(table) + "\n"
    current = ctx.read(path)
    text = replace_section(current if current is not None else f"# {date}\n", section)
    return Plan(
        summary=f"health {date} from {marker}: {len(rows)} metric(s)",
        notes=(PlannedNote(path, text, new=current is None),),
        dropped=tuple(dropped),
    )
