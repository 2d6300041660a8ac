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
  ``write.lock`` (plus a thread lock so threads of one process queue instead of spinning).
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
"""

from __future__ import annotations

import fcntl
import logging
import math
import os
import re
import subprocess
import tempfile
import threading
from collections.abc import Callable, ItemsView, Iterator, Mapping, Sequence, ValuesView
from contextlib import AbstractContextManager, contextmanager, nullcontext, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, TypeVar

import pygit2
from pygit2.enums import FileMode, ObjectType

from notegate.errors import NotegateError, OriginRefused, OriginUnavailable
from notegate.vault import bulk, converge, durable, objects, ordered
from notegate.vault.bulk import stored_blob
from notegate.vault.paths import AttachmentPath, NotePath, PathRejected, TreePaths, caseless_key, is_hidden_tree_path

log = logging.getLogger("notegate")

ABSENT = "absent"
MAIN_REF = "refs/heads/main"
PENDING_REF = "refs/notegate/pending"
TRACKING_REF = "refs/remotes/origin/main"
#: Pushes one group tries before giving up. With several replicas on one origin, the replica that just won
#: pushes its next group at once while the loser still fetches, so a loser can lose several rounds in a row
#: under sustained load (measured: 5 was not enough for two replicas and 32 writers, tests/e2e/test_replicas.py).
MAX_REPLAYS = 20
MAX_PACKS = 50
#: How long a full repack keeps objects no ref reaches (in a cruft pack, with their times), as ``git gc``
#: keeps them (its ``gc.pruneExpire``): a bulk import packs each batch's blobs just before the commit that
#: names them, and a full repack in between (a server's maintenance) would otherwise drop them.
UNREACHABLE_KEPT_FOR = "2.weeks.ago"
MAX_GROUP = 64  # requests one lock holder commits and pushes together
#: Group packs written (one per group commit) before they are rolled up into one (:meth:`VaultStore.roll_up`).
#: Each lookup of an object that is not in the last pack it was found in searches the packs' indexes one by
#: one, and libgit2 keeps every pack it has opened until the repository is opened again.
ROLL_UP_AFTER = 32
#: Verdicts of the vet kept (by range) for whoever needs the same one next: the locked step of a fetch, a writer.
KEPT_VERDICTS = 4
#: Ranges of main our own group commits made, remembered with their changes (see :class:`_Range`).
KNOWN_RANGES = 16
COMMITTER_NAME = ("notegate", "notegate@localhost")
#: A full SHA-1 object id as git prints it (what :meth:`VaultStore.stream_blobs` hands to git).
_OBJECT_ID = re.compile(r"[0-9a-f]{40}")
#: How libgit2 maps pack files (process-wide, :func:`bound_pack_windows`). Its defaults (1 GiB windows, 8 GiB
#: mapped) keep every page a read ever touched resident, and the resident set counts them: building the listing
#: of a 100,000-note vault touched 59 MB of a 156 MB pack (the trees are spread through it), the index's full
#: build all of it (measured: peak RSS 223 MB with the defaults, 91 MB with these, same CPU for a full walk;
#: ~25 us more per blob when 30,000 random reads miss every window).
PACK_WINDOW_BYTES = 1 << 20
PACK_MAPPED_LIMIT_BYTES = 32 << 20
#: Raw bytes of parsed trees the write path keeps (:class:`notegate.vault.objects.TreeCache`): the root and the
#: recently written folders of a 100,000-note vault (~25 KB each), a few MB of the process's memory.
TREE_CACHE_BYTES = 4 << 20
V = TypeVar("V")
_BLOB_MODES = (FileMode.BLOB, FileMode.BLOB_EXECUTABLE)


def bound_pack_windows() -> None:
    """Map pack files in small windows with a small total, so libgit2 unmaps the least recently used ones
    instead of keeping a whole pack resident (see :data:`PACK_WINDOW_BYTES`). Process-wide; a long-lived
    process (the server) calls it once at start. The pages stay in the kernel's page cache either way: what
    changes is how many the process holds mapped (its RSS), not how often the disk is read."""
    pygit2.settings.mwindow_size = PACK_WINDOW_BYTES
    pygit2.settings.mwindow_mapped_limit = PACK_MAPPED_LIMIT_BYTES


class _OriginMoved(Exception):
    """Raised inside a push's negotiation when the origin's main is not the tip the push was built on."""


class Conflict(NotegateError):
    """A touched path is no longer what the write expected (raised only inside the lock; the notes service
    turns it into a stale-revision refusal with the diff)."""

    rule = "stale-revision"

    def __init__(self, path: str, expected: str, current: str) -> None:
        super().__init__(f"{path} changed since the write's base revision")
        self.path = path
        self.expected = expected
        self.current = current


class CaseCollision(NotegateError):
    """A new path differs only by case from an existing note."""

    rule = "path-case-collision"

    def __init__(self, path: str, existing: str) -> None:
        super().__init__(f"{path} differs only by letter case from {existing}")
        self.path = path
        self.existing = existing


class Verdict(Protocol):
    """What a vet answers about a fetched range (:class:`notegate.sync.fetchvet.FetchVerdict`)."""

    @property
    def ok(self) -> bool: ...

    def rules(self) -> list[str]: ...


#: ``vet(repo, last_good, tip)``: may main move from the last good commit to the origin's tip?
Vet = Callable[[pygit2.Repository, str | None, str], Verdict]


@dataclass(frozen=True)
class FetchRefusal:
    """The origin's tip was refused: the store stays on ``good`` (None: nothing accepted yet)."""

    tip: str
    good: str | None
    verdict: Verdict


@dataclass
class _Judging:
    """One vet of a range, shared by every thread that needs its verdict (:meth:`VaultStore._judge`)."""

    done: threading.Event = field(default_factory=threading.Event)
    verdict: Verdict | None = None


@dataclass(frozen=True)
class Change:
    """Set ``path`` to ``data`` (bytes) or delete it (``data is None``)."""

    path: str
    data: bytes | None


@dataclass(frozen=True)
class Author:
    name: str
    login: str


@dataclass(frozen=True)
class CommitResult:
    commit: str
    blobs: Mapping[str, str]  # path -> new blob id (or ABSENT)
    parent: str | None
    pushes: int = 1  # push attempts its group made (1 = no replay): how fair the origin was


@dataclass
class _Request:
    """One write waiting for a group commit: what it changes and expects, and (once done) its outcome."""

    changes: tuple[Change, ...]
    expect: dict[str, str]
    author: Author
    message: str
    new_paths: tuple[str, ...]
    on_advance: Callable[[str | None, str], None] | None
    result: CommitResult | None = None
    error: BaseException | None = None
    done: bool = False

    def finish(self, result: CommitResult) -> None:
        self.result, self.done = result, True

    def fail(self, error: BaseException) -> None:
        self.error, self.done = error, True

    def outcome(self) -> CommitResult:
        if self.error is not None:
            raise self.error
        assert self.result is not None, "a request left the group without an outcome"
        return self.result


@dataclass(frozen=True)
class _Range:
    """What a group commit changed between two tips, known without a tree diff: the chain built each tree
    from its parent's, so its changes are exactly the paths it wrote whose blob differs.

    ``changes``: path -> blob at ``new`` (or ABSENT), the paths whose blob differs from ``old``'s (the net of
    the chain: a path changed and changed back is not in it), in the order the chain wrote them.
    ``last``: path -> the newest commit of the range that changed it (what a first-parent walk finds).
    Why: the index and the listing follow main after every write; three tree diffs of a wide vault (the
    listing's, the index's and its history walk's) cost more than the commit itself."""

    changes: tuple[tuple[str, str], ...]
    last: Mapping[str, str]


_KEEP = object()  # not in the overlay: the base's answer holds
_GONE = object()  # in the overlay as removed


class _CowMap(Mapping[str, V]):
    """A mapping that versions of the listing share: a base dict no published version ever writes to, and a
    small overlay of what changed since (``_GONE`` for a removed key).

    Why: the listing is one version per tip, and a write moves the tip by a few paths; copying a 100,000-note
    dict per version cost 9.6 ms a commit.  :meth:`derived` starts the next version from the same base with a
    copy of the overlay (O(changes since the last compaction)); when the overlay passes :func:`_overlay_bound`
    (about 2*sqrt(n)) it is folded into a fresh base instead, so a change costs O(sqrt(n)) amortised and a
    lookup at most two dict probes.  A version is written only before it is published (the builder owns it);
    after that readers iterate it while newer versions are built, and nothing they hold changes under them.
    A map that owns its base (a fresh build, or just compacted) writes to the base directly."""

    __slots__ = ("_base", "_len", "_over", "_owned")

    def __init__(self, base: dict[str, V] | None = None) -> None:
        self._base: dict[str, V] = {} if base is None else base
        self._over: dict[str, object] = {}
        self._len = len(self._base)
        self._owned = True

    # ------------------------------------------------------------- reading
    def __getitem__(self, key: str) -> V:
        if self._over:
            value = self._over.get(key, _KEEP)
            if value is _GONE:
                raise KeyError(key)
            if value is not _KEEP:
                return value  # type: ignore[return-value]
        return self._base[key]

    def get(self, key: str, default=None):  # type: ignore[override]
        if self._over:
            value = self._over.get(key, _KEEP)
            if value is not _KEEP:
                return default if value is _GONE else value
        return self._base.get(key, default)

    def __contains__(self, key: object) -> bool:
        if self._over:
            value = self._over.get(key, _KEEP)  # type: ignore[call-overload]
            if value is not _KEEP:
                return value is not _GONE
        return key in self._base

    def __len__(self) -> int:
        return self._len

    def __iter__(self) -> Iterator[str]:
        over, base = self._over, self._base
        if not over:
            yield from base
            return
        for key in base:
            if over.get(key, _KEEP) is not _GONE:
                yield key
        for key, value in over.items():
            if value is not _GONE and key not in base:
                yield key

    def items(self):  # type: ignore[override]
        return _CowItems(self)

    def values(self):  # type: ignore[override]
        return _CowValues(self)

    def _pairs(self) -> Iterator[tuple[str, V]]:
        over, base = self._over, self._base
        if not over:
            yield from base.items()
            return
        for key, value in base.items():
            changed = over.get(key, _KEEP)
            if changed is _KEEP:
                yield key, value
            elif changed is not _GONE:
                yield key, changed  # type: ignore[misc]
        for key, value in over.items():
            if value is not _GONE and key not in base:
                yield key, value  # type: ignore[misc]

    # --------------------------------------- writing (only before publishing)
    def __setitem__(self, key: str, value: V) -> None:
        if self._owned:
            if key not in self._base:
                self._len += 1
            self._base[key] = value
            return
        if key not in self:
            self._len += 1
        self._over[key] = value

    def __delitem__(self, key: str) -> None:
        if key not in self:
            raise KeyError(key)
        self._len -= 1
        if self._owned:
            del self._base[key]
        elif key in self._base:
            self._over[key] = _GONE
        else:
            del self._over[key]

    def pop(self, key: str, default=None):
        value = self.get(key, _KEEP)
        if value is _KEEP:
            return default
        del self[key]
        return value

    def setdefault(self, key: str, default: V) -> V:
        value = self.get(key, _KEEP)
        if value is _KEEP:
            self[key] = default
            return default
        return value  # type: ignore[return-value]

    def derived(self) -> _CowMap[V]:
        """The next version: shares this one's base; this one is never written again."""
        self._owned = False
        if len(self._over) > _overlay_bound(len(self._base)):
            return _CowMap(self._folded())
        fresh: _CowMap[V] = _CowMap.__new__(_CowMap)
        fresh._base = self._base
        fresh._over = dict(self._over)
        fresh._len = self._len
        fresh._owned = False
        return fresh

    def _folded(self) -> dict[str, V]:
        """The base with the overlay applied, as a new dict (same order as :meth:`_pairs`: a changed key keeps
        its place, a new one comes after the base). Why not ``dict(self._pairs())``: the base is copied in C
        and only the overlay is walked in Python (a fold at 100,000 notes: ~10x less CPU)."""
        base = self._base.copy()
        for key, value in self._over.items():
            if value is _GONE:
                base.pop(key, None)
            else:
                base[key] = value  # type: ignore[assignment]
        return base


def _overlay_bound(n: int) -> int:
    """Changed keys a version carries over its base before a compaction copies the base (O(n)): about
    2*sqrt(n), so both the overlay copy per version and the compaction spread over the versions between
    two compactions are O(sqrt(n)) a change."""
    return max(64, 2 * math.isqrt(n))


class _CowItems(ItemsView):
    def __iter__(self):
        return self._mapping._pairs()  # type: ignore[attr-defined]


class _CowValues(ValuesView):
    def __iter__(self):
        return (value for _key, value in self._mapping._pairs())  # type: ignore[attr-defined]


@dataclass
class Listing:
    """Every servable note at one commit: path -> blob id, plus a case-folded index for collisions.

    Each map is a :class:`_CowMap`: :meth:`copy` (the next tip's version) shares the previous version's maps
    and costs O(changed paths), and a published listing is never written again (readers may iterate it
    while the next one is built). Its paths in sorted order (:meth:`order`) are made on the first ask."""

    commit: str | None
    notes: _CowMap[str] = field(default_factory=_CowMap)
    case_index: _CowMap[str] = field(default_factory=_CowMap)
    folders: _CowMap[int] = field(default_factory=_CowMap)  # folder -> how many notes under it
    folder_case: _CowMap[str] = field(default_factory=_CowMap)  # caseless key -> the folder's spelling
    attachments: _CowMap[str] = field(default_factory=_CowMap)  # servable non-Markdown files: path -> blob id
    # The sorted paths once made (:meth:`order`); until then an earlier version's and the paths touched since.
    _ordered: ordered.Ordered | None = field(default=None, repr=False, compare=False)
    _since: tuple[ordered.Ordered, set[str]] | None = field(default=None, repr=False, compare=False)

    def order(self) -> ordered.Ordered:
        """Every path this version serves (notes and attachments) and every folder holding one, sorted: what
        list_notes pages through.  Made on the first ask, so a write never pays for it: from the version it
        was carried from when few paths changed since (:func:`ordered.advanced`: ~1 ms for a write's few
        at 100,000 paths), else sorted afresh (:func:`ordered.built`: ~60 ms).  Readers on several threads
        may both make it; each makes its own lists and publishes them whole with one assignment, so no
        reader ever sees a half-made one. ``_ordered`` is set before ``_since`` is cleared, which
        :meth:`copy` relies on (it reads them the other way round)."""
        made = self._ordered
        if made is not None:
            return made
        since = self._since
        if since is not None and ordered.derivable(len(since[1]), len(since[0].paths)):
            made = ordered.advanced(since[0], since[1], self._serves)
        else:
            made = ordered.built([*self.notes, *self.attachments])
        self._ordered = made
        self._since = None  # the earlier version's lists are not kept alive
        return made

    def _serves(self, path: str) -> bool:
        return path in self.notes or path in self.attachments

    def _touch(self, path: str) -> None:
        if self._since is not None:
            self._since[1].add(path)

    def add_attachment(self, path: str, blob: str) -> None:
        """A non-Markdown file (the policy decides which of them are attachments it serves)."""
        self._touch(path)
        self.attachments[path] = blob
        self.case_index.setdefault(_caseless(path), path)

    def add(self, path: str, blob: str) -> None:
        self._touch(path)
        if path not in self.notes:
            for folder in _folders_of(path):
                count = self.folders.get(folder, 0)
                self.folders[folder] = count + 1
                if count == 0:
                    self.folder_case.setdefault(_caseless(folder), folder)
        self.notes[path] = blob
        self.case_index[_caseless(path)] = path

    def remove(self, path: str) -> None:
        self._touch(path)
        if self.attachments.pop(path, None) is not None:
            if self.case_index.get(_caseless(path)) == path:
                del self.case_index[_caseless(path)]
            return
        if self.notes.pop(path, None) is None:
            return
        key = _caseless(path)
        if self.case_index.get(key) == path:
            del self.case_index[key]
        for folder in _folders_of(path):
            count = self.folders.get(folder, 0) - 1
            if count > 0:
                self.folders[folder] = count
                continue
            self.folders.pop(folder, None)
            if self.folder_case.get(_caseless(folder)) == folder:
                del self.folder_case[_caseless(folder)]

    def copy(self, commit: str) -> Listing:
        """The next version, sharing this one's maps (this one is not written again), and what the next one
        makes its sorted paths from: this one's, if made (nothing touched since); else the ones this one
        would have made its own from, with the paths touched since (a set copy, under
        :func:`ordered.derivable`'s bound; past it, nothing: the next one sorts afresh)."""
        since = self._since  # before _ordered: see order()
        made = self._ordered
        carried: tuple[ordered.Ordered, set[str]] | None = None
        if made is not None:
            carried = (made, set())
        elif since is not None and ordered.derivable(len(since[1]), len(since[0].paths)):
            carried = (since[0], set(since[1]))
        return Listing(
            commit=commit,
            notes=self.notes.derived(),
            case_index=self.case_index.derived(),
            folders=self.folders.derived(),
            folder_case=self.folder_case.derived(),
            attachments=self.attachments.derived(),
            _since=carried,
        )

    def collision(self, path: str) -> str | None:
        """An existing note or folder that differs from ``path`` (or one of its folders) only by case."""
        existing = self.case_index.get(_caseless(path))
        if existing is not None and existing != path:
            return existing
        for folder in _folders_of(path):
            spelled = self.folder_case.get(_caseless(folder))
            if spelled is not None and spelled != folder:
                return spelled + "/"
        return None


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


def _caseless(text: str) -> str:
    """:func:`caseless_key`, but ``text`` itself when it is its own key (37 % of the paths of a generated
    100,000-note vault): the case index then holds one str for such a path, not two equal ones (~3.5 MB)."""
    key = caseless_key(text)
    return text if key == text else key


def _folders_of(path: str) -> list[str]:
    parts = path.split("/")[:-1]
    return ["/".join(parts[: i + 1]) for i in range(len(parts))]


def servable(path: str) -> bool:
    """A tree entry we serve as a note: a visible, well-formed Markdown path."""
    if is_hidden_tree_path(path) or not path.endswith(".md"):
        return False
    try:
        parsed = NotePath.parse(path)
    except PathRejected:
        return False
    # A path git holds in another normal form (NFD from some clones) is not served: every check (privacy
    # globs, reads, case collisions) works on the NFC spelling, so serving the raw one could slip past them.
    return parsed.value == path


def servable_file(path: str) -> bool:
    """A tree entry we may serve as an attachment: a visible, well-formed path that is not a note (whether
    its type is allowed is the policy's call, at every read)."""
    if is_hidden_tree_path(path) or path.endswith(".md"):
        return False
    try:
        return AttachmentPath.parse(path).value == path
    except PathRejected:
        return False


class VaultStore:
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

    def blob_id(self, path: str, commit: str | None = None) -> str:
        """The note's revision at ``commit`` (default: the tip): its blob id, or ``absent``."""
        if commit is None:
            listing = self.listing()
            return listing.notes.get(path) or listing.attachments.get(path, ABSENT)
        tree = self.repo[commit].peel(pygit2.Tree)
        return _entry_blob(tree, path)

    def blob_size(self, blob_id: str) -> int:
        """A blob's size from its object header, without inflating it (a listing of large attachments)."""
        return self.repo.odb.read_header(blob_id)[1]

    def read_unverified_blob(self, blob_id: str) -> bytes:
        """The bytes of any blob in the repository, by id, unchecked: the caller must know that the id is a
        revision the reader may see (a current version, or one this note really had). Never serve an id a
        caller sent without that check: any private note's blob is in the same object store."""
        return self.repo[blob_id].peel(pygit2.Blob).data

    def read_unverified_blob_fast(self, blob_id: str) -> bytes:
        """:meth:`read_unverified_blob` straight from the object database (the index's full build reads every
        note: no object wrapper, ~1.7x less CPU per blob). Same caveat; a non-blob id raises ``ValueError``."""
        kind, data = self.repo.odb.read(blob_id)
        if kind != pygit2.enums.ObjectType.BLOB:
            raise ValueError(f"{blob_id} is not a blob")
        return data

    def stream_blobs(self, blob_ids: Sequence[str]) -> Iterator[bytes]:
        """The bytes of each of ``blob_ids``, in order, inflated by ``git cat-file --batch`` in a child process
        (same caveat as :meth:`read_unverified_blob`); close the iterator to stop early (the child is killed).

        Why: an index's first build reads every note.  Inflated here, 100,000 blobs cost 3.3 s of this
        process's CPU (the 1 MiB pack windows of :func:`bound_pack_windows` make it dearer, and the server has one
        Python core); through git, 0.65 s of ours while git works on the other core (the 100,000-note vault
        of ``bench/genvault.py``).  Every id must be a full hex object id (never a revision expression: the
        line is handed to git as is); a missing or non-blob id raises ``ValueError``, as
        :meth:`read_unverified_blob_fast` does for a non-blob."""
        for blob_id in blob_ids:
            if not _OBJECT_ID.fullmatch(blob_id):
                raise ValueError(f"{blob_id!r} is not an object id")
        # No GIT_* variable of this process (a git hook's GIT_OBJECT_DIRECTORY, say) may point git elsewhere:
        # libgit2, which reads the same blobs otherwise, ignores them too.
        env = {name: value for name, value in os.environ.items() if not name.startswith("GIT_")}
        proc = subprocess.Popen(
            ["git", f"--git-dir={self.repo_dir}", "cat-file", "--batch"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        assert proc.stdin is not None and proc.stdout is not None

        def feed() -> None:
            try:
                for blob_id in blob_ids:
                    proc.stdin.write(f"{blob_id}\n".encode("ascii"))
                proc.stdin.close()
            except (OSError, ValueError):  # the reader stopped early and killed git
                pass

        feeder = threading.Thread(target=feed, name="cat-file-feed", daemon=True)
        feeder.start()
        finished = False
        try:
            out = proc.stdout
            for blob_id in blob_ids:
                header = out.readline().split()
                if len(header) != 3 or header[0] != blob_id.encode("ascii") or header[1] != b"blob":
                    raise ValueError(f"{blob_id} is not a blob")
                size = int(header[2])
                data = out.read(size)
                if len(data) != size or out.read(1) != b"\n":
                    raise ValueError(f"{blob_id}: git cat-file ended early")
                yield data
            finished = True
        finally:
            if not finished:
                proc.kill()
            feeder.join()
            proc.stdout.close()
            proc.wait()

    def changed_notes(self, old: str | None, new: str) -> list[tuple[str, str]]:
        """(path, blob or ``absent``) for every path whose blob differs between two commits' trees; with
        ``old`` None or unknown, every path of ``new``. For the index: subtrees that did not change are
        skipped."""
        known = self._ranges.get((old, new))
        if known is not None and old is not None:
            return list(known.changes)
        old_tree = None
        if old is not None:
            try:
                old_tree = self.repo[old].peel(pygit2.Tree)
            except (KeyError, ValueError):
                old_tree = None
        return list(changed_paths(self.repo, old_tree, self.repo[new].peel(pygit2.Tree)))

    def _changes(
        self, old: str, new: str, old_tree: pygit2.Tree, new_tree: pygit2.Tree
    ) -> Iterator[tuple[str, str]] | tuple[tuple[str, str], ...]:
        """:func:`changed_paths` of two tips, from the record of our own chain when it made this range."""
        known = self._ranges.get((old, new))
        return known.changes if known is not None else changed_paths(self.repo, old_tree, new_tree)

    def _remember_range(self, old: str | None, new: str, known: _Range) -> None:
        ranges = self._ranges
        ranges[(old, new)] = known
        while len(ranges) > KNOWN_RANGES:
            del ranges[next(iter(ranges))]

    def last_changes(self, old: str | None, new: str, paths: set[str], walk_limit: int) -> dict[str, str]:
        """For each of ``paths``, the newest commit in (old, new] that changed it (first-parent walk, at most
        ``walk_limit`` commits)."""
        known = self._ranges.get((old, new))
        if known is not None and old is not None and paths <= known.last.keys():
            return {path: known.last[path] for path in paths}
        found: dict[str, str] = {}
        walker = self.repo.walk(new, pygit2.enums.SortMode.TOPOLOGICAL)
        walker.simplify_first_parent()
        if old is not None:
            with suppress(KeyError, ValueError, pygit2.GitError):
                walker.hide(old)
        for scanned, commit in enumerate(walker):
            if scanned >= walk_limit or len(found) >= len(paths):
                break
            parent_tree = commit.parents[0].tree if commit.parents else None
            for path, _blob in changed_paths(self.repo, parent_tree, commit.tree):
                if path in paths and path not in found:
                    found[path] = str(commit.id)
        return found

    def read(self, path: str, commit: str | None = None) -> tuple[bytes, str] | None:
        blob = self.blob_id(path, commit)
        if blob == ABSENT:
            return None
        return self.read_unverified_blob(blob), blob  # verified: the blob at this path now

    def commit_info(self, commit: str) -> pygit2.Commit:
        return self.repo[commit].peel(pygit2.Commit)

    def is_ancestor_or_self(self, commit: str, of: str) -> bool:
        return commit == of or self.repo.descendant_of(of, commit)

    def resolve_commit(self, rev: str) -> str | None:
        """A full commit id reachable from the tip for ``rev`` (a full or abbreviated id), else None."""
        try:
            obj = self.repo.revparse_single(rev)
            commit = str(obj.peel(pygit2.Commit).id)
        except (KeyError, ValueError, pygit2.GitError, pygit2.InvalidSpecError):
            return None
        head = self.head()
        if head is None or not self.is_ancestor_or_self(commit, head):
            return None
        return commit

    def history(
        self, path: str, limit: int, scan_limit: int = 5000, *, until_created: bool = False
    ) -> list[tuple[pygit2.Commit, str]]:
        """Commits (newest first) that changed ``path``, with the blob the path had after each.

        With ``until_created`` the walk ends at the commit that last created the path (the current item's whole
        life), instead of scanning on. Each commit's tree is looked up once: on a first-parent walk a
        commit's parent is the next commit visited.
        """
        head = self.head()
        if head is None:
            return []
        out: list[tuple[pygit2.Commit, str]] = []
        walker = self.repo.walk(head, pygit2.enums.SortMode.TOPOLOGICAL | pygit2.enums.SortMode.TIME)
        walker.simplify_first_parent()
        newer: tuple[pygit2.Commit, str] | None = None  # the previous (newer) commit, its parent not yet seen
        for scanned, commit in enumerate(walker):
            if scanned >= scan_limit:
                return out
            blob = _entry_blob(commit.tree, path)
            if newer is not None and newer[1] != blob:
                out.append(newer)
                if len(out) >= limit or (until_created and blob == ABSENT):
                    return out
            newer = (commit, blob)
        if newer is not None and newer[1] != ABSENT and len(out) < limit:
            out.append(newer)  # the root commit created the path
        return out

    def deleted(self, limit: int, scan_limit: int = 5000) -> list[tuple[str, pygit2.Commit]]:
        """Notes (``.md``) absent at the tip, each with the newest commit that deleted it (newest first), from
        a first-parent walk of at most ``scan_limit`` commits; at most ``limit`` paths. The cost follows the
        size of each change (``changed_paths`` skips equal subtrees), never the size of the vault."""
        head = self.head()
        if head is None:
            return []
        tip = self.listing()
        out: list[tuple[str, pygit2.Commit]] = []
        seen: set[str] = set()
        walker = self.repo.walk(head, pygit2.enums.SortMode.TOPOLOGICAL | pygit2.enums.SortMode.TIME)
        walker.simplify_first_parent()
        for scanned, commit in enumerate(walker):
            if scanned >= scan_limit or len(out) >= limit or not commit.parents:
                break
            for path, blob in changed_paths(self.repo, commit.parents[0].tree, commit.tree):
                if blob != ABSENT or not path.endswith(".md") or path in seen or path in tip.notes:
                    continue
                seen.add(path)
                out.append((path, commit))
                if len(out) >= limit:
                    break
        return out

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
                self._commit_group([request], fetch_first=bool(waited))
            return request.outcome()
        with self._queue_lock:
            self._queue.append(request)
        while not request.done:
            with self.write_lock(), self.push_lock() as waited:
                if request.done:  # a previous holder committed (or refused) it as part of its group
                    break
                with self._queue_lock:
                    group = self._queue[:MAX_GROUP]
                    del self._queue[:MAX_GROUP]
                self._commit_group(group, fetch_first=bool(waited))
        self._roll_up_soon()
        return request.outcome()

    def _commit_group(self, group: list[_Request], *, fetch_first: bool = False) -> None:
        """Commit, push and acknowledge ``group`` (under the write lock). Every request leaves done, or back
        in the queue (a new path whose case check needs a listing of its own).  ``fetch_first``: another
        replica pushed while we waited for the push lock, so our tip is probably behind the origin's."""
        try:
            first = group[0].on_advance if group else None
            if self.refusal is not None or fetch_first:  # repaired meanwhile, or moved by another replica
                self._fetch_locked(first)
                self._refuse_if_refused()
            for _attempt in range(MAX_REPLAYS):
                tip = self.head()
                chain, made, befores = self._build_chain(tip, group)
                if not chain:
                    return
                last = chain[-1][1]
                self._write_group(made)
                if self.record is not None:
                    self.record([(str(c), r.author, r.message) for r, c, _p, _b in chain])
                if self._push(last, tip):
                    self.repo.references.create(MAIN_REF, last, force=True)
                    # The tracking ref is not moved here: it says what the last fetch saw, and the next fetch
                    # sets it (one ref file less per group; nothing reads it between fetches).
                    self.refusal = None  # the origin took our commits on top of main: its tip is ours
                    self._remember_range(tip, str(last), _chain_range(chain, befores))
                    callbacks: list[Callable[[str | None, str], None]] = []
                    for request, _commit, _parent, _blobs in chain:
                        if request.on_advance is not None and request.on_advance not in callbacks:
                            callbacks.append(request.on_advance)
                    for callback in callbacks:
                        callback(tip, str(last))
                    for request, commit_id, parent, blobs in chain:
                        request.finish(
                            CommitResult(commit=str(commit_id), blobs=blobs, parent=parent, pushes=_attempt + 1)
                        )
                    return
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
                if not request.done:
                    request.fail(exc)

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
        origin = self._local_origin_now()
        if origin is not None:
            return self._push_local(origin, commit_id, parent)
        return self._push_remote(commit_id, parent)

    def _push_local(self, origin: pygit2.Repository, commit_id: pygit2.Oid, parent: str | None) -> bool:
        """A local bare origin, which has the group's pack already (:meth:`_write_group`): compare-and-swap its
        main (no transport round trip). The ref update fails if main is no longer ``parent`` (another writer got
        there first), which is the ordinary "origin moved" case."""
        try:
            try:
                ref = origin.references[MAIN_REF]
            except KeyError:
                if parent is not None:
                    return False
                origin.references.create(MAIN_REF, commit_id, force=False)
                return True
            if parent is None or str(ref.target) != parent:
                return False
            ref.set_target(commit_id, "notegate: push")
            return True
        except pygit2.AlreadyExistsError:
            return False
        except pygit2.GitError as exc:
            if "old reference value does not match" in str(exc) or _origin_moved(str(exc)):
                return False
            if durable.clear_stale_ref_lock(Path(self.origin_url), MAIN_REF):  # a crash mid-update left it
                log.warning("environment %s: removed a stale refs/heads/main.lock in the origin", self.name)
                return False  # pushed again, as when the origin moved
            self._origin_repo = None
            raise OriginUnavailable(
                f"the origin of environment '{self.name}' could not be written ({_short(exc)})",
                remedy="Nothing was written and nothing was acknowledged. Try again when the origin is back.",
            ) from exc
        except OSError as exc:  # libgit2's "failed to lock file" among them
            if durable.clear_stale_ref_lock(Path(self.origin_url), MAIN_REF):  # a crash mid-update left it
                log.warning("environment %s: removed a stale refs/heads/main.lock in the origin", self.name)
                return False  # pushed again, as when the origin moved
            self._origin_repo = None
            raise OriginUnavailable(
                f"the origin of environment '{self.name}' could not be written ({_short(exc)})",
                remedy="Nothing was written and nothing was acknowledged. Try again when the origin is back.",
            ) from exc

    def _push_remote(self, commit_id: pygit2.Oid, parent: str | None) -> bool:
        """Push to a remote origin as a compare-and-swap from ``parent`` (the tip the server last fetched and
        judged): the push is stopped when the origin's main is anything else, even a commit ``commit_id``
        descends from (libgit2 alone would fast-forward an origin rewound to an older commit of ours, a tip
        nobody judged); git's receive-pack then updates main only from the value this connection saw."""
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

        try:
            self.repo.remotes["origin"].push([f"{PENDING_REF}:{MAIN_REF}"], callbacks=_Callbacks())
        except _OriginMoved:
            return False
        except pygit2.GitError as exc:
            if moved or _origin_moved(str(exc)):
                return False
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

    # ----------------------------------------------------------------- fetch
    def fetch(self, on_advance: Callable[[str | None, str], None] | None = None) -> tuple[str | None, str | None]:
        """Take the origin's tip as ours (git is the truth), once the vet accepts it. Returns (old, new) tips.

        The origin's objects and tip are fetched, and the range vetted, *without* the write lock: a long range
        (20,000 pushed commits took 9-15 s to vet) would otherwise stall every writer of the environment.  The
        lock is taken only to move main, and only on what was judged: if main moved meanwhile (a write was
        pushed), the origin is fetched again under the lock and any new range judged there (a writer whose push
        found the origin moved waits for the verdict being made instead of making it twice: :meth:`_judge`)."""
        if self._lock_owner == threading.get_ident():  # inside a hold already (a contract): judge under it
            return self._fetch_locked(on_advance)
        old = self.head()
        new = self._fetch_tip()
        if new is not None and new != old and self.vet is not None:
            refusal = self.refusal
            if refusal is None or refusal.tip != new or refusal.good != old:
                repo = pygit2.Repository(str(self.repo_dir))  # this thread's own: writers use self.repo meanwhile
                base = self._base(old, new, repo)
                if base != new:
                    self._judge(base, new, repo)  # kept for the locked step
        with self.write_lock():
            return self._fetch_locked(on_advance, fetched=(old, new))

    def _fetch_tip(self) -> str | None:
        """Fetch the origin's main into the tracking ref (objects and tip; main does not move). None: the origin
        has no main.  One fetch at a time per store (the locked and the unlocked steps share the ref)."""
        with self._fetch_lock:
            try:
                self.repo.remotes["origin"].fetch([f"+{MAIN_REF}:{TRACKING_REF}"])
            except pygit2.GitError as exc:
                raise OriginUnavailable(
                    f"the origin of environment '{self.name}' could not be reached ({_short(exc)})",
                    remedy="Serving the last fetched state; writes are refused until the origin is back.",
                ) from exc
            try:
                return str(self.repo.references[TRACKING_REF].target)
            except KeyError:
                return None

    def _base(self, old: str | None, new: str, repo: pygit2.Repository | None = None) -> str | None:
        """Where the vet starts for the origin's tip ``new``: main when the tip descends from it (the usual
        case), else the last commit both share (the origin lost commits of ours: :mod:`notegate.vault.converge`
        re-applies them once the origin's own new commits pass), None when they share nothing."""
        repo = repo if repo is not None else self.repo
        if old is None or repo.descendant_of(new, old):
            return old
        found = repo.merge_base(old, new)
        return str(found) if found is not None else None

    def _judge(self, good: str | None, tip: str, repo: pygit2.Repository | None = None) -> Verdict:
        """The vet's verdict on ``good`` -> ``tip``, made once: a thread that needs a verdict another thread is
        making waits for it (the unlocked fetch makes it; a writer whose push found the origin moved needs the
        same one), and the last few verdicts are kept for the locked step that moves main."""
        assert self.vet is not None
        key = (good, tip)
        with self._judging_lock:
            judging = self._judging.get(key)
            mine = judging is None
            if judging is None:
                judging = self._judging[key] = _Judging()
                while len(self._judging) > KEPT_VERDICTS:
                    del self._judging[next(iter(self._judging))]
        if not mine:
            judging.done.wait()
            if judging.verdict is not None:
                return judging.verdict
            return self._judge(good, tip, repo)  # the other thread's vet failed: make it here
        try:
            judging.verdict = self.vet(repo if repo is not None else self.repo, good, tip)
        except BaseException:
            with self._judging_lock:
                self._judging.pop(key, None)
            raise
        finally:
            judging.done.set()
        return judging.verdict

    def _fetch_locked(
        self,
        on_advance: Callable[[str | None, str], None] | None,
        fetched: tuple[str | None, str | None] | None = None,
    ) -> tuple[str | None, str | None]:
        """Move main to the origin's tip if it is judged good (under the write lock). ``fetched``: the (main, tip)
        an unlocked :meth:`fetch` saw a moment ago; used as is while main has not moved since."""
        old = self.head()
        new = fetched[1] if fetched is not None and fetched[0] == old else self._fetch_tip()
        if new is None:
            return old, old
        if new == old:
            self.refusal = None
            return old, new
        base = self._base(old, new)
        refusal = self.refusal
        if refusal is None or refusal.tip != new or refusal.good != old:  # judge each (main, tip) once
            verdict = self._judge(base, new) if self.vet is not None and base != new else None
            refusal = None if verdict is None or verdict.ok else FetchRefusal(tip=new, good=old, verdict=verdict)
            if refusal is None and base != old:  # the origin lost commits of ours: re-apply them on its tip
                assert old is not None
                settled = self._converge(old, base, new)
                if isinstance(settled, str):
                    new = settled
                elif settled is not None:
                    refusal = FetchRefusal(tip=new, good=old, verdict=settled)
                else:  # the origin moved while we re-applied: the next fetch starts again from its new tip
                    return old, old
        self.refusal = refusal
        if refusal is not None:
            return old, old  # stay on the last good commit; the tracking ref keeps what the origin has
        self.repo.references.create(MAIN_REF, new, force=True)
        if on_advance is not None:
            on_advance(old, new)
        return old, new

    def _converge(self, old: str, base: str | None, new: str) -> str | converge.Stuck | None:
        """The origin's tip ``new`` passed the vet but lost commits of main: re-apply them on it as new commits
        (:mod:`notegate.vault.converge`), pushed as a compare-and-swap from ``new``. Returns the new main, or
        why the server cannot do it alone, or None when the origin moved meanwhile (the next fetch sees it)."""
        tip_listing: list[Listing] = []

        def collision(path: str) -> str | None:
            if not tip_listing:
                tip_listing.append(self._full_listing(new))
            return tip_listing[0].collision(path)

        planned = converge.plan(
            self.repo, old, base, new, lambda a, b: list(changed_paths(self.repo, a, b)), _entry_blob, collision
        )
        if isinstance(planned, converge.Stuck):
            log.warning("environment %s: %s", self.name, planned.summary())
            return planned
        if not planned:  # the origin already holds every lost change
            return new
        group = [
            _Request(
                changes=tuple(
                    Change(path, None if blob is None else self.read_unverified_blob(blob)) for path, blob in r.changes
                ),
                expect={},
                author=Author(r.author_name, r.author_email.removesuffix("@notegate")),
                message=r.message,
                new_paths=(),
                on_advance=None,
            )
            for r in planned
        ]
        chain, made, _befores = self._build_chain(new, group)
        failed = next((r.error for r in group if r.error is not None), None)
        if failed is not None or len(chain) != len(group):
            raise OriginUnavailable(
                f"the commits of environment '{self.name}' the origin lost could not be made again ({_short(failed)})",
                remedy="Nothing was written. The server tries again at its next fetch.",
            )
        last = chain[-1][1]
        self._write_group(made)
        if not self._push(last, new):
            return None
        log.warning(
            "environment %s: the origin's tip %s had lost %d commit(s) the server acknowledged; re-applied as %s",
            self.name,
            new[:12],
            len(planned),
            str(last)[:12],
        )
        return str(last)

    # ---------------------------------------------------------- maintenance
    def loose_object_count(self, repo_dir: Path | None = None) -> int:
        objects = (repo_dir or self.repo_dir) / "objects"
        return sum(1 for d in objects.iterdir() if len(d.name) == 2 for _ in d.iterdir())

    def pack_count(self, repo_dir: Path | None = None) -> int:
        return sum(1 for _ in ((repo_dir or self.repo_dir) / "objects" / "pack").glob("*.pack"))

    def needs_repack(self, threshold: int) -> bool:
        """More than ``threshold`` loose objects (a git push into the origin leaves them) or :data:`MAX_PACKS`
        packs, here or in a local origin: time for :meth:`roll_up`."""
        return any(self.loose_object_count(d) > threshold or self.pack_count(d) > MAX_PACKS for d in self._git_dirs())

    def _git_dirs(self) -> list[Path]:
        dirs = [self.repo_dir]
        if self._local_origin() is not None:
            dirs.append(Path(self.origin_url))
        return dirs

    def repack(self, *, deltas: bool = True) -> None:
        """Put every pack and loose object into one pack, here and in a local origin (what an import ends
        with, and a full maintenance pass); the periodic one is :meth:`roll_up`.

        ``deltas=False`` skips git's delta search (``--window=0``): after an import, whose notes are each one
        version of unrelated text, it saves ~0.2 % of the pack for ~20x less CPU (10,000 notes: 2.3 -> 0.1 s
        user); later repacks delta only what is new.

        It deletes the packs it replaces, which a concurrent writer of the clone may be about to name, so it
        holds the write lock whole; it keeps what no ref reaches yet in a cruft pack (``--cruft``) until
        :data:`UNREACHABLE_KEPT_FOR` has passed, so objects written for a commit not made yet (an import's
        packed batch) survive it.  ``repack.lock`` keeps two repacks of one clone (a maintenance pass and a
        CLI run) from packing the same objects twice."""
        window = [] if deltas else ["--window=0"]
        with self._repack_guard(), self.write_lock():
            for repo_dir in self._git_dirs():
                self._git_maintenance(
                    repo_dir,
                    ["repack", "-a", "-d", "-q", "--cruft", f"--cruft-expiration={UNREACHABLE_KEPT_FOR}", *window],
                )
                _fanout_folders(repo_dir)
            self._reopen()

    def roll_up(self) -> None:
        """Merge the small packs (one per group commit) and any loose objects into fewer packs, here and in a
        local origin: ``git repack --geometric=2 -d``, which leaves packs whose sizes at least double from one
        to the next, so the big pack of an imported vault is not rewritten for a few new commits (measured:
        ~0.1 s for 32 group packs beside a 100,000-note pack, against ~30 s for the full repack).

        Writers go on meanwhile (no write lock): a write adds a pack and never changes or deletes one, and
        git's repack takes only the packs it listed when it started, as it does beside a push.  A reader of a
        pack git deletes keeps what it has open, and libgit2 looks an object up again in the new pack when the
        old one is gone.  Then the repository is opened again (under the lock, between two groups), because
        libgit2 keeps every pack it ever opened, deleted or not, until then."""
        with self._repack_guard():
            for repo_dir in self._git_dirs():
                self._git_maintenance(repo_dir, ["repack", "--geometric=2", "-d", "-q"])
            with self.write_lock():
                self._reopen()

    def _reopen(self) -> None:
        """A fresh libgit2 repository for the clone (under the write lock): its pack list is what is on disk
        now. Readers that hold the previous one finish with it; its packs close when the last one lets go."""
        self.repo = pygit2.Repository(str(self.repo_dir))
        self._trees = objects.TreeCache(self.repo, TREE_CACHE_BYTES)
        self._origin_repo = None  # reopen: the pack list changed
        self._group_packs = 0

    @contextmanager
    def _repack_guard(self) -> Iterator[None]:
        """One repack of this clone at a time, across threads and processes (waits for the other one)."""
        with open(self.repo_dir.parent / "repack.lock", "a+") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    @staticmethod
    def _git_maintenance(repo_dir: Path, args: list[str]) -> None:
        subprocess.run(
            ["git", *durable.git_config_args(), "--git-dir", str(repo_dir), *args],
            check=False,
            capture_output=True,
            timeout=600,
        )

    # -------------------------------------------------------- health (the doctor)
    def origin_main(self, timeout: float) -> str | None:
        """The origin's main as it answers now, or None when it has none yet.

        Lists the origin's refs over the same transport the server fetches with; fetches nothing and moves
        no ref here.  Raises :class:`OriginUnavailable` when the origin does not answer within ``timeout``.
        """
        answer: dict[str, object] = {}

        def ask() -> None:
            try:
                answer["heads"] = _advertised_heads(self.repo, "origin")
            except pygit2.GitError as exc:
                answer["error"] = exc

        worker = threading.Thread(target=ask, name=f"doctor-ls-{self.name}", daemon=True)
        worker.start()
        worker.join(timeout)
        if worker.is_alive():
            raise OriginUnavailable(f"the origin of environment '{self.name}' did not answer in {timeout:g} s")
        if "error" in answer:
            raise OriginUnavailable(
                f"the origin of environment '{self.name}' could not be reached ({_short(answer['error'])})"
            )
        heads: dict[str, str] = answer.get("heads", {})  # type: ignore[assignment]
        return heads.get(MAIN_REF)

    def compare_with_origin(self, origin_tip: str | None) -> tuple[int | None, int | None]:
        """(ahead, behind): commits of main the origin's tip lacks, and commits of the origin's tip main lacks.

        ``None`` means "some, uncounted": the origin's tip was never fetched here, so only a local origin
        (which has both commits) can say whether main is part of its history.
        """
        local = self.head()
        if local == origin_tip:
            return 0, 0
        if origin_tip is None:
            return (None if local else 0), 0
        if local is None:
            return 0, None
        for repo in (self.repo, self._local_origin()):
            if repo is not None and local in repo and origin_tip in repo:
                ahead, behind = repo.ahead_behind(local, origin_tip)
                return ahead, behind
        return None, None

    def fsck(self, timeout: float, repo_dir: Path | None = None) -> list[str]:
        """``git fsck`` of this clone (or of ``repo_dir``): the problems it reports, [] when sound."""
        target = repo_dir or self.repo_dir
        return git_fsck(target, timeout)


def _fanout_folders(repo_dir: Path) -> None:
    """Put back the 256 ``objects/xx`` folders a repack removes when it empties them: otherwise each of the
    next few hundred loose objects (a git push into the origin unpacks small pushes; libgit2 writes loose
    objects outside the group commit's pack) costs a failed write, a ``mkdir`` and a retry.  Empty fan-out
    folders are what ``git init`` leaves too."""
    objects = repo_dir / "objects"
    if not objects.is_dir():
        return
    for i in range(256):
        with suppress(OSError):
            (objects / f"{i:02x}").mkdir(exist_ok=True)


def _advertised_heads(repo: pygit2.Repository, remote: str) -> dict[str, str]:
    """{ref name: commit id} as the remote advertises them."""
    return {head.name: str(head.oid) for head in repo.remotes[remote].list_heads()}


def git_fsck(repo_dir: Path, timeout: float) -> list[str]:
    """``git fsck`` of any repository (a bare one or a working clone), with a timeout: its error lines."""
    try:
        done = subprocess.run(
            ["git", "-C", str(repo_dir), "fsck", "--no-progress", "--no-dangling"],
            check=False,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return [f"git fsck did not finish in {timeout:g} s"]
    except OSError as exc:
        return [f"git could not run ({exc.strerror})"]
    if done.returncode == 0:
        return []
    lines = [line.strip() for line in (done.stderr + done.stdout).splitlines() if line.strip()]
    return lines[:20] or [f"git fsck exited with status {done.returncode}"]


# ------------------------------------------------------------------ helpers
#: "failed to update ref" is what git's receive-pack reports (over git://, ssh, http) when our push lost the
#: race for the ref's lock or compare-and-swap to another pusher's: the origin moved under us. Were it a
#: real failure, the replay finds the tip unchanged and gives up after MAX_REPLAYS, acknowledging nothing.
_MOVED_MARKERS = (
    "fast-forward", "fastforward", "fetch first", "not present locally", "stale info", "failed to update ref",
)  # fmt: skip


def _origin_moved(message: str) -> bool:
    """libgit2's and git's wordings for "the origin has commits you don't": retry after a fetch."""
    return any(marker in message for marker in _MOVED_MARKERS)


#: How notegate's own pre-receive hook names each rule it applied (sync/incoming.explain_all).
_HOOK_RULE = re.compile(r"What to do instead \[([a-z0-9-]{1,64})\]:")


def _hook_rules(text: str) -> list[str]:
    """The rule names notegate's pre-receive hook printed: nothing else of the hook's text (it may quote
    paths or commit ids) goes into the refusal."""
    return sorted(set(_HOOK_RULE.findall(text)))[:8]


def _short(exc: object) -> str:
    """An error text without machine paths."""
    text = str(exc).split("\n")[0]
    if "'" in text and "/" in text:
        head, _, rest = text.partition("'")
        _, _, tail = rest.partition("'")
        text = f"{head}<origin>{tail}"
    return text[:200]


def _entry_blob(tree: pygit2.Tree | None, path: str) -> str:
    if tree is None:
        return ABSENT
    try:
        entry = tree[path]
    except (KeyError, ValueError):
        return ABSENT
    if entry.filemode not in _BLOB_MODES or entry.type != ObjectType.BLOB:
        return ABSENT
    return str(entry.id)


def _walk_tree(repo: pygit2.Repository, tree: pygit2.Tree, prefix: str) -> Iterator[tuple[str, str]]:
    """(path, blob id) of every blob below ``tree``, hidden folders left out."""
    yield from _walk_raw(repo, _read_tree(repo, tree.id), prefix)


def changed_paths(
    repo: pygit2.Repository, old: pygit2.Tree | None, new: pygit2.Tree, prefix: str = ""
) -> Iterator[tuple[str, str]]:
    """(path, new blob id or ABSENT) for every blob path that differs between two trees.

    Subtrees with equal ids are skipped without being read (libgit2's diff visits every entry), so the
    cost follows the size of the change, not of the vault. Hidden folders are never descended into.
    """
    if old is None:
        yield from _walk_tree(repo, new, prefix)
        return
    if old.id == new.id:
        return
    yield from _changed_raw(repo, _read_tree(repo, old.id), _read_tree(repo, new.id), prefix)


# Trees are read from their raw bytes (``mode name\0 id`` per entry, :mod:`notegate.vault.objects`) rather than
# through pygit2's entry objects: each ``entry.filemode`` builds a Python enum (~5-20 us), two per entry compared,
# which made the 16-commit walk of a 100,000-note index build 2.5 million enum calls and a one-note change in a
# 4,800-entry folder ~200 ms.  The modes are normalised exactly as libgit2's ``git_tree_entry_filemode`` does,
# names are decoded as pygit2 decodes them (UTF-8, surrogateescape); tests/vault/test_store_rawtree.py holds the
# equivalence with the entry-object walk.
_TREE = int(FileMode.TREE)
_BLOB_MODE_INTS = frozenset(int(m) for m in _BLOB_MODES)
_normal_mode = objects.normal_mode
_raw_records = objects.raw_records
_read_tree = objects.read_tree


def _name(raw: bytes) -> str:
    return raw.decode("utf-8", "surrogateescape")


def _walk_raw(repo: pygit2.Repository, data: bytes, prefix: str) -> Iterator[tuple[str, str]]:
    for raw_mode, raw_name, oid in _raw_records(data):
        mode = _normal_mode(raw_mode)
        if mode == _TREE:
            if not raw_name.startswith(b"."):
                yield from _walk_raw(repo, _read_tree(repo, oid), f"{prefix}{_name(raw_name)}/")
        elif mode in _BLOB_MODE_INTS:
            yield f"{prefix}{_name(raw_name)}", oid.hex()


def _changed_raw(repo: pygit2.Repository, old: bytes, new: bytes, prefix: str) -> Iterator[tuple[str, str]]:
    """Entries equal byte for byte are dropped by one set comparison; the rest are compared by name with
    normalised modes, in the new tree's order and then the old tree's (as the entry walk did)."""
    old_records, new_records = _raw_records(old), _raw_records(new)
    same = set(old_records).intersection(new_records)
    old_entries = {name: (_normal_mode(mode), oid) for mode, name, oid in old_records if (mode, name, oid) not in same}
    for raw_mode, raw_name, oid in new_records:
        if (raw_mode, raw_name, oid) in same:
            continue
        mode = _normal_mode(raw_mode)
        before = old_entries.pop(raw_name, None)
        if before is not None and before[1] == oid and before[0] == mode:
            continue
        yield from _entry_change(repo, before, (mode, oid), prefix, raw_name)
    for raw_name, before in old_entries.items():
        yield from _entry_change(repo, before, None, prefix, raw_name)


def _entry_change(
    repo: pygit2.Repository,
    before: tuple[int, bytes] | None,
    after: tuple[int, bytes] | None,
    prefix: str,
    raw_name: bytes,
) -> Iterator[tuple[str, str]]:
    path = f"{prefix}{_name(raw_name)}"
    old_is_tree = before is not None and before[0] == _TREE
    new_is_tree = after is not None and after[0] == _TREE
    if (old_is_tree or new_is_tree) and raw_name.startswith(b"."):
        return  # hidden folders are never served
    if before is not None and not old_is_tree and (after is None or new_is_tree):
        yield path, ABSENT  # a file that went away (or became a folder)
    if old_is_tree and new_is_tree:
        yield from _changed_raw(repo, _read_tree(repo, before[1]), _read_tree(repo, after[1]), f"{path}/")
    elif old_is_tree:
        for sub, _blob in _walk_raw(repo, _read_tree(repo, before[1]), f"{path}/"):
            yield sub, ABSENT
    if new_is_tree and not old_is_tree:
        yield from _walk_raw(repo, _read_tree(repo, after[1]), f"{path}/")
    elif after is not None and not new_is_tree:
        yield path, after[1].hex() if after[0] in _BLOB_MODE_INTS else ABSENT


def build_tree(
    repo: pygit2.Repository,
    base: pygit2.Tree | None,
    changes: Sequence[Change],
    created: list[pygit2.Oid] | None = None,
) -> pygit2.Oid:
    """A new tree: ``base`` with ``changes`` applied, rebuilding only the trees on the changed paths.

    ``created`` collects every object written (blobs and trees), which is what a local push must copy.
    """
    return _build(repo, base, objects.nested_changes(changes), created if created is not None else [])[0]


def _build(
    repo: pygit2.Repository, base: pygit2.Tree | None, nested: dict, created: list[pygit2.Oid]
) -> tuple[pygit2.Oid, int]:
    """The tree's id and how many entries it holds (so an emptied folder is seen without reading back and
    parsing the tree just written: up to ~350 KB for a folder of a 100,000-note vault)."""
    builder = repo.TreeBuilder(base) if base is not None else repo.TreeBuilder()
    for name, item in nested.items():
        existing = base[name] if base is not None and name in base else None
        if isinstance(item, Change):
            if item.data is None:
                if existing is not None:
                    builder.remove(name)
            else:
                blob = stored_blob(repo, item.data)  # a bulk import's blobs are packed already
                created.append(blob)
                builder.insert(name, blob, FileMode.BLOB)
        else:
            sub_base = None
            if existing is not None and existing.filemode == FileMode.TREE:
                sub_base = repo[existing.id].peel(pygit2.Tree)
            elif existing is not None:
                raise ValueError(f"{name} is a file, not a folder")
            sub_id, entries = _build(repo, sub_base, item, created)
            if entries == 0:
                if existing is not None:
                    builder.remove(name)
            else:
                builder.insert(name, sub_id, FileMode.TREE)
    entries = len(builder)
    tree_id = builder.write()
    created.append(tree_id)
    return tree_id, entries


# -------------------------------------------------------------- backups (services/backup.py, restore.py)
def _git(args: list[str], timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", *args], check=False, capture_output=True, text=True, errors="replace", timeout=timeout
    )


def repository_refs(repo_dir: Path) -> dict[str, str]:
    """{ref name: object id} of every ref of a repository (symbolic refs such as HEAD left out).  A ref that
    goes between the listing and its lookup (a push's pending ref, while the server writes) is left out."""
    repo = pygit2.Repository(str(repo_dir))
    refs: dict[str, str] = {}
    for name in repo.references:
        try:
            ref = repo.references[name]
        except KeyError:
            continue
        if ref.type == pygit2.enums.ReferenceType.DIRECT:
            refs[name] = str(ref.target)
    return refs


def bundle_repository(repo_dir: Path, out: Path, timeout: float) -> dict[str, str]:
    """Every ref of a repository that a server is writing to, and the objects they reach, in one bundle.

    ``git bundle create --all`` on the live repository is not safe: while libgit2 moves ``main`` (a write
    landing), git's ref scan can miss it and bundle the other refs only (measured: 14 of 300 bundles had
    no ``main``).  So the refs are read once here (libgit2 reads a ref atomically), written into a
    throwaway repository that borrows the live objects (objects are immutable), and that is bundled.
    A push's pending ref is left out: it names a commit nobody was told about.
    Returns the refs the bundle holds ({} for an empty repository, and then no file is written)."""
    refs = {name: oid for name, oid in repository_refs(repo_dir).items() if name != PENDING_REF}
    if not refs:
        return {}
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".snapshot-", dir=out.parent) as scratch:
        pygit2.init_repository(scratch, bare=True, initial_head="main")
        (Path(scratch) / "objects" / "info" / "alternates").write_text(str((repo_dir / "objects").resolve()) + "\n")
        snapshot = pygit2.Repository(scratch)
        for name, oid in refs.items():
            try:
                snapshot.references.create(name, pygit2.Oid(hex=oid))
            except pygit2.GitError as exc:  # a ref naming an object the repository lacks: a broken clone
                raise NotegateError(
                    f"the ref {name} names a missing object ({_short(exc)})", rule="backup-failed"
                ) from exc
        done = _git(["--git-dir", scratch, "bundle", "create", "--quiet", str(out), "--all"], timeout)
    if done.returncode != 0:
        raise NotegateError(f"git bundle failed ({done.stderr.strip()[:200]})", rule="backup-failed")
    heads = _git(["bundle", "list-heads", str(out)], timeout)
    held = {}
    for line in heads.stdout.splitlines():
        oid, _, name = line.partition(" ")
        if name.startswith("refs/"):
            held[name] = oid
    if held != refs:
        raise NotegateError("git bundle did not hold the refs it was given", rule="backup-failed")
    return held


def repository_from_bundle(bundle: Path | None, target: Path, timeout: float) -> dict[str, str]:
    """A new bare repository at ``target`` holding every ref of ``bundle`` (None: an empty repository)."""
    pygit2.init_repository(str(target), bare=True, initial_head="main")
    if bundle is None:
        return {}
    done = _git(["--git-dir", str(target), "fetch", "--quiet", str(bundle), "refs/*:refs/*"], timeout)
    if done.returncode != 0:
        raise NotegateError(f"git could not read the bundle ({done.stderr.strip()[:200]})", rule="backup-failed")
    return repository_refs(target)


def clone_local(source: Path, target: Path, timeout: float) -> None:
    """A bare copy of a local repository (``git clone --bare --local``: objects hard-linked, no transport)."""
    done = _git(["clone", "--bare", "--local", "--quiet", str(source), str(target)], timeout)
    if done.returncode != 0:
        raise NotegateError(f"git could not copy the repository ({done.stderr.strip()[:200]})", rule="backup-failed")


def missing_objects(repo_dir: Path, ids: Sequence[str]) -> list[str]:
    """The ids among ``ids`` that the repository does not hold."""
    repo = pygit2.Repository(str(repo_dir))
    return [oid for oid in ids if oid not in repo]
