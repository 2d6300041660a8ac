"""Who made a commit, as the server recorded it: the rows it writes and what a reader is shown.

Why: a commit's author e-mail and ``Notegate-*`` trailers are words anyone can push.  The server records who
asked for each commit it makes (state ``commit_provenance``) before pushing it, and every reader --
``read_note``'s last change, ``note_history``, the console, inbox authorship -- takes the author, tier,
session and reviewer from that record only.  A commit without a record came by git: it is shown as
"pushed by" its committer as git states it, marked unverified, never with a tier
(docs/explanation/security-model.md, "Where provenance comes from").
"""

from __future__ import annotations

from collections.abc import Mapping

from notegate.vault.commits import Trailer
from notegate.vault.provenance import server_trailers
from notegate.vault.store import Author

__all__ = ["PUSHED", "pushed_by", "rows_for"]

#: The login shown for a commit the server did not make.
PUSHED = "pushed"


def rows_for(environment: str, commits: list[tuple[str, Author, str]], now: float) -> list[dict[str, object]]:
    """The provenance rows of commits the server just built: (commit id, author, the message it wrote)."""
    rows: list[dict[str, object]] = []
    for commit_id, author, message in commits:
        trailers = server_trailers(message)
        rows.append(
            {
                "environment": environment,
                "commit_id": commit_id,
                "author": author.name,
                "login": author.login,
                "client": trailers.get(Trailer.CLIENT),
                "connector": trailers.get(Trailer.CONNECTOR),
                "session": trailers.get(Trailer.SESSION),
                "tier": trailers.get(Trailer.TIER),
                "grant_id": trailers.get(Trailer.GRANT),
                "reviewed_by": trailers.get(Trailer.REVIEWED_BY),
                "authors": trailers.get(Trailer.AUTHORS),
                "contract": trailers.get(Trailer.CONTRACT),
                "at": now,
            }
        )
    return rows


def pushed_by(name: str, email: str) -> str:
    """How a commit the server did not make names who made it: git's committer, as git states it, bounded and
    on one line; a reader must not take it for a verified identity."""
    text = f"{name} <{email}>"
    text = "".join(ch if ch.isprintable() else " " for ch in text).strip()
    return f"{text[:120]} (unverified)"


def field(row: Mapping[str, object] | None, name: str) -> str | None:
    value = row[name] if row is not None else None
    return None if value is None else str(value)
