"""Pure decisions: may this caller do this action to this path?

Theory of operation
-------------------
* Every door and service asks here; nothing decides tiers or path classes anywhere else.
* Decisions are values (:class:`Decision`) carrying the rule's name and a reason a model can act on.
  The last branch of every decision denies: a case nobody thought of is refused, not allowed.
* Path classes come from globs in the policy file (matched case-insensitively, so ``PRIVATE/x.md`` is as
  private as ``private/x.md``); code holds no path constants.
* This module does no I/O: the policy table is parsed by :func:`policy_from_table` from the already
  loaded TOML, and the clock is a parameter where time matters.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from functools import lru_cache
from typing import Any

from notegate.errors import ConfigError

MAX_NOTE_BYTES = 1 << 20
FETCH_INTERVAL_SECONDS = 5.0
REPACK_LOOSE_OBJECTS = 2000
PREVIEW_TTL_SECONDS = 1800

TIERS = ("restricted", "trusted", "machine")
CLIENT_CLASSES = ("hosted", "workstation", "machine")


class Action(StrEnum):
    READ = "read"
    LIST = "list"
    SEARCH = "search"
    HISTORY = "history"
    CREATE = "create"
    OVERWRITE = "overwrite"
    APPEND = "append"
    MOVE = "move"
    DELETE = "delete"
    RESTORE = "restore"


READ_ACTIONS = frozenset({Action.READ, Action.LIST, Action.SEARCH, Action.HISTORY})


@dataclass(frozen=True)
class Caller:
    """Who makes a request. Decided from credentials by the door, never from what a caller writes."""

    login: str
    display_name: str
    client: str
    client_class: str
    tier: str
    session: str = "-"
    environment: str | None = None


@dataclass(frozen=True)
class Decision:
    allowed: bool
    rule: str
    reason: str


def allow(rule: str, reason: str = "") -> Decision:
    return Decision(True, rule, reason)


def deny(rule: str, reason: str) -> Decision:
    return Decision(False, rule, reason)


# ------------------------------------------------------------------ globs
@lru_cache(maxsize=512)
def _glob_regex(glob: str) -> re.Pattern[str]:
    """``**`` spans segments, ``*`` and ``?`` stay inside one segment; matched case-insensitively."""
    out = []
    i = 0
    while i < len(glob):
        if glob.startswith("**/", i):
            out.append(r"(?:[^/]+/)*")
            i += 3
        elif glob.startswith("**", i):
            out.append(r".*")
            i += 2
        elif glob[i] == "*":
            out.append(r"[^/]*")
            i += 1
        elif glob[i] == "?":
            out.append(r"[^/]")
            i += 1
        else:
            out.append(re.escape(glob[i].casefold()))
            i += 1
    return re.compile("".join(out) + r"\Z", re.DOTALL)


def glob_match(glob: str, path: str) -> bool:
    return _glob_regex(glob).match(path.casefold()) is not None


def any_match(globs: Iterable[str], path: str) -> bool:
    return any(glob_match(g, path) for g in globs)


def folder_could_hold(globs: Iterable[str], folder: str) -> bool:
    """True when some note inside ``folder`` could match one of ``globs`` (used to hide whole folders)."""
    probe = f"{folder}/x.md" if folder else "x.md"
    return any_match(globs, probe)


# ----------------------------------------------------------------- policy
@dataclass(frozen=True)
class PolicySetting:
    name: str
    kind: type | tuple[type, ...]
    default: Any
    help: str


POLICY_SETTINGS: tuple[PolicySetting, ...] = (
    PolicySetting("private", list, ["private/**"], "Globs of notes invisible to restricted callers."),
    PolicySetting(
        "protected", list, ["rules/**"], "Globs only trusted callers may change, always through a two-step write."
    ),
    PolicySetting("max_note_bytes", int, MAX_NOTE_BYTES, "Largest note accepted, in bytes of UTF-8."),
    PolicySetting(
        "two_step_classes", list, ["hosted"], "Client classes whose writes must be previewed before confirming."
    ),
    PolicySetting(
        "fetch_interval_seconds", (int, float), FETCH_INTERVAL_SECONDS, "How often the server fetches the origin."
    ),
    PolicySetting(
        "repack_loose_objects", int, REPACK_LOOSE_OBJECTS, "Repack the server's clone past this many loose objects."
    ),
    PolicySetting("preview_ttl_seconds", int, PREVIEW_TTL_SECONDS, "How long a two-step preview may be confirmed."),
)


@dataclass(frozen=True)
class Policy:
    private: tuple[str, ...] = ("private/**",)
    protected: tuple[str, ...] = ("rules/**",)
    max_note_bytes: int = MAX_NOTE_BYTES
    two_step_classes: tuple[str, ...] = ("hosted",)
    fetch_interval_seconds: float = FETCH_INTERVAL_SECONDS
    repack_loose_objects: int = REPACK_LOOSE_OBJECTS
    preview_ttl_seconds: int = PREVIEW_TTL_SECONDS

    # ---------------------------------------------------------- path classes
    def is_private(self, path: str) -> bool:
        return any_match(self.private, path)

    def is_protected(self, path: str) -> bool:
        return any_match(self.protected, path)


def policy_from_table(table: dict[str, Any]) -> Policy:
    """Validate the ``[policy]`` table: unknown keys and wrong types stop start-up."""
    known = {s.name: s for s in POLICY_SETTINGS}
    for key in table:
        if key not in known:
            raise ConfigError(
                f"unknown key '{key}' in [policy]",
                remedy=f"Known keys: {', '.join(sorted(known))}. Remove or correct it.",
            )
    values: dict[str, Any] = {}
    for setting in POLICY_SETTINGS:
        value = table.get(setting.name, setting.default)
        kind = setting.kind
        if isinstance(value, bool) or not isinstance(value, kind):
            raise ConfigError(f"[policy] {setting.name} has the wrong type", remedy=setting.help)
        if isinstance(value, list):
            if not all(isinstance(v, str) and v for v in value):
                raise ConfigError(f"[policy] {setting.name} must be a list of non-empty strings", remedy=setting.help)
            value = tuple(value)
        values[setting.name] = value
    for cls in values["two_step_classes"]:
        if cls not in CLIENT_CLASSES:
            raise ConfigError(
                f"[policy] two_step_classes names an unknown class '{cls}'",
                remedy=f"Classes: {', '.join(CLIENT_CLASSES)}.",
            )
    if values["max_note_bytes"] <= 0 or values["max_note_bytes"] > 64 << 20:
        raise ConfigError("[policy] max_note_bytes must be between 1 and 64 MiB")
    if values["fetch_interval_seconds"] <= 0:
        raise ConfigError("[policy] fetch_interval_seconds must be positive")
    return Policy(**values)


# -------------------------------------------------------------- decisions
def can_see(policy: Policy, caller: Caller, path: str) -> bool:
    """Visibility: what a caller may not see is not there (it is never 'denied')."""
    if caller.tier == "trusted":
        return True
    return not policy.is_private(path)


def decide_reader(caller: Caller) -> Decision:
    """May ``caller`` use the knowledge tools at all (list, search: results are then filtered)?"""
    if caller.tier == "machine" or caller.client_class == "machine":
        return deny(
            "machine-no-mcp",
            "machine credentials cannot use the knowledge tools; machines write through typed contracts.",
        )
    if caller.tier in ("restricted", "trusted"):
        return allow("reader")
    return deny("unknown-tier", f"tier '{caller.tier}' may not read notes.")


def decide(policy: Policy, caller: Caller, action: Action, path: str) -> Decision:
    """May ``caller`` do ``action`` to ``path``?"""
    reader = decide_reader(caller)
    if not reader.allowed:
        return reader
    if action in READ_ACTIONS:
        if can_see(policy, caller, path):
            return allow("visible")
        return deny("no-such-note", "no such note.")
    if caller.tier == "trusted":
        if not can_see(policy, caller, path):  # pragma: no cover - trusted sees everything
            return deny("no-such-note", "no such note.")
        if policy.is_protected(path):
            return allow("protected-trusted", "protected path: trusted callers only, always two-step.")
        return allow("trusted-write")
    if caller.tier == "restricted":
        if not can_see(policy, caller, path):
            return deny("no-such-note", "no such note.")
        return deny(
            "restricted-read-only",
            f"a restricted session cannot {action.value} notes. It may read, list and search; "
            "ask the owner for a trusted credential to change notes.",
        )
    return deny("unknown-tier", f"tier '{caller.tier}' may not {action.value} notes.")


def requires_two_step(policy: Policy, caller: Caller, path: str) -> bool:
    """Must this write be previewed (unconfirmed) before it may be confirmed?"""
    return caller.client_class in policy.two_step_classes or policy.is_protected(path)
