"""The names every part of the store shares: its refs and limits, the records a write hands it and gets back,
its refusals, and the small helpers the push, fetch and backup paths word their errors with.

Why a module of its own (issue 29 §4): the store's parts (:mod:`notegate.vault.history`,
:mod:`notegate.vault.commit`, :mod:`notegate.vault.fetching`, :mod:`notegate.vault.maintenance`) and
:mod:`notegate.vault.store`, which combines them, all import these; here they import nothing of each other.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

import pygit2
from pygit2.enums import FileMode

from notegate.errors import NotegateError

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
#: ~25 us more per blob when 30,000 random reads miss every window).  8 MiB mapped, not 32: a 10,000-note vault's
#: pack (17 MB) stayed wholly resident at 32 once the index's build or the meaning catch-up had read every blob;
#: at 8, peak RSS under 32 MCP writers 173 -> 148 MB, reads and searches within noise (bench/RESULTS.md,
#: nineteenth session).
PACK_WINDOW_BYTES = 1 << 20
PACK_MAPPED_LIMIT_BYTES = 8 << 20
#: Raw bytes of parsed trees the write path keeps (:class:`notegate.vault.objects.TreeCache`): the root and the
#: recently written folders of a 100,000-note vault (~25 KB each), a few MB of the process's memory.
TREE_CACHE_BYTES = 4 << 20
_BLOB_MODES = (FileMode.BLOB, FileMode.BLOB_EXECUTABLE)


def bound_pack_windows() -> None:
    """Map pack files in small windows with a small total, so libgit2 unmaps the least recently used ones
    instead of keeping a whole pack resident (see :data:`PACK_WINDOW_BYTES`). Process-wide; a long-lived
    process (the server) calls it once at start. The pages stay in the kernel's page cache either way: what
    changes is how many the process holds mapped (its RSS), not how often the disk is read."""
    pygit2.settings.mwindow_size = PACK_WINDOW_BYTES
    pygit2.settings.mwindow_mapped_limit = PACK_MAPPED_LIMIT_BYTES


def read_objects_as_git_does() -> None:
    """Do not hash every object again on each read, as git itself does not (libgit2 does by default).

    Why: at 10,000 notes the re-hash was 18 % of a common-word search's instructions (its hits' blobs are read
    for their snippets) and part of every write's tree reads.  What it would catch cannot arrive another
    way: every object in a clone or a local origin was hashed when it was made (our writes) or indexed (a
    push's or a fetch's pack, hashed object by object by the indexer), zlib's own checksum still fails a
    damaged object on read, and ``notegate doctor`` runs ``git fsck`` (every object hashed) over each clone
    and origin.  Process-wide; the server calls it once at start."""
    pygit2.settings.enable_strict_hash_verification(False)


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
    #: A holder of the write lock took it into its group: its outcome comes from that holder, who acknowledges
    #: it after the lock is released (:meth:`GroupCommits._settle`), so its writer waits for ``wake``, not
    #: for the lock.
    taken: bool = False
    #: Set after every change a waiting writer must see (done, or handed back to the queue).
    wake: threading.Event = field(default_factory=threading.Event)

    def finish(self, result: CommitResult) -> None:
        self.result, self.done = result, True
        self.wake.set()

    def fail(self, error: BaseException) -> None:
        self.error, self.done = error, True
        self.wake.set()

    def hand_back(self) -> None:
        """Out of a group and back in the queue (it waits for a later one): its writer takes the lock again."""
        self.taken = False
        self.wake.set()

    def outcome(self) -> CommitResult:
        if self.error is not None:
            raise self.error
        assert self.result is not None, "a request left the group without an outcome"
        return self.result


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
