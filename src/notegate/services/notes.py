"""The notes service: every door's reads and writes go path → policy → content checks → store.

Why one recipe: a door cannot forget a check it never performs.  Doors only translate arguments and
errors; this module parses paths (:class:`NotePath`), asks :mod:`notegate.policy`, checks content,
enforces optimistic revisions and two-step confirmation, commits through the store and audits the call.
Nothing here is ever merged on a caller's behalf: a stale base is refused with the current revision and a
diff.

The rest of the recipe lives beside it, each name still importable from here: the answers in
:mod:`notegate.services.results` (pure), the checks, quota, commit, audit and bookkeeping every commit meets in
:mod:`notegate.services.recipe` (:class:`WriteRecipe`, the half of this class no door can skip; its checks of
what a caller sends in :mod:`notegate.services.writechecks`), and the commit messages' spelling in
:mod:`notegate.vault.commits` (pure).
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Mapping

from notegate.errors import (
    ContentRejected,
    NoSuchNote,
    NotegateError,
    PathRejected,
    PolicyDenied,
    StaleRevision,
    no_such_note,
)
from notegate.policy import (
    Action,
    Caller,
    attachment_media_type,
    can_see,
    decide_attachment,
    decide_attachment_read,
    decide_attachment_write,
    decide_folder,
    sees_private,
)
from notegate.safety.attachments import HEAD_BYTES
from notegate.services.history import (
    DELETED_SCAN_LIMIT,
    MAX_HISTORY_LIMIT,
    PROVENANCE_CACHE,
    NoteHistory,
    change_info,
)
from notegate.services.meaning_search import with_meaning
from notegate.services.previews import Previews
from notegate.services.recipe import ContentVerdicts, WriteIntent, WriteRecipe, _blob_id
from notegate.services.results import (
    AttachmentRead,
    ChangeInfo,
    DeletedNote,
    HistoryResult,
    ListResult,
    NoteEntry,
    NoteRead,
    RevisionDiff,
    SearchHit,
    SearchResult,
    WriteResult,
)
from notegate.services.runtime import Environment, Runtime
from notegate.vault import ordered
from notegate.vault.commits import _trailer_value, commit_message, contract_trailers, parse_trailers
from notegate.vault.fusion import MEANING
from notegate.vault.index import MATCH_TIERS
from notegate.vault.linediff import MAX_DIFF_CHARS, unified_diff
from notegate.vault.lines import line_break_of, with_line_breaks
from notegate.vault.paths import AttachmentPath, FolderPath, NotePath
from notegate.vault.store import ABSENT, Change

__all__ = [  # what callers import from here, wherever it now lives
    "DELETED_SCAN_LIMIT",
    "MAX_DIFF_CHARS",
    "MAX_HISTORY_LIMIT",
    "MAX_LIST_LIMIT",
    "MAX_SEARCH_LIMIT",
    "PROVENANCE_CACHE",
    "SEAM_CHARS",
    "SEARCH_LIMIT",
    "AttachmentRead",
    "ChangeInfo",
    "ContentVerdicts",
    "DeletedNote",
    "HistoryResult",
    "ListResult",
    "NoteEntry",
    "NoteRead",
    "NotesService",
    "RevisionDiff",
    "SearchHit",
    "SearchResult",
    "WriteIntent",
    "WriteResult",
    "_trailer_value",
    "change_info",
    "commit_message",
    "contract_trailers",
    "parse_trailers",
    "unified_diff",
]

MAX_LIST_LIMIT = 1000
MAX_SEARCH_LIMIT = 100
#: Hits a search returns unless asked for more.  Ten: what a known-item search is judged by (recall@10), and
#: each hit's snippet is context a session pays for; ``more`` says when there are others (ask with a limit).
SEARCH_LIMIT = 10


def _score(bm25: float) -> float:
    """bm25 to four significant digits: a word found in most notes has an IDF of about 1e-6 in FTS5, so
    rounding to decimal places made every such hit (and most prefix searches) score 0."""
    return float(f"{bm25:.4g}")


SEAM_CHARS = 4096  # how much of a note's end an append is scanned with (a token is far shorter)


class NotesService(NoteHistory, WriteRecipe):
    def __init__(self, runtime: Runtime) -> None:
        self.rt = runtime
        self.policy = runtime.policy
        self.previews = Previews(runtime.state, runtime.policy.preview_ttl_seconds)
        self._provenance: dict[tuple[str, str], Mapping | None] = {}  # (environment, commit) -> its record

    # --------------------------------------------------------------- reads
    def list_notes(
        self,
        caller: Caller,
        folder: str = "",
        recursive: bool = True,
        limit: int = 200,
        cursor: str | None = None,
        environment: str | None = None,
    ) -> ListResult:
        """A page of the paths under ``folder`` the caller can see, in code-point order, after ``cursor``.

        Why it walks the listing's sorted paths (:meth:`Listing.order`) instead of sorting what it sees: a
        page costs a bisect and the paths it returns or skips as invisible, not a sort of the vault (134 ms
        a page at 100,000 paths). Non-recursive: the direct notes are paged the same way, each subfolder
        met skipped with one bisect, and ``folders`` is every direct subfolder holding a path the caller
        sees, on every page."""
        with self.audited(caller, "list_notes", folder):
            env = self.env(caller, environment)
            fpath = FolderPath.parse(folder or "")
            self._check_reader(caller)
            limit = max(1, min(limit, MAX_LIST_LIMIT))
            listing = env.store.listing()
            notes, files = listing.notes, listing.attachments
            order = listing.order()
            prefix = f"{fpath.value}/" if fpath.value else ""

            def shown(path: str) -> bool:  # a note, or an attachment of a type the policy serves, visible
                return can_see(self.policy, caller, path) and (
                    path in notes or bool(attachment_media_type(self.policy, path))
                )

            # A folder is there when the caller sees one path under it (the root always is).
            seen = int(ordered.first(order.paths, prefix, shown) is not None) if fpath.value else 0
            there = decide_folder(fpath.value, seen)
            if not there.allowed:
                raise NoSuchNote(there.reason, rule=there.rule, remedy=self._folder_remedy(caller, notes, fpath.value))
            walked = ordered.page(order.paths, prefix, cursor, limit + 1, shown, direct=not recursive)
            page = walked[:limit]
            return ListResult(
                folder=fpath.value,
                notes=[self._entry(env, p, notes, files) for p in page],
                folders=[] if recursive else ordered.subfolders(order, prefix, shown),
                next_cursor=page[-1] if len(walked) > limit else None,
            )

    def visible_paths(self, caller: Caller, environment: str | None = None) -> tuple[str | None, list[str]]:
        """The tip's commit and every path at it the caller can see (notes, and attachments the policy
        serves): what a door resolves a note's links against. One audit row, as one list_notes call."""
        with self.audited(caller, "list_notes", None):
            env = self.env(caller, environment)
            self._check_reader(caller)
            listing = env.store.listing()
            files = [p for p in listing.attachments if attachment_media_type(self.policy, p)]
            return listing.commit, [p for p in (*listing.notes, *files) if can_see(self.policy, caller, p)]

    def _entry(self, env: Environment, path: str, notes: Mapping[str, str], files: Mapping[str, str]) -> NoteEntry:
        if path in notes:
            return NoteEntry(path=path, revision=notes[path], quarantined=self.policy.is_inbox(path))
        blob = files[path]
        return NoteEntry(
            path=path,
            revision=blob,
            quarantined=self.policy.is_inbox(path),
            kind="attachment",
            size=env.store.blob_size(blob),
            media_type=attachment_media_type(self.policy, path),
        )

    def read_attachment(self, caller: Caller, path: str, environment: str | None = None) -> AttachmentRead:
        """An attachment's bytes, with the same visibility as read_note: a private one is not there for a
        restricted caller (the same words as one never made), then the policy's type and size, and the first
        bytes checked again (a file pushed before the policy changed is not served as what it is not)."""
        with self.audited(caller, "read_attachment", path):
            env = self.env(caller, environment)
            apath = AttachmentPath.parse(path)
            self._check_reader(caller)
            blob = env.store.listing().attachments.get(apath.value, ABSENT)
            size = env.store.blob_size(blob) if blob != ABSENT else 0
            decision = decide_attachment_read(self.policy, caller, apath, size)
            if blob == ABSENT or decision.rule == "no-such-note":
                raise no_such_note(apath.value, "Check the path with list_notes.")
            if not decision.allowed:
                raise PolicyDenied(f"{apath.value}: {decision.reason}", rule=decision.rule)
            data = env.store.read_unverified_blob(blob)  # verified: the blob at this path now
            checked = decide_attachment(self.policy, apath.name, data[:HEAD_BYTES], len(data))
            if not checked.allowed:
                raise PolicyDenied(f"{apath.value}: {checked.reason}", rule=checked.rule)
            return AttachmentRead(path=apath.value, revision=blob, media_type=checked.reason, size=len(data), data=data)

    def write_attachment(
        self,
        caller: Caller,
        path: str,
        content_base64: str,
        base_revision: str,
        confirmed: bool = False,
        environment: str | None = None,
    ) -> WriteResult:
        """Create or replace an attachment: trusted callers only, while the policy allows it; the bytes meet the
        type, size and first-bytes checks before a preview; then the one write recipe (stale, two-step, commit)."""
        with self.audited(caller, "write_attachment", path) as record:
            env = self.env(caller, environment)
            apath = AttachmentPath.parse(path)
            base = self._normalise_base(base_revision)
            action = Action.CREATE if base == ABSENT else Action.OVERWRITE
            decision = decide_attachment_write(self.policy, caller, action, apath)
            if decision.rule == "no-such-note":
                raise no_such_note(apath.value, "Check the path with list_notes.")
            if not decision.allowed:
                raise PolicyDenied(f"{apath.value}: {decision.reason}", rule=decision.rule)
            data = self._attachment_bytes(content_base64)
            checked = decide_attachment(self.policy, apath.name, data[:HEAD_BYTES], len(data))
            if not checked.allowed:
                raise PolicyDenied(f"{apath.value}: {checked.reason}", rule=checked.rule)
            current = env.store.blob_id(apath.value)
            if current != base:  # a base read on another replica: fetch once before refusing
                current = self.fetched_blob(env, apath.value)
            if current != base:
                raise StaleRevision(
                    f"{apath.value} changed since revision {base[:12]}: it is now at "
                    f"{current[:12] if current != ABSENT else 'absent'}",
                    current_revision=current,
                    diff="(an attachment: no text diff; read_attachment shows the current file)\n",
                )
            before = "" if base == ABSENT else f"{checked.reason}, {env.store.blob_size(base)} bytes, revision {base}\n"
            intent = WriteIntent(
                op="write_attachment",
                action=action,
                path=apath,
                base=base,
                changes=(Change(apath.value, data),),
                expect={apath.value: base},
                before=before,
                after=f"{checked.reason}, {len(data)} bytes, revision {_blob_id(data)}\n",
                summary=f"{'add' if base == ABSENT else 'update'} attachment {apath.value}",
                new_paths=(apath.value,) if base == ABSENT else (),
            )
            return self._apply(caller, env, intent, confirmed, record)

    def _attachment_bytes(self, content_base64: str) -> bytes:
        """Strict base64 (RFC 4648), its length bounded before it is decoded."""
        text = "".join((content_base64 or "").split())
        if len(text) > 4 * (self.policy.max_attachment_bytes // 3 + 1):
            raise ContentRejected(
                f"the attachment would be over max_attachment_bytes ({self.policy.max_attachment_bytes})",
                rule="attachment-too-large",
            )
        try:
            return base64.b64decode(text, validate=True)
        except (binascii.Error, ValueError) as exc:
            raise ContentRejected("content_base64 is not valid base64", rule="attachment-not-base64") from exc

    def read_note(self, caller: Caller, path: str, environment: str | None = None) -> NoteRead:
        with self.audited(caller, "read_note", path):
            env = self.env(caller, environment)
            note = self._note_path(path)
            self._check(caller, Action.READ, note)
            found = env.store.read(note.value)
            if found is None:
                raise no_such_note(note.value, self._missing_remedy(env, note.value))
            data, blob = found
            return NoteRead(
                path=note.value,
                text=data.decode("utf-8", errors="replace"),
                revision=blob,
                last_change=self._visible(caller, self._last_change(env, note.value, blob)),
                quarantined=self.policy.is_inbox(note.value),
            )

    def _note_path(self, path: str) -> NotePath:
        """``path`` as a note path. A file the vault serves as an attachment (``attachments/img0.png``, a PDF,
        a canvas: any type in attachment_types) is refused as such, pointing at read_attachment: the pure
        parser knows no policy, so its "add '.md' to the name" would send the caller after a note that
        is not there. The rule stays path-not-markdown."""
        try:
            return NotePath.parse(path)
        except PathRejected as exc:
            media_type = attachment_media_type(self.policy, path) if isinstance(path, str) else ""
            if exc.rule != "path-not-markdown" or not media_type:
                raise
            raise PathRejected(
                path,
                "path-not-markdown",
                f"{path} is an attachment ({media_type}), not a note: read_note reads Markdown notes only",
                remedy=f"Read it with read_attachment(path='{path}').",
            ) from None

    @staticmethod
    def _missing_remedy(env: Environment, path: str) -> str:
        """What to do about a visible path that is not at HEAD: a note that once was points at its history."""
        if env.store.history(path, 1, scan_limit=DELETED_SCAN_LIMIT):
            return (
                "It was deleted: note_history lists its past versions, and restore_note brings one back "
                "(as a trusted session)."
            )
        return "Check the path with list_notes or search_notes."

    def search_notes(
        self,
        caller: Caller,
        query: str,
        folder: str = "",
        limit: int = SEARCH_LIMIT,
        include_inbox: bool = False,
        environment: str | None = None,
    ) -> SearchResult:
        with self.audited(caller, "search_notes", folder or None):
            env = self.env(caller, environment)
            fpath = FolderPath.parse(folder or "")
            self._check_reader(caller)
            env.index.catch_up(env.store)
            limit = max(1, min(limit, MAX_SEARCH_LIMIT))
            ranking = env.index.rank(
                query[:500],
                folder=fpath.value,
                limit=limit + 1,  # one more than shown: whether there are more
                include_private=sees_private(caller),
                include_inbox=include_inbox,
            )
            hits, more = with_meaning(
                env,
                self.policy,
                query[:500],
                ranking,
                folder=fpath.value,
                limit=limit,
                include_private=sees_private(caller),
                include_inbox=include_inbox,
            )
            shown = [
                SearchHit(
                    path=h.path,
                    snippet=h.snippet,
                    score=_score(h.score),
                    quarantined=h.inbox,
                    matched=h.matched,
                    part=h.part,
                )
                for h in hits
                if can_see(self.policy, caller, h.path)
            ]
            tiers = [t for t in (*MATCH_TIERS, MEANING) if any(h.matched == t for h in shown)]
            fallback = "no note holds every word; these hold only some of them." if "any-word" in tiers else None
            return SearchResult(
                query=query[:500], hits=shown, matched=tiers[-1] if tiers else None, fallback=fallback, more=more
            )

    def _folder_remedy(self, caller: Caller, notes: Mapping[str, str], folder: str) -> str | None:
        """Point at a folder of the same name in another case, if the caller can see a note in it (so a
        private folder is never named to a restricted caller); else the registered remedy."""
        depth = folder.count("/") + 1
        wanted = folder.casefold()
        for path in sorted(notes):
            segments = path.split("/")[:-1]
            if len(segments) < depth:
                continue
            spelled = "/".join(segments[:depth])
            if spelled.casefold() == wanted and can_see(self.policy, caller, path):
                return f"Folder names are case-sensitive: did you mean '{spelled}'?"
        return None

    # -------------------------------------------------------------- writes
    def write_note(
        self,
        caller: Caller,
        path: str,
        content: str,
        base_revision: str,
        confirmed: bool = False,
        environment: str | None = None,
        allow_secret: bool = False,
        *,
        own_text_at: int = 0,
        tool: str = "write_note",
    ) -> WriteResult:
        """``own_text_at``: where the caller's own words begin in ``content`` (see :meth:`check_secrets`);
        ``tool``: the tool the audit names (``inbox_write`` writes through here, and is audited as itself)."""
        with self.audited(caller, tool, path) as record:
            env = self.env(caller, environment)
            note = NotePath.parse(path)
            base = self._normalise_base(base_revision)
            action = Action.CREATE if base == ABSENT else Action.OVERWRITE
            self._check(caller, action, note)
            data = self.encoded_content(content)
            self.check_secrets(caller, content, allow_secret, own_text_at=own_text_at)
            intent = WriteIntent(
                op="write_note",
                action=action,
                path=note,
                base=base,
                changes=(Change(note.value, data),),
                expect={note.value: base},
                before=self.text_of(env, base),
                after=content,
                summary=f"{'create' if base == ABSENT else 'update'} {note.value}",
                new_paths=(note.value,) if base == ABSENT else (),
            )
            return self._apply(caller, env, intent, confirmed, record)

    def append_note(
        self,
        caller: Caller,
        path: str,
        text: str,
        base_revision: str,
        confirmed: bool = False,
        environment: str | None = None,
        allow_secret: bool = False,
        *,
        own_text_at: int = 0,
        tool: str = "append_note",
    ) -> WriteResult:
        """Append ``text`` to the note (a line break between them when the note lacks a final one).

        The appended text takes the note's line ends (:func:`notegate.vault.lines.line_break_of`): into a
        CRLF note its LF and CRLF go as CRLF, into an LF note as LF, so an append never leaves a note with
        mixed line ends.  A note without a line break, or one that already mixes them, has no style to
        follow: the text goes in as written (as it always did).  The conversion comes first, so the
        credential scan, the size limit, the preview's diff and the commit's gates all see the bytes
        committed.

        ``own_text_at``: where the caller's own words begin in ``text`` (see :meth:`check_secrets`); ``tool``:
        the tool the audit names."""
        with self.audited(caller, tool, path) as record:
            env = self.env(caller, environment)
            note = NotePath.parse(path)
            base = self._normalise_base(base_revision)
            self._check(caller, Action.APPEND, note)
            old = self.text_of(env, base) if base == env.store.blob_id(note.value) else ""
            style = line_break_of(old)
            if style is not None:  # the note's own line ends, never a mix of both (the prefix counted as sent)
                own_text_at = len(with_line_breaks(text[:own_text_at], style))
                text = with_line_breaks(text, style)
            newline = style or "\n"
            separator = "" if not old or old.endswith("\n") else newline
            seam = old[-SEAM_CHARS:] + separator
            self.check_secrets(caller, text, allow_secret, seam=seam, own_text_at=own_text_at)
            joined = old + separator + text
            if not joined.endswith("\n"):
                joined += newline
            data = self.encoded_content(joined)  # the size limit, on the bytes committed (CRLF is longer)
            intent = WriteIntent(
                op="append_note",
                action=Action.APPEND,
                path=note,
                base=base,
                changes=(Change(note.value, data),),
                expect={note.value: base},
                before=old,
                after=joined,
                summary=f"append to {note.value}",
                new_paths=(note.value,) if base == ABSENT else (),
            )
            return self._apply(caller, env, intent, confirmed, record)

    def move_note(
        self,
        caller: Caller,
        path: str,
        new_path: str,
        base_revision: str,
        confirmed: bool = False,
        environment: str | None = None,
    ) -> WriteResult:
        with self.audited(caller, "move_note", path) as record:
            env = self.env(caller, environment)
            src = NotePath.parse(path)
            dst = NotePath.parse(new_path)
            base = self._normalise_base(base_revision)
            self._check(caller, Action.MOVE, src)
            self._check(caller, Action.MOVE, dst)
            if base == ABSENT:
                raise NoSuchNote(f"cannot move {src.value}: base_revision is 'absent'", rule="no-such-note")
            if src.value == dst.value:
                raise NotegateError("the new path is the same as the old one", rule="bad-argument")
            current = env.store.blob_id(src.value)
            if current == ABSENT:
                raise no_such_note(src.value, "Check the path with list_notes.")
            data = env.store.read_unverified_blob(current) if current == base else b""
            text = data.decode("utf-8", errors="replace")
            intent = WriteIntent(
                op="move_note",
                action=Action.MOVE,
                path=src,
                base=base,
                changes=(
                    Change(src.value, None),
                    Change(dst.value, data),
                ),
                expect={src.value: base, dst.value: ABSENT},
                before=text,
                after=text,
                summary=f"move {src.value} to {dst.value}",
                new_paths=(dst.value,),
                new_path=dst.value,
            )
            return self._apply(caller, env, intent, confirmed, record)

    def delete_note(
        self,
        caller: Caller,
        path: str,
        base_revision: str,
        confirmed: bool = False,
        environment: str | None = None,
    ) -> WriteResult:
        with self.audited(caller, "delete_note", path) as record:
            env = self.env(caller, environment)
            note = NotePath.parse(path)
            base = self._normalise_base(base_revision)
            self._check(caller, Action.DELETE, note)
            if env.store.blob_id(note.value) == ABSENT and base == ABSENT:
                raise no_such_note(note.value, "Check the path with list_notes.")
            if base == ABSENT:
                raise self.stale(env, note.value, base, env.store.blob_id(note.value))
            intent = WriteIntent(
                op="delete_note",
                action=Action.DELETE,
                path=note,
                base=base,
                changes=(Change(note.value, None),),
                expect={note.value: base},
                before=self.text_of(env, base),
                after="",
                summary=f"delete {note.value}",
            )
            return self._apply(caller, env, intent, confirmed, record)

    def restore_note(
        self,
        caller: Caller,
        path: str,
        commit: str,
        base_revision: str,
        confirmed: bool = False,
        environment: str | None = None,
        allow_secret: bool = False,
    ) -> WriteResult:
        with self.audited(caller, "restore_note", path) as record:
            env = self.env(caller, environment)
            note = NotePath.parse(path)
            base = self._normalise_base(base_revision)
            self._check(caller, Action.RESTORE, note)
            if not re.fullmatch(r"[0-9a-fA-F]{7,40}", commit or ""):
                raise NotegateError(
                    "commit must be a commit id from note_history",
                    rule="bad-argument",
                    remedy="Pass a commit id listed by note_history.",
                )
            full = env.store.resolve_commit(commit)
            if full is None:
                raise NotegateError(
                    f"commit {commit[:12]} is not in this vault's history",
                    rule="unknown-commit",
                    remedy="Pass a commit id listed by note_history.",
                )
            old = env.store.read(note.value, full)
            if old is None:
                raise NoSuchNote(
                    f"{note.value} did not exist at commit {full[:12]}", remedy="Pick a commit from note_history."
                )
            content = old[0].decode("utf-8", errors="replace")
            self.encoded_content(content)
            self.check_secrets(caller, content, allow_secret)
            intent = WriteIntent(
                op="restore_note",
                action=Action.RESTORE,
                path=note,
                base=base,
                changes=(Change(note.value, old[0]),),
                expect={note.value: base},
                before=self.text_of(env, base),
                after=content,
                summary=f"restore {note.value} to {full[:12]}",
                new_paths=(note.value,) if base == ABSENT else (),
            )
            return self._apply(caller, env, intent, confirmed, record)
