"""The planner fed one path at a time: each file's decision and a change's counts (pure).

Why its own module: the git door (the pre-receive hook, the server's fetch, ``notegate sync``) decides
through this object, and the hook starts a fresh interpreter on every push; :mod:`notegate.policy.plan`, the
planner's other half, brings the credential scanner and the floor's descriptions with it, which a push
never needs (the hook's start-up measured 8% more CPU with them).  :func:`notegate.policy.plan.plan`
counts with this same object, so the planner still decides every file and every count, whichever door
a change comes through.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable

from notegate.policy.decision import Decision, allow, deny
from notegate.policy.files import FileFacts, count_deletions, decide_change_size, decide_file
from notegate.policy.gitdoor import decide_incoming_folder, decide_incoming_path, decide_range_size
from notegate.policy.settings import Policy
from notegate.vault.paths import MAX_PATH_BYTES

__all__ = ["Tally"]

_WITHIN = allow("files-within-limit")


class Tally:
    """The planner fed one path at a time: each file's decision, and the change's counts as they grow,
    judged once the change is read (or as soon as it adds too many files).

    Why a running tally and not a list of :class:`notegate.policy.plan.Proposed`: the git door reads a push
    from git as it walks the trees -- a push of 100,000 files must never be in memory at once, reading stops
    at ``too-many-files`` and at the hook's cap of findings, the pusher's check is asked path by path in
    between, and every refusal is reported, not only the first.  :func:`notegate.policy.plan.plan` holds its
    change in hand and drives the same object, so the server's recipe, the pre-receive hook, the server's fetch and
    ``notegate sync`` decide a file, and count a deletion, a rename or an emptied note, with one piece of code.

    ``over_range``: the counts are those of a whole push or fetch, from its base to its new tip (their
    refusals say so: :func:`notegate.policy.decide_range_size`), not one commit's.  ``key`` turns what
    :meth:`add` was given into a blob id, asked only when the change deletes something (renames are paired
    by blob id; an import's 2,000 new files delete nothing, so their bytes are never hashed)."""

    __slots__ = ("_added", "_gone", "_key", "emptied", "over_range", "policy")

    def __init__(
        self, policy: Policy, *, over_range: bool = False, key: Callable[[bytes], Hashable] | None = None
    ) -> None:
        self.policy, self.over_range, self._key = policy, over_range, key
        self._added: list[Hashable] = []
        self._gone: list[Hashable] = []
        self.emptied = 0

    @property
    def added(self) -> int:
        """Files added so far."""
        return len(self._added)

    @property
    def deleted(self) -> int:
        """Files deleted so far, renames included (:meth:`deletions` leaves them out)."""
        return len(self._gone)

    def file(self, path: str, facts: FileFacts) -> Decision:
        """May this file be at ``path``?  (:func:`notegate.policy.decide_file`: mode, path, size, then
        content, each of ``facts`` asked only when the step before allowed it.)"""
        return decide_file(self.policy, path, facts)

    def folder(self, path: str, size: int) -> Decision:
        """May the change hold a folder at ``path`` (``size`` bytes of UTF-8)?  The git door does not enter a
        refused folder: it is reported once, and nothing under it is read."""
        if size > MAX_PATH_BYTES:
            return deny("path-too-long", "the path is too long.")
        return decide_incoming_folder(self.policy, path)

    def add(self, blob: Hashable) -> Decision:
        """Count one file the change adds (``blob``: its id, or what ``key`` makes one of).  Refused
        ``too-many-files`` as soon as more than ``max_files_per_commit`` are: the git door stops reading
        there (emptied notes counted so far are deletions, judged only at the end)."""
        self._added.append(blob)
        if len(self._added) > self.policy.max_files_per_commit:
            return self._size(0, 0, len(self._added))
        return _WITHIN

    def delete(self, blob: Hashable) -> None:
        """Count one file the change deletes (its blob id at the base: a rename adds the same id elsewhere)."""
        self._gone.append(blob)

    def edit(
        self, path: str, now_blank: Callable[[], bool], was_blank: Callable[[], bool], *, note: bool | None = None
    ) -> None:
        """Count one file the change edits: a note whose content is now blank and was not before is emptied,
        a deletion to every reader.  ``note``: is it a note at the base (the server's listing knows); None:
        judged from the path, as the git door must.  The blank checks are asked only for a note, in order."""
        if note is None:
            note = decide_incoming_path(self.policy, path).rule == "incoming-note"
        if note and now_blank() and not was_blank():
            self.emptied += 1

    def deletions(self, similar: Callable[[], int] | None = None) -> int:
        """The deleted files that are not renames (:func:`notegate.policy.count_deletions`); ``similar()``:
        the deletions left once the reader's similarity detection ran (None: it cannot)."""
        if not self._gone:
            moved_in: list[Hashable] = []  # nothing deleted: nothing to pair, nothing hashed
        elif self._key is not None:
            moved_in = [self._key(item) for item in self._added]
        else:
            moved_in = self._added
        return count_deletions(
            self._gone, moved_in, emptied=self.emptied, limit=self.policy.max_deletions_per_commit, similar=similar
        )

    def size(self, deleted: int) -> Decision:
        """The verdict on the counts: ``deleted`` files (:meth:`deletions`), the emptied notes, the added files."""
        return self._size(deleted, self.emptied, len(self._added))

    def _size(self, deleted: int, emptied: int, added: int) -> Decision:
        if self.over_range:
            return decide_range_size(self.policy, deleted=deleted, emptied=emptied, added=added)
        return decide_change_size(self.policy, deleted=deleted, emptied=emptied, added=added)
