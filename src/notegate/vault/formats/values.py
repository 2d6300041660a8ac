"""Value checks the formats share: times in UTC, front matter keys taken out and checked, frozen-field setters.

Times are parameters (``datetime`` values with a time zone), never read from a clock; they are stored in
UTC, cut to the precision the format stores so that round trips are exact.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from notegate.vault.frontmatter import FormatError, FrontMatter, render_front_matter


def utc(value: object, what: str, *, minutes: bool = False) -> datetime:
    """An aware datetime in UTC, cut to the precision the format stores (so round trips are exact)."""
    if not isinstance(value, datetime) or value.utcoffset() is None:
        raise FormatError(f"{what} must be a datetime with a time zone (UTC is stored).", rule="format-value")
    value = value.astimezone(UTC).replace(microsecond=0)
    return value.replace(second=0) if minutes else value


def format_timestamp(value: datetime) -> str:
    return value.replace(tzinfo=None).isoformat(timespec="seconds") + "Z"


def parse_timestamp(raw: str, what: str) -> datetime:
    try:
        parsed = datetime.fromisoformat(raw)
    except ValueError:
        parsed = None
    if parsed is None or parsed.utcoffset() is None:
        raise FormatError(f"{what} must be an ISO 8601 timestamp with a zone, like 2025-01-02T10:00:00Z.")
    return utc(parsed, what)


def set_field(obj: object, name: str, value: object) -> None:
    object.__setattr__(obj, name, value)  # normalising a frozen dataclass in __post_init__


def check_extra(extra: object, known: Sequence[str], what: str) -> dict[str, str | list[str]]:
    """Front matter a person added: kept through a rewrite, but never a known key and never unsafe."""
    if not isinstance(extra, dict):
        raise FormatError(f"{what}: extra front matter must be a dict.", rule="format-value")
    clash = sorted(set(extra) & set(known))
    if clash:
        raise FormatError(f"{what}: extra front matter repeats the keys {clash}.", rule="format-value")
    render_front_matter(extra)  # raises FrontMatterError on an unsafe key or value
    return dict(extra)


def take(data: FrontMatter, key: str, what: str) -> str:
    value = data.pop(key, None)
    if not isinstance(value, str):
        raise FormatError(f"{what}: front matter needs a one-line '{key}' value.", rule="format-front-matter")
    return value


def take_list(data: FrontMatter, key: str) -> tuple[str, ...]:
    # Obsidian writes an empty list property as 'key:' and a single tag as 'key: tag'.
    value = data.pop(key, [])
    if isinstance(value, str):
        return (value,) if value else ()
    return tuple(value)
