"""Where a commit's "who" comes from, and how a pushed commit could pretend to be the server's (pure).

Why its own module: a commit's author e-mail and its ``Notegate-*`` trailers are text anyone can write into
a commit and push.  The server's record of who made a commit lives in the state database
(``commit_provenance``, written before the commit is pushed); these functions only *recognise* a commit
that claims to be the server's, so the git door (the pre-receive hook, the server's fetch) can refuse it
(:func:`notegate.policy.decide_commit_provenance`), and say how a commit without a record is shown.

Recognising a trailer is deliberately wide: each line is folded as instruction-file names are
(:func:`notegate.safety.names.fold_name`: NFKD, UTS #39 look-alikes, case folding, invisible characters
dropped), whitespace is dropped, and lines a mail-style reader would fold together (a line starting with
whitespace continues the previous one) are joined first.  A line whose fold starts with ``notegate-`` and
has a ``:`` is a trailer here, whatever the reader that would take it for one: a false refusal costs the
pusher a reworded commit message, a miss puts "trusted, reviewed by owner" in front of someone.
"""

from __future__ import annotations

import re

from notegate.safety.names import fold_name

__all__ = [
    "SERVER_COMMITTER",
    "SERVER_EMAIL_DOMAIN",
    "carries_notegate_trailer",
    "claims_server_identity",
    "server_trailers",
]

#: The committer of every commit the server makes (name, e-mail).
SERVER_COMMITTER = ("notegate", "notegate@localhost")
#: The server's author e-mails are ``<login>@notegate``.
SERVER_EMAIL_DOMAIN = "@notegate"

_FOLDED_PREFIX = fold_name("notegate-")
_FOLDED_DOMAIN = fold_name(SERVER_EMAIL_DOMAIN)
_FOLDED_COMMITTER = fold_name(SERVER_COMMITTER[1])
_SPACE = re.compile(r"\s+")
#: The server's own trailer spelling (what it writes; read back only from its own messages).
_TRAILER = re.compile(r"^(Notegate-[A-Za-z-]+):\s*(.*)$")


def _folded(line: str) -> str:
    return fold_name(_SPACE.sub("", line))


def _unfolded(lines: list[str]) -> list[str]:
    """Lines with mail-style continuations (a line starting with whitespace) joined to the line before (each
    group joined once: linear in the message, however many continuation lines it has)."""
    groups: list[list[str]] = []
    for line in lines:
        if groups and line[:1].isspace():
            groups[-1].append(line)
        else:
            groups.append([line])
    return ["".join(group) for group in groups if len(group) > 1]


def carries_notegate_trailer(message: str) -> bool:
    """Does ``message`` spell a ``Notegate-*`` trailer on any line, in any look-alike way, folded or not?
    Every line splitter Python knows is used (``\\r``, ``\\u2028`` …), which splits more than git does: more
    lines can only find more.  Every line is looked at (no cap a trailer could hide behind): linear time."""
    raw = message.splitlines()
    for line in (*raw, *_unfolded(raw)):
        folded = _folded(line)
        if folded.startswith(_FOLDED_PREFIX) and ":" in folded:
            return True
    return False


def claims_server_identity(email: str) -> bool:
    """Is ``email`` one of the server's own identities (an author ``<login>@notegate``, the committer
    ``notegate@localhost``), in any look-alike spelling?"""
    folded = _folded(email.strip("<> \t"))
    return folded.endswith(_FOLDED_DOMAIN) or folded == _FOLDED_COMMITTER


def server_trailers(message: str) -> dict[str, str]:
    """The ``Notegate-*`` trailers of a message **the server itself just built** (the provenance row it
    records before pushing). Never call this on a commit read back from git: anyone can push those."""
    out: dict[str, str] = {}
    for line in message.splitlines():
        match = _TRAILER.match(line.strip())
        if match:
            out[match.group(1)] = match.group(2).strip()
    return out
