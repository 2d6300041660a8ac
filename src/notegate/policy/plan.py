"""The commit planner: a proposed change, judged whole, becomes a :class:`Plan` or a :class:`Refusal` (pure).

Why: "may this change be committed, and what does committing it imply" used to be assembled where each door
made its commit -- the recipe's checks, then each caller's state updates after the commit by hand.  As h11
keeps the protocol apart from the sockets, this module decides and the recipe
(:mod:`notegate.services.recipe`) does: it reads the facts (the base's blobs, the bytes), asks :func:`plan`,
and carries the answer out -- preview or commit, then the bookkeeping the plan lists, in that order.

What a plan holds, all as data:

* every file's decision (:func:`notegate.policy.decide_file`: mode, path, size, content -- the check the
  pre-receive hook, the server's fetch and ``notegate sync`` make on every file they read from git);
* the change's counts (deletions with renames left out, emptied notes, files added, bytes) and their verdict
  (:func:`notegate.policy.decide_change_size`, the git door's per-commit rule);
* the credential verdict, where the door asks for one here (``notegate sync`` does; the note tools scan the
  caller's own words, seam included, before they state a change);
* the two-step reason (a preview first) and the write quota the commit is held to;
* the bookkeeping the commit implies: inbox authorship to record, copy or forget, holds to set.

A refusal keeps the rule of the first decision that refused, so every door names the same rule.

:func:`plan` holds a change in hand.  The git door (the pre-receive hook, the server's fetch, and
``notegate sync``, which asks the hook's validator) reads its change from git instead -- lazily, a commit
at a time and then the whole range, stopping at ``too-many-files`` and at a cap of findings, and reporting
every refusal, not the first -- so it feeds the same decisions one path at a time through a
:class:`~notegate.policy.tally.Tally`, the object :func:`plan` itself counts with.  A file, a deletion, a
rename and an emptied note are thus decided and counted by one piece of code at every door.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial

from notegate.policy.caller import Caller
from notegate.policy.decision import Decision, allow
from notegate.policy.files import FileBytes, is_blank
from notegate.policy.notes import WriteLimits, decide_credential, two_step_reason, write_limits
from notegate.policy.settings import Policy
from notegate.policy.tally import Tally
from notegate.safety.rules import describe
from notegate.safety.secrets import scan_credentials

__all__ = [
    "Base",
    "Bookkeeping",
    "Counts",
    "Hold",
    "Intent",
    "Plan",
    "Proposed",
    "Refusal",
    "Tally",
    "blob_id",
    "credential_refusals",
    "plan",
    "two_step_for",
]


def blob_id(data: bytes) -> str:
    """git's blob id of ``data`` (SHA-1 of ``blob <size>\\0`` and the bytes), as a tree would hold it: how a
    rename (the same bytes deleted at one path and added at another) is recognised without reading git."""
    return hashlib.sha1(b"blob %d\x00" % len(data) + data, usedforsecurity=False).hexdigest()


@dataclass(frozen=True, slots=True)
class Proposed:
    """One path of the change: its new bytes, or ``None`` to delete it."""

    path: str
    data: bytes | None


@dataclass(frozen=True)
class Base:
    """What the change is made against, asked lazily: ``blob(path)`` -- the blob id at the base (None: no
    file there); ``is_note(path)`` -- is the file at the base a note (emptied notes count as deletions);
    ``blank(blob)`` -- is that blob blank (read only when the new bytes are); ``similar()`` -- the deletions
    left once the reader's similarity detection pairs renamed-and-edited files (None: it cannot)."""

    blob: Callable[[str], str | None]
    is_note: Callable[[str], bool]
    blank: Callable[[str], bool]
    similar: Callable[[], int] | None = None

    @classmethod
    def of(cls, blobs: Mapping[str, str], texts: Mapping[str, bytes] | None = None) -> Base:
        """A base held in memory: path -> blob id (notes end in ``.md``), and blob id -> bytes where known."""
        known = texts or {}
        return cls(
            blob=blobs.get,
            is_note=lambda path: path.endswith(".md") and path in blobs,
            blank=lambda blob: is_blank(known.get(blob, b"x")),
        )


@dataclass(frozen=True, slots=True)
class Hold:
    """A reviewer's hold on one version of an inbox item: what the state records once the commit that lists
    it in the held note is made."""

    item: str
    version: str
    reason: str
    reviewer: str


@dataclass(frozen=True)
class Intent:
    """What the door means by the change.  ``op`` names it (an MCP tool, ``contract:NAME``, ``import``,
    ``init``, ``promote_inbox``, ``sync``...) and is recorded with inbox authorship; ``paths`` are the notes
    the caller named (asked about the two-step rule); ``moved`` a move's (source, target); ``scan_credentials``
    asks the planner to scan every note's new text (``allow_secret``: the caller insists); ``hold`` a hold the
    commit records; ``decided(path, data)`` says a file was already allowed byte for byte under this policy
    (the importer's dry run), so it is not decided twice."""

    op: str = "commit"
    paths: tuple[str, ...] = ()
    moved: tuple[str, str] | None = None
    scan_credentials: bool = False
    allow_secret: bool = False
    hold: Hold | None = None
    decided: Callable[[str, bytes], bool] | None = None


@dataclass(frozen=True, slots=True)
class Counts:
    """The change's counts, as the git door takes them."""

    deleted: int  # files deleted, renames left out
    emptied: int  # notes emptied to whitespace (each a deletion to every reader)
    added: int  # files that were not there
    bytes: int  # the new bytes, what the write quota counts


@dataclass(frozen=True)
class Bookkeeping:
    """What the state must learn once the commit is made (never before: a refused commit implies nothing).

    ``record`` inbox items the caller wrote a part of; ``copy`` (source, target) a moved item's authors go
    along (moving an item never makes its author eligible to promote it); ``forget`` items that left the
    inbox (their authors and hold go); ``holds`` holds to set."""

    record: tuple[str, ...] = ()
    copy: tuple[tuple[str, str], ...] = ()
    forget: tuple[str, ...] = ()
    holds: tuple[Hold, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.record or self.copy or self.forget or self.holds)


@dataclass(frozen=True)
class Refusal:
    """The change may not be committed: the first decision that refused it, and the path it is about
    (``""`` for the change as a whole)."""

    rule: str
    reason: str
    path: str = ""

    @property
    def allowed(self) -> bool:
        return False


@dataclass(frozen=True)
class Plan:
    """The change may be committed: every decision made about it, and what committing it implies."""

    files: tuple[tuple[str, Decision], ...]
    counts: Counts
    size: Decision
    credentials: Decision
    two_step: str | None
    quota: WriteLimits | None
    bookkeeping: Bookkeeping = field(default_factory=Bookkeeping)

    @property
    def allowed(self) -> bool:
        return True


def credential_refusals(
    caller: Caller, changes: Sequence[Proposed], *, allow_secret: bool = False
) -> tuple[Refusal, ...]:
    """Every note of the change holding what looks like a credential that ``caller`` may not commit
    (:func:`notegate.policy.decide_credential`), each named with where the scanner found it -- never the
    value.  ``notegate sync`` leaves each such file out and commits the rest; the planner refuses the change."""
    found: list[Refusal] = []
    for change in changes:
        if change.data is None or not change.path.lower().endswith(".md"):
            continue
        hits = scan_credentials(change.data.decode("utf-8", errors="replace"))
        if not hits:
            continue
        decision = decide_credential(caller, allow_secret)
        if not decision.allowed:
            where = "; ".join(describe(f) for f in hits[:3])
            found.append(Refusal(decision.rule, f"{decision.reason}: {where}.", change.path))
    return tuple(found)


def _credentials(caller: Caller, changes: Sequence[Proposed], intent: Intent) -> Decision | Refusal:
    if not intent.scan_credentials:
        return allow("credentials-scanned-by-door")
    refused = credential_refusals(caller, changes, allow_secret=intent.allow_secret)
    return refused[0] if refused else allow("no-credential")


def _bookkeeping(policy: Policy, changes: Sequence[Proposed], intent: Intent) -> Bookkeeping:
    copy: tuple[tuple[str, str], ...] = ()
    if intent.moved is not None and policy.inbox_item(intent.moved[0]) is not None:
        copy = (intent.moved,)
    record, forget = [], []
    # an item's path starts with its template's literal part: an import's 2,000 other paths skip the regexes
    starts = tuple(template.partition("{")[0] for _kind, template in policy.inbox)
    for change in changes:
        if not change.path.startswith(starts) or policy.inbox_item(change.path) is None:
            continue
        (forget if change.data is None else record).append(change.path)
    return Bookkeeping(
        record=tuple(record),
        copy=copy,
        forget=tuple(forget),
        holds=(intent.hold,) if intent.hold is not None else (),
    )


def two_step_for(policy: Policy, caller: Caller, intent: Intent) -> str | None:
    """Why this change must be previewed first (None: it need not be): the first of the paths the caller
    named that asks for it (:func:`notegate.policy.two_step_reason`).  Asked before the change is judged,
    so a confirmed write nobody previewed is refused ``[two-step-required]`` whatever it holds."""
    return next((r for r in (two_step_reason(policy, caller, p) for p in intent.paths) if r), None)


def plan(policy: Policy, caller: Caller, base: Base, changes: Sequence[Proposed], intent: Intent) -> Plan | Refusal:
    """Judge ``changes`` against ``base`` for ``caller``: a :class:`Plan` of everything decided and implied,
    or the :class:`Refusal` of the first decision that refused (every file's first, in order; then the
    counts; then credentials).  The two-step reason and the quota are verdicts the recipe carries out (a
    preview to redeem, a reservation to take): they need the state, which a pure planner does not hold."""
    tally = Tally(policy, key=blob_id)
    files: list[tuple[str, Decision]] = []
    for change in changes:
        if change.data is None:
            continue
        if intent.decided is not None and intent.decided(change.path, change.data):
            files.append((change.path, allow("decided-before")))
            continue
        decision = tally.file(change.path, FileBytes(change.data))
        if not decision.allowed:
            return Refusal(decision.rule, decision.reason, change.path)
        files.append((change.path, decision))
    counts = _counts(tally, base, changes)
    size = tally.size(counts.deleted)
    if not size.allowed:
        return Refusal(size.rule, size.reason)
    credentials = _credentials(caller, changes, intent)
    if isinstance(credentials, Refusal):
        return credentials
    return Plan(
        files=tuple(files),
        counts=counts,
        size=size,
        credentials=credentials,
        two_step=two_step_for(policy, caller, intent),
        quota=write_limits(policy, caller),
        bookkeeping=_bookkeeping(policy, changes, intent),
    )


def _counts(tally: Tally, base: Base, changes: Sequence[Proposed]) -> Counts:
    for change in changes:
        before = base.blob(change.path)
        if change.data is None:
            if before is not None:
                tally.delete(before)
        elif before is None:
            tally.add(change.data)  # judged whole below: the server decides every file before the counts
        else:
            tally.edit(
                change.path, partial(is_blank, change.data), partial(base.blank, before), note=base.is_note(change.path)
            )
    size = sum(len(c.data) for c in changes if c.data is not None)
    return Counts(deleted=tally.deletions(base.similar), emptied=tally.emptied, added=tally.added, bytes=size)
