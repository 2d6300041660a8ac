"""Machine contracts: named, typed write operations for crons and phone apps (issue 16).

A contract is one module here plus its JSON Schema (Draft 2020-12) shipped beside it as package data.  The
module says what the input is (``SCHEMA``), how big a body may be (``MAX_BODY_BYTES``), what makes two
requests the same (``key``) and what the request changes (``plan``).  It never commits and never chooses
who it is: :mod:`notegate.services.contracts` validates the body against the schema first, then runs
``plan`` after a fetch and inside the environment's write lock, and makes one commit through the notes
service's recipe (authored as the machine's connector login, trailers ``Notegate-Contract`` and
``Notegate-Idempotency``).

Adding a contract: write ``notegate/contracts/<name>.py`` with ``NAME``, ``DESCRIPTION``, ``MAX_BODY_BYTES``,
``key(value)`` and ``plan(value, ctx)``, its schema ``<name>.schema.json``, and add the module to
:data:`BUILTIN_MODULES`.  A plan is a value: the notes to write whole, and what was dropped and why.
"""

from __future__ import annotations

import importlib
import importlib.resources
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from notegate.policy import Caller, Policy


@dataclass(frozen=True)
class Dropped:
    """One input item not recorded, with the rule that dropped it (shown in the response, audit and task)."""

    item: str  # the JSON pointer of the item in the input
    rule: str
    reason: str

    def as_json(self) -> dict[str, str]:
        return {"item": self.item, "rule": self.rule, "reason": self.reason}


@dataclass(frozen=True)
class PlannedNote:
    path: str
    text: str  # the note's whole new text
    new: bool = False  # the note must not exist yet
    inbox: bool = False  # an inbox item: its authorship is recorded like a session's


@dataclass(frozen=True)
class Plan:
    summary: str
    notes: tuple[PlannedNote, ...]
    dropped: tuple[Dropped, ...] = ()
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class PlanContext:
    """What a plan may look at: the policy, the current text of a note (None: absent), the caller, the time."""

    policy: Policy
    read: Callable[[str], str | None]
    caller: Caller
    now: float
    #: Checks the service runs on text a plan is about to write (the credential gate, the model-output gates).
    gates: Mapping[str, Callable[..., None]] = field(default_factory=dict)


@dataclass(frozen=True)
class Contract:
    name: str
    description: str
    schema: dict[str, Any]
    max_body_bytes: int
    key: Callable[[dict[str, Any]], str]
    plan: Callable[[dict[str, Any], PlanContext], Plan]


#: The built-in contracts: name -> module (one module and one schema each).
BUILTIN_MODULES: dict[str, str] = {
    "health-daily": "notegate.contracts.health_daily",
    "capture": "notegate.contracts.capture",
    "session-state": "notegate.contracts.session_state",
}


def load_schema(stem: str) -> dict[str, Any]:
    text = importlib.resources.files("notegate.contracts").joinpath(f"{stem}.schema.json").read_text("utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


def _build(module_name: str) -> Contract:
    module = importlib.import_module(module_name)
    return Contract(
        name=module.NAME,
        description=module.DESCRIPTION,
        schema=load_schema(module_name.rsplit(".", 1)[-1]),
        max_body_bytes=module.MAX_BODY_BYTES,
        key=module.key,
        plan=module.plan,
    )


@cache
def builtins() -> dict[str, Contract]:
    return {name: _build(module) for name, module in BUILTIN_MODULES.items()}
