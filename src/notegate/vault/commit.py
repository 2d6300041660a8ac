"""The store's writes: the write lock, the group commit (requests queued, one holder builds their chain, writes
its pack, pushes it as a compare-and-swap and only then moves main) and the roll-up of the group packs.

A mixin of :class:`notegate.vault.store.VaultStore` (issue 29 §4): methods only, over the attributes
``VaultStore.__init__`` sets.  The order of every step (objects flushed before a ref names them, pushed before
main moves: :mod:`notegate.vault.durable`) is the store's correctness; see the theory of operation in
:mod:`notegate.vault.store`.
"""

from __future__ import annotations

import fcntl
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

import pygit2

from notegate.errors import OriginRefused, OriginUnavailable
from notegate.vault import bulk, durable, objects, refwrite
from notegate.vault.listing import Listing, _Range
from notegate.vault.storebase import (
    ABSENT,
    COMMITTER_NAME,
    MAIN_REF,
    MAX_GROUP,
    MAX_REPLAYS,
    PENDING_REF,
    Author,
    CaseCollision,
    Change,
    CommitResult,
    Conflict,
    _hook_rules,
    _origin_moved,
    _Request,
    _short,
    log,
)

#: Group packs written (one per group commit) before they are rolled up into one (:meth:`VaultStore.roll_up`).
#: Each lookup of an object that is not in the last pack it was found in searches the packs' indexes one by
#: one, and libgit2 keeps every pack it has opened until the repository is opened again.
ROLL_UP_AFTER = 32


@dataclass
class _Landed:
    """A group on the origin and main, not yet acknowledged: what :meth:`GroupCommits._settle` does once the
    write lock is released."""

    old: str | None
    new: str
    callbacks: list[Callable[[str | None, str], None]]
    outcomes: list[tuple[_Request, CommitResult]]


class _OriginMoved(Exception):
    """Raised inside a push's negotiation when the origin's main is not the tip the push was built on."""


def _chain_range(
    chain: Sequence[tuple[_Request, pygit2.Oid, str | None, Mapping[str, str]]], befores: Sequence[Mapping[str, str]]
) -> _Range:
    """What a pushed chain changed, as :func:`changed_paths` and a first-parent walk would find it: per commit
    the paths whose blob differs from its parent's; over the chain the net change (first before, last after).
    Paths under a hidden folder are left out, as the tree diff never descends into one."""
    first: dict[str, str] = {}  # path -> its blob before the chain
    final: dict[str, str] = {}  # path -> its blob at the chain's end
    last: dict[str, str] = {}
    for (_request, commit_id, _parent, blobs), before in zip(chain, befores, strict=True):
        for path, blob in blobs.items():
            if "/" in path and any(part.startswith(".") for part in path.split("/")[:-1]):
                continue
            first.setdefault(path, before[path])
            final[path] = blob
            if blob != before[path]:
                last[path] = str(commit_id)
    changes = tuple((path, blob) for path, blob in final.items() if blob != first[path])
    return _Range(changes=changes, last={path: last[path] for path, _blob in changes})


class GroupCommits:
    """The writes of :class:`~notegate.vault.store.VaultStore` (methods only; the store holds the state)."""

    # ---------------------------------------------------------------- writes
    @contextmanager
    def write_lock(self) -> Iterator[None]:
        """Serialise writers of this environment across threads and processes.

        Re-entrant within one thread: a service that fetches, plans and commits under one hold (a machine
        contract) calls :meth:`fetch` and :meth:`commit` inside it; only the outermost hold takes the flock."""
        with self._thread_lock:
            if self._lock_depth:
                self._lock_depth += 1
                try:
                    yield
                finally:
                    self._lock_depth -= 1
                return
            with open(self._lock_path, "a+") as handle:
                fcntl.flock(handle, fcntl.LOCK_EX)
                self._lock_depth = 1
                self._lock_owner = threading.get_ident()
                try:
                    yield
                finally:
                    self._lock_depth = 0
                    self._lock_owner = None
                    fcntl.flock(handle, fcntl.LOCK_UN)

    def commit(
        self,
        changes: Sequence[Change],
        expect: Mapping[str, str],
        author: Author,
        message: str,
        *,
        new_paths: Sequence[str] = (),
        on_advance: Callable[[str | None, str], None] | None = None,
    ) -> CommitResult:
        """Commit ``changes`` if every path in ``expect`` is still at its expected blob; push; then ack.

        ``on_advance(old, new)`` is called whenever ``main`` moves (after a fetch, or after our push), so
        the caller can keep its search index in step.

        Group commit: a write queues its request; whichever writer holds the lock takes every queued
        request, makes one commit per request, chained in queue order (each checked against the tree the
        previous one left), pushes the last one once, and only then acknowledges them all.  A request
        whose expectation fails raises its own :class:`Conflict`; the others go on.
        """
        request = _Request(tuple(changes), dict(expect), author, message, tuple(new_paths), on_advance)
        if self._lock_owner == threading.get_ident():  # inside a hold already (a contract): commit alone
            with self.push_lock() as waited:
                self._settle(self._commit_group([request], fetch_first=bool(waited)))
            return request.outcome()
        with self._queue_lock:
            self._queue.append(request)
        while not request.done:
            if request.taken:  # in a holder's group: its outcome comes from that holder
                request.wake.wait()
                request.wake.clear()  # the state is read again below, so no wake-up set after this is lost
                continue
            landed = None
            with self.write_lock(), self.push_lock() as waited:
                if request.done or request.taken:  # a previous holder took it into its group
                    continue
                with self._queue_lock:
                    group = self._queue[:MAX_GROUP]
                    del self._queue[:MAX_GROUP]
                    for queued in group:
                        queued.taken = True
                landed = self._commit_group(group, fetch_first=bool(waited))
            self._settle(landed)
        self._roll_up_soon()
        return request.outcome()

    def _settle(self, landed: _Landed | None) -> None:
        """Acknowledge a group that is on the origin and main: first the ``on_advance`` callbacks (the search
        index's catch-up, so an acknowledged write is searchable at once), then each writer's outcome.

        Why after the write lock is released: the catch-up is a fifth of a write's time at 10,000 notes, and
        it needs nothing the lock guards (the index has its own lock and catches up to whatever main is), so
        the next group is built and pushed meanwhile.  Nothing is acknowledged before its commit is on the
        origin and in the index; a callback that fails fails the group's writes, as it did under the lock."""
        if landed is None:
            return
        try:
            for callback in landed.callbacks:
                callback(landed.old, landed.new)
        except BaseException as exc:  # handed to every writer of the group, raised in its own thread
            for request, _result in landed.outcomes:
                request.fail(exc)
            return
        for request, result in landed.outcomes:
            request.finish(result)

    def _commit_group(self, group: list[_Request], *, fetch_first: bool = False) -> _Landed | None:
        """Commit and push ``group`` (under the write lock); what is landed is acknowledged by :meth:`_settle`
        once the lock is released.  Every request leaves landed, failed, or back in the queue (a new path
        whose case check needs a listing of its own).  ``fetch_first``: another replica pushed while we
        waited for the push lock, so our tip is probably behind the origin's."""
        try:
            first = group[0].on_advance if group else None
            if self.refusal is not None or fetch_first:  # repaired meanwhile, or moved by another replica
                self._fetch_locked(first)
                self._refuse_if_refused()
            for _attempt in range(MAX_REPLAYS):
                tip = self.head()
                chain, made, befores = self._build_chain(tip, group)
                if not chain:
                    return None
                last = chain[-1][1]
                self._write_group(made)
                if self.record is not None:
                    self.record([(str(c), r.author, r.message) for r, c, _p, _b in chain])
                if self._push(last, tip):
                    refwrite.update_ref(self.repo_dir, MAIN_REF, str(last))
                    # The tracking ref is not moved here: it says what the last fetch saw, and the next fetch
                    # sets it (one ref file less per group; nothing reads it between fetches).
                    self.refusal = None  # the origin took our commits on top of main: its tip is ours
                    self._remember_range(tip, str(last), _chain_range(chain, befores))
                    callbacks: list[Callable[[str | None, str], None]] = []
                    for request, _commit, _parent, _blobs in chain:
                        if request.on_advance is not None and request.on_advance not in callbacks:
                            callbacks.append(request.on_advance)
                    outcomes = [
                        (request, CommitResult(commit=str(commit_id), blobs=blobs, parent=parent, pushes=_attempt + 1))
                        for request, commit_id, parent, blobs in chain
                    ]
                    return _Landed(tip, str(last), callbacks, outcomes)
                # The origin moved: take its tip (if the vet accepts it) and build the chain again on it.
                self._fetch_locked(first)
                self._refuse_if_refused()
                group = [r for r, _c, _p, _b in chain]
            raise OriginUnavailable(
                f"the origin of environment '{self.name}' kept moving during {MAX_REPLAYS} attempts",
                remedy="Nothing was written. Try again in a moment.",
            )
        except BaseException as exc:  # handed to every waiting writer, raised in its own thread
            for request in group:
                if request.taken and not request.done:  # not one handed back to the queue: a later group has it
                    request.fail(exc)
            return None

    def _build_chain(
        self, tip: str | None, group: list[_Request]
    ) -> tuple[list[tuple[_Request, pygit2.Oid, str | None, dict[str, str]]], objects.Group, list[dict[str, str]]]:
        """One commit per request on top of ``tip``, each on the previous one, made in memory
        (:mod:`notegate.vault.objects`: what the caller then writes as the group's one pack). A request whose
        expectation fails is refused alone; a new path that may collide by case with the chain so far waits for
        a later group (so its check sees exactly the notes before it, as a lone write would).  Also returns, for
        each commit of the chain, the blobs its paths had in its parent (for :func:`_chain_range`)."""
        made = objects.Group(self._trees, lambda oid: bulk.is_packed(self.repo, oid))
        tree = self.repo[tip].peel(pygit2.Commit).tree_id.raw if tip else None
        parent = tip
        listing = self.listing() if tip is not None and any(r.new_paths for r in group) else None
        added = Listing(commit=None)  # notes created by the chain so far, for the case check
        chain: list[tuple[_Request, pygit2.Oid, str | None, dict[str, str]]] = []
        befores: list[dict[str, str]] = []
        deferred: list[_Request] = []
        for request in group:
            mark = made.mark()
            try:
                # Each path's blob is looked up once, in trees parsed once (objects.TreeCache): at 100,000 notes
                # the median note's folder has ~420 entries (~27 KB) and the largest ~4,800 (~350 KB).
                current_of: dict[str, str] = {}
                for path, expected in request.expect.items():
                    current = current_of[path] = objects.blob_at(made.read, tree, path)
                    if current != expected:
                        raise Conflict(path, expected, current)
                if request.new_paths and listing is not None:
                    existing = self._collision(listing, added, request.new_paths)
                    if existing is not None and chain:
                        deferred.append(request)
                        continue
                    if existing is not None:
                        raise CaseCollision(*existing)
                before = {
                    c.path: current_of.get(c.path) or objects.blob_at(made.read, tree, c.path) for c in request.changes
                }
                tree_id = objects.build(made, tree, request.changes)
                # Signatures are made now, not at import: a frozen timestamp slows every history walk.
                sig = pygit2.Signature(request.author.name, f"{request.author.login}@notegate")
                committer = pygit2.Signature(*COMMITTER_NAME)
                parents = [bytes.fromhex(parent)] if parent else []
                commit_id = pygit2.Oid(
                    raw=made.add(
                        objects.OBJ_COMMIT, objects.commit_bytes(tree_id, parents, sig, committer, request.message)
                    )
                )
            except Exception as exc:  # this request's own failure; the group goes on
                made.drop_after(mark)
                request.fail(exc)
                continue
            tree = tree_id
            # Each changed path's blob in the new tree (the last change to a path wins), as the build hashed it.
            blobs = {c.path: made.blobs[c.path].hex() if c.path in made.blobs else ABSENT for c in request.changes}
            for change in request.changes:
                if change.data is not None:
                    added.add(change.path, "")
            chain.append((request, commit_id, parent, blobs))
            befores.append(before)
            parent = str(commit_id)
        if deferred:
            with self._queue_lock:
                self._queue[:0] = deferred
            for request in deferred:
                request.hand_back()
        return chain, made, befores

    def _roll_up_soon(self) -> None:
        """Once :data:`ROLL_UP_AFTER` group packs are written, roll them up in a thread of its own (one at a
        time per store), so that no writer waits for it and the packs stay few (each lookup of an object
        searches every pack's index)."""
        if self._group_packs < ROLL_UP_AFTER or bulk.bulk_write_running(self.repo):
            return  # an import repacks everything once it is done
        with self._queue_lock:
            if self._rolling_up:
                return
            self._rolling_up = True

        def run() -> None:
            try:
                self.roll_up()
            except Exception:  # the next group, or the runtime's maintenance, tries again
                log.exception("rolling up the packs of environment %s failed", self.name)
            finally:
                with self._queue_lock:
                    self._rolling_up = False

        threading.Thread(target=run, name=f"roll-up-{self.name}", daemon=True).start()

    def _write_group(self, made: objects.Group) -> None:
        """The group's objects as one pack, in the clone and (linked, else copied) in a local origin, before any
        ref names them: a crash after this leaves an unreferenced pack, which the next full repack keeps in its
        cruft pack for a while and then drops."""
        dirs = [self.repo_dir]
        if self._local_origin_now() is not None:
            dirs.append(Path(self.origin_url))
        records = [objects.pack_record(kind, data, oid) for kind, data, oid in made.made]
        try:
            bulk.write_records(dirs, records, strict=True)
            self._group_packs += 1
            self._trees.keep(made.trees)  # only trees that are on disk (a full disk leaves none to remember)
        except OSError as exc:
            self._origin_repo = None
            raise OriginUnavailable(
                f"the commits of environment '{self.name}' could not be stored ({_short(exc)})",
                remedy="Nothing was written and nothing was acknowledged. Try again when the disk has room.",
            ) from exc

    @staticmethod
    def _collision(listing: Listing, added: Listing, new_paths: Sequence[str]) -> tuple[str, str] | None:
        for path in new_paths:
            existing = listing.collision(path) or added.collision(path)
            if existing is not None:
                return path, existing
        return None

    def _refuse_if_refused(self) -> None:
        """Nothing is built on a refused origin: the write is refused, nothing written or acknowledged."""
        refusal = self.refusal
        if refusal is None:
            return
        rules = ", ".join(refusal.verdict.rules()) or "origin-refused"
        raise OriginRefused(
            f"the origin of environment '{self.name}' is at commit {refusal.tip[:12]}, which the server's fetch "
            f"refused ({rules}); this write would have to build on it "
            f"(the server stays on {(refusal.good or 'an empty vault')[:12]})"
        )

    def _local_origin(self) -> pygit2.Repository | None:
        """The origin as a repository when it is a bare repository on this machine, else None."""
        if "://" in self.origin_url or ":" in self.origin_url.split("/")[0]:
            return None
        origin = getattr(self, "_origin_repo", None)
        if origin is None:
            path = Path(self.origin_url)
            if not (path / "HEAD").exists() or not (path / "objects").is_dir():
                return None
            origin = pygit2.Repository(str(path))
            self._origin_repo = origin
        return origin

    def _local_origin_now(self) -> pygit2.Repository | None:
        """The local origin, if it is there at this moment (moved away, it is pushed to as a remote, which
        fails as "could not be reached"): what both the group's pack and its push go to."""
        origin = self._local_origin()
        return origin if origin is not None and Path(self.origin_url, "HEAD").exists() else None

    def _push(self, commit_id: pygit2.Oid, parent: str | None) -> bool:
        """Push ``commit_id`` to origin's main. True when accepted, False when the origin moved."""
        if self._local_origin_now() is not None:
            return self._push_local(commit_id, parent)
        return self._push_remote(commit_id, parent)

    def _push_local(self, commit_id: pygit2.Oid, parent: str | None) -> bool:
        """A local bare origin, which has the group's pack already (:meth:`_write_group`): compare-and-swap its
        main (no transport round trip). The ref update fails if main is no longer ``parent`` (another writer got
        there first), which is the ordinary "origin moved" case."""
        try:
            return refwrite.update_ref(Path(self.origin_url), MAIN_REF, str(commit_id), parent, "notegate: push")
        except FileExistsError:  # its lock file: a live push holds it (it is gone in milliseconds), or a crash left it
            if durable.clear_stale_ref_lock(Path(self.origin_url), MAIN_REF):
                log.warning("environment %s: removed a stale refs/heads/main.lock in the origin", self.name)
            return False  # pushed again, as when the origin moved
        except OSError as exc:
            self._origin_repo = None
            raise OriginUnavailable(
                f"the origin of environment '{self.name}' could not be written ({_short(exc)})",
                remedy="Nothing was written and nothing was acknowledged. Try again when the origin is back.",
            ) from exc

    def _push_remote(self, commit_id: pygit2.Oid, parent: str | None) -> bool:
        """Push to a remote origin as a compare-and-swap from ``parent`` (the tip the server last fetched and
        judged): the push is stopped when the origin's main is anything else, even a commit ``commit_id``
        descends from (libgit2 alone would fast-forward an origin rewound to an older commit of ours, a tip
        nobody judged); git's receive-pack then updates main only from the value this connection saw.

        Pushed through an anonymous remote of the same URL, which names no tracking ref: libgit2's push through
        ``origin`` then writes ``refs/remotes/origin/main`` after the origin took the commit, and the fetch
        writes that ref without the write lock (:meth:`_fetch_tip`), so the two met at its lock file and a push
        the origin had taken failed as "could not be reached" (the caller told nothing was written; 33 of 300
        pushes beside a fetch loop).  The tracking ref is the fetch's alone now.  Any other error is checked
        against the origin's main before it is reported: an answer lost after the update is a push made."""
        self.repo.references.create(PENDING_REF, commit_id, force=True)
        rejected: list[str] = []
        said: list[str] = []  # what the origin's hooks printed ("remote: ..."): only rule names are kept
        expected = pygit2.Oid(hex=parent) if parent is not None else None
        moved: list[str] = []

        class _Callbacks(pygit2.RemoteCallbacks):
            def push_negotiation(self, updates: list[pygit2.remotes.PushUpdate]) -> None:
                for update in updates:
                    now = None if update.src.raw == bytes(len(update.src.raw)) else update.src
                    if update.dst_refname == MAIN_REF and now != expected:
                        moved.append(str(now))
                        raise _OriginMoved(update.dst_refname)

            def push_update_reference(self, refname: str, message: str | None) -> None:
                if message:
                    rejected.append(message)

            def sideband_progress(self, string: str) -> None:
                if len(said) < 64:
                    said.append(string[:4096])

        remote = self.repo.remotes.create_anonymous(self.origin_url)
        try:
            remote.push([f"{PENDING_REF}:{MAIN_REF}"], callbacks=_Callbacks())
        except _OriginMoved:
            return False
        except pygit2.GitError as exc:
            if moved or _origin_moved(str(exc)):
                return False
            if _origin_main(remote) == commit_id:
                log.warning("environment %s: the push failed after the origin took it (%s)", self.name, _short(exc))
                return True
            raise OriginUnavailable(
                f"the origin of environment '{self.name}' could not be reached ({_short(exc)})",
                remedy="Nothing was written and nothing was acknowledged. Try again when the origin is back.",
            ) from exc
        finally:
            self._drop_pending()
        if rejected:
            if any(_origin_moved(m) for m in rejected):
                return False
            rules = _hook_rules("".join(said))
            named = f"; its hook named [{'], ['.join(rules)}]" if rules else ""
            raise OriginUnavailable(
                f"the origin of environment '{self.name}' refused the push ({_short(rejected[0])}{named})",
                remedy="Nothing was written. The origin's own rules refused this change.",
            )
        return True

    def _drop_pending(self) -> None:
        with suppress(KeyError, pygit2.GitError):
            self.repo.references.delete(PENDING_REF)


def _origin_main(remote: pygit2.Remote) -> pygit2.Oid | None:
    """The origin's main as it answers now, None when it has none or does not answer."""
    try:
        heads = remote.list_heads()
    except pygit2.GitError:
        return None
    return next((head.oid for head in heads if head.name == MAIN_REF), None)
