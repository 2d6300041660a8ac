"""The store's reads: a note's blob at a commit, blobs themselves (one or streamed), what changed between two
tips and when each path last changed, commits, the history of a path and the deleted notes.

A mixin of :class:`notegate.vault.store.VaultStore` (issue 29 §4): it holds methods only, over the attributes
``VaultStore.__init__`` sets, so every caller keeps calling ``store.read(...)`` on the one store.
"""

from __future__ import annotations

import os
import subprocess
import threading
from collections.abc import Iterator, Sequence
from contextlib import suppress

import pygit2

from notegate.vault.listing import (
    _Range,
)
from notegate.vault.storebase import (
    _OBJECT_ID,
    ABSENT,
    KNOWN_RANGES,
)
from notegate.vault.trees import (
    _entry_blob,
    changed_paths,
    similar_deletions,
)


class HistoryReads:
    """The reads of :class:`~notegate.vault.store.VaultStore` (methods only; the store holds the state)."""

    def blob_id(self, path: str, commit: str | None = None) -> str:
        """The note's revision at ``commit`` (default: the tip): its blob id, or ``absent``."""
        if commit is None:
            listing = self.listing()
            return listing.notes.get(path) or listing.attachments.get(path, ABSENT)
        tree = self.repo[commit].peel(pygit2.Tree)
        return _entry_blob(tree, path)

    def similar_deletions(self, changes: Sequence, commit: str | None) -> int:
        """What ``changes`` delete from ``commit`` that git's similarity detection does not pair with what
        they add (:func:`notegate.vault.trees.similar_deletions`): how the git door counts renames."""
        base = self.repo[commit].peel(pygit2.Tree) if commit else None
        return similar_deletions(self.repo, base, changes)

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

    def commit_with_trailers(self, trailers: dict[str, str], since: float, scan_limit: int = 5000) -> str | None:
        """The newest commit on main's first-parent line whose message holds every one of ``trailers`` (exact
        ``Name: value`` lines), among those committed at ``since`` (seconds) or later; None if there is none."""
        head = self.head()
        if head is None:
            return None
        wanted = {f"{name}: {value}" for name, value in trailers.items()}
        walker = self.repo.walk(head, pygit2.enums.SortMode.TOPOLOGICAL | pygit2.enums.SortMode.TIME)
        walker.simplify_first_parent()
        for scanned, commit in enumerate(walker):
            if scanned >= scan_limit or commit.commit_time < since:
                return None
            if wanted <= set(commit.message.splitlines()):
                return str(commit.id)
        return None

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
