"""Files made ahead (vault/filepool.py): a pack written through a warm pool makes no file on the writer's
path (a new inode costs ~1.1 ms of kernel CPU on this disk); an empty or emptied pool only costs time."""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import pytest

from notegate.vault import filepool
from notegate.vault.store import ABSENT, Author, Change, VaultStore, git_fsck
from support import warm_pool


class CreatesSeen:
    """Every os.open with O_CREAT made by the thread that installed it (the writer), not by the pool's."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls: list[str] = []
        owner = threading.get_ident()
        real = os.open

        def spy(path, flags, *args, **kwargs):
            if flags & os.O_CREAT and threading.get_ident() == owner:
                self.calls.append(str(path))
            return real(path, flags, *args, **kwargs)

        monkeypatch.setattr(os, "open", spy)


def test_a_file_written_through_a_warm_pool_is_one_the_pool_made(tmp_path: Path, monkeypatch) -> None:
    pool = warm_pool(tmp_path)
    inodes = {os.stat(p).st_ino for p in pool._ready}
    seen = CreatesSeen(monkeypatch)
    filepool.write_new(tmp_path, tmp_path / "pack-x.pack", b"pack bytes")
    assert seen.calls == []  # no file made on the writer's path
    target = tmp_path / "pack-x.pack"
    assert target.read_bytes() == b"pack bytes" and target.stat().st_ino in inodes
    assert not stat.S_IMODE(target.stat().st_mode) & 0o222  # read-only, as git leaves packs


def test_an_empty_pool_makes_its_own_file(tmp_path: Path, monkeypatch) -> None:
    pool = filepool.pool(tmp_path)
    monkeypatch.setattr(pool, "take", lambda: None)
    filepool.write_new(tmp_path, tmp_path / "a.idx", b"index")
    assert (tmp_path / "a.idx").read_bytes() == b"index"
    assert [p.name for p in tmp_path.iterdir()] == ["a.idx"]  # its temporary name went with the rename


def test_a_pool_file_removed_meanwhile_costs_only_time(tmp_path: Path) -> None:
    pool = warm_pool(tmp_path)
    for path in list(pool._ready):
        os.unlink(path)  # a cleanup of tmp_ files (git prune) took them
    filepool.write_new(tmp_path, tmp_path / "b.pack", b"still written")
    assert (tmp_path / "b.pack").read_bytes() == b"still written"


def test_a_failed_write_leaves_no_file_behind(tmp_path: Path) -> None:
    warm_pool(tmp_path)
    before = set(tmp_path.iterdir())
    with pytest.raises(FileNotFoundError):
        filepool.write_new(tmp_path, tmp_path / "gone" / "c.pack", b"x")  # the rename cannot land
    assert set(tmp_path.iterdir()) < before  # the file taken is removed, nothing else appeared


def test_a_group_commit_makes_no_file_on_the_writers_path(
    seeded_store: VaultStore, origin: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After one write has warmed the pool, a write's pack and index are pool files (the ref locks of the origin
    and the clone are made by vault/refwrite.py, see filepool.py why); both repositories stay fsck clean."""
    store = seeded_store
    store.commit([Change("warm.md", b"w\n")], {"warm.md": ABSENT}, Author("T", "t"), "warm")
    warm_pool(store.repo_dir / "objects" / "pack")
    seen = CreatesSeen(monkeypatch)
    result = store.commit([Change("cold.md", b"c\n")], {"cold.md": ABSENT}, Author("T", "t"), "pooled")
    assert [Path(p).name for p in seen.calls] == ["main.lock", "main.lock"]  # the origin's, then the clone's
    assert store.read("cold.md") == (b"c\n", result.blobs["cold.md"])
    monkeypatch.undo()
    assert git_fsck(store.repo_dir, 60) == [] and git_fsck(origin, 60) == []


def test_files_a_dead_process_left_are_removed_by_the_next_pool(tmp_path: Path) -> None:
    """A crash leaves its unused pool files; the first pool a later process opens on the folder removes those of
    processes that are gone, and keeps a live process's (this one's parent stands in for one)."""
    import subprocess
    import sys

    child = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead = int(child.stdout)
    left = tmp_path / f"{filepool.PREFIX}{dead}_0"
    alive = tmp_path / f"{filepool.PREFIX}{os.getppid()}_0"
    other = tmp_path / "tmp_pack_other"
    writing = tmp_path / f"{filepool.PREFIX}own_{dead}_1"  # a caller's own file, being written: never swept
    for path in (left, alive, other, writing):
        path.write_bytes(b"")
    filepool.pool(tmp_path)
    assert not left.exists() and alive.exists() and other.exists() and writing.exists()
