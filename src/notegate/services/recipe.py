"""The write recipe every commit meets: the planner's verdict, quota, disk space, commit, audit, bookkeeping.

Every commit, from every door (MCP, the console, contracts, import, init, inbox promotion, the hooks'
write-back), is decided by the one pure planner (:func:`notegate.policy.plan.plan`) in
:meth:`NotesService.plan_commit` -- per file the check the pre-receive hook, the server's fetch and
``notegate sync`` make (:func:`notegate.policy.decide_file`), and the change's counts as they count them
(renames paired alike, emptied notes counted as deletions) -- and made by :meth:`NotesService.commit_as`,
which then keeps the books the plan lists (inbox authorship, holds).  What a push would be refused, the
server never commits (libgit2's local transport runs no hook, and the server's own history is fetched and
vetted elsewhere).

Why its own module: the note operations (:mod:`notegate.services.notes`) state each write as a
:class:`WriteIntent`; everything between that and a pushed commit is here, as :class:`WriteRecipe`, the
part of :class:`~notegate.services.notes.NotesService` that no door can skip.

Where a commit lands is a :class:`CommitTarget`: the server's store (:class:`StoreTarget`: made, pushed,
acknowledged) or a workstation's vault clone (:class:`CloneTarget`, ``notegate sync``: an object ``main``
moves to once the git door's validator has read it).  :func:`run_plan` is the one step that makes a commit
for either, from a :class:`Plan` only, then keeps the books the plan lists (tests/test_layering.py holds
every commit maker to it).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Protocol

from notegate.errors import (
    NotegateError,
    PolicyDenied,
    UnknownEnvironment,
    no_such_note,
    remedy_in,
)
from notegate.policy import (
    Action,
    Caller,
    Decision,
    FileBytes,
    Policy,
    Tier,
    WriteLimits,
    decide,
    decide_environment,
    decide_file,
    decide_quota,
    decide_reader,
    fixed_caller,
    is_blank,
)
from notegate.policy.plan import Base, Bookkeeping, Intent, Plan, Proposed, Refusal, blob_id, plan, two_step_for
from notegate.services import diskspace
from notegate.services.eventlog import event
from notegate.services.previews import Previews, preview_key
from notegate.services.results import WriteResult
from notegate.services.runtime import Environment, Runtime
from notegate.services.writechecks import WriteChecks
from notegate.vault.commits import commit_message
from notegate.vault.linediff import unified_diff
from notegate.vault.paths import AttachmentPath, NotePath
from notegate.vault.store import ABSENT, Author, CaseCollision, Change, CommitResult, Conflict

_blob_id = blob_id
#: Who :meth:`WriteRecipe.check_commit` asks about: a trusted caller, so only the files and counts are judged.
_CHECKING = fixed_caller("cli:import", "-")


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


class CommitTarget(Protocol):
    """Where a planned commit lands: one commit of ``changes`` by ``author`` with ``message`` (spelled by
    :mod:`notegate.vault.commits`), answered with its id."""

    def commit(self, changes: Sequence[Change], author: Author, message: str) -> CommitResult: ...


class _Clone(Protocol):
    """What a workstation's vault clone offers the recipe (:class:`notegate.sync.workclone.WorkClone`)."""

    def commit_changes(
        self,
        parent: str | None,
        changes: Mapping[str, bytes | None],
        *,
        author_name: str,
        author_email: str,
        message: str,
        author_time: tuple[int, int] | None = None,
    ) -> str: ...


@dataclass(frozen=True)
class StoreTarget:
    """The server's store of one environment: the group commit makes the commit, pushes it and acknowledges it
    (each path of ``expect`` still at its blob, ``new_paths`` still absent); the store's refusals become the
    recipe's (:meth:`WriteRecipe._commit_checked`)."""

    recipe: WriteRecipe
    caller: Caller
    env: Environment
    expect: Mapping[str, str]
    new_paths: tuple[str, ...] = ()
    index_now: bool = True

    def commit(self, changes: Sequence[Change], author: Author, message: str) -> CommitResult:
        return self.recipe._commit_checked(
            self.caller, self.env, changes, self.expect, author, message, self.new_paths, self.index_now
        )


@dataclass(frozen=True)
class CloneTarget:
    """A workstation's vault clone (``notegate sync``): the commit is an object on ``parent`` that no ref names;
    the daemon moves ``main`` to it once the git door's validator has read it.  It speaks in the owner's own
    voice: ``email`` is the clone's (:func:`notegate.vault.commits.sync_author_email`, or a replayed commit's
    own), never the server's; ``when`` is the author time a replayed commit keeps."""

    clone: _Clone
    parent: str | None
    email: str
    when: tuple[int, int] | None = None

    def commit(self, changes: Sequence[Change], author: Author, message: str) -> CommitResult:
        made = self.clone.commit_changes(
            self.parent,
            {c.path: c.data for c in changes},
            author_name=author.name,
            author_email=self.email,
            message=message,
            author_time=self.when,
        )
        return CommitResult(commit=made, blobs={}, parent=self.parent, pushes=0)


def run_plan(
    target: CommitTarget,
    planned: Plan,
    changes: Sequence[Change],
    author: Author,
    message: str,
    *,
    books: Callable[[Bookkeeping, str], None] | None,
    hold: AbstractContextManager[object] | None = None,
) -> CommitResult:
    """The one step that makes a commit, wherever it lands: ``planned`` (the planner's :class:`Plan` of these
    ``changes``, never a refusal) committed by ``target`` inside ``hold`` (the write quota the plan names),
    then the bookkeeping the plan lists, kept by ``books`` -- after the commit, never before: a refused or
    failed commit implies nothing.

    ``books`` is None only where no state database is: a workstation's clone.  What its plan lists (an inbox
    item edited there) reaches the server only as the pushed commit, which, as every push, records no
    authorship."""
    if not isinstance(planned, Plan):
        raise TypeError("only a plan is committed: ask notegate.policy.plan.plan first")
    with hold if hold is not None else nullcontext():
        result = target.commit(changes, author, message)
    if books is not None:
        books(planned.bookkeeping, result.commit)
    return result


def trial_commit(target: CloneTarget, changes: Sequence[Change], author: Author, message: str) -> str:
    """A commit of a change the planner refused, made on a workstation's clone only so that the git door's
    validator (:func:`notegate.sync.incoming.inspect_update`) can read it and name every file it refuses, and
    judge the change whole, as the origin would on a push.  No ref ever names it and ``main`` never moves
    to it: only :func:`run_plan` makes a commit that lands."""
    return target.commit(changes, author, message).commit


class WriteRecipe(WriteChecks):
    """The recipe's half of :class:`~notegate.services.notes.NotesService` (it sets these attributes); the
    checks of what a caller sends, and the refusals a write meets outside the planner, are its
    :class:`~notegate.services.writechecks.WriteChecks`."""

    rt: Runtime
    policy: Policy
    previews: Previews

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

    def _check(self, caller: Caller, action: Action, path: NotePath | AttachmentPath) -> None:
        decision = decide(self.policy, caller, action, path)
        if decision.allowed:
            return
        if decision.rule == "no-such-note":
            raise no_such_note(path.value, "Check the path with list_notes or search_notes.")
        raise PolicyDenied(decision.reason, rule=decision.rule)

    def _check_reader(self, caller: Caller) -> None:
        decision = decide_reader(caller)
        if not decision.allowed:
            raise PolicyDenied(decision.reason, rule=decision.rule)

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
                )
            existing = listing.collision(p)
            if existing is not None:
                raise self._case_collision(p, existing)
        diff_path = path.value if new_path is None else f"{path.value} -> {new_path}"
        diff = unified_diff(intent.before, intent.after, diff_path, f"revision {base[:12]}", "proposed")
        key = preview_key(caller, env.name, op, path.value, base, intent.changes, new_path or "")
        planned_intent = Intent(
            op=op,
            paths=(path.value,) if new_path is None else (path.value, new_path),
            moved=(path.value, new_path) if op == "move_note" and new_path is not None else None,
        )
        two_step = two_step_for(self.policy, caller, planned_intent)
        now = self.rt.clock()
        if not confirmed:
            # a preview shows only what could be committed
            self.plan_commit(caller, env, intent.changes, planned_intent)
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
            intent=planned_intent,
        )
        record["commit"] = result.commit
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
    def _write_quota(self, caller: Caller, limits: WriteLimits | None, size: int, now: float) -> Iterator[None]:
        """Per-connector write limits (writes and bytes per hour) for callers the policy limits
        (:func:`notegate.policy.write_limits`), held by :meth:`commit_as`: the one commit every door's write
        goes through (MCP, console, contracts, import), so no door is a way around it.

        The write is reserved before it commits, so concurrent writers of one connector cannot all slip in,
        and released if the commit fails, so a refused write costs nothing.
        """
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
                    if limits.who == Tier.MACHINE
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
        """May the server commit these exact bytes at ``path``?  The one per-file check every door makes
        (:func:`notegate.policy.decide_file`: mode, path, size, content), the pre-receive hook's included.

        With ``verdicts``, an allowed decision is kept there, keyed by the path and the bytes' blob id, for
        :meth:`commit_as` to reuse instead of deciding the same bytes again."""
        decision = self._decide_content(path, data)
        if verdicts is not None and decision.allowed:
            verdicts._keep(self.policy, path, data)
        return decision

    def _decide_content(self, path: str, data: bytes) -> Decision:
        return decide_file(self.policy, path, FileBytes(data))

    def plan_commit(
        self,
        caller: Caller,
        env: Environment,
        changes: list[Change] | tuple[Change, ...],
        intent: Intent | None = None,
        verdicts: ContentVerdicts | None = None,
    ) -> Plan:
        """The planner's answer (:func:`notegate.policy.plan.plan`) about ``changes`` on the environment's
        main: a :class:`Plan`, or its refusal raised with the git door's rule -- what the pre-receive hook or
        the fetch would refuse, the server never commits.

        A file :meth:`decide_content` already allowed into ``verdicts`` -- this path, these exact bytes (their
        blob id, recomputed here from the bytes being committed), this policy -- is not decided twice."""
        listing = env.store.listing()
        notes, attachments = listing.notes, listing.attachments
        base = Base(
            blob=lambda p: notes.get(p) or attachments.get(p),
            is_note=lambda p: p in notes,
            blank=lambda blob: is_blank(env.store.read_unverified_blob(blob)),
            # renamed-and-edited files pair as the git door pairs them (asked only past the limit)
            similar=lambda: env.store.similar_deletions(changes, listing.commit),
        )
        intent = intent or Intent()
        if verdicts is not None:
            intent = replace(intent, decided=lambda p, data: verdicts._allowed(self.policy, p, data))
        planned = plan(self.policy, caller, base, [Proposed(c.path, c.data) for c in changes], intent)
        if isinstance(planned, Refusal):
            raise PolicyDenied(
                f"{planned.path}: {planned.reason}" if planned.path else planned.reason,
                rule=planned.rule,
                remedy=remedy_in("writer", planned.rule),
            )
        return planned

    def check_commit(
        self,
        env: Environment,
        changes: list[Change] | tuple[Change, ...],
        verdicts: ContentVerdicts | None = None,
    ) -> None:
        """Refuse, with the git door's rule, a commit the pre-receive hook or the fetch would refuse (the
        planner's verdict on the files and counts, for a trusted caller: no quota, no two-step)."""
        self.plan_commit(_CHECKING, env, changes, verdicts=verdicts)

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
        intent: Intent | None = None,
    ) -> CommitResult:
        """One commit by ``caller`` (author, trailers), pushed; the store's conflicts become refusals.

        The recipe runs a plan (:meth:`plan_commit`): the planner's verdict first (the git door's rules,
        whoever the caller is), then the quota it names, the commit, and the bookkeeping it lists (inbox
        authorship recorded, copied or forgotten; holds set), in that order; ``intent`` says what the door
        means (its op, the paths it named, a move, a hold).
        ``verdicts`` spares files this service has already allowed byte for byte (the importer's).
        ``index_now=False`` leaves the search index behind the new tip (the importer's batches: it catches
        the index up once after its last batch, instead of once per batch; the index follows git, so a
        later ``catch_up`` -- the server's, at the latest -- brings it to any tip).

        The caller's write quota is held here (:meth:`_write_quota`), whichever door called."""
        planned = self.plan_commit(caller, env, changes, intent, verdicts)
        op = intent.op if intent else "commit"
        return run_plan(
            StoreTarget(self, caller, env, expect, new_paths, index_now),
            planned,
            changes,
            Author(caller.display_name, caller.login),
            commit_message(caller, summary, extra_trailers),
            hold=self._write_quota(caller, planned.quota, planned.counts.bytes, self.rt.clock()),
            books=lambda books, commit: self.keep_books(caller, env, books, commit, op),
        )

    def _commit_checked(
        self,
        caller: Caller,
        env: Environment,
        changes: Sequence[Change],
        expect: Mapping[str, str],
        author: Author,
        message: str,
        new_paths: tuple[str, ...],
        index_now: bool,
    ) -> CommitResult:
        diskspace.check_room(self.policy, self.rt.config, env.name)  # refused whole, before anything is built
        started = time.perf_counter()
        try:
            result = env.store.commit(
                changes,
                expect,
                author,
                message,
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

    def keep_books(self, caller: Caller, env: Environment, books: Bookkeeping, commit: str, op: str) -> None:
        """What a made commit implies for the state, as the plan lists it: a moved item's authors go along
        (so moving an item never makes its author eligible to promote it), items that left the inbox are
        forgotten (authors and hold), each part written is recorded (who wrote which part of which item),
        holds are set."""
        state = self.rt.state
        for source, target in books.copy:
            state.copy_inbox_parts(env.name, source, target)
        for path in books.forget:
            state.forget_inbox_item(env.name, path)
        now = self.rt.clock()
        for path in books.record:
            state.record_inbox_part(
                environment=env.name,
                path=path,
                login=caller.login,
                client=caller.client,
                connector=caller.connector_id,
                at=now,
                commit_id=commit,
                op=op,
            )
        for hold in books.holds:
            state.set_hold(
                environment=env.name,
                path=hold.item,
                version=hold.version,
                reason=hold.reason,
                reviewer=hold.reviewer,
                at=now,
            )
