"""The periodic repack (a roll-up of the group commits' packs) runs beside the writers: they go on while git
packs, and no acknowledged write is lost to the packs it deletes, here or in the local origin (issue 15)."""

from __future__ import annotations

import fcntl
import threading
from pathlib import Path

import pygit2
import pytest

from notegate.vault.store import ABSENT, MAIN_REF, Author, Change, VaultStore, git_fsck

AUTHOR = Author("Tester", "tester")


@pytest.fixture
def store(seeded_store: VaultStore) -> VaultStore:
    return seeded_store


def lock_is_free(store: VaultStore) -> bool:
    """Whether another open of the write lock could take it now (flock: one holder per open file)."""
    with open(store._lock_path, "a+") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        fcntl.flock(handle, fcntl.LOCK_UN)
        return True


def origin_blob(origin: Path, path: str) -> bytes:
    repo = pygit2.Repository(str(origin))  # a fresh open: what any other reader of the origin sees
    tree = repo[repo.references[MAIN_REF].target].peel(pygit2.Tree)
    return repo[tree[path].id].data


def test_writers_commit_while_the_roll_up_packs(store: VaultStore, origin: Path, monkeypatch) -> None:
    """While git rolls the packs up the write lock is free and writes go through (one of them with a blob an
    earlier note has, now in a pack git is about to delete); their objects survive in both repositories."""
    for i in range(4):
        store.commit([Change(f"n{i}.md", b"note %d\n" % i)], {f"n{i}.md": ABSENT}, AUTHOR, "n")
    real = VaultStore._git_maintenance
    seen: list[tuple[str, bool]] = []

    def spy(repo_dir: Path, args: list[str]) -> None:
        seen.append((" ".join(args[:2]), lock_is_free(store)))
        if repo_dir == Path(origin):  # the clone rolled up, the origin not yet
            store.commit([Change("during.md", b"written while packing\n")], {"during.md": ABSENT}, AUTHOR, "d")
            store.commit([Change("same.md", b"note 1\n")], {"same.md": ABSENT}, AUTHOR, "same blob as n1")
        real(repo_dir, args)

    monkeypatch.setattr(VaultStore, "_git_maintenance", staticmethod(spy))
    store.roll_up()
    assert seen == [("repack --geometric=2", True), ("repack --geometric=2", True)]
    assert origin_blob(origin, "during.md") == b"written while packing\n"
    assert origin_blob(origin, "same.md") == b"note 1\n"
    assert store.read("during.md")[0] == b"written while packing\n"
    assert store.read("same.md")[0] == b"note 1\n"
    assert git_fsck(store.repo_dir, 60) == [] and git_fsck(origin, 60) == []
    assert store.loose_object_count() == 0 and store.loose_object_count(origin) == 0


def test_a_full_repack_still_holds_the_write_lock(store: VaultStore, monkeypatch) -> None:
    """A full repack deletes the packs it replaces: it runs whole under the lock, as before."""
    store.commit([Change("x.md", b"x\n")], {"x.md": ABSENT}, AUTHOR, "x")
    real = VaultStore._git_maintenance
    seen: list[tuple[str, bool]] = []

    def spy(repo_dir: Path, args: list[str]) -> None:
        seen.append((" ".join(args[:3]), lock_is_free(store)))
        real(repo_dir, args)

    monkeypatch.setattr(VaultStore, "_git_maintenance", staticmethod(spy))
    store.repack()
    assert seen == [("repack -a -d", False), ("repack -a -d", False)]
    assert store.loose_object_count() == 0


def test_no_acknowledged_write_is_lost_to_repacks_running_alongside_writers(store: VaultStore, origin: Path) -> None:
    """Stress: writer threads keep rewriting their notes while another thread repacks over and over
    (a roll-up, with a full repack now and then). Every acknowledged write is a commit at the origin, each
    note's last acknowledged text is what the origin holds, and both repositories are fsck clean."""
    writers, per_writer = 4, 30
    acked: dict[str, tuple[str, bytes]] = {}  # path -> (commit, text) of its last acknowledged write
    commits: list[str] = []
    errors: list[BaseException] = []
    done = threading.Event()
    guard = threading.Lock()

    def write(w: int) -> None:
        try:
            base = ABSENT
            path = f"w{w}/note.md"
            for i in range(per_writer):
                text = b"writer %d pass %d\n" % (w, i) + b"x" * (i * 37)
                result = store.commit([Change(path, text)], {path: base}, AUTHOR, f"w{w} {i}")
                base = result.blobs[path]
                with guard:
                    acked[path] = (result.commit, text)
                    commits.append(result.commit)
        except BaseException as exc:  # handed to the main thread
            errors.append(exc)

    repacks = 0

    def repack() -> None:
        nonlocal repacks
        try:
            while not done.is_set():
                if repacks % 5 == 4:
                    store.repack()
                else:
                    store.roll_up()
                repacks += 1
        except BaseException as exc:
            errors.append(exc)

    packer = threading.Thread(target=repack)
    threads = [threading.Thread(target=write, args=(w,)) for w in range(writers)]
    packer.start()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    done.set()
    packer.join()
    assert errors == []
    assert repacks >= 2, repacks
    repo = pygit2.Repository(str(origin))
    tip = repo.references[MAIN_REF].target
    at_origin = {str(c.id) for c in repo.walk(tip, pygit2.enums.SortMode.TOPOLOGICAL)}
    assert len(commits) == writers * per_writer and set(commits) <= at_origin
    for path, (_commit, text) in acked.items():
        assert origin_blob(origin, path) == text
    assert git_fsck(store.repo_dir, 120) == [] and git_fsck(origin, 120) == []


def test_a_full_repack_keeps_a_fresh_unreachable_packed_blob(store: VaultStore, origin: Path) -> None:
    """A bulk import packs a batch's blobs before the commit naming them; a full repack in between (a server's
    maintenance past MAX_PACKS) must not drop them: ``git repack -a -d`` alone deletes them with their pack."""
    text = b"an imported note whose commit comes next\n"
    blob = store.repo.create_blob(text)
    packer = pygit2.PackBuilder(store.repo)
    packer.add(blob)
    packer.write(str(store.repo_dir / "objects" / "pack"))  # packed as bulk.py packs a batch
    loose = store.repo_dir / "objects" / str(blob)[:2] / str(blob)[2:]
    loose.unlink()
    store.repack()  # full
    assert pygit2.Repository(str(store.repo_dir)).odb.exists(blob)
    store.commit([Change("late.md", text)], {"late.md": ABSENT}, AUTHOR, "late")
    assert origin_blob(origin, "late.md") == text
    assert git_fsck(store.repo_dir, 30) == [] and git_fsck(origin, 30) == []
