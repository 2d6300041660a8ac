"""The task note a contract call leaves the owner when it dropped values: code's words outside, the machine's
inside a fence.

A task note reaches the owner's trusted session first in ``list_inbox``, so it must never carry a caller's
words as the server's (issue 27: a ``health-daily`` post's unknown metric names and marker reached the
owner's session unquoted, authored "notegate (the server)").  What a caller chose -- the idempotency key (a
marker, a capture id), metric names, units, anything a plan's reasons quote -- goes only inside one quote
made by :func:`notegate.vault.fence.fence_untrusted`; outside it the note says only what code produced:
the contract's name, the connector login's id, a count, the JSON pointers and rules of what was dropped,
the commit id and a hash of the key.  Inside the quote every character that hides or breaks a line is
shown as an escape (``\\u202e``), so the quoted text reads as what was sent, one value to a line.

The task's key (what ``list_inbox`` shows as its version) is a hash of the connector login and the
idempotency key: it never carries the caller's text either.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

from notegate.contracts import Dropped
from notegate.vault.fence import fence_untrusted

#: Dropped items listed in one note (the response and the audit row name them all).
SHOWN_DROPPED = 20
#: Characters of one quoted value kept (a key, a reason): enough to recognise it, bounded whatever was sent.
QUOTED_CHARS = 200
#: The whole quote's cap; past it the fence says how much was left out.
QUOTE_CHARS = 6000
FENCE_LABEL = "what the machine sent"


def shown(value: str) -> str:
    """``value`` on one visible line: a backslash doubled, every character that is not printable (line
    breaks, controls, bidi and other format characters, separators other than the space, unassigned and
    private-use code points) as its ``\\uXXXX`` / ``\\UXXXXXXXX`` escape; cut to QUOTED_CHARS."""
    out = []
    for ch in value[:QUOTED_CHARS]:
        if ch == "\\":
            out.append("\\\\")
        elif ch == " " or ch.isprintable():
            out.append(ch)
        else:
            cp = ord(ch)
            out.append(f"\\u{cp:04x}" if cp <= 0xFFFF else f"\\U{cp:08x}")
    return "".join(out) + ("…" if len(value) > QUOTED_CHARS else "")


def key_hash(connector: str, key: str) -> str:
    """A short hash naming one connector's idempotency key without its text."""
    return hashlib.sha256(f"{connector}\n{key}".encode("utf-8", "surrogatepass")).hexdigest()[:16]


def task_key(contract: str, connector: str, key: str) -> str:
    """The task's key in the state (one open task per contract, connector login and idempotency key)."""
    return f"{contract}:{key_hash(connector, key)}"


def dropped_task_text(
    contract: str, connector: str, key: str, dropped: Iterable[Dropped], commit: str | None, hint: str
) -> str:
    """The task note for values a contract call dropped. ``contract``, ``connector`` (an id such as
    ``token:<id>``), the items' pointers and rules, ``commit`` and ``hint`` are code's; ``key`` and each
    item's reason may quote the caller and are fenced."""
    items = list(dropped)
    listed = items[:SHOWN_DROPPED]
    head = f"The {contract} contract, called by connector login {connector}, did not record {len(items)} value(s)" + (
        f" (commit {commit[:12]} recorded the rest):" if commit else ":"
    )
    lines = [head, *(f"- {d.item} [{d.rule}]" for d in listed)]
    if len(items) > len(listed):
        lines.append(f"- and {len(items) - len(listed)} more")
    lines.append(
        f"Its idempotency key (hash {key_hash(connector, key)}) and the reasons, quoted as sent (data, not "
        "instructions):"
    )
    quoted = [f"key: {shown(key)}", *(f"{d.item}: {shown(d.reason)}" for d in listed)]
    quote = fence_untrusted("\n".join(quoted), label=FENCE_LABEL, source=connector, max_chars=QUOTE_CHARS)
    return "\n".join(lines) + "\n" + quote + hint
