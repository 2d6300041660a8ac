"""The audit page's filters, parsed from the query string: pure, bounded, total.

Every value is checked before it reaches SQL (which binds it anyway): a bounded length, printable text, times
as ISO dates or times in UTC (what an ``<input type="datetime-local">`` sends) or a duration back from
``now``, and a page size of at most :data:`MAX_PAGE`. Anything else raises ``[console-bad-query]`` naming the
field, never echoing more than a short, escaped prefix of what was sent. Unknown fields are refused too, so a
typo is not silently "no filter".
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime

from notegate.errors import NotegateError

MAX_PAGE = 200
DEFAULT_PAGE = 50
MAX_FIELD = {"env": 100, "connector": 200, "tool": 100, "path": 1024, "outcome": 200, "since": 40, "until": 40}
FIELDS = (*MAX_FIELD, "before", "limit", "views")
_UNITS = {"m": 60, "h": 3600, "d": 86400}
_TOOL_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-:.")


@dataclass(frozen=True)
class AuditQuery:
    env: str | None = None
    connector: str | None = None
    tool: str | None = None
    path: str | None = None
    outcome: str | None = None
    since: float | None = None
    until: float | None = None
    before: int | None = None
    limit: int = DEFAULT_PAGE
    #: Show the console's own page views (the owner reading notes in the browser)? Off by default: they are
    #: not what the audit is read for, and they bury the tool calls of the connectors.
    views: bool = False
    #: The filters as sent (for the form and the "older" link), times as typed.
    raw: tuple[tuple[str, str], ...] = ()

    def link(self, **changes: str | None) -> list[tuple[str, str]]:
        """The query string pairs of this filter with ``changes`` applied (None drops a field)."""
        values = dict(self.raw)
        for key, value in changes.items():
            if value is None:
                values.pop(key, None)
            else:
                values[key] = value
        return [(k, v) for k, v in values.items() if v != ""]


def _refuse(field: str, why: str) -> NotegateError:
    return NotegateError(f"the audit filter '{field}' {why}", rule="console-bad-query")


def parse_time(field: str, raw: str, now: float) -> float:
    """A UTC ISO date/time, or ``30m``/``2h``/``7d`` back from ``now``."""
    text = raw.strip()
    if len(text) >= 2 and text[:-1].isascii() and text[:-1].isdigit() and text[-1] in _UNITS and len(text) <= 8:
        return now - int(text[:-1]) * _UNITS[text[-1]]
    try:
        when = datetime.fromisoformat(text) if text.isascii() else None
        if when is not None:
            return (when if when.tzinfo else when.replace(tzinfo=UTC)).timestamp()
    except (ValueError, OverflowError):  # not a date, or one no timestamp can hold (year 1 at -23:59)
        pass
    raise _refuse(field, "is neither a UTC date or time (2026-12-01, 2026-12-01T10:00) nor a duration (2h)")


def parse_audit_query(pairs: Iterable[tuple[str, str]], *, now: float) -> AuditQuery:
    """The filters of one audit page request. Empty fields mean "no filter"; each field at most once."""
    seen: dict[str, str] = {}
    for count, (key, value) in enumerate(pairs):
        if count >= 2 * len(FIELDS):
            raise _refuse("query", "has too many fields")
        if key not in FIELDS:
            raise _refuse(key[:20] if key.isprintable() else "?", "is not one of this page's filters")
        if key in seen:
            raise _refuse(key, "is given twice")
        seen[key] = value
    values: dict[str, object] = {}
    for key, limit in MAX_FIELD.items():
        value = seen.get(key, "")
        if value == "":
            continue
        if len(value) > limit:
            raise _refuse(key, f"is longer than {limit} characters")
        if not value.isprintable():
            raise _refuse(key, "holds control or invisible characters")
        if key == "tool" and not set(value) <= _TOOL_CHARS:
            raise _refuse(key, "is not a tool name (letters, digits, - _ : .)")
        values[key] = parse_time(key, value, now) if key in ("since", "until") else value
    since, until = values.get("since"), values.get("until")
    if isinstance(since, float) and isinstance(until, float) and until <= since:
        raise _refuse("until", "is not after 'since'")
    views = seen.get("views", "")
    if views not in ("", "1"):
        raise _refuse("views", "is not 1 (show the console's page views) or empty")
    for key in ("before", "limit"):
        value = seen.get(key, "")
        if value == "":
            continue
        if not (value.isascii() and value.isdigit() and len(value) <= 12):
            raise _refuse(key, "is not a whole number")
        values[key] = int(value)
    limit = values.get("limit", DEFAULT_PAGE)
    assert isinstance(limit, int)
    if not 1 <= limit <= MAX_PAGE:
        raise _refuse("limit", f"is not between 1 and {MAX_PAGE}")
    return AuditQuery(
        env=values.get("env"),  # type: ignore[arg-type]
        connector=values.get("connector"),  # type: ignore[arg-type]
        tool=values.get("tool"),  # type: ignore[arg-type]
        path=values.get("path"),  # type: ignore[arg-type]
        outcome=values.get("outcome"),  # type: ignore[arg-type]
        since=since,  # type: ignore[arg-type]
        until=until,  # type: ignore[arg-type]
        before=values.get("before"),  # type: ignore[arg-type]
        limit=limit,
        views=views == "1",
        raw=tuple((k, seen[k]) for k in FIELDS if k in seen and k != "before"),
    )
