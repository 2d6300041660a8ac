"""The server's commit messages: a summary line and its ``Notegate-*`` trailers, built in one place (pure).

Why its own module: every commit the server makes (the recipe, import, init, inbox promotion, the machine
contracts) is spelled by :func:`commit_message`, and the provenance row recorded before the push reads the
same trailers back (:func:`parse_trailers`).  Recognising a pushed commit that only pretends to be the
server's, and the server's identities, live beside it in :mod:`notegate.vault.provenance`.
"""

from __future__ import annotations

from notegate.policy import Caller
from notegate.vault.provenance import server_trailers

#: The trailers of a message the server itself built. Never who made a commit read back from git: that
#: comes from the server's record only (:func:`notegate.services.notes.change_info`).
parse_trailers = server_trailers


def _trailer_value(value: str) -> str:
    """Trailer values come from callers' names: one printable line, bounded.

    Nearly every value is printable already (``str.isprintable`` is one C pass); only the rest is rebuilt
    character by character, which cost more than the commit message's other work together."""
    if not value.isprintable():
        value = "".join(ch if ch.isprintable() else " " for ch in value)
    cleaned = value.strip()
    return cleaned[:120] or "-"


def commit_message(caller: Caller, summary: str, extra: dict[str, str] | None = None) -> str:
    """The one spelling of the server's commit messages: a summary line, then trailers naming the connector
    login, session and tier (and a grant's public id, never its value). For people reading ``git log`` only:
    readers take who made a commit from the server's record (:func:`notegate.services.notes.change_info`), and a
    pushed commit carrying such a trailer is refused by the git door."""
    trailers = {
        "Notegate-Client": caller.client,
        "Notegate-Connector": caller.connector_id,
        "Notegate-Session": caller.session,
        "Notegate-Tier": caller.tier,
        **({"Notegate-Grant": caller.grant_id} if caller.grant_id else {}),
        **(extra or {}),
    }
    body = "\n".join(f"{k}: {_trailer_value(v)}" for k, v in trailers.items())
    return f"{_trailer_value(summary)[:100]}\n\n{body}\n"


def contract_trailers(contract: str, key: str) -> dict[str, str]:
    """The trailers of a machine contract's commit (:mod:`notegate.services.contracts`): which contract, and the
    idempotency key it recorded; passed to :meth:`NotesService.commit_as` beside the caller's own trailers."""
    return {"Notegate-Contract": contract, "Notegate-Idempotency": key}
