"""Hostile git streams for the git-door tests: commits written object by object (any name, any mode, raw
trees git's own porcelain would never make), pushed into a real bare origin by the real git CLI, which runs
the origin's real pre-receive hook."""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pygit2
from pygit2.enums import ObjectType

from notegate.policy import PUSHER_VARIABLES

FILE, EXEC, LINK, GITLINK, TREE = 0o100644, 0o100755, 0o120000, 0o160000, 0o040000
SIG = pygit2.Signature("Tester", "tester@example.invalid", 1_800_000_000, 0)

#: A path -> (mode, content bytes or an object id for a gitlink).
Files = dict[str, tuple[int, "bytes | pygit2.Oid"]]

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 24


def flatten(repo: pygit2.Repository, tree_id: pygit2.Oid, prefix: str = "") -> dict[str, tuple[int, pygit2.Oid]]:
    """Every non-tree entry of a tree, by path."""
    out: dict[str, tuple[int, pygit2.Oid]] = {}
    for entry in repo[tree_id]:
        path = prefix + entry.name
        if entry.filemode == TREE:
            out.update(flatten(repo, entry.id, path + "/"))
        else:
            out[path] = (entry.filemode, entry.id)
    return out


def _sort_key(item: tuple[bytes, int]) -> bytes:
    name, mode = item
    return name + b"/" if mode == TREE else name  # git's tree order


def write_tree(repo: pygit2.Repository, flat: dict[str, tuple[int, pygit2.Oid]]) -> pygit2.Oid:
    """Write raw tree objects for ``flat`` (names and modes exactly as given: no validation at all)."""
    children: dict[str, dict[str, tuple[int, pygit2.Oid]]] = {}
    entries: dict[bytes, tuple[int, pygit2.Oid]] = {}
    for path, value in flat.items():
        head, sep, rest = path.partition("/")
        if sep:
            children.setdefault(head, {})[rest] = value
        else:
            entries[head.encode("utf-8", "surrogateescape")] = value
    for name, sub in children.items():
        entries[name.encode("utf-8", "surrogateescape")] = (TREE, write_tree(repo, sub))
    data = b"".join(
        f"{mode:o}".encode() + b" " + name + b"\0" + entries[name][1].raw
        for name, mode in sorted(((n, m) for n, (m, _) in entries.items()), key=_sort_key)
    )
    return repo.odb.write(ObjectType.TREE, data)


def blob_or_oid(repo: pygit2.Repository, value: bytes | pygit2.Oid) -> pygit2.Oid:
    return value if isinstance(value, pygit2.Oid) else repo.create_blob(value)


def commit(
    repo: pygit2.Repository,
    parents: list[str],
    *,
    add: Files | None = None,
    delete: tuple[str, ...] = (),
    base: str | None = None,
    message: str = "test commit",
) -> str:
    """A commit whose tree is ``base``'s (default: the first parent's) with ``add`` written and ``delete``
    removed.  Returns its hex id."""
    start = base or (parents[0] if parents else None)
    flat = flatten(repo, repo[start].tree_id) if start else {}
    for path in delete:
        del flat[path]
    for path, (mode, value) in (add or {}).items():
        flat[path] = (mode, blob_or_oid(repo, value))
    tree = write_tree(repo, flat)
    oid = repo.create_commit(None, SIG, SIG, message, tree, [pygit2.Oid(hex=p) for p in parents])
    return str(oid)


@dataclass
class Origin:
    """A notegate origin and a scratch repository that pushes to it."""

    config: Path
    origin: Path
    scratch: pygit2.Repository

    @property
    def main(self) -> str:
        return str(pygit2.Repository(str(self.origin)).references["refs/heads/main"].target)

    def push(
        self, new: str, ref: str = "refs/heads/main", *, pusher: dict[str, str] | None = None, force: bool = False
    ):
        """``git push`` with the git CLI (which runs the origin's hooks); the pusher variables are exactly
        ``pusher`` (none inherited)."""
        env = {k: v for k, v in os.environ.items() if k not in PUSHER_VARIABLES}
        env.update(pusher if pusher is not None else {"NOTEGATE_PUSHER": "owner"})
        spec = f"{'+' if force else ''}{new}:{ref}" if new else f":{ref}"
        return subprocess.run(
            ["git", "-C", self.scratch.path, "push", "--porcelain", str(self.origin), spec],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
            check=False,
        )


def scratch_of(origin: Path, where: Path) -> pygit2.Repository:
    subprocess.run(["git", "clone", "-q", "--bare", str(origin), str(where)], check=True, timeout=60)
    return pygit2.Repository(str(where))


def forge_push(origin: Path, scratch: pygit2.Repository, new: str) -> None:
    """What a forge without notegate's hook (or anyone with write access to the bare repository) does: the
    origin's main is set to ``new``, forced, and no hook runs (git fetch inside the origin)."""
    scratch.references.create("refs/heads/forged", pygit2.Oid(hex=new), force=True)
    subprocess.run(
        ["git", "--git-dir", str(origin), "fetch", "-q", scratch.path, "+refs/heads/forged:refs/heads/main"],
        check=True,
        capture_output=True,
        timeout=60,
    )


def scratch_at(door, tip: str) -> pygit2.Repository:
    """The scratch repository with the origin's objects up to ``tip``."""
    subprocess.run(
        ["git", "-C", door.scratch.path, "fetch", "-q", str(door.origin), "+refs/heads/main:refs/heads/main"],
        check=True,
        capture_output=True,
        timeout=60,
    )
    assert str(door.scratch.references["refs/heads/main"].target) == tip
    return door.scratch


def refused(result: subprocess.CompletedProcess[str]) -> list[tuple[str, str, str]]:
    """(commit prefix, path, rule) of every finding the hook printed (git shows them as ``remote: …``)."""
    assert result.returncode != 0, result.stderr
    assert "pre-receive hook declined" in result.stderr + result.stdout
    return re.findall(r"remote: notegate: ([0-9a-f]{12}|0{12}) (.+?): Refused \[([a-z0-9-]+)\]", result.stderr)


def rules_of(result: subprocess.CompletedProcess[str]) -> set[str]:
    return {rule for _, _, rule in refused(result)}


def accepted(result: subprocess.CompletedProcess[str]) -> None:
    assert result.returncode == 0, result.stderr


CLEAN_ENV = {k: v for k, v in os.environ.items() if k not in PUSHER_VARIABLES}
