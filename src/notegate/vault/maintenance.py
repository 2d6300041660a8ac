"""The store's upkeep and health: loose objects and packs counted, full repacks and roll-ups (``git`` run under
the write lock), the origin's main as it answers now and ``git fsck``.

A mixin of :class:`notegate.vault.store.VaultStore` (issue 29 §4): methods only, over the attributes
``VaultStore.__init__`` sets.
"""

from __future__ import annotations

import fcntl
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

import pygit2

from notegate.errors import OriginUnavailable
from notegate.vault import durable, objects
from notegate.vault.storebase import (
    MAIN_REF,
    MAX_PACKS,
    TREE_CACHE_BYTES,
    UNREACHABLE_KEPT_FOR,
    _short,
)


class Maintenance:
    """The upkeep of :class:`~notegate.vault.store.VaultStore` (methods only; the store holds the state)."""

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
