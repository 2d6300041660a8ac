"""Raw git for a workstation's vault clone: the one place ``notegate sync`` touches objects and refs.

A workstation clone is an ordinary non-bare clone (``git clone ORIGIN DIR``) the owner edits with Obsidian.
:mod:`notegate.sync.daemon` decides what to commit, replay and write; this module only carries it out:

* **Objects and refs with pygit2**: trees are built with the store's :func:`notegate.vault.store.build_tree`
  (only the trees on changed paths are rebuilt), commits are written without moving any ref, and refs move
  only when the daemon says so.  The index is reset to the tip after each move, so ``git status`` in the
  clone tells the truth.
* **Fetch and push with the git CLI**: a push to a local bare origin then runs the origin's pre-receive
  hook (libgit2's local transport would skip it), and the owner's own SSH agent, credential helpers and
  ``~/.ssh/config`` work for a remote origin without notegate ever holding a credential.  Never
  interactive (``GIT_TERMINAL_PROMPT=0``), always bounded by a timeout.

Private refs: ``refs/notegate/fetched`` (what the last fetch brought, not yet trusted) and
``refs/notegate/accepted`` (the origin's last tip that passed :func:`notegate.sync.incoming.inspect_update`);
``refs/remotes/origin/main`` follows ``accepted`` only.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import pygit2
from pygit2.enums import FileMode, SortMode

from notegate.errors import NotegateError, OriginUnavailable
from notegate.vault import durable
from notegate.vault.store import Change, build_tree
from notegate.vault.trees import similar_deletions

MAIN = "refs/heads/main"
FETCHED = "refs/notegate/fetched"
ACCEPTED = "refs/notegate/accepted"
TRACKING = "refs/remotes/origin/main"
GIT_TIMEOUT_SECONDS = 120
#: A tree entry as the daemon compares them: (mode, blob id hex).
Entry = tuple[int, str]


class NotAClone(NotegateError):
    rule = "sync-not-a-clone"


@dataclass(frozen=True)
class PushResult:
    ok: bool
    moved: bool  # the origin moved under us (fetch, replay, push again)
    lines: tuple[str, ...]  # what the origin said (its hook's findings), for a refused push


class WorkClone:
    """One vault clone with a work tree, its remote ``origin`` and its branch ``main``."""

    def __init__(self, directory: Path, git_env: Mapping[str, str] | None = None) -> None:
        try:
            self.repo = pygit2.Repository(str(directory))
        except pygit2.GitError:
            raise NotAClone(f"{directory.name} is not a git clone") from None
        if self.repo.is_bare or self.repo.workdir is None:
            raise NotAClone(f"{directory.name} is a bare repository; sync a clone with a work tree")
        if "origin" not in self.repo.remotes.names():
            raise NotAClone(f"{directory.name} has no remote named origin")
        head = self.repo.lookup_reference("HEAD").target
        if head != MAIN:
            raise NotAClone(f"{directory.name} has {head!s} checked out, not main")
        self.workdir = Path(self.repo.workdir)
        self.git_dir = Path(self.repo.path)
        env = dict(git_env if git_env is not None else {})
        env["GIT_TERMINAL_PROMPT"] = "0"
        for name in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY"):
            env.pop(name, None)  # a sync started from inside a git hook must not act on that repository
        self._env = env

    # ------------------------------------------------------------ refs
    def ref(self, name: str) -> str | None:
        try:
            return str(self.repo.references[name].target)
        except KeyError:
            return None

    def set_ref(self, name: str, commit: str) -> None:
        self.repo.references.create(name, pygit2.Oid(hex=commit), force=True)

    def delete_ref(self, name: str) -> None:
        if name in self.repo.references:
            self.repo.references.delete(name)

    def move_main(self, commit: str) -> None:
        """Point main at ``commit`` and the index at its tree (the work tree already holds its files).

        With durability on, the work-tree files that differ between main and ``commit`` (the ones the daemon
        just wrote) and their folders are flushed first.  Why: the daemon writes each one (a temporary file
        renamed over the note) without a flush, and a flushed ``main`` over files that never reached the disk
        (a power cut: empty, or their old bytes, behind the new name) reads at the next tick as the owner's own
        edit, which sync would commit and push over the origin's change."""
        tree = self.repo[pygit2.Oid(hex=commit)].peel(pygit2.Tree)
        if not durable.enabled():
            self.set_ref(MAIN, commit)
            self.repo.index.read_tree(tree)
            self.repo.index.write()
            return
        self._flush_changed(self.files(self.ref(MAIN)), self.files(commit))
        self.set_ref(MAIN, commit)
        self._write_index(tree)

    def _write_index(self, tree: pygit2.Tree) -> None:
        """The index at ``tree``, written whole: a temporary file, flushed, renamed over ``.git/index``, the
        folder flushed.  Why: libgit2 writes the index without a flush even with ``ENABLE_FSYNC_GITDIR``, and
        a power cut left it empty, which git refuses ("index file smaller than expected"): every later fetch
        failed and the clone never synced again until the owner rebuilt the index by hand."""
        target = self.git_dir / "index"
        temporary = target.with_name("index.notegate-tmp")
        temporary.unlink(missing_ok=True)
        index = pygit2.Index(str(temporary))
        index.read_tree(tree)
        index.write()
        fd = os.open(temporary, os.O_RDONLY)
        try:
            durable.flush_file(fd)
        finally:
            os.close(fd)
        os.replace(temporary, target)
        durable.flush_folder(self.git_dir)
        self.repo.index.read(False)  # this process's view of it: the file just written

    def _flush_changed(self, old: dict[str, Entry], new: dict[str, Entry]) -> None:
        folders: set[Path] = set()
        for path in (p for p in old.keys() | new.keys() if old.get(p) != new.get(p)):
            file = self.workdir / path
            folders.add(file.parent)
            try:
                fd = os.open(file, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
            except OSError:  # deleted (its folder is flushed), or not a plain file: nothing of ours to flush
                continue
            try:
                durable.flush_file(fd)
            finally:
                os.close(fd)
        for folder in sorted(folders, key=lambda f: len(f.parts), reverse=True):
            while not folder.is_dir() and folder != self.workdir:  # removed with its last file: its parent
                folder = folder.parent
            durable.flush_folder(folder)

    # ------------------------------------------------------------ objects
    def files(self, commit: str | None) -> dict[str, Entry]:
        """Every file entry of ``commit``'s tree by path (empty for None)."""
        if commit is None:
            return {}
        out: dict[str, Entry] = {}
        stack: list[tuple[str, pygit2.Tree]] = [("", self.repo[pygit2.Oid(hex=commit)].peel(pygit2.Tree))]
        while stack:
            prefix, tree = stack.pop()
            for entry in tree:
                path = prefix + entry.name
                if entry.filemode == FileMode.TREE:
                    stack.append((path + "/", self.repo[entry.id].peel(pygit2.Tree)))
                else:
                    out[path] = (int(entry.filemode), str(entry.id))
        return out

    def blob(self, blob_id: str) -> bytes:
        return self.repo[pygit2.Oid(hex=blob_id)].peel(pygit2.Blob).data

    @staticmethod
    def hash(data: bytes) -> str:
        return str(pygit2.hash(data))

    def commit_changes(
        self,
        parent: str | None,
        changes: Mapping[str, bytes | None],
        *,
        author_name: str,
        author_email: str,
        message: str,
        author_time: tuple[int, int] | None = None,
    ) -> str:
        """A commit of ``parent``'s tree with ``changes`` (path -> bytes, or None to delete); no ref moves.
        Files are written as plain files (100644), whatever mode the work tree gave them.  Called by the
        recipe only (:class:`notegate.services.recipe.CloneTarget`): sync's commits are planned like the
        server's."""
        base = self.repo[pygit2.Oid(hex=parent)].peel(pygit2.Tree) if parent else None
        tree = build_tree(self.repo, base, [Change(p, d) for p, d in sorted(changes.items())])
        author = (
            pygit2.Signature(author_name, author_email, *author_time)
            if author_time
            else pygit2.Signature(author_name, author_email)
        )
        committer = pygit2.Signature(author_name, author_email)  # the workstation's own voice, never the server's
        parents = [pygit2.Oid(hex=parent)] if parent else []
        return str(self.repo.create_commit(None, author, committer, message, tree, parents))

    def similar_deletions(self, parent: str | None, changes: Mapping[str, bytes | None]) -> int:
        """What ``changes`` delete from ``parent`` that git's similarity detection does not pair with what they
        add (:func:`notegate.vault.trees.similar_deletions`, as the store and the git door count renames): a
        fact the planner asks only when exact renames leave a change over ``max_deletions_per_commit``."""
        base = self.repo[pygit2.Oid(hex=parent)].peel(pygit2.Tree) if parent else None
        return similar_deletions(self.repo, base, [Change(p, d) for p, d in sorted(changes.items())])

    def tree_id(self, commit: str) -> str:
        return str(self.repo[pygit2.Oid(hex=commit)].peel(pygit2.Tree).id)

    def commit_meta(self, commit: str) -> tuple[str, str, tuple[int, int], str, str | None]:
        """(author name, author email, (time, offset), message, first parent) of a commit."""
        c = self.repo[pygit2.Oid(hex=commit)].peel(pygit2.Commit)
        parent = str(c.parent_ids[0]) if c.parent_ids else None
        return c.author.name, c.author.email, (c.author.time, c.author.offset), c.message, parent

    def descends(self, commit: str, ancestor: str) -> bool:
        """Is ``ancestor`` ``commit`` itself or one of its ancestors?"""
        return commit == ancestor or self.repo.descendant_of(pygit2.Oid(hex=commit), pygit2.Oid(hex=ancestor))

    def merge_base(self, a: str, b: str) -> str | None:
        base = self.repo.merge_base(pygit2.Oid(hex=a), pygit2.Oid(hex=b))
        return str(base) if base else None

    def commits_since(self, tip: str, hide: str | None) -> list[str]:
        """Commits reachable from ``tip`` and not from ``hide``, oldest first."""
        walker = self.repo.walk(pygit2.Oid(hex=tip), SortMode.TOPOLOGICAL | SortMode.REVERSE)
        if hide:
            walker.hide(pygit2.Oid(hex=hide))
        return [str(c.id) for c in walker]

    def is_ignored(self, path: str) -> bool:
        """Does the clone's own .gitignore (or info/exclude) leave ``path`` out?"""
        try:
            return bool(self.repo.path_is_ignored(path))
        except pygit2.GitError:
            return False

    # ------------------------------------------------------------ the origin (git CLI)
    def _git(self, *args: str) -> subprocess.CompletedProcess[str]:
        try:
            return subprocess.run(
                ["git", *durable.git_config_args(), "-C", str(self.workdir), *args],  # flushes as the server does
                capture_output=True,
                text=True,
                env=self._env,
                timeout=GIT_TIMEOUT_SECONDS,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise OriginUnavailable(
                f"git could not reach the origin ({type(exc).__name__})",
                remedy="Nothing was lost: local commits stay and the next tick tries again.",
            ) from None

    def fetch(self) -> str | None:
        """Fetch the origin's main into ``refs/notegate/fetched`` (nothing else moves); None for an empty origin."""
        result = self._git("fetch", "--quiet", "--no-tags", "origin", f"+{MAIN}:{FETCHED}")
        if result.returncode != 0:
            if "couldn't find remote ref" in result.stderr:
                self.delete_ref(FETCHED)
                return None
            raise OriginUnavailable(
                f"git fetch failed: {_first_line(result.stderr)}",
                remedy="Nothing was lost: local commits stay and the next tick tries again.",
            )
        self.repo = pygit2.Repository(str(self.git_dir))  # see the refs the git process wrote
        return self.ref(FETCHED)

    def push(self, commit: str) -> PushResult:
        """``git push origin <commit>:main`` (never forced): the origin's hook judges it."""
        result = self._git("push", "--porcelain", "origin", f"{commit}:{MAIN}")
        said = tuple(
            line.removeprefix("remote: ").strip()
            for line in result.stderr.splitlines()
            if line.startswith("remote: ") and line.removeprefix("remote: ").strip()
        )
        if result.returncode == 0:
            return PushResult(True, False, said)
        status = result.stdout + result.stderr
        if "[remote rejected]" in status:
            return PushResult(False, False, said or (_first_line(status),))
        if "[rejected]" in status and ("fetch first" in status or "non-fast-forward" in status):
            return PushResult(False, True, said)
        raise OriginUnavailable(
            f"git push failed: {_first_line(result.stderr)}",
            remedy="Nothing was lost: local commits stay and the next tick pushes them.",
        )


_PATHS = re.compile(r"(?:[A-Za-z]:)?(?:/[^\s'\"/]+)+/?")


def _first_line(text: str) -> str:
    """git's first error line, without machine paths (they are never logged)."""
    for line in text.splitlines():
        line = line.strip()
        if line:
            return _PATHS.sub("<path>", line)[:200]
    return "(no message)"
