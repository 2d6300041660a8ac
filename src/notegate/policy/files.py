"""One file and one change's counts, judged the same way at every door (pure).

Why its own module: the question "may these bytes be this file of the vault" used to be composed twice --
the server's recipe (path, size, content) and the git door's commit diff (mode, path, size, content) --
and the deletions of a change were counted twice, differently (exact renames on the server; exact renames,
then git's similarity, plus emptied notes, in the hook).  A change the server would commit and a push would
refuse, or the reverse, was one edit away.  Here each is written once, and the planner
(:mod:`notegate.policy.plan`), the pre-receive hook, the server's fetch and ``notegate sync`` all ask it.

* :func:`decide_file` -- mode, then path, then size, then content, stopping at the first refusal.  The
  facts come as a :class:`FileFacts`: its size and bytes are asked for only when the step before allowed
  them, so the git door reads an object's header before its content and never reads a refused file.
* :func:`count_deletions` -- deleted files that are not renames: exact renames (a deleted blob added
  elsewhere) first; only when that leaves the change over the limit, the similar renames its reader can
  find (git's ``-M``, asked lazily because it costs a diff of the trees).
* :func:`is_blank` and :func:`decide_change_size` -- a note emptied to whitespace is a deleted note to every
  reader, so it counts as one.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass
from typing import Protocol

from notegate.policy.decision import Decision
from notegate.policy.gitdoor import (
    MODE_FILE,
    decide_attachment,
    decide_commit_size,
    decide_incoming_mode,
    decide_incoming_note,
    decide_incoming_path,
    decide_incoming_size,
)
from notegate.policy.settings import Policy
from notegate.safety.attachments import HEAD_BYTES

__all__ = [
    "RENAME_LIMIT",
    "FileBytes",
    "FileFacts",
    "count_deletions",
    "decide_change_size",
    "decide_file",
    "is_blank",
]


#: Similarity rename detection looks at this many files at most (git's diff.renameLimit idea), at every door.
RENAME_LIMIT = 200


class FileFacts(Protocol):
    """What a door knows of one file it would write: its git mode, and -- when asked, in this order -- its
    size and its bytes.  The git door answers from an object's header and then its content (either may
    raise its own "malformed" error, which it turns into a refusal); the server holds the bytes already."""

    @property
    def mode(self) -> int: ...

    def size(self) -> int: ...

    def read(self) -> bytes: ...


@dataclass(frozen=True, slots=True)
class FileBytes:
    """A file whose bytes are in hand (the server's writes, import, sync): a plain file, ``data`` long."""

    data: bytes
    mode: int = MODE_FILE

    def size(self) -> int:
        return len(self.data)

    def read(self) -> bytes:
        return self.data


def decide_file(policy: Policy, path: str, facts: FileFacts) -> Decision:
    """May this file be at ``path`` in the vault?  Mode (a plain file only), path (hidden names in any
    spelling, the path rules, instruction-file names, the file type), size (from the header, before the
    content is read), then content (a note: UTF-8, no NUL, the floor where sessions load it; an attachment:
    the signature of its type).  The first refusal answers; an allowed note is rule ``incoming-content``,
    an allowed attachment ``incoming-attachment``."""
    mode = decide_incoming_mode(facts.mode)
    if not mode.allowed:
        return mode
    kind = decide_incoming_path(policy, path)
    if not kind.allowed:
        return kind
    size = facts.size()
    sized = decide_incoming_size(policy, kind, size)
    if not sized.allowed:
        return sized
    data = facts.read()
    if kind.rule == "incoming-note":
        return decide_incoming_note(policy, path, data)
    return decide_attachment(policy, path.rsplit("/", 1)[-1], data[:HEAD_BYTES], size)


def is_blank(data: bytes) -> bool:
    """Is this note's content nothing -- empty, or whitespace and byte-order marks only?  To every reader
    such a note is gone, so emptying one counts as deleting it."""
    return not data.decode("utf-8", "replace").replace("\ufeff", "").strip()


def count_deletions(
    deleted: Iterable[Hashable],
    added: Iterable[Hashable],
    *,
    emptied: int,
    limit: int,
    similar: Callable[[], int] | None = None,
) -> int:
    """How many of the ``deleted`` blobs are deletions, not renames: a deleted blob whose id is among the
    ``added`` ones (each added blob pairs once) is an exact rename.  When what remains, with the ``emptied``
    notes, is over ``limit`` and the reader can pair renamed-and-edited files (``similar()``: the deletions
    left once git's similarity detection ran), the smaller count holds."""
    unmatched = Counter(added)
    remaining = 0
    for blob in deleted:
        if unmatched[blob] > 0:
            unmatched[blob] -= 1
        else:
            remaining += 1
    if remaining + emptied <= limit or similar is None:
        return remaining
    return min(remaining, similar())


def decide_change_size(policy: Policy, *, deleted: int, emptied: int, added: int) -> Decision:
    """May one commit delete ``deleted`` files (renames left out: :func:`count_deletions`), empty ``emptied``
    notes (each a deletion to every reader) and add ``added`` files?"""
    return decide_commit_size(policy, deleted=deleted + emptied, added=added)
