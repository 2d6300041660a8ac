"""The bulk pack writer writes what git itself reads: ``git verify-pack`` and ``git fsck`` accept the pack,
every blob reads back byte for byte under its git id, a duplicate is stored once, and a local origin gets
the same pack (linked) before any ref names its blobs."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pygit2
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from notegate.vault.bulk import blob_id, local_origin_dir, pack_blobs, write_pack


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
