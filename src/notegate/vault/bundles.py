"""The store's repositories as backups: every ref of a repository, a bundle of it, a repository made again from
one, a local clone, which objects are missing (services/backup.py and services/restore.py).  Runs ``git``.
"""

from __future__ import annotations

import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

import pygit2

from notegate.errors import NotegateError
from notegate.vault import durable
from notegate.vault.storebase import (
    PENDING_REF,
    _short,
)


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
    flushed = durable.git_config_args()  # a restore's origin on disk before its config names it whole
    done = _git([*flushed, "--git-dir", str(target), "fetch", "--quiet", str(bundle), "refs/*:refs/*"], timeout)
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
