"""The services of one process, built once from its Runtime and shared by every door and job in it.

Why one container: the inbox keeps caches (floor verdicts, item listings) and the notes service keeps the
preview ledger's view; two copies in one process would each see half.  Doors (MCP over HTTP or stdio) and
jobs (``notegate review``, ``notegate reflect``, ``notegate import``) take a :class:`Services` instead of
wiring their own, so a service's constructor changes in one place.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING

from notegate.services.inbox import InboxService
from notegate.services.notes import NotesService
from notegate.services.runtime import Runtime
from notegate.services.sessions import SessionsService

if TYPE_CHECKING:
    from notegate.services.contracts import ContractsService


@dataclass(frozen=True)
class Services:
    runtime: Runtime
    notes: NotesService
    inbox: InboxService
    sessions: SessionsService

    @functools.cached_property
    def contracts(self) -> ContractsService:
        """Built on first use: only the contract door needs it, and its module (schemas, the built-in
        contracts) is start-up time a server spends before its first MCP read and a job never uses."""
        from notegate.services.contracts import ContractsService

        return ContractsService(self.notes)

    @classmethod
    def build(cls, runtime: Runtime) -> Services:
        notes = NotesService(runtime)
        inbox = InboxService(notes)
        return cls(
            runtime=runtime,
            notes=notes,
            inbox=inbox,
            sessions=SessionsService(notes, inbox),
        )

    @classmethod
    def of(cls, source: Runtime | Services) -> Services:
        """The container itself, or one built from a bare Runtime (callers that hold only a runtime)."""
        return source if isinstance(source, Services) else cls.build(source)
