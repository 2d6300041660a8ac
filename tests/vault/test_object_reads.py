"""Objects are read as git reads them: not hashed again on each read (``read_objects_as_git_does``), and a
damaged object is still found where git finds it, by ``git fsck`` (the doctor's ``git.fsck`` check).

The object below is the attack-free case the setting gives up on: a loose object whose bytes inflate cleanly
but do not hash to its name (only a hand-written file or a disk gone bad makes one: our writes, pushes and
fetches hash every object as it arrives)."""

from __future__ import annotations

import subprocess
import sys
import zlib
from pathlib import Path

import pygit2

from notegate.doctor.integrity import check_fsck

READ = """
import sys, pygit2
from notegate.vault.store import read_objects_as_git_does
if sys.argv[3] == "as-git":
    read_objects_as_git_does()
repo = pygit2.Repository(sys.argv[1])
try:
    print(repo[sys.argv[2]].data.decode())
except Exception as exc:
    print("refused:", type(exc).__name__)
"""


def _misnamed_object(repo_dir: Path) -> str:
    """A blob written as ``b"real\\n"`` whose file is then replaced by another blob's bytes."""
    repo = pygit2.Repository(str(repo_dir))
    oid = str(repo.create_blob(b"real\n"))
    loose = repo_dir / "objects" / oid[:2] / oid[2:]
    loose.chmod(0o644)
    loose.write_bytes(zlib.compress(b"blob 5\0fake\n"))
    return oid


def _read(repo_dir: Path, oid: str, mode: str) -> str:
    run = subprocess.run(
        [sys.executable, "-c", READ, str(repo_dir), oid, mode], capture_output=True, text=True, check=True
    )
    return run.stdout.strip()


def test_the_server_reads_without_rehashing_and_fsck_still_finds_the_damage(tmp_path: Path) -> None:
    repo_dir = tmp_path / "vault.git"
    pygit2.init_repository(str(repo_dir), bare=True)
    oid = _misnamed_object(repo_dir)
    assert _read(repo_dir, oid, "libgit2-default").startswith("refused:")  # libgit2's default re-hashes
    assert _read(repo_dir, oid, "as-git") == "fake"  # as `git cat-file` reads it
    result = check_fsck("the clone", repo_dir)
    assert result.status == "fail" and result.check == "git.fsck", result
