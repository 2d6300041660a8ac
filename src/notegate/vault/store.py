"""The git truth for one environment: a bare repository, written in memory, pushed before acknowledging.

Theory of operation
-------------------
* The server keeps a bare clone (``vault.git``) per environment whose remote ``origin`` is the
  environment's origin.  Commits are built in memory (no work tree, no index file): a group commit's objects
  are made as bytes (:mod:`notegate.vault.objects`) and written as one pack, in the clone and hard-linked
  into a local origin, before any ref names them; the store rolls the small packs up as they accumulate.
* ``refs/heads/main`` only ever moves to a commit the origin already has: a write builds its commit,
  points the private ref ``refs/notegate/pending`` at it, pushes ``pending:main`` and only then moves
  ``main``.  A crash at any point therefore leaves ``main`` at an acknowledged (pushed) commit, and an
  unacknowledged commit is at most an unreachable object.
* A write names what it expects each touched path to be (a blob id or ``absent``).  If the origin moved,
  the store fetches, re-checks the expectations against the new tip and, when they still hold, rebuilds
  the same changes on top of it (a replay: the write touches only its own paths) and pushes again.  When
  an expectation fails it raises :class:`Conflict`; the service turns that into a stale-revision refusal.
  Nothing is ever merged.
* Writes to one environment are serialised across threads and processes by an exclusive ``flock`` on
  ``write.lock`` (plus a thread lock so threads of one process queue instead of spinning).  A group is
  acknowledged once the lock is released: its ``on_advance`` callbacks (the search index's catch-up) run
  first, so a write is searchable when its writer hears of it, while the next group is already being built.
* Symlinks and submodules in a tree are never served: listings skip them and reads refuse them.
* **A fetch is vetted before main moves** (``vet``, given by the runtime: the git door's rules,
  :mod:`notegate.sync.fetchvet`).  The origin's tip lands in the tracking ref; main moves to it only when
  the vet has no objection.  Otherwise main stays on the last good commit, :attr:`VaultStore.refusal` says
  why (the verdict is kept, so the same tip is not judged again on every fetch), and every write is refused
  ``[origin-refused]`` before anything is built: the origin's history now holds the refused commits, and a
  write would either build on them (accepting them) or rewrite the origin (which the server never does).
  A store without a vet takes whatever the origin has (the raw store's own tests).
* The vet runs **outside the write lock** (:meth:`VaultStore.fetch`); the lock is taken only to move main to
  what was judged.  Every push is a compare-and-swap from the origin tip last fetched and accepted, never
  forced: the server never rewinds or rewrites the origin.  When the origin's history no longer holds commits
  of main (an owner's reset or rewrite), the range is judged from the last commit both share and the lost
  commits are made again on the origin's tip (:mod:`notegate.vault.converge`), or the store stays refused
  with a task naming them.

The modules (issue 29 §4): :class:`VaultStore` is one class, combined here from mixins that hold methods only
over the attributes its ``__init__`` sets: reads and history (:mod:`~notegate.vault.history`), the write lock,
group commit and pushes (:mod:`~notegate.vault.commit`), the fetch (:mod:`~notegate.vault.fetching`) and upkeep
(:mod:`~notegate.vault.maintenance`).  The listing it keeps is :mod:`~notegate.vault.listing`, tree reads and
builds :mod:`~notegate.vault.trees`, backups :mod:`~notegate.vault.bundles`, and the names they share
:mod:`~notegate.vault.storebase`.  Callers import from here; a test patches a name in the module that reads it
(``notegate.vault.commit.ROLL_UP_AFTER``, ``notegate.vault.listing._overlay_bound``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path

import pygit2

from notegate.vault import objects
from notegate.vault.bundles import (
    bundle_repository,
    clone_local,
    missing_objects,
    repository_from_bundle,
    repository_refs,
)
from notegate.vault.commit import ROLL_UP_AFTER, GroupCommits
from notegate.vault.fetching import Fetching
from notegate.vault.history import HistoryReads
from notegate.vault.listing import (
    Listing,
    _caseless,
    _CowMap,
    _overlay_bound,
    _Range,
    servable,
    servable_file,
)
from notegate.vault.maintenance import Maintenance, git_fsck
from notegate.vault.paths import TreePaths
from notegate.vault.storebase import (
    ABSENT,
    COMMITTER_NAME,
    KEPT_VERDICTS,
    KNOWN_RANGES,
    MAIN_REF,
    MAX_GROUP,
    MAX_PACKS,
    MAX_REPLAYS,
    PACK_MAPPED_LIMIT_BYTES,
    PACK_WINDOW_BYTES,
    PENDING_REF,
    TRACKING_REF,
    TREE_CACHE_BYTES,
    UNREACHABLE_KEPT_FOR,
    Author,
    CaseCollision,
    Change,
    CommitResult,
    Conflict,
    FetchRefusal,
    Verdict,
    Vet,
    _hook_rules,
    _Judging,
    _origin_moved,
    _Request,
    bound_pack_windows,
    read_objects_as_git_does,
)
from notegate.vault.trees import (
    _entry_blob,
    _walk_raw,
    _walk_tree,
    build_tree,
    changed_paths,
)

__all__ = [
    "ABSENT",
    "COMMITTER_NAME",
    "KEPT_VERDICTS",
    "KNOWN_RANGES",
    "MAIN_REF",
    "MAX_GROUP",
    "MAX_PACKS",
    "MAX_REPLAYS",
    "PACK_MAPPED_LIMIT_BYTES",
    "PACK_WINDOW_BYTES",
    "PENDING_REF",
    "ROLL_UP_AFTER",
    "TRACKING_REF",
    "TREE_CACHE_BYTES",
    "UNREACHABLE_KEPT_FOR",
    "Author",
    "CaseCollision",
    "Change",
    "CommitResult",
    "Conflict",
    "FetchRefusal",
    "Listing",
    "VaultStore",
    "Verdict",
    "Vet",
    "_CowMap",
    "_Range",
    "_caseless",
    "_entry_blob",
    "_hook_rules",
    "_origin_moved",
    "_overlay_bound",
    "_walk_raw",
    "_walk_tree",
    "bound_pack_windows",
    "build_tree",
    "bundle_repository",
    "changed_paths",
    "clone_local",
    "git_fsck",
    "missing_objects",
    "read_objects_as_git_does",
    "repository_from_bundle",
    "repository_refs",
    "servable",
    "servable_file",
]


class VaultStore(HistoryReads, GroupCommits, Fetching, Maintenance):
    """One environment's bare repository and its origin."""

    #: Held around each group commit's pushes, after the write lock: the runtime passes the state database's
    #: per-environment lock (StateDB.push_lock) so replicas on one origin queue instead of racing. Fairness
    #: only: the origin's compare-and-swap still decides.
    push_lock: Callable[[], AbstractContextManager[object]] = nullcontext  # yields whether it waited
    #: Called with (commit id, author, message) of each commit of a group once its objects are written and
    #: before it is pushed: the runtime records who made it (state ``commit_provenance``), so the origin's
    #: hook and other replicas' fetches know it for the server's when it reaches them. Raising fails the
    #: group: nothing pushed, nothing acknowledged. None: nothing recorded (the raw store's own tests).
    record: Callable[[list[tuple[str, Author, str]]], None] | None = None

    def __init__(self, name: str, repo_dir: Path, origin_url: str, *, vet: Vet | None = None) -> None:
        self.name = name
        self.repo_dir = repo_dir
        self.origin_url = origin_url
        self.vet = vet
        self.refusal: FetchRefusal | None = None  # the origin's tip as last fetched, when it was refused
        self.repo = pygit2.Repository(str(repo_dir))
        self._lock_path = repo_dir.parent / "write.lock"
        self._thread_lock = threading.RLock()
        self._lock_depth = 0  # how deep this thread holds write_lock (read and written only under _thread_lock)
        self._lock_owner: int | None = None  # the thread that holds write_lock now
        self._queue_lock = threading.Lock()
        self._queue: list[_Request] = []  # writes waiting for the next group commit
        self._listing_lock = threading.Lock()
        self._listing: Listing | None = None
        self._ranges: dict[tuple[str | None, str], _Range] = {}  # (old tip, new tip) -> what our chain changed
        self._trees = objects.TreeCache(self.repo, TREE_CACHE_BYTES)  # read and written under the write lock
        self._group_packs = 0  # packs the group commits wrote since the last roll-up (under the write lock)
        self._rolling_up = False  # a roll-up thread runs (under _queue_lock)
        self._fetch_lock = threading.Lock()  # one network fetch at a time (they share the tracking ref)
        self._judging_lock = threading.Lock()
        self._judging: dict[tuple[str | None, str], _Judging] = {}  # (from, tip) -> the vet's verdict (made once)
        self._ensure_remote()

    # ---------------------------------------------------------------- set-up
    @classmethod
    def create(cls, name: str, repo_dir: Path, origin_url: str, *, vet: Vet | None = None) -> VaultStore:
        """Create the server's bare clone for an environment and fetch (the origin must exist)."""
        store = cls.create_empty(name, repo_dir, origin_url, vet=vet)
        store.fetch()
        return store

    @classmethod
    def create_empty(cls, name: str, repo_dir: Path, origin_url: str, *, vet: Vet | None = None) -> VaultStore:
        """The server's bare clone for an environment, created empty if it is not there yet (no fetch)."""
        repo_dir.parent.mkdir(parents=True, exist_ok=True)
        if not (repo_dir / "HEAD").exists():
            pygit2.init_repository(str(repo_dir), bare=True, initial_head="main")
        return cls(name, repo_dir, origin_url, vet=vet)

    def _ensure_remote(self) -> None:
        remotes = self.repo.remotes
        if "origin" not in remotes.names():
            remotes.create("origin", self.origin_url)
        elif remotes["origin"].url != self.origin_url:
            remotes.set_url("origin", self.origin_url)

    # ----------------------------------------------------------------- reads
    def head(self) -> str | None:
        """The acknowledged tip (a commit the origin has), or None for an empty vault."""
        try:
            return str(self.repo.references[MAIN_REF].target)
        except KeyError:
            return None

    def listing(self) -> Listing:
        """The notes at the tip, rebuilt incrementally from tree diffs when the tip moves."""
        head = self.head()
        current = self._listing
        if current is not None and current.commit == head:
            return current
        with self._listing_lock:
            current = self._listing
            if current is not None and current.commit == head:
                return current
            if current is None or current.commit is None or head is None:
                fresh = self._full_listing(head)
            else:
                fresh = self._advance_listing(current, head)
            self._listing = fresh
            return fresh

    def _full_listing(self, head: str | None) -> Listing:
        if head is None:
            return Listing(commit=head)
        # Built in plain dicts (no copy-on-write bookkeeping per insert), then wrapped: nobody else has them.
        listing = Listing(commit=head, notes={}, case_index={}, folders={}, folder_case={}, attachments={})  # type: ignore[arg-type]
        tree = self.repo[head].peel(pygit2.Tree)
        paths = TreePaths()  # servable / servable_file, each folder checked once
        for path, blob in _walk_tree(self.repo, tree, ""):
            kind = paths.kind(path)
            if kind == "note":
                listing.add(path, blob)
            elif kind == "attachment":
                listing.add_attachment(path, blob)
        return Listing(
            commit=head,
            notes=_CowMap(listing.notes),  # type: ignore[arg-type]
            case_index=_CowMap(listing.case_index),  # type: ignore[arg-type]
            folders=_CowMap(listing.folders),  # type: ignore[arg-type]
            folder_case=_CowMap(listing.folder_case),  # type: ignore[arg-type]
            attachments=_CowMap(listing.attachments),  # type: ignore[arg-type]
        )

    def _advance_listing(self, current: Listing, head: str) -> Listing:
        assert current.commit is not None
        old_tree = self.repo[current.commit].peel(pygit2.Tree)
        new_tree = self.repo[head].peel(pygit2.Tree)
        listing = current.copy(head)
        for path, blob in self._changes(current.commit, head, old_tree, new_tree):
            listing.remove(path)
            if blob != ABSENT and servable(path):
                listing.add(path, blob)
            elif blob != ABSENT and servable_file(path):
                listing.add_attachment(path, blob)
        return listing
