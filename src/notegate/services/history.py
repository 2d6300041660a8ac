"""A note's past as readers see it: history, revisions with their diffs, deleted notes, and who made each change.

A mixin of :class:`notegate.services.notes.NotesService` (the recipe's reads of git history), over the attributes
and checks the service has (``rt``, ``policy``, ``audited``, ``env``, ``_check``, ``_check_reader``,
``text_of``).  Who made a change comes only from the server's record (state ``commit_provenance``), never from
what a commit says of itself: :func:`change_info`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from notegate.errors import NotegateError, no_such_note
from notegate.policy import Action, Caller, can_see
from notegate.services import provenance
from notegate.services.results import ChangeInfo, DeletedNote, HistoryResult, RevisionDiff
from notegate.vault.linediff import unified_diff
from notegate.vault.paths import NotePath
from notegate.vault.store import ABSENT

if TYPE_CHECKING:
    from notegate.services.runtime import Environment

MAX_HISTORY_LIMIT = 200
PROVENANCE_CACHE = 4096  # commits whose provenance record (or its absence) a service keeps after looking it up
DELETED_SCAN_LIMIT = 500  # how many commits a missing note's read looks back to tell "deleted" from "never was"
_NOTE_IN_TEXT = re.compile(r"\S+\.md\b")


def change_info(commit, row: Mapping | None) -> ChangeInfo:
    """One change as a reader sees it.  Who made it comes only from the server's record (``row``, state
    ``commit_provenance``): never from the commit's author e-mail or trailers, which anyone can push.  Without
    a record it is shown as pushed by git's committer, unverified, with no tier (:mod:`.provenance`)."""
    message = commit.message or ""
    date = datetime.fromtimestamp(commit.commit_time, UTC).isoformat(timespec="seconds")
    summary = message.splitlines()[0] if message else ""
    if row is None:
        committer = commit.committer
        who = provenance.pushed_by(
            committer.raw_name.decode("utf-8", "replace"), committer.raw_email.decode("utf-8", "replace")
        )
        return ChangeInfo(
            commit=str(commit.id),
            date=date,
            author=f"pushed by {who}",
            login=provenance.PUSHED,
            summary=summary,
            pushed_by=who,
        )
    return ChangeInfo(
        commit=str(commit.id),
        date=date,
        author=str(row["author"]),
        login=str(row["login"]),
        client=provenance.field(row, "client"),
        connector=provenance.field(row, "connector"),
        session=provenance.field(row, "session"),
        tier=provenance.field(row, "tier"),
        reviewed_by=provenance.field(row, "reviewed_by"),
        authors=provenance.field(row, "authors"),
        summary=summary,
    )


class NoteHistory:
    """The history reads of :class:`~notegate.services.notes.NotesService` (see the module docstring)."""

    def _visible(self, caller: Caller, info: ChangeInfo | None) -> ChangeInfo | None:
        """A commit summary may name other notes (a move's target): withhold it if any is invisible to the caller."""
        if info is None:
            return None
        for named in _NOTE_IN_TEXT.findall(info.summary):
            if not can_see(self.policy, caller, named):
                return replace(info, summary="(summary withheld: it names a note you cannot see)")
        return info

    def _last_change(self, env: Environment, path: str, blob: str) -> ChangeInfo | None:
        """The note's last commit: from the index when it is current, else from git.  A read never waits
        for the index: while a first start builds it, the history walk answers (reads are served before
        the index is ready; only search waits, so it never answers from a stale index)."""
        current = env.index.try_catch_up(env.store)
        commit_id = env.index.last_commit(path) if current else None
        if commit_id is not None:
            return self.change_infos(env, [env.store.commit_info(commit_id)])[0]
        history = env.store.history(path, 1)
        if not history:
            return None
        if current:
            env.index.remember_last_commit(path, str(history[0][0].id))
        return self.change_infos(env, [history[0][0]])[0]

    def change_infos(self, env: Environment, commits: list) -> list[ChangeInfo]:
        """Each commit as a reader sees it, its maker from the server's record (one lookup for those not seen
        yet).  A commit's record never changes once it is in the history (it is written before the push), so
        what was looked up is kept, for :data:`PROVENANCE_CACHE` commits."""
        cache = self._provenance
        ids = [str(c.id) for c in commits]
        missing = [i for i in ids if (env.name, i) not in cache]
        if missing:
            rows = self.rt.state.provenance(env.name, missing)
            for commit_id in missing:
                cache[(env.name, commit_id)] = rows.get(commit_id)
            while len(cache) > PROVENANCE_CACHE:
                cache.pop(next(iter(cache)))
        return [change_info(c, cache.get((env.name, i))) for c, i in zip(commits, ids, strict=True)]

    def note_history(self, caller: Caller, path: str, limit: int = 20, environment: str | None = None) -> HistoryResult:
        with self.audited(caller, "note_history", path):
            env = self.env(caller, environment)
            note = NotePath.parse(path)
            self._check(caller, Action.HISTORY, note)
            limit = max(1, min(limit, MAX_HISTORY_LIMIT))
            entries = env.store.history(note.value, limit)
            if not entries and env.store.blob_id(note.value) == ABSENT:
                raise no_such_note(note.value, "Check the path with list_notes.")
            infos = self.change_infos(env, [c for c, _ in entries])
            return HistoryResult(path=note.value, changes=[self._visible(caller, i) for i in infos])

    def note_revisions(
        self, caller: Caller, path: str, limit: int = 20, environment: str | None = None
    ) -> list[RevisionDiff]:
        """Like :meth:`note_history`, each change with its diff against the version before it (a deletion
        diffs to empty; the oldest listed diffs from its predecessor, or from nothing when it created the
        note). The owner's console shows these; the same visibility and audit as note_history."""
        with self.audited(caller, "note_history", path):
            env = self.env(caller, environment)
            note = NotePath.parse(path)
            self._check(caller, Action.HISTORY, note)
            limit = max(1, min(limit, MAX_HISTORY_LIMIT))
            entries = env.store.history(note.value, limit + 1)
            if not entries and env.store.blob_id(note.value) == ABSENT:
                raise no_such_note(note.value, "Check the path with list_notes.")
            out: list[RevisionDiff] = []
            infos = self.change_infos(env, [c for c, _ in entries[:limit]])
            for i, (_commit, blob) in enumerate(entries[:limit]):
                before = entries[i + 1][1] if i + 1 < len(entries) else ABSENT
                info = self._visible(caller, infos[i])
                assert info is not None
                diff = unified_diff(
                    self.text_of(env, before), self.text_of(env, blob), note.value, before[:12], blob[:12]
                )
                out.append(RevisionDiff(change=info, revision=blob, diff=diff))
            return out

    def deleted_notes(self, caller: Caller, limit: int = 50, environment: str | None = None) -> list[DeletedNote]:
        """Notes deleted from the vault that the caller may see, newest deletion first, each with the change
        that deleted it: where the owner's console offers a restore (through :meth:`restore_note`)."""
        with self.audited(caller, "deleted_notes", None):
            env = self.env(caller, environment)
            self._check_reader(caller)
            limit = max(1, min(limit, MAX_HISTORY_LIMIT))
            found = env.store.deleted(limit)
            out = []
            for path, commit in found:
                try:  # a path pushed past the rules (hidden, reserved) was never a note to restore
                    path = NotePath.parse(path).value
                except NotegateError:
                    continue
                if can_see(self.policy, caller, path):
                    info = self._visible(caller, self.change_infos(env, [commit])[0])
                    assert info is not None
                    out.append(DeletedNote(path=path, deleted_by=info))
            return out
