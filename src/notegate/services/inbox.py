"""The quarantine inbox: restricted sessions write items, trusted reviewers promote or hold them.

Theory of operation
-------------------
* A restricted session reaches only typed inbox items (policy templates), by create or append.  What it
  writes never changes what the next session loads until a reviewer promotes it.
* Promotion follows fixed routes from the policy (checked at start and again here); no route reaches
  ``rules/``, a protected glob or an instruction file.  One commit applies the route and removes the item.
* A reviewer approves exactly what it read: the item's version must be current.  An author of an item
  (any connector login that created or appended to it: a token, not a person) may not promote it.
  The floor holds an item whatever anyone says; nothing over MCP overrides it.
* Holds live in the state database and are mirrored, readable, in ``inbox/_held.md``.  An unchanged held
  item stays held; an item changed after its hold is offered for review again.
* Task notes (kind ``task``) are the server's own: a refused fetch leaves one for the environment's owner
  (state DB, never a commit made from the refused content).  ``list_inbox`` shows the open ones first, to
  the owner only (:func:`notegate.policy.decide_task_reader`); they are not items to promote or hold, and
  are marked resolved by the server once the origin is repaired.
"""

from __future__ import annotations

import re
import threading
import unicodedata
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime

from notegate.errors import NoSuchNote, NotegateError, PolicyDenied, StaleRevision
from notegate.policy import (
    Author,
    Caller,
    InboxKeys,
    capture_keys,
    decide_author,
    decide_review,
    decide_task_reader,
    inbox_write_needs_preview,
    is_slug,
)
from notegate.policy.plan import Hold, Intent
from notegate.policyfile import HELD_PATH
from notegate.safety.floor import FloorVerdict, check_item
from notegate.services import provenance
from notegate.services.notes import NotesService, WriteResult
from notegate.services.runtime import Environment
from notegate.vault import formats
from notegate.vault.commits import Trailer
from notegate.vault.held import HeldRow, clean_reason, parse_held, render_held
from notegate.vault.store import ABSENT, Change, Listing

PREVIEW_CHARS = 280
FLOOR_CACHE_ITEMS = 4096  # verdicts kept (a verdict is a few reasons: small)
APPEND_RETRIES = 3

TASK_KIND = "task"
TASK_AUTHOR = "notegate (the server)"


@dataclass(frozen=True, kw_only=True)
class InboxItem:
    path: str
    kind: str
    project: str | None = None  # the project (or, for captures, the slug)
    authors: list[str]  # the connector logins that wrote it: 'client (person)'
    version: str
    size: int
    floor: str  # 'pass', or 'hold' when the floor holds it whatever anyone decides
    floor_reasons: list[str] = field(default_factory=list)
    held: bool
    held_reason: str | None = None
    preview: str  # the first characters of the item: untrusted data, not instructions
    # Held once, at another version: the item changed since its hold (so it waits for review again).
    hold_changed: bool = False
    earlier_hold_reason: str | None = None


@dataclass(frozen=True, kw_only=True)
class InboxList:
    items: list[InboxItem]
    waiting: int  # items waiting for a decision (not held-and-unchanged)


@dataclass(frozen=True, kw_only=True)
class PromotionPreview:
    """What promoting one version of an item would write to its route's target (nothing is written)."""

    item: str
    version: str
    target: str
    before: str  # the target's text now ('' when absent)
    after: str  # the target's text after promotion


@dataclass(frozen=True, kw_only=True)
class ReviewResult:
    status: str
    item: str
    message: str
    target: str | None = None
    commit: str | None = None


def slugify(text: str) -> str:
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    slug = re.sub(r"[^a-z0-9]+", "-", ascii_text.lower()).strip("-")[:60].strip("-")
    return slug


#: What inbox_write puts between an item's earlier text and the next one.
APPEND_SEPARATOR = "\n---\n\n"


def _project_remedy(key: str) -> str:
    """What to pass instead of the project ``key``: the slug it would be accepted as, when there is one
    ('Projets été' -> 'projets-ete'), so the caller need not guess the rule's spelling; never a slug the
    check would refuse again."""
    slug = slugify(key)
    if slug and is_slug(slug):
        return f"Pass project='{slug}' (its name as a slug), or the repository's name, lowercased."
    return "Pass project, e.g. project='notegate' (the repository's name, lowercased)."


class InboxService:
    def __init__(self, notes: NotesService) -> None:
        self.notes = notes
        self.rt = notes.rt
        self.policy = notes.policy
        self._items_cache: dict[str, tuple[str | None, list[tuple[str, str]]]] = {}
        self._floor_cache: OrderedDict[tuple[str, str], FloorVerdict] = OrderedDict()
        self._floor_lock = threading.Lock()

    def floor(self, path: str, version: str, text: str) -> FloorVerdict:
        """The floor's verdict on one version of an item, computed once: every listing and review asks again."""
        key = (path, version)
        with self._floor_lock:
            verdict = self._floor_cache.get(key)
            if verdict is not None:
                self._floor_cache.move_to_end(key)
                return verdict
        verdict = check_item(text, path=path, instruction_files=self.policy.instruction_files)
        with self._floor_lock:
            self._floor_cache[key] = verdict
            while len(self._floor_cache) > FLOOR_CACHE_ITEMS:
                self._floor_cache.popitem(last=False)
        return verdict

    # ------------------------------------------------------------- helpers
    def _review_check(self, caller: Caller) -> None:
        decision = decide_review(self.policy, caller)
        if not decision.allowed:
            raise PolicyDenied(decision.reason, rule=decision.rule)

    def authors(self, env: Environment, path: str) -> list[Author]:
        """Every connector login that created or appended to the item, from the state's records only: the
        inbox parts it recorded, and who made each commit of the item's history (``commit_provenance``).

        Both count (a rewritten history still has the parts).  A commit's words never do: one the server did
        not record came by git and is a part "pushed by" its committer, unverified, which names no connector
        login of this server.  A recorded commit without a connector predates connector logins and counts as
        written by every connector of its person.
        """
        found = {
            Author(row["connector"], row["client"], row["login"]) for row in self.rt.state.inbox_parts(env.name, path)
        }
        commits = []
        for commit, blob in env.store.history(path, 200, until_created=True):
            if blob == ABSENT:
                break
            commits.append(commit)
        for info in self.notes.change_infos(env, commits):
            if info.pushed_by is not None:
                found.add(Author("", provenance.PUSHED, info.pushed_by))
            else:
                found.add(Author(info.connector or "", info.client or "-", info.login))
        known = {(a.client, a.person) for a in found if a.connector}
        # A legacy part that a connector-named part of the same client and person explains adds nothing.
        kept = [a for a in found if a.connector or (a.client, a.person) not in known]
        return sorted(kept, key=lambda a: (a.label, a.connector))

    @staticmethod
    def author_labels(authors: list[Author]) -> list[str]:
        return sorted({a.label for a in authors})

    def _items(self, env: Environment) -> list[tuple[str, str]]:
        """(path, version) of every inbox item at the tip; cached per commit (every tool call counts them).

        When the tip moved, the cached list is brought forward by the paths that changed between the two
        commits (the store knows them without a diff for its own writes), not by a scan of every note: the
        MCP door asks on every call, so after each write a full scan cost O(notes) per call (~10k
        iterations at 10,000 notes).  :meth:`_scan_items` stays the definition both must agree with."""
        listing = env.store.listing()
        cached = self._items_cache.get(env.name)
        if cached is not None and cached[0] == listing.commit:
            return cached[1]
        items = self._advance_items(env, listing, cached) if cached is not None else None
        if items is None:
            items = self._scan_items(listing)
        self._items_cache[env.name] = (listing.commit, items)
        return items

    def _scan_items(self, listing: Listing) -> list[tuple[str, str]]:
        prefix = self.policy.inbox_root + "/"
        return sorted(
            (p, b) for p, b in listing.notes.items() if p.startswith(prefix) and not self.policy.is_reserved(p)
        )

    def _advance_items(
        self, env: Environment, listing: Listing, cached: tuple[str | None, list[tuple[str, str]]]
    ) -> list[tuple[str, str]] | None:
        """The cached items moved to ``listing``'s commit by the paths changed since, or None (scan instead)
        when either commit is unknown: a tree diff against a missing commit would not show deletions."""
        old, new = cached[0], listing.commit
        if old is None or new is None:
            return None
        try:
            env.store.commit_info(old)
        except (KeyError, ValueError):
            return None
        prefix = self.policy.inbox_root + "/"
        items = dict(cached[1])
        for path, _blob in env.store.changed_notes(old, new):
            if not path.startswith(prefix):
                continue
            items.pop(path, None)
            version = listing.notes.get(path)  # the listing says what is a servable note, as the scan does
            if version is not None and not self.policy.is_reserved(path):
                items[path] = version
        return sorted(items.items())

    def waiting_count(self, env: Environment) -> int:
        """Items not held at their current version.  No items, no holds to read: the MCP door asks on every
        call, and an empty inbox (the usual case) then costs no state-database query."""
        items = self._items(env)
        if not items:
            return 0
        holds = self.rt.state.holds(env.name)
        return sum(1 for p, b in items if not (p in holds and holds[p]["version"] == b))

    def notice(self, caller: Caller, environment: str | None) -> str | None:
        """The inbox notice line, when due for this login and client (count changed, or 15 minutes passed)."""
        env = self.notes.env(caller, environment)
        count = self.waiting_count(env)
        due = self.rt.state.notice_due(
            environment=env.name,
            login=caller.login,
            client=caller.client,
            count=count,
            now=self.rt.clock(),
            interval=self.policy.notice_interval_seconds,
        )
        if not due:
            return None
        noun = "item" if count == 1 else "items"
        return f"{count} inbox {noun} waiting for review."

    # --------------------------------------------------------------- write
    def inbox_write(
        self,
        caller: Caller,
        kind: str,
        text: str,
        project: str | None = None,
        title: str | None = None,
        environment: str | None = None,
    ) -> WriteResult:
        """Create the right inbox item, or append to it if it exists (so a model need not know the layout).

        A project's item, and a capture titled like an existing one, is appended to; an untitled capture (or
        one whose title does not slugify) always gets an item of its own (:func:`notegate.policy.capture_keys`).
        The result's message says which happened and where: a caller that thought it created an item must
        learn that its text joined another's."""
        kinds = dict(self.policy.inbox)
        if kind not in kinds:
            raise NotegateError(
                f"unknown inbox kind '{kind}'", rule="bad-argument", remedy=f"Use one of: {', '.join(kinds)}."
            )
        if not text or not text.strip():
            raise NotegateError("the text is empty", rule="bad-argument", remedy="Write what you want to record.")
        heading = " ".join((title or "").split())  # one line: a title with a line break would end its heading
        if "{project}" in kinds[kind]:
            key = (project or "").strip()
            if not is_slug(key):
                raise NotegateError(
                    f"a {kind} item needs a project name made of lowercase letters, digits and hyphens"
                    + (f" ('{key[:40]}' is not)" if key else ""),
                    rule="bad-project",
                    remedy=_project_remedy(key),
                )
            keys = InboxKeys(keys=(key,), appends=True)
            section = ""  # a project's item is one running text; its title only starts it
        else:
            keys = capture_keys(slugify(heading), self.rt.clock())
            section = f"## {heading}\n\n" if heading else ""  # an appended capture keeps its own title
        path = self.policy.inbox_path(kind, keys.keys[0])
        if inbox_write_needs_preview(self.policy, caller):
            raise PolicyDenied(
                "inbox writes of your client class must be previewed",
                rule="two-step-required",
                remedy=f"Use append_note/write_note on {path} without confirmed, then with confirmed=true.",
            )
        env = self.notes.env(caller, environment)
        top = f"# {heading}\n\n" if heading else ""
        own_text_at = len(top)  # a refusal's positions count from the caller's text, not from what is added
        body = top + text
        if not body.endswith("\n"):
            body += "\n"
        if not keys.appends:
            return self._create_first_free(caller, env, kind, keys.keys, body, own_text_at)
        for _attempt in range(APPEND_RETRIES):
            current = env.store.blob_id(path)
            try:
                if current == ABSENT:
                    return self._create(caller, env, path, body, own_text_at)
                added = APPEND_SEPARATOR + section
                appended = self.notes.append_note(
                    caller,
                    path,
                    added + text,
                    current,
                    confirmed=True,
                    environment=env.name,
                    own_text_at=len(added),
                    tool="inbox_write",
                )
                return replace(appended, message=f"Appended to the existing item {path}. {appended.message}")
            except StaleRevision:
                continue  # another session appended meanwhile: appends commute, so take the new base
        raise NotegateError(f"{path} kept changing while appending", rule="busy")

    def _create(self, caller: Caller, env: Environment, path: str, body: str, own_text_at: int) -> WriteResult:
        """Create the item at ``path`` (expected absent: a concurrent create makes it stale), audited as the
        inbox_write the caller made; the reply says it was created."""
        created = self.notes.write_note(
            caller,
            path,
            body,
            ABSENT,
            confirmed=True,
            environment=env.name,
            own_text_at=own_text_at,
            tool="inbox_write",
        )
        return replace(created, message=f"Created {path}. {created.message}")

    def _create_first_free(
        self, caller: Caller, env: Environment, kind: str, keys: tuple[str, ...], body: str, own_text_at: int = 0
    ) -> WriteResult:
        """Create the item at the first of ``keys`` nobody holds.  The create expects ABSENT, so a capture
        that took the same key first (another session, another replica) makes it stale: try the next."""
        for key in keys:
            path = self.policy.inbox_path(kind, key)
            if env.store.blob_id(path) != ABSENT:
                continue  # an earlier capture of this second
            try:
                return self._create(caller, env, path, body, own_text_at)
            except StaleRevision:
                continue  # created concurrently: it is that capture's item, not ours to append to
        raise NotegateError(
            f"{len(keys)} untitled captures were already made this second",
            rule="busy",
            remedy="Nothing was written. Try again in a second, or give the capture a title.",
        )

    # -------------------------------------------------------------- review
    def list_inbox(self, caller: Caller, environment: str | None = None) -> InboxList:
        with self.notes.audited(caller, "list_inbox", self.policy.inbox_root):
            self._review_check(caller)
            env = self.notes.env(caller, environment)
            holds = self.rt.state.holds(env.name)
            items = self._tasks(caller, env)
            waiting = 0
            for path, blob in self._items(env):
                text = env.store.read_unverified_blob(blob).decode("utf-8", errors="replace")
                ref = self.policy.inbox_item(path)
                verdict = self.floor(path, blob, text)
                hold = holds.get(path)
                held = hold is not None and hold["version"] == blob
                waiting += 0 if held else 1
                items.append(
                    InboxItem(
                        path=path,
                        kind=ref.kind if ref else "unknown",
                        project=ref.key if ref else None,
                        authors=self.author_labels(self.authors(env, path)),
                        version=blob,
                        size=len(text.encode("utf-8")),
                        floor=verdict.verdict,
                        floor_reasons=[r.as_text() for r in verdict.reasons],
                        held=held,
                        held_reason=hold["reason"] if held else None,
                        preview=text[:PREVIEW_CHARS],
                        hold_changed=hold is not None and not held,
                        earlier_hold_reason=hold["reason"] if hold is not None and not held else None,
                    )
                )
            return InboxList(items=items, waiting=waiting)

    def _tasks(self, caller: Caller, env: Environment) -> list[InboxItem]:
        """The server's open task notes for this environment, for its owner only (first in the list)."""
        owner = self.rt.config.environment(env.name).owner
        if not decide_task_reader(caller, owner).allowed:
            return []
        return [self._task_item(row) for row in self.rt.state.tasks(env.name)]

    def _task_item(self, row) -> InboxItem:
        """One task note as a listed item. The server's own (no connector) is code's text; one a caller's
        input opened names that connector login as its author and gets the floor's honest verdict."""
        text = row["text"]
        if not row["connector"]:
            authors, verdict = [TASK_AUTHOR], None
        else:
            authors = [Author(row["connector"], row["client"], row["login"]).label]
            verdict = self.floor(f"task:{row['id']}", row["key"], text)
        return InboxItem(
            path=f"task:{row['id']}",
            kind=TASK_KIND,
            project=row["kind"],
            authors=authors,
            version=row["key"],
            size=len(text.encode("utf-8")),
            floor=verdict.verdict if verdict else "pass",
            floor_reasons=[r.as_text() for r in verdict.reasons] if verdict else [],
            held=False,
            preview=text,
        )

    def _current(self, env: Environment, item: str, version: str) -> str:
        current = env.store.blob_id(item)
        if current != version:  # a version listed on another replica: fetch once before refusing
            current = self.notes.fetched_blob(env, item)
        if current == ABSENT or self.policy.is_reserved(item) or not self.policy.is_inbox(item):
            raise NoSuchNote(f"no such inbox item: {item}", remedy="List the items with list_inbox.")
        if current != version:
            stale = self.notes.stale(env, item, version, current)
            raise StaleRevision(
                f"{item}: the item changed since you read it; list_inbox again",
                current_revision=current,
                diff=stale.diff,
                remedy="Nothing was done. Read the item's current text and pass the version list_inbox shows now.",
            )
        return current

    def promote_inbox(self, caller: Caller, item: str, version: str, environment: str | None = None) -> ReviewResult:
        with self.notes.audited(caller, "promote_inbox", item) as record:
            self._review_check(caller)
            env = self.notes.env(caller, environment)
            self._current(env, item, version)
            authors = self.authors(env, item)
            author_check = decide_author(caller, authors)
            if not author_check.allowed:
                raise PolicyDenied(
                    f"{item}: {author_check.reason}",
                    rule=author_check.rule,
                    remedy="Leave it for another connector (your workstation, another app, or the scheduled "
                    "reviewer), or hold it.",
                )
            labels = self.author_labels(authors)
            text = env.store.read_unverified_blob(version).decode("utf-8")
            verdict = self.floor(item, version, text)
            if verdict.held:
                raise PolicyDenied(
                    "the floor holds this item: " + "; ".join(r.as_text() for r in verdict.reasons[:5]),
                    rule="floor-hold",
                )
            target, target_blob, _before, new_text = self._plan(env, item, text, labels)
            changes = [Change(target, new_text.encode("utf-8")), Change(item, None)]
            expect = {item: version, target: target_blob}
            held_changes, held_expect = self._without_hold(env, item)
            changes.extend(held_changes)
            expect.update(held_expect)
            result = self.notes.commit_as(
                caller,
                env,
                changes,
                expect,
                f"promote {item} to {target}",
                {Trailer.REVIEWED_BY: Author.of(caller).label, Trailer.AUTHORS: ", ".join(labels) or "-"},
                intent=Intent(op="promote_inbox"),  # the item's deletion: its authors and hold are forgotten
            )
            record["commit"] = result.commit
            return ReviewResult(
                status="promoted",
                item=item,
                target=target,
                commit=result.commit,
                message=f"Promoted {item} to {target} and removed it from the inbox (commit {result.commit[:12]}).",
            )

    def _without_hold(self, env: Environment, item: str) -> tuple[list[Change], dict[str, str]]:
        """The change to ``inbox/_held.md`` that drops ``item``'s hold (none when it is not held), and what
        it expects, so the item and its hold leave in one commit."""
        holds = self.rt.state.holds(env.name)
        if item not in holds:
            return [], {}
        remaining = [self._held_row(r) for p, r in holds.items() if p != item]
        held_change, held_blob = self._held_change(env, remaining)
        return [held_change], {HELD_PATH: held_blob}

    def delete_inbox(self, caller: Caller, item: str, version: str, environment: str | None = None) -> ReviewResult:
        """A reviewer deletes the exact version of an item it saw, and its hold with it (one commit): the
        held list never names an item that is gone."""
        with self.notes.audited(caller, "delete_inbox", item) as record:
            self._review_check(caller)
            env = self.notes.env(caller, environment)
            self._current(env, item, version)
            held_changes, held_expect = self._without_hold(env, item)
            result = self.notes.commit_as(
                caller,
                env,
                [Change(item, None), *held_changes],
                {item: version, **held_expect},
                f"delete {item}",
                {Trailer.REVIEWED_BY: Author.of(caller).label},
                intent=Intent(op="delete_inbox"),  # the item's deletion: its authors and hold are forgotten
            )
            record["commit"] = result.commit
            return ReviewResult(
                status="deleted",
                item=item,
                commit=result.commit,
                message=f"Deleted {item} from the inbox (commit {result.commit[:12]}).",
            )

    def _plan(self, env: Environment, item: str, text: str, labels: list[str]) -> tuple[str, str, str, str]:
        """(target, its blob, its text now, its text after) for promoting ``text``: the one route computation
        that both :meth:`promote_inbox` and :meth:`preview_promotion` use."""
        ref = self.policy.inbox_item(item)
        if ref is None:
            raise PolicyDenied(
                f"{item} is not a typed inbox item, so it has no route",
                rule="no-route",
            )
        route = self.policy.route_target(ref.kind, ref.key)
        if not route.allowed:
            raise PolicyDenied(route.reason, rule=route.rule)
        target = route.reason
        target_blob = env.store.blob_id(target)
        existing = self.notes.text_of(env, target_blob) if target_blob != ABSENT else None
        return target, target_blob, existing or "", self._apply_route(ref.kind, ref.key, existing, text, labels)

    def preview_promotion(
        self, caller: Caller, item: str, version: str, environment: str | None = None
    ) -> PromotionPreview:
        """What :meth:`promote_inbox` would write for this exact version, for a reviewer to read first. The
        same review rule and version check; who may promote and the floor are decided at promotion."""
        self._review_check(caller)
        env = self.notes.env(caller, environment)
        self._current(env, item, version)
        labels = self.author_labels(self.authors(env, item))
        text = env.store.read_unverified_blob(version).decode("utf-8", errors="replace")
        target, _blob, before, after = self._plan(env, item, text, labels)
        return PromotionPreview(item=item, version=version, target=target, before=before, after=after)

    def _apply_route(self, kind: str, key: str, existing: str | None, text: str, authors: list[str]) -> str:
        now = datetime.fromtimestamp(self.rt.clock(), UTC)
        try:
            if kind == "log":
                entry = formats.LogEntry(when=now, branch="inbox", client="review", text=text.strip("\n"))
                return formats.insert_log_entry(existing, key, entry)
            if kind == "decision":
                block = f"{text.strip()}\n\n_Proposed by {', '.join(authors) or 'unknown'}, reviewed {now:%Y-%m-%d}._"
                return formats.append_under_heading(existing, "Proposed", block, title=f"{key} design")
        except formats.FormatError as exc:
            raise NotegateError(
                f"the route's target note could not take the item: {exc.message}",
                rule="route-target-malformed",
            ) from None
        return text if text.endswith("\n") else text + "\n"

    # --------------------------------------------------------------- holds
    def _held_row(self, row) -> HeldRow:
        return HeldRow(
            item=row["path"],
            version=row["version"],
            reason=row["reason"],
            reviewer=row["reviewer"],
            date=datetime.fromtimestamp(row["at"], UTC).strftime("%Y-%m-%d"),
        )

    def _held_change(self, env: Environment, rows: list[HeldRow]) -> tuple[Change, str]:
        current = env.store.blob_id(HELD_PATH)
        return Change(HELD_PATH, render_held(rows).encode("utf-8")), current

    def hold_inbox(
        self,
        caller: Caller,
        item: str,
        version: str,
        reason: str,
        environment: str | None = None,
        verify: Callable[[str], None] | None = None,
    ) -> ReviewResult:
        """Hold an item. ``verify`` (for model-written reasons) sees the exact lines about to be committed."""
        with self.notes.audited(caller, "hold_inbox", item) as record:
            self._review_check(caller)
            env = self.notes.env(caller, environment)
            self._current(env, item, version)
            reason = clean_reason(reason or "")
            now = self.rt.clock()
            holds = self.rt.state.holds(env.name)
            rows = [self._held_row(r) for p, r in holds.items() if p != item]
            rows.append(
                HeldRow(
                    item=item,
                    version=version,
                    reason=reason,
                    reviewer=caller.login,
                    date=datetime.fromtimestamp(now, UTC).strftime("%Y-%m-%d"),
                )
            )
            change, held_blob = self._held_change(env, rows)
            if verify is not None:
                old = self.notes.text_of(env, held_blob).splitlines()
                verify("\n".join(line for line in change.data.decode("utf-8").splitlines() if line not in old))
            result = self.notes.commit_as(
                caller,
                env,
                [change],
                {HELD_PATH: held_blob, item: version},
                f"hold {item}",
                {Trailer.REVIEWED_BY: Author.of(caller).label},
                intent=Intent(op="hold_inbox", hold=Hold(item, version, reason, caller.login)),
            )
            record["commit"] = result.commit
            return ReviewResult(
                status="held",
                item=item,
                commit=result.commit,
                message=f"Held {item} at version {version[:12]}: it stays held until it changes.",
            )

    def restore_holds_from_note(self, environment: str | None = None) -> int:
        """Rebuild the state's holds from inbox/_held.md (e.g. after the state database was lost)."""
        env = self.rt.environment(environment)
        found = env.store.read(HELD_PATH)
        if found is None:
            return 0
        count = 0
        for row in parse_held(found[0].decode("utf-8", errors="replace")):
            at = datetime.strptime(row.date, "%Y-%m-%d").replace(tzinfo=UTC).timestamp()
            self.rt.state.set_hold(
                environment=env.name,
                path=row.item,
                version=row.version,
                reason=row.reason,
                reviewer=row.reviewer,
                at=at,
            )
            count += 1
        return count
