"""Commit messages, built and read in one place (pure): the server's, with its ``Notegate-*`` trailers, and
a workstation's (``notegate sync``), which speaks in its own voice.

Why its own module: every commit the server makes (the recipe, import, init, inbox promotion, the machine
contracts) is spelled by :func:`commit_message`, and the provenance row recorded before the push reads the
same trailers back (:func:`parse_trailers`); ``notegate sync`` spells its commits with
:func:`sync_message` and :func:`sync_author_email`.  The trailers are a closed set (:data:`TRAILERS`): a
name outside it is a bug, refused where the message is built.  Recognising a pushed commit that only
pretends to be the server's, and the server's identities, live beside it in :mod:`notegate.vault.provenance`
(re-exported here).
"""

from __future__ import annotations

from enum import StrEnum

from notegate.policy import Caller
from notegate.vault.provenance import SERVER_COMMITTER, SERVER_EMAIL_DOMAIN, server_trailers

__all__ = [
    "SERVER_COMMITTER",
    "SERVER_EMAIL_DOMAIN",
    "SYNCED_FROM",
    "TRAILERS",
    "Trailer",
    "commit_message",
    "contract_trailers",
    "parse_trailers",
    "sync_author_email",
    "sync_message",
]


class Trailer(StrEnum):
    """Every trailer the server writes, and so every one it reads back: who asked (client, connector login,
    session, tier, grant), who reviewed an inbox item and who wrote it, and a machine contract's name and key.
    Code names them by member (tests/test_vocab_once.py fails on a spelling anywhere else)."""

    CLIENT = "Notegate-Client"
    CONNECTOR = "Notegate-Connector"
    SESSION = "Notegate-Session"
    TIER = "Notegate-Tier"
    GRANT = "Notegate-Grant"
    REVIEWED_BY = "Notegate-Reviewed-By"
    AUTHORS = "Notegate-Authors"
    CONTRACT = "Notegate-Contract"
    IDEMPOTENCY = "Notegate-Idempotency"


#: The closed set, as the names a message carries.
TRAILERS = frozenset(Trailer)
#: The one line a workstation's commit carries: which sync connector made it (never a ``Notegate-*`` one).
SYNCED_FROM = "Synced-From"


def parse_trailers(message: str) -> dict[str, str]:
    """The trailers of a message the server itself built (those of :data:`TRAILERS`). Never who made a commit
    read back from git: that comes from the server's record only (:func:`notegate.services.history.change_info`)."""
    return {name: value for name, value in server_trailers(message).items() if name in TRAILERS}


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
    readers take who made a commit from the server's record (:func:`notegate.services.history.change_info`), and a
    pushed commit carrying such a trailer is refused by the git door."""
    unknown = sorted(set(extra or {}) - TRAILERS)
    if unknown:
        raise ValueError(f"not a trailer the server writes: {', '.join(unknown)}")
    trailers = {
        Trailer.CLIENT: caller.client,
        Trailer.CONNECTOR: caller.connector_id,
        Trailer.SESSION: caller.session,
        Trailer.TIER: caller.tier,
        **({Trailer.GRANT: caller.grant_id} if caller.grant_id else {}),
        **(extra or {}),
    }
    body = "\n".join(f"{k}: {_trailer_value(v)}" for k, v in trailers.items())
    return f"{_trailer_value(summary)[:100]}\n\n{body}\n"


def contract_trailers(contract: str, key: str) -> dict[str, str]:
    """The trailers of a machine contract's commit (:mod:`notegate.services.contracts`): which contract, and the
    idempotency key it recorded; passed to :meth:`NotesService.commit_as` beside the caller's own trailers."""
    return {Trailer.CONTRACT: contract, Trailer.IDEMPOTENCY: key}


def sync_message(summary: str, connector: str) -> str:
    """A workstation's commit message (``notegate sync``): it reaches the vault by push, so it speaks in its
    own voice -- no ``Notegate-*`` trailer, which the origin's hook and the server's fetch would refuse --
    and readers show it as pushed, never with a tier (docs/explanation/security-model.md, "Where
    provenance comes from")."""
    return f"{summary}\n\n{SYNCED_FROM}: {connector}\n"


def sync_author_email(login: str, device: str) -> str:
    """A workstation commit's author e-mail: the owner at that device, never one of the server's identities."""
    return f"{login}@{device}.sync.invalid"
