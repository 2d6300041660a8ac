"""``session-state``: the reflector's output, produced on another host, posted by a machine.

Exactly what ``notegate reflect`` does with its model's answer, through the same code: the output gate
(:func:`notegate.safety.outputgate.check_output`, schema ``reflect``, sources only from the posted manifest),
the same renderers (:mod:`notegate.services.reflect`), the rendered and staged re-scans
(:func:`notegate.services.modelwrite.refuse_unsafe`), and the same paths (``reflect_state_path``; each
storable proposal an inbox capture).  Unlike the local job, a refused answer writes nothing: the machine
hears the gate's code and keeps its fallback.  State note and captures are one commit.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from notegate.contracts import Plan, PlanContext, PlannedNote
from notegate.errors import GateRejected
from notegate.safety.outputgate import check_output
from notegate.services.inbox import slugify
from notegate.services.reflect import render_capture, render_state

NAME = "session-state"
DESCRIPTION = "The reflector's output from another host -> the session state note and inbox captures."
MAX_BODY_BYTES = 64 << 10


def key(value: dict[str, Any]) -> str:
    return value["run"]


def plan(value: dict[str, Any], ctx: PlanContext) -> Plan:
    manifest = list(dict.fromkeys(value["manifest"]))
    gated = check_output(json.dumps(value["output"], ensure_ascii=False), "reflect", manifest)
    if not gated.ok:
        raise GateRejected(
            f"the reflector's output did not pass the output gate ({gated.error})",
            rule="output-gate",
            remedy="Nothing was written. Keep the run's fallback; post only output that passes the reflect schema, "
            "citing only the manifest's sources.",
        )
    output = gated.value
    now = datetime.fromtimestamp(ctx.now, UTC)
    rescan = ctx.gates["rescan"]
    state_path = ctx.policy.reflect_state_path
    state = render_state(output, manifest, now)
    notes = [PlannedNote(state_path, state, new=ctx.read(state_path) is None)]
    rescan(state_path, ctx.read(state_path) or "", state)
    warnings: list[str] = []
    for proposal in output["proposals"]:
        if proposal["kind"] == "do-not-store":
            continue
        slug = slugify(proposal["title"]) or f"reflect-{now:%Y%m%d-%H%M%S}"
        path = ctx.policy.inbox_path("capture", slug)
        if any(n.path == path for n in notes):
            continue  # two proposals of one title: the first counts, as the local job's append would merge them
        body = f"# {proposal['title'].strip()}\n\n{render_capture(proposal)}"
        old = ctx.read(path)
        text = body if old is None else old + ("" if old.endswith("\n") else "\n") + body  # as append_note joins
        refused = ctx.gates["commit_rule"](path, text)
        if refused is not None:  # as the local job: that capture is dropped, the rest is written
            warnings.append(f"a capture was dropped [{refused}]")
            continue
        rescan(path, old or "", text)
        notes.append(PlannedNote(path, text, new=old is None, inbox=True))
    return Plan(
        summary=f"session state from reflector run {value['run']}", notes=tuple(notes), warnings=tuple(warnings)
    )
