"""What the scheduled jobs (reviewer, reflector) share: the services they write through, as their own caller.

A job writes only through the notes and inbox services, so every policy, gate and revision rule applies to it
exactly as to a person; its caller is bound to the one environment it works in.  It takes the process's
:class:`Services` container rather than building its own, so a job and a door in one process share the
inbox's caches and one constructor wires them all.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from notegate.models import DataPart, ModelError, ModelSkipped
from notegate.models.chain import FallbackChain
from notegate.policy import Caller
from notegate.safety.outputgate import check_output, load_schema
from notegate.services.container import Services


class Job:
    def __init__(self, services: Services, chain: FallbackChain, caller: Caller, environment: str | None) -> None:
        runtime = services.runtime
        self.rt = runtime
        self.chain = chain
        self.environment = environment
        self.notes = services.notes
        self.inbox = services.inbox
        self.policy = runtime.policy
        self.caller = replace(caller, environment=runtime.config.environment(environment).name)

    def ask(self, system: str, parts: list[DataPart], schema_name: str, manifest: list[str]) -> Answer:
        """One structured question to the model chain; the answer is only ever the output gate's value."""
        try:
            done = self.chain.complete(
                system,
                parts,
                load_schema(schema_name),
                schema_name=schema_name,
                timeout=self.rt.config.models.timeout_seconds,
            )
        except ModelSkipped:
            return Answer(skipped=True)
        except ModelError as exc:
            return Answer(error=exc.rule, stage="model")
        result = check_output(done.text, schema_name, manifest)
        if not result.ok:
            return Answer(error=result.error or "gate", stage="gate")
        return Answer(value=result.value)


@dataclass(frozen=True)
class Answer:
    value: Any | None = None  # the gated answer
    skipped: bool = False  # no model configured (the `none` provider): decisions left undone
    error: str | None = None  # a model failure's rule, or the output gate's code
    stage: str | None = None  # "model" or "gate"
