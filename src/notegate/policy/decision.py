"""The verdict every decision returns (:class:`Decision`, built by :func:`allow` and :func:`deny`) and the
verbs a note decision is asked about (:class:`Action`).

Why a module of its own: every other module of :mod:`notegate.policy` returns these, so they sit below all of
them and import nothing of the package.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


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
class Decision:
    allowed: bool
    rule: str
    reason: str


def allow(rule: str, reason: str = "") -> Decision:
    return Decision(True, rule, reason)


def deny(rule: str, reason: str) -> Decision:
    return Decision(False, rule, reason)
