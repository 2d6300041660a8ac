"""The bulk pack writer writes what git itself reads: ``git verify-pack`` and ``git fsck`` accept the pack,
every blob reads back byte for byte under its git id, a duplicate is stored once, and a local origin gets
the same pack (linked) before any ref names its blobs."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pygit2
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from notegate.vault.bulk import (
    blob_id,
    local_origin_dir,
    pack_blobs,
    packed_blobs,
    stored_blob,
    trees_cached,
    write_pack,
)


def bare(path: Path) -> Path:
    pygit2.init_repository(str(path), bare=True)
    return path


def test_git_reads_the_pack(tmp_path: Path) -> None:
    repo_dir, origin = bare(tmp_path / "clone.git"), bare(tmp_path / "origin.git")
    blobs = [b"# one\n", b"", b"x" * 100_000, b"# one\n", bytes(range(256)) * 70]
    name = write_pack([repo_dir, origin], blobs)
    assert name is not None
    for where in (repo_dir, origin):
        idx = where / "objects" / "pack" / f"{name}.idx"
        verify = subprocess.run(["git", "verify-pack", "-v", str(idx)], capture_output=True, text=True)
        assert verify.returncode == 0, verify.stderr
        assert "non delta: 4 objects" in verify.stdout  # the duplicate is stored once
        fsck = subprocess.run(["git", "--git-dir", str(where), "fsck", "--strict"], capture_output=True, text=True)
        assert fsck.returncode == 0, fsck.stderr
        repo = pygit2.Repository(str(where))
        for data in blobs:
            oid = pygit2.Oid(raw=blob_id(data))
            assert repo[oid].data == data
            assert str(pygit2.hash(data)) == str(oid)
    assert (origin / "objects" / "pack" / f"{name}.pack").stat().st_ino == (
        repo_dir / "objects" / "pack" / f"{name}.pack"
    ).stat().st_ino  # linked, not copied


def test_a_blob_written_after_the_pack_is_not_written_loose(tmp_path: Path) -> None:
    """Why the importer writes the pack first: libgit2 finds the blob packed and writes no loose copy."""
    repo_dir = bare(tmp_path / "clone.git")
    write_pack([repo_dir], [b"already packed\n"])
    repo = pygit2.Repository(str(repo_dir))
    repo.create_blob(b"already packed\n")
    loose = [p for p in (repo_dir / "objects").iterdir() if len(p.name) == 2 and any(p.iterdir())]
    assert loose == []


def test_nothing_to_pack_writes_nothing(tmp_path: Path) -> None:
    repo_dir = bare(tmp_path / "clone.git")
    assert write_pack([repo_dir], []) is None
    assert pack_blobs([]) is None
    assert list((repo_dir / "objects" / "pack").glob("*")) == []


def test_local_origin_dir(tmp_path: Path) -> None:
    origin = bare(tmp_path / "origin.git")
    assert local_origin_dir(str(origin)) == origin
    assert local_origin_dir(str(tmp_path / "nowhere.git")) is None
    assert local_origin_dir("https://example.invalid/v.git") is None
    assert local_origin_dir("git@example.invalid:v.git") is None


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.binary(max_size=3000), max_size=12))
def test_any_blobs_read_back(tmp_path_factory, blobs: list[bytes]) -> None:
    repo_dir = bare(tmp_path_factory.mktemp("r") / "clone.git")
    write_pack([repo_dir], blobs)
    repo = pygit2.Repository(str(repo_dir))
    for data in blobs:
        assert repo[pygit2.Oid(raw=blob_id(data))].data == data


def test_a_gone_origin_is_not_created(tmp_path: Path) -> None:
    repo_dir = bare(tmp_path / "clone.git")
    write_pack([repo_dir, tmp_path / "gone.git"], [b"data\n"])
    assert not (tmp_path / "gone.git").exists()


def _loose(repo: pygit2.Repository) -> list[str]:
    objects = Path(repo.path) / "objects"
    return [p.name for d in objects.iterdir() if len(d.name) == 2 for p in d.iterdir()]


def test_a_blob_packed_by_the_bulk_write_is_not_written_again(tmp_path: Path) -> None:
    repo = pygit2.Repository(str(bare(tmp_path / "clone.git")))
    packed_data, other = b"# packed\n", b"# not packed\n"
    write_pack([Path(repo.path)], [packed_data])
    with packed_blobs(repo) as packed:
        packed.add(blob_id(packed_data))
        assert stored_blob(repo, packed_data) == pygit2.hash(packed_data)
        assert _loose(repo) == []  # found in the pack: no loose copy, no temporary file left
        assert stored_blob(repo, other) == pygit2.hash(other)  # not registered: written as before
        assert len(_loose(repo)) == 1
    # outside a bulk write, every blob is written by libgit2 (the registry is gone)
    again = b"# after\n"
    assert stored_blob(repo, again) == pygit2.hash(again)
    assert len(_loose(repo)) == 2
    assert repo[pygit2.hash(packed_data)].data == packed_data


def test_a_registered_blob_that_is_not_in_the_repository_fails_the_tree(tmp_path: Path) -> None:
    """The registry is a shortcut, not a source of truth: libgit2 still refuses a tree naming a missing blob."""
    repo = pygit2.Repository(str(bare(tmp_path / "clone.git")))
    ghost = b"# never packed\n"
    with packed_blobs(repo) as packed:
        packed.add(blob_id(ghost))
        oid = stored_blob(repo, ghost)
        builder = repo.TreeBuilder()
        with pytest.raises(pygit2.GitError):
            builder.insert("ghost.md", oid, pygit2.enums.FileMode.BLOB)


def test_trees_are_read_the_same_with_the_bulk_cache(tmp_path: Path) -> None:
    repo = pygit2.Repository(str(bare(tmp_path / "clone.git")))
    blob = repo.create_blob(b"x")
    inner = repo.TreeBuilder()
    for i in range(300):  # a tree well over libgit2's default 4 KiB cache limit
        inner.insert(f"note number {i:04}.md", blob, pygit2.enums.FileMode.BLOB)
    outer = repo.TreeBuilder()
    outer.insert("folder", inner.write(), pygit2.enums.FileMode.TREE)
    tree = repo[outer.write()].peel(pygit2.Tree)
    plain = [tree[f"folder/note number {i:04}.md"].id for i in range(300)]
    with trees_cached():
        cached = [tree[f"folder/note number {i:04}.md"].id for i in range(300)]
    assert cached == plain == [blob] * 300
