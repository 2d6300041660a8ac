"""What the scheduled jobs (reviewer, reflector) share: the services they write through, as their own caller.

A job writes only through the notes and inbox services, so every policy, gate and revision rule applies to it
exactly as to a person; its caller is bound to the one environment it works in.  It takes the process's
:class:`Services` container rather than building its own, so a job and a door in one process share the
inbox's caches and one constructor wires them all.
"""

from __future__ import annotations

from dataclasses import replace

from notegate.models import DataPart
from notegate.models.chain import FallbackChain
from notegate.models.gated import Answer, ask
from notegate.policy import Caller
from notegate.services.container import Services

__all__ = ["Answer", "Job"]  # Answer lives in notegate.models.gated; kept importable here


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

    def remember_run(self, job: str, line: str) -> None:
        """Keep this run's one-line result (counts and codes only) for the owner's status page."""
        self.rt.state.record_job_run(job=job, environment=self.caller.environment, at=self.rt.clock(), line=line)

    def ask(self, system: str, parts: list[DataPart], schema_name: str, manifest: list[str]) -> Answer:
        """One structured question through the shared gated call (the hook asks the same way)."""
        return ask(self.chain, system, parts, schema_name, manifest, timeout=self.rt.config.models.timeout_seconds)
