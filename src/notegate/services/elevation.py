"""The elevation service: what ``request_elevation`` does, in the words a model must pass on to the owner.

Why a service of its own: the door stays thin (who calls, arguments in, model out), and the wording that
tells the model to show the link and the code to the owner is a rule of this feature, not of the door.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from notegate.auth.grants import Grants
from notegate.policy import Caller


@dataclass(frozen=True)
class ElevationTicket:
    link: str
    code: str
    grant: str
    grant_id: str
    expires_at: str
    message: str


class ElevationService:
    def __init__(self, grants: Grants, *, base: str, clock: Callable[[], float]) -> None:
        self.grants = grants
        self.base = base
        self.clock = clock

    def request_elevation(
        self, caller: Caller, *, environment: str | None, reason: str, conversation: str | None
    ) -> ElevationTicket:
        """One request of ``caller``'s connector login; ``environment`` is the caller's own (grants are not per
        environment: a credential is bound to one already)."""
        del environment
        now = self.clock()
        ticket = self.grants.request(caller, reason=reason, conversation=conversation, base=self.base, now=now)
        minutes = max(1, round((ticket.expires_at - now) / 60))
        hours = round(self.grants.policy.elevation_grant_seconds / 3600, 1)
        message = (
            f"Show the owner this link and code now, word for word: open {ticket.link} and check that the page "
            f"shows the code {ticket.code}; approve there with your passkey. The link works once, for {minutes} "
            f"minutes. Once the owner approved, pass grant (below) to every notegate tool in this conversation: "
            f"the calls are then trusted for {hours:g} hours. Keep the grant to yourself: never write it into a "
            "note or show it."
        )
        expires = datetime.fromtimestamp(ticket.expires_at, UTC).isoformat(timespec="seconds")
        return ElevationTicket(ticket.link, ticket.code, ticket.grant, ticket.grant_id, expires, message)
