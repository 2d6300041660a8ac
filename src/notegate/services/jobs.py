"""What the scheduled jobs (reviewer, reflector) share: the services they write through, as their own caller.

A job writes only through the notes and inbox services, so every policy, gate and revision rule applies to it
exactly as to a person; its caller is bound to the one environment it works in.
"""

from __future__ import annotations

from dataclasses import replace

from notegate.models import DataPart
from notegate.models.chain import FallbackChain
from notegate.models.gated import Answer, ask
from notegate.policy import Caller
from notegate.services.inbox import InboxService
from notegate.services.notes import NotesService
from notegate.services.runtime import Runtime

__all__ = ["Answer", "Job"]  # Answer lives in notegate.models.gated; kept importable here


class Job:
    def __init__(self, runtime: Runtime, chain: FallbackChain, caller: Caller, environment: str | None) -> None:
        self.rt = runtime
        self.chain = chain
        self.environment = environment
        self.notes = NotesService(runtime)
        self.inbox = InboxService(self.notes)
        self.policy = runtime.policy
        self.caller = replace(caller, environment=runtime.config.environment(environment).name)

    def ask(self, system: str, parts: list[DataPart], schema_name: str, manifest: list[str]) -> Answer:
        """One structured question through the shared gated call (the hook asks the same way)."""
        return ask(self.chain, system, parts, schema_name, manifest, timeout=self.rt.config.models.timeout_seconds)
