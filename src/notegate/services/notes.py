"""The notes service: every door's reads and writes go path → policy → content checks → store.

Why one recipe: a door cannot forget a check it never performs.  Doors only translate arguments and
errors; this module parses paths (:class:`NotePath`), asks :mod:`notegate.policy`, checks content,
enforces optimistic revisions and two-step confirmation, commits through the store and audits the call.
Nothing here is ever merged on a caller's behalf: a stale base is refused with the current revision and a
diff.

Every commit, from every door (MCP, import, init, inbox promotion, the hooks' write-back), meets the git
door's rules in :meth:`NotesService.commit_as`, with the same decision functions the pre-receive hook and
the server's fetch use (:func:`notegate.policy.decide_incoming_path`, ``decide_incoming_note``,
``decide_attachment``, ``decide_commit_size``): what a push would be refused, the server never commits
(libgit2's local transport runs no hook, and the server's own history is fetched and vetted elsewhere).
"""

from __future__ import annotations

import base64
import binascii
import difflib
import hashlib
import re
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Literal

from notegate.errors import (
    ContentRejected,
    GateRejected,
    NoSuchNote,
    NotegateError,
    OriginUnavailable,
    PathRejected,
    PolicyDenied,
    StaleRevision,
    UnknownEnvironment,
    no_such_note,
)
from notegate.policy import (
    Action,
    Caller,
    Decision,
    Policy,
    attachment_media_type,
    can_see,
    decide,
    decide_attachment,
    decide_attachment_read,
    decide_attachment_write,
    decide_commit_size,
    decide_credential,
    decide_environment,
    decide_folder,
    decide_incoming_note,
    decide_incoming_path,
    decide_quota,
    decide_reader,
    sees_private,
    two_step_reason,
    write_limits,
)
from notegate.safety.attachments import HEAD_BYTES
from notegate.safety.rules import Finding, describe
from notegate.safety.secrets import scan_credentials
from notegate.services import diskspace, provenance
from notegate.services.eventlog import event
from notegate.services.previews import Previews, preview_key
from notegate.services.runtime import Environment, Runtime
from notegate.vault import ordered
from notegate.vault.index import MATCH_TIERS
from notegate.vault.lines import line_break_of, with_line_breaks
from notegate.vault.paths import AttachmentPath, FolderPath, NotePath
from notegate.vault.provenance import server_trailers
from notegate.vault.store import ABSENT, Author, CaseCollision, Change, CommitResult, Conflict

MAX_LIST_LIMIT = 1000
MAX_SEARCH_LIMIT = 100
MAX_HISTORY_LIMIT = 200
MAX_DIFF_CHARS = 60_000
PROVENANCE_CACHE = 4096  # commits whose provenance record (or its absence) a service keeps after looking it up
DELETED_SCAN_LIMIT = 500  # how many commits a missing note's read looks back to tell "deleted" from "never was"
_NOTE_IN_TEXT = re.compile(r"\S+\.md\b")


# ------------------------------------------------------------------ results
# Plain values: what a door shows a caller (and how it describes each field) is the door's business
# (notegate.doors.mcp.results); services, jobs and hooks read these attributes directly.
@dataclass(frozen=True, kw_only=True)
class NoteEntry:
    path: str
    revision: str
    quarantined: bool = False  # an inbox item: unreviewed text from a restricted session
    kind: Literal["note", "attachment"] = "note"
    size: int | None = None  # attachments: bytes
    media_type: str | None = None  # attachments: the policy's media type for its extension


@dataclass(frozen=True, kw_only=True)
class AttachmentRead:
    path: str
    revision: str
    media_type: str
    size: int
    data: bytes  # the file's bytes, checked against the policy at this read (type, size, first bytes)


@dataclass(frozen=True, kw_only=True)
class ListResult:
    folder: str
    notes: list[NoteEntry]
    folders: list[str] = field(default_factory=list)  # immediate subfolders (non-recursive listing)
    next_cursor: str | None = None


@dataclass(frozen=True, kw_only=True)
class ChangeInfo:
    commit: str
    date: str
    author: str
    login: str
    client: str | None = None
    connector: str | None = None
    session: str | None = None
    tier: str | None = None
    reviewed_by: str | None = None
    authors: str | None = None
    summary: str
    #: Set for a commit the server did not make (no provenance record): git's committer, marked unverified.
    #: Then author says "pushed by …", login is "pushed", and tier and the rest are None.
    pushed_by: str | None = None


@dataclass(frozen=True, kw_only=True)
class NoteRead:
    path: str
    text: str
    revision: str
    last_change: ChangeInfo | None
    quarantined: bool = False


@dataclass(frozen=True, kw_only=True)
class SearchHit:
    path: str
    snippet: str
    score: float
    quarantined: bool = False
    matched: str = "all-words"  # the tier that found it: phrase, all-words or any-word


@dataclass(frozen=True, kw_only=True)
class SearchResult:
    query: str
    hits: list[SearchHit]
    matched: str | None = None  # the loosest tier any hit needed (None: no hit)
    fallback: str | None = None  # said when no note held every word and the hits hold only some


@dataclass(frozen=True, kw_only=True)
class WriteResult:
    status: Literal["preview", "committed"]
    message: str
    path: str
    base_revision: str
    diff: str
    new_path: str | None = None
    new_revision: str | None = None
    commit: str | None = None


@dataclass(frozen=True, kw_only=True)
class RevisionDiff:
    change: ChangeInfo
    revision: str  # the note's blob after this change ("absent": the change deleted it)
    diff: str  # against the version before it


@dataclass(frozen=True, kw_only=True)
class DeletedNote:
    path: str
    deleted_by: ChangeInfo  # the change that deleted it


@dataclass(frozen=True, kw_only=True)
class HistoryResult:
    path: str
    changes: list[ChangeInfo]


def _score(bm25: float) -> float:
    """bm25 to four significant digits: a word found in most notes has an IDF of about 1e-6 in FTS5, so
    rounding to decimal places made every such hit (and most prefix searches) score 0."""
    return float(f"{bm25:.4g}")


SEAM_CHARS = 4096  # how much of a note's end an append is scanned with (a token is far shorter)

#: What a writer reads instead of the git door's push-worded remedy, where the two differ.
_RECIPE_REMEDIES = {
    "incoming-hidden-path": "Nothing was written. Choose another name: this one is how a file system spells a "
    "hidden name (an 8.3 short name such as obsidi~1 is .obsidian on Windows).",
    "protected-floor-hold": "Nothing was written. Sessions load this note at start: remove the invisible "
    "characters or instruction-file names the floor names, or write it as an inbox item for a reviewer.",
    "too-many-files": "Nothing was written. Commit fewer files at once (at most max_files_per_commit).",
    "too-many-deletions": "Nothing was written. Delete fewer notes at once (at most max_deletions_per_commit).",
}


# ------------------------------------------------------------------ helpers
#: The trailers of a message the server itself built. Never who made a commit read back from git: that
#: comes from the server's record only (:func:`change_info`).
parse_trailers = server_trailers


def _trailer_value(value: str) -> str:
    """Trailer values come from callers' names: one printable line, bounded.

    Nearly every value is printable already (``str.isprintable`` is one C pass); only the rest is rebuilt
    character by character, which cost more than the commit message's other work together."""
    if not value.isprintable():
        value = "".join(ch if ch.isprintable() else " " for ch in value)
    cleaned = value.strip()
    return cleaned[:120] or "-"


def unified_diff(old: str, new: str, path: str, old_label: str, new_label: str) -> str:
    lines = difflib.unified_diff(
        old.splitlines(keepends=True),
        new.splitlines(keepends=True),
        fromfile=f"a/{path} ({old_label})",
        tofile=f"b/{path} ({new_label})",
    )
    text = "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)
    if len(text) > MAX_DIFF_CHARS:
        text = text[:MAX_DIFF_CHARS] + "\n… diff truncated …\n"
    return text


def _blob_id(data: bytes) -> str:
    """git's blob id of ``data`` (SHA-1 of ``blob <size>\\0`` and the bytes), as the tree will hold it."""
    return hashlib.sha1(b"blob %d\x00" % len(data) + data, usedforsecurity=False).hexdigest()


class ContentVerdicts:
    """The files :meth:`NotesService.decide_content` has allowed, for :meth:`NotesService.commit_as` to reuse.

    The importer decides every file before its first commit (a dry run must report exactly what a real run
    would do), then commits them in batches; without this, the recipe decided the same bytes a second time
    (a quarter of an import's time).  The recipe's check stays authoritative: only the service's own
    ``decide_content`` adds to the record, each entry is (path, git blob id of the exact bytes) under the
    one policy object it was decided with, and the recipe recomputes the blob id from the bytes it is about
    to commit -- so other bytes, another path or a reloaded policy are decided afresh.  Refusals are not
    kept: a refused file is decided (and refused) again.
    """

    __slots__ = ("_entries", "_policy")

    def __init__(self, policy: Policy) -> None:
        self._policy = policy
        self._entries: set[tuple[str, str]] = set()

    def __len__(self) -> int:
        return len(self._entries)

    def _keep(self, policy: Policy, path: str, data: bytes) -> None:
        if policy is self._policy:
            self._entries.add((path, _blob_id(data)))

    def _allowed(self, policy: Policy, path: str, data: bytes) -> bool:
        return policy is self._policy and (path, _blob_id(data)) in self._entries


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


@dataclass(frozen=True)
class WriteIntent:
    """One write, stated whole before it is applied: what changes, what it expects, what it previews.

    ``path`` is the note the caller named (a move's source), ``base`` the revision it read, ``expect`` the
    revision each changed path must still have, ``new_paths`` paths that must not exist yet (created, or a
    move's target), ``before``/``after`` the texts the preview's diff shows.
    """

    op: str
    action: Action
    path: NotePath | AttachmentPath
    base: str
    changes: tuple[Change, ...]
    expect: Mapping[str, str]
    before: str
    after: str
    summary: str
    new_paths: tuple[str, ...] = ()
    new_path: str | None = None
    extra_trailers: Mapping[str, str] = field(default_factory=dict)


def commit_message(caller: Caller, summary: str, extra: dict[str, str] | None = None) -> str:
    """The one spelling of the server's commit messages: a summary line, then trailers naming the connector
    login, session and tier (and a grant's public id, never its value). For people reading ``git log`` only:
    readers take who made a commit from the server's record (:func:`change_info`), and a pushed commit
    carrying such a trailer is refused by the git door."""
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


def _where(finding: Finding, scanned: str, new_at: int, own_at: int) -> str:
    """Where a credential is, in words the caller can act on. ``scanned`` is what was scanned: the seam
    (the note's end, for an append) up to ``new_at``, then the new text, whose caller's own words begin at
    ``own_at``. A position inside those words is counted from their start; one in what the server added
    before them (an inbox item's title) is said to be in the item; one that starts in the note's end is
    said to be where the text joins it."""
    if own_at == 0:
        return describe(finding)  # the text is all the caller's: the scanner's position is already in it
    label = f"{finding.gate} ({finding.kind})"
    if finding.start < new_at:
        return f"{label} where your text joins the end of the note"
    if finding.start < own_at:
        if new_at:
            return f"{label} in the item, before your text"
        return f"{label} in the item, before your text (at line {finding.line}, col {finding.col} of the item)"
    line_start = scanned.rfind("\n", own_at, finding.start) + 1 or own_at
    line = scanned.count("\n", own_at, finding.start) + 1
    return f"{label} at line {line}, col {finding.start - line_start + 1} of your text"


class NotesService:
    def __init__(self, runtime: Runtime) -> None:
        self.rt = runtime
        self.policy = runtime.policy
        self.previews = Previews(runtime.state, runtime.policy.preview_ttl_seconds)
        self._provenance: dict[tuple[str, str], Mapping | None] = {}  # (environment, commit) -> its record

    # ------------------------------------------------------------ plumbing
    @contextmanager
    def audited(self, caller: Caller, tool: str, path: str | None) -> Iterator[dict]:
        """Record one audit row per call: outcome and commit, never contents."""
        record: dict = {"commit": None}
        outcome = "ok"
        started = time.perf_counter()
        try:
            yield record
        except NotegateError as exc:
            outcome = exc.rule
            raise
        except Exception:
            outcome = "error"
            raise
        finally:
            try:
                self.rt.state.audit(
                    now=self.rt.clock(),
                    **caller.audit_fields(self.rt.config.default_environment),
                    tool=tool,
                    path=(path or "")[:300] or None,
                    outcome=outcome,
                    commit_id=record["commit"],
                )
            except Exception as exc:  # a full disk costs the audit row, never the answer (services/diskspace.py)
                if not diskspace.no_space(exc):
                    raise
                event("audit-lost", connector=caller.connector_id, tool=tool, outcome=outcome, reason="disk-full")
            event(
                "tool",
                connector=caller.connector_id,
                environment=caller.environment or self.rt.config.default_environment,
                tool=tool,
                path=path or None,
                outcome=outcome,
                commit=(record["commit"] or "")[:12] or None,
                ms=round((time.perf_counter() - started) * 1000, 1),
            )

    def env(self, caller: Caller, environment: str | None) -> Environment:
        """The environment a call works in: only the one the caller's credential is bound to."""
        default = self.rt.config.default_environment
        requested = environment or caller.environment or default
        decision = decide_environment(caller, requested, default=default)
        if not decision.allowed:
            raise UnknownEnvironment(decision.reason, remedy="Omit the environment argument to use your own.")
        return self.rt.environment(requested)

    def _check(self, caller: Caller, action: Action, path: str) -> None:
        decision = decide(self.policy, caller, action, path)
        if decision.allowed:
            return
        if decision.rule == "no-such-note":
            raise no_such_note(path, "Check the path with list_notes or search_notes.")
        raise PolicyDenied(decision.reason, rule=decision.rule)

    def _check_reader(self, caller: Caller) -> None:
        decision = decide_reader(caller)
        if not decision.allowed:
            raise PolicyDenied(decision.reason, rule=decision.rule)

    def encoded_content(self, text: str) -> bytes:
        try:
            data = text.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise ContentRejected(
                f"the text is not valid UTF-8 (unpaired surrogate at character {exc.start})",
                rule="content-not-utf8",
                remedy="Send the note as valid Unicode text.",
            ) from exc
        if "\x00" in text:
            raise ContentRejected(
                "the text contains a NUL character (binary data)",
                rule="content-binary",
                remedy="Notes are UTF-8 Markdown; remove the NUL characters.",
            )
        if len(data) > self.policy.max_note_bytes:
            raise ContentRejected(
                f"the note would be {len(data)} bytes, over the limit of {self.policy.max_note_bytes}",
                rule="note-too-large",
                remedy="Split it into several notes.",
            )
        return data

    def check_secrets(
        self, caller: Caller, text: str, allow_secret: bool, *, seam: str = "", own_text_at: int = 0
    ) -> None:
        """No credential reaches git history from a restricted or hosted caller; trusted callers must insist.

        A secret committed once stays in every clone forever, so this runs before anything is committed
        (and before a preview). The refusal names the kind and position, never the value. An append is
        scanned joined to the end of the note (``seam``), so a token split across two appends is seen
        whole; only findings reaching into the new text count (the old text was judged when it was written).
        ``own_text_at`` is where in ``text`` the caller's own words begin (an inbox item puts a title heading
        or a separator before them): positions are given in the words the caller sent, which is what it can
        find and fix, not in the seam or the rendered item.
        """
        joined = seam
        findings = self._new_findings(seam, text)
        if seam and not findings:
            # The append's own line break joins the two parts in the note: judge them joined without it too.
            joined = seam.rstrip("\r\n")
            findings = self._new_findings(joined, text)
        if not findings:
            return
        where = "; ".join(_where(f, joined + text, len(joined), len(joined) + own_text_at) for f in findings[:5])
        more = f" and {len(findings) - 5} more" if len(findings) > 5 else ""
        decision = decide_credential(caller, allow_secret)
        if decision.allowed:
            return
        if decision.rule == "credential-found":
            remedy = (
                "Nothing was written. Remove it or replace it with a placeholder such as <API_KEY>: "
                "a secret committed once stays in every clone's history forever."
            )
        else:
            remedy = (
                "Nothing was written. A secret committed once stays in every clone's history forever. "
                "If you really mean to commit it, repeat the call with allow_secret=true."
            )
        raise GateRejected(f"{decision.reason}: {where}{more}", rule=decision.rule, remedy=remedy)

    @staticmethod
    def _new_findings(old: str, text: str) -> list:
        """Findings in ``old + text`` that reach into ``text`` and are not a secret already in ``old``."""
        if not old:
            return scan_credentials(text)
        old_starts = {f.start for f in scan_credentials(old)}
        return [f for f in scan_credentials(old + text) if f.end > len(old) and f.start not in old_starts]

    def _visible(self, caller: Caller, info: ChangeInfo | None) -> ChangeInfo | None:
        """A commit summary may name other notes (a move's target): withhold it if any is invisible to the caller."""
        if info is None:
            return None
        for named in _NOTE_IN_TEXT.findall(info.summary):
            if not can_see(self.policy, caller, named):
                return replace(info, summary="(summary withheld: it names a note you cannot see)")
        return info

    def text_of(self, env: Environment, blob: str) -> str:
        if blob == ABSENT:
            return ""
        try:
            return env.store.read_unverified_blob(blob).decode("utf-8", errors="replace")
        except (KeyError, ValueError):
            return ""

    @staticmethod
    def fetched_blob(env: Environment, path: str) -> str:
        """The note's revision after one fetch: with several replicas on one origin, a base the caller read on
        another replica is newer than this clone until the next periodic fetch, and is not stale. An origin
        out of reach leaves the clone's answer (the write could not be pushed anyway)."""
        with suppress(OriginUnavailable):
            env.store.fetch(on_advance=env.on_advance)
        return env.store.blob_id(path)

    def stale(self, env: Environment, path: str, base: str, current: str) -> StaleRevision:
        # The diff starts from the caller's base only if that was once a version of *this* note; any other blob
        # id (say, of a private note) is never read back to the caller.
        known = base in (ABSENT, current) or any(b == base for _, b in env.store.history(path, 500))
        base_text = self.text_of(env, base) if known else ""
        current_text = self.text_of(env, current)
        diff = unified_diff(base_text, current_text, path, f"your base {base[:12]}", f"now {current[:12]}")
        return StaleRevision(
            f"{path} changed since revision {base[:12]}: it is now at {current[:12] if current != ABSENT else 'absent'}"
            f" (the diff from your base to now is attached)",
            current_revision=current,
            diff=diff,
        )

    @staticmethod
    def _case_collision(path: str, existing: str) -> NotegateError:
        """``existing`` is a note's path, or a folder's with ``/`` after it (``Listing.collision``): the text
        names which, and for a folder the path spelled as the vault spells it (case-insensitive file systems
        would merge the two folders in every clone)."""
        if existing.endswith("/"):
            depth = existing.count("/")  # the folders ``existing`` names, spelled by the vault
            spelled = existing + "/".join(path.split("/")[depth:])
            return NotegateError(
                f"{path} is in a folder that differs only by letter case from the existing folder {existing}",
                rule="path-case-collision",
                remedy=f"Write it in the existing folder, as {spelled}, or choose a clearly different name.",
            )
        return NotegateError(
            f"{path} differs only by letter case from the existing note {existing}",
            rule="path-case-collision",
            remedy="Use the existing note's exact path, or choose a clearly different name.",
        )

    @staticmethod
    def _normalise_base(base_revision: str) -> str:
        base = (base_revision or "").strip().lower()
        if base in ("", "none", "null", "new"):
            raise NotegateError(
                "base_revision is required",
                rule="base-revision-required",
                remedy="Pass the revision read_note returned, or 'absent' to create a new note.",
            )
        if base != ABSENT and not re.fullmatch(r"[0-9a-f]{40}", base):
            raise NotegateError(
                f"base_revision '{base_revision[:50]}' is not a revision",
                rule="base-revision-invalid",
                remedy="Pass the 40-hex revision read_note returned, or 'absent' to create a new note.",
            )
        return base

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
            decision = decide_attachment_read(self.policy, caller, apath.value, size)
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
            decision = decide_attachment_write(self.policy, caller, action, apath.value)
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
            self._check(caller, Action.READ, note.value)
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

    def search_notes(
        self,
        caller: Caller,
        query: str,
        folder: str = "",
        limit: int = 20,
        include_inbox: bool = False,
        environment: str | None = None,
    ) -> SearchResult:
        with self.audited(caller, "search_notes", folder or None):
            env = self.env(caller, environment)
            fpath = FolderPath.parse(folder or "")
            self._check_reader(caller)
            env.index.catch_up(env.store)
            limit = max(1, min(limit, MAX_SEARCH_LIMIT))
            hits = env.index.search(
                query[:500],
                folder=fpath.value,
                limit=limit,
                include_private=sees_private(caller),
                include_inbox=include_inbox,
            )
            shown = [
                SearchHit(path=h.path, snippet=h.snippet, score=_score(h.score), quarantined=h.inbox, matched=h.matched)
                for h in hits
                if can_see(self.policy, caller, h.path)
            ]
            tiers = [t for t in MATCH_TIERS if any(h.matched == t for h in shown)]
            fallback = "no note holds every word; these hold only some of them." if "any-word" in tiers else None
            return SearchResult(query=query[:500], hits=shown, matched=tiers[-1] if tiers else None, fallback=fallback)

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

    def note_history(self, caller: Caller, path: str, limit: int = 20, environment: str | None = None) -> HistoryResult:
        with self.audited(caller, "note_history", path):
            env = self.env(caller, environment)
            note = NotePath.parse(path)
            self._check(caller, Action.HISTORY, note.value)
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
            self._check(caller, Action.HISTORY, note.value)
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

    # -------------------------------------------------------------- writes
    def _apply(
        self, caller: Caller, env: Environment, intent: WriteIntent, confirmed: bool, record: dict
    ) -> WriteResult:
        """Apply one write intent: stale check, new-path checks, preview or two-step, quota, commit, push."""
        path, base, new_path, op = intent.path, intent.base, intent.new_path, intent.op
        current = env.store.blob_id(path.value)
        if current != base:
            current = self.fetched_blob(env, path.value)
        if current != base:
            raise self.stale(env, path.value, base, current)
        listing = env.store.listing()
        for p in intent.new_paths:
            if p != path.value and env.store.blob_id(p) != ABSENT:
                raise NotegateError(
                    f"{p} already exists",
                    rule="target-exists",
                    remedy="Choose another path, or delete that note first.",
                )
            existing = listing.collision(p)
            if existing is not None:
                raise self._case_collision(p, existing)
        diff_path = path.value if new_path is None else f"{path.value} -> {new_path}"
        diff = unified_diff(intent.before, intent.after, diff_path, f"revision {base[:12]}", "proposed")
        key = preview_key(caller, env.name, op, path.value, base, intent.changes, new_path or "")
        two_step = two_step_reason(self.policy, caller, path.value) or (
            two_step_reason(self.policy, caller, new_path) if new_path is not None else None
        )
        now = self.rt.clock()
        if not confirmed:
            self.check_commit(env, intent.changes)  # a preview shows only what could be committed
            if two_step:
                self.previews.issue(key, now)
            return WriteResult(
                status="preview",
                message=(
                    "Nothing was written. This is the exact change that would be committed. To apply it, call "
                    f"{op} again with the same arguments and confirmed=true."
                ),
                path=path.value,
                base_revision=base,
                diff=diff,
                new_path=new_path,
            )
        if two_step and not self.previews.redeem(key, now):
            raise PolicyDenied(
                f"this write must be previewed first: {two_step}",
                rule="two-step-required",
                remedy=f"Call {op} with confirmed=false, show the diff, then repeat the same call with confirmed=true.",
            )
        changes = list(intent.changes)
        result = self.commit_as(
            caller,
            env,
            changes,
            dict(intent.expect),
            intent.summary,
            dict(intent.extra_trailers),
            new_paths=intent.new_paths,
        )
        record["commit"] = result.commit
        self.after_commit(caller, env, changes, result.commit, op)
        target = new_path or path.value
        return WriteResult(
            status="committed",
            message=f"Committed and pushed {result.commit[:12]}.",
            path=path.value,
            base_revision=base,
            diff=diff,
            new_path=new_path,
            new_revision=result.blobs.get(target, ABSENT),
            commit=result.commit,
        )

    @contextmanager
    def _write_quota(self, caller: Caller, size: int, now: float) -> Iterator[None]:
        """Per-connector write limits (writes and bytes per hour) for callers the policy limits
        (:func:`notegate.policy.write_limits`), held by :meth:`commit_as`: the one commit every door's write
        goes through (MCP, console, contracts, import), so no door is a way around it.

        The write is reserved before it commits, so concurrent writers of one connector cannot all slip in,
        and released if the commit fails, so a refused write costs nothing.
        """
        limits = write_limits(self.policy, caller)
        if limits is None:
            yield
            return
        reservation = self.rt.state.reserve_write(
            connector=caller.connector_id,
            now=now,
            window=limits.window_seconds,
            size=size,
            fits=lambda writes, used: decide_quota(limits, writes, used, size).allowed,
        )
        if reservation.id is None:
            decision = decide_quota(limits, reservation.writes, reservation.bytes, size)
            retry = reservation.retry_at or now + limits.window_seconds
            when = datetime.fromtimestamp(retry, UTC).strftime("%H:%M UTC")
            raise PolicyDenied(
                decision.reason,
                rule=decision.rule,
                remedy=f"Nothing was written. Try again after {when} (in about {max(1, round((retry - now) / 60))} "
                "minutes), or "
                + (
                    "ask the owner to raise the machine limits."
                    if limits.who == "machine"
                    else "ask the owner for a trusted session."
                ),
            )
        try:
            yield
        except BaseException:
            self.rt.state.release_write(reservation.id)
            raise

    def content_verdicts(self) -> ContentVerdicts:
        """An empty record for :meth:`decide_content` to keep its allowed verdicts in (see ContentVerdicts)."""
        return ContentVerdicts(self.policy)

    def decide_content(self, path: str, data: bytes, *, verdicts: ContentVerdicts | None = None) -> Decision:
        """May the server commit these exact bytes at ``path``?  The git door's decisions, in its order: the
        path (hidden names in any spelling, the path rules, instruction-file names, the file type), the size,
        then the content (UTF-8, no NUL, the floor where sessions load it; an attachment's signature).

        With ``verdicts``, an allowed decision is kept there, keyed by the path and the bytes' blob id, for
        :meth:`commit_as` to reuse instead of deciding the same bytes again."""
        decision = self._decide_content(path, data)
        if verdicts is not None and decision.allowed:
            verdicts._keep(self.policy, path, data)
        return decision

    def _decide_content(self, path: str, data: bytes) -> Decision:
        kind = decide_incoming_path(self.policy, path)
        if not kind.allowed:
            return kind
        if kind.rule == "incoming-note":
            if len(data) > self.policy.max_note_bytes:
                return Decision(False, "note-too-large", f"the note is {len(data)} bytes, over max_note_bytes.")
            return decide_incoming_note(self.policy, path, data)
        return decide_attachment(self.policy, path.rsplit("/", 1)[-1], data[:HEAD_BYTES], len(data))

    def check_commit(
        self,
        env: Environment,
        changes: list[Change] | tuple[Change, ...],
        verdicts: ContentVerdicts | None = None,
    ) -> None:
        """Refuse, with the git door's rule, a commit the pre-receive hook or the fetch would refuse.

        A file :meth:`decide_content` already allowed into ``verdicts`` -- this path, these exact bytes (their
        blob id, recomputed here from the bytes being committed), this policy -- is not decided twice."""
        for change in changes:
            if change.data is None:
                continue
            if verdicts is not None and verdicts._allowed(self.policy, change.path, change.data):
                continue
            decision = self._decide_content(change.path, change.data)
            if not decision.allowed:
                raise PolicyDenied(
                    f"{change.path}: {decision.reason}",
                    rule=decision.rule,
                    remedy=_RECIPE_REMEDIES.get(decision.rule),
                )
        listing = env.store.listing().notes
        added = [c for c in changes if c.data is not None and listing.get(c.path, ABSENT) == ABSENT]
        gone = [listing.get(c.path, ABSENT) for c in changes if c.data is None]
        gone = [blob for blob in gone if blob != ABSENT]
        # a rename (the same blob added elsewhere) is not a deletion, as the validator counts; the added files
        # are hashed only when something is deleted (an import's batch of 2,000 new files deletes nothing)
        moved_in = {_blob_id(c.data) for c in added if c.data is not None} if gone else set()
        deleted = sum(1 for blob in gone if blob not in moved_in)
        decision = decide_commit_size(self.policy, deleted=deleted, added=len(added))
        if not decision.allowed:
            raise PolicyDenied(decision.reason, rule=decision.rule, remedy=_RECIPE_REMEDIES.get(decision.rule))

    def commit_as(
        self,
        caller: Caller,
        env: Environment,
        changes: list[Change],
        expect: dict[str, str],
        summary: str,
        extra_trailers: dict[str, str] | None = None,
        *,
        new_paths: tuple[str, ...] = (),
        verdicts: ContentVerdicts | None = None,
        index_now: bool = True,
    ) -> CommitResult:
        """One commit by ``caller`` (author, trailers), pushed; the store's conflicts become refusals.

        The commit first meets the git door's rules (:meth:`check_commit`), whoever the caller is;
        ``verdicts`` spares files this service has already allowed byte for byte (the importer's).
        ``index_now=False`` leaves the search index behind the new tip (the importer's batches: it catches
        the index up once after its last batch, instead of once per batch; the index follows git, so a
        later ``catch_up`` -- the server's, at the latest -- brings it to any tip).

        The caller's write quota is held here (:meth:`_write_quota`), whichever door called."""
        size = sum(len(c.data or b"") for c in changes)
        with self._write_quota(caller, size, self.rt.clock()):
            return self._commit_checked(
                caller, env, changes, expect, summary, extra_trailers, new_paths, verdicts, index_now
            )

    def _commit_checked(
        self,
        caller: Caller,
        env: Environment,
        changes: list[Change],
        expect: dict[str, str],
        summary: str,
        extra_trailers: dict[str, str] | None,
        new_paths: tuple[str, ...],
        verdicts: ContentVerdicts | None,
        index_now: bool,
    ) -> CommitResult:
        self.check_commit(env, changes, verdicts)
        diskspace.check_room(self.policy, self.rt.config, env.name)  # refused whole, before anything is built
        started = time.perf_counter()
        try:
            result = env.store.commit(
                changes,
                expect,
                Author(caller.display_name, caller.login),
                commit_message(caller, summary, extra_trailers),
                new_paths=new_paths,
                on_advance=env.on_advance if index_now else None,
            )
            event(
                "commit",
                environment=env.name,
                commit=result.commit[:12],
                paths=len(changes),
                connector=caller.connector_id,
                ms=round((time.perf_counter() - started) * 1000, 1),  # the commit and its push to the origin
                pushes=result.pushes,  # more than 1: the origin moved (another replica pushed first)
            )
            return result
        except Conflict as conflict:
            raise self.stale(env, conflict.path, conflict.expected, conflict.current) from None
        except CaseCollision as collision:
            raise self._case_collision(collision.path, collision.existing) from None
        except Exception as exc:
            if diskspace.no_space(exc):
                raise diskspace.refused(exc, f"environment '{env.name}'") from exc
            raise

    def after_commit(self, caller: Caller, env: Environment, changes: list[Change], commit: str, op: str) -> None:
        """Keep inbox authorship in the state: who wrote each part of each item.

        A move carries the authors along, so moving an item can never make its author eligible to promote it.
        """
        if op == "move_note" and len(changes) == 2 and self.policy.inbox_item(changes[0].path) is not None:
            self.rt.state.copy_inbox_parts(env.name, changes[0].path, changes[1].path)
        for change in changes:
            if self.policy.inbox_item(change.path) is None:
                continue
            if change.data is None:
                self.rt.state.forget_inbox_item(env.name, change.path)
            else:
                self.rt.state.record_inbox_part(
                    environment=env.name,
                    path=change.path,
                    login=caller.login,
                    client=caller.client,
                    connector=caller.connector_id,
                    at=self.rt.clock(),
                    commit_id=commit,
                    op=op,
                )

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
            self._check(caller, action, note.value)
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
            self._check(caller, Action.APPEND, note.value)
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
            self._check(caller, Action.MOVE, src.value)
            self._check(caller, Action.MOVE, dst.value)
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
            self._check(caller, Action.DELETE, note.value)
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
            self._check(caller, Action.RESTORE, note.value)
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
