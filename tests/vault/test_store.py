"""The git store against real bare repositories: push before ack, replay, stale, unreachable origin."""

from __future__ import annotations

import shutil
import subprocess
import threading
import types
from pathlib import Path

import pygit2
import pytest

from notegate.errors import OriginUnavailable
from notegate.vault.store import (
    ABSENT,
    MAIN_REF,
    Author,
    CaseCollision,
    Change,
    Conflict,
    VaultStore,
    git_fsck,
)
from support import clone_and_push

AUTHOR = Author("Tester", "tester")


@pytest.fixture
def store(seeded_store: VaultStore) -> VaultStore:
    return seeded_store


def origin_head(origin: Path) -> str:
    return str(pygit2.Repository(str(origin)).references[MAIN_REF].target)


def test_commit_is_pushed_before_main_moves(store: VaultStore, origin: Path) -> None:
    before = store.head()
    result = store.commit([Change("c.md", b"gamma\n")], {"c.md": ABSENT}, AUTHOR, "add c")
    assert origin_head(origin) == result.commit == store.head()
    assert result.parent == before
    commit = store.commit_info(result.commit)
    assert commit.author.name == "Tester" and commit.committer.name == "notegate"
    assert store.read("c.md")[0] == b"gamma\n"


def test_expectation_mismatch_raises_conflict_and_writes_nothing(store: VaultStore, origin: Path) -> None:
    head = store.head()
    with pytest.raises(Conflict) as info:
        store.commit([Change("a.md", b"x")], {"a.md": ABSENT}, AUTHOR, "bad")
    assert info.value.current == store.blob_id("a.md")
    assert store.head() == head == origin_head(origin)


def test_replays_on_top_when_origin_moved_elsewhere(store: VaultStore, origin: Path, tmp_path: Path) -> None:
    foreign = clone_and_push(origin, tmp_path / "wc", "other.md", "from a workstation\n")
    base = store.blob_id("a.md")
    result = store.commit([Change("a.md", b"alpha 2\n")], {"a.md": base}, AUTHOR, "edit a")
    repo = pygit2.Repository(str(origin))
    assert str(repo[result.commit].parents[0].id) == foreign  # replayed on the foreign commit, no merge
    assert store.read("other.md")[0] == b"from a workstation\n"
    assert store.read("a.md")[0] == b"alpha 2\n"


def test_stale_when_origin_changed_the_same_note(store: VaultStore, origin: Path, tmp_path: Path) -> None:
    base = store.blob_id("a.md")
    foreign = clone_and_push(origin, tmp_path / "wc", "a.md", "changed elsewhere\n")
    with pytest.raises(Conflict):
        store.commit([Change("a.md", b"mine\n")], {"a.md": base}, AUTHOR, "edit a")
    assert origin_head(origin) == foreign
    assert store.read("a.md")[0] == b"changed elsewhere\n"  # we took the origin's truth


def test_origin_unreachable_refuses_and_keeps_local_ref(store: VaultStore, origin: Path, tmp_path: Path) -> None:
    head = store.head()
    shutil.move(origin, tmp_path / "gone.git")
    with pytest.raises(OriginUnavailable) as info:
        store.commit([Change("c.md", b"c\n")], {"c.md": ABSENT}, AUTHOR, "add c")
    assert "could not be reached" in info.value.message
    assert str(tmp_path) not in info.value.explain()  # no machine paths in refusals
    assert store.head() == head
    assert store.blob_id("c.md") == ABSENT
    assert "refs/notegate/pending" not in store.repo.references


def test_case_collision_refused(store: VaultStore) -> None:
    with pytest.raises(CaseCollision) as info:
        store.commit([Change("A.md", b"x")], {"A.md": ABSENT}, AUTHOR, "case", new_paths=["A.md"])
    assert info.value.existing == "a.md"


def test_symlinks_and_submodules_are_not_served(store: VaultStore, origin: Path, tmp_path: Path) -> None:
    wc = tmp_path / "wc"
    subprocess.run(["git", "clone", "-q", str(origin), str(wc)], check=True)
    (wc / "link.md").symlink_to("/etc/passwd")
    (wc / ".obsidian").mkdir()
    (wc / ".obsidian" / "x.md").write_text("hidden")
    subprocess.run(["git", "-C", str(wc), "add", "-A"], check=True)
    sub = pygit2.Repository(str(origin)).references[MAIN_REF].target
    subprocess.run(["git", "-C", str(wc), "update-index", "--add", "--cacheinfo", f"160000,{sub},mod.md"], check=True)
    subprocess.run(
        ["git", "-C", str(wc), "-c", "user.name=W", "-c", "user.email=w@x", "commit", "-qm", "links"], check=True
    )
    subprocess.run(["git", "-C", str(wc), "push", "-q", "origin", "HEAD:main"], check=True)
    store.fetch()
    notes = store.listing().notes
    assert "link.md" not in notes and "mod.md" not in notes and ".obsidian/x.md" not in notes
    assert store.read("link.md") is None and store.read("mod.md") is None
    assert "a.md" in notes


def test_delete_and_empty_folders_disappear(store: VaultStore) -> None:
    base = store.blob_id("dir/b.md")
    store.commit([Change("dir/b.md", None)], {"dir/b.md": base}, AUTHOR, "delete")
    tree = store.repo[store.head()].peel(pygit2.Tree)
    assert "dir" not in tree


def test_concurrent_writers_same_note_exactly_one_wins(store: VaultStore, origin: Path) -> None:
    base = store.blob_id("a.md")
    wins, conflicts = [], []

    def write(i: int) -> None:
        try:
            wins.append(store.commit([Change("a.md", f"writer {i}\n".encode())], {"a.md": base}, AUTHOR, f"w{i}"))
        except Conflict:
            conflicts.append(i)

    threads = [threading.Thread(target=write, args=(i,)) for i in range(32)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(wins) == 1 and len(conflicts) == 31
    assert origin_head(origin) == wins[0].commit


def test_concurrent_writers_distinct_notes_all_committed(store: VaultStore, origin: Path) -> None:
    results = []

    def write(i: int) -> None:
        results.append(store.commit([Change(f"n/{i}.md", b"x%d\n" % i)], {f"n/{i}.md": ABSENT}, AUTHOR, f"w{i}"))

    threads = [threading.Thread(target=write, args=(i,)) for i in range(32)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    repo = pygit2.Repository(str(origin))
    reachable = {str(c.id) for c in repo.walk(repo.references[MAIN_REF].target)}
    assert {r.commit for r in results} <= reachable
    assert all(store.blob_id(f"n/{i}.md") != ABSENT for i in range(32))


def test_second_process_sees_lock(store: VaultStore, tmp_path: Path, origin: Path) -> None:
    """Two store objects (as two processes would) on one clone serialise through the file lock."""
    other = VaultStore("personal", store.repo_dir, str(origin))
    base = store.blob_id("a.md")
    errors: list[Exception] = []

    def write(s: VaultStore, text: bytes) -> None:
        try:
            s.commit([Change("a.md", text)], {"a.md": base}, AUTHOR, "w")
        except Conflict as exc:
            errors.append(exc)

    t1 = threading.Thread(target=write, args=(store, b"one\n"))
    t2 = threading.Thread(target=write, args=(other, b"two\n"))
    t1.start(), t2.start()
    t1.join(), t2.join()
    assert len(errors) == 1


def test_a_write_leaves_no_loose_object_and_a_repack_packs_a_pushs(
    store: VaultStore, origin: Path, tmp_path: Path
) -> None:
    """A group commit writes one pack (vault/objects.py); the loose objects a git push leaves in the origin
    (receive-pack unpacks small pushes) are what a repack still has to pack."""
    for i in range(5):
        store.commit([Change(f"r{i}.md", b"r")], {f"r{i}.md": ABSENT}, AUTHOR, "r")
    assert store.loose_object_count() == 0 and store.loose_object_count(origin) == 0
    clone_and_push(origin, tmp_path / "wc", "pushed.md", "pushed\n")
    assert store.loose_object_count(origin) > 0
    store.repack()
    assert store.loose_object_count() == 0 and store.loose_object_count(origin) == 0
    assert store.read("r4.md")[0] == b"r"


def test_a_roll_up_merges_the_group_packs_and_a_full_repack_makes_one(store: VaultStore, origin: Path) -> None:
    """Each group commit adds one pack; the periodic roll-up (a geometric repack) merges the small ones
    without rewriting the big one; a full repack puts every pack back into one."""
    store.commit([Change("p0.md", b"p")], {"p0.md": ABSENT}, AUTHOR, "p")
    store.repack()
    assert store.pack_count() == 1 and store.loose_object_count() == 0
    big = {p.name for p in (store.repo_dir / "objects" / "pack").glob("*.pack")}
    for i in range(1, 5):
        store.commit([Change(f"p{i}.md", b"p%d" % i)], {f"p{i}.md": ABSENT}, AUTHOR, "p")
    assert store.pack_count() == 5 and store.pack_count(origin) >= 5
    before = store.repo
    store.roll_up()
    assert store.pack_count() < 5 and store.pack_count(origin) < 5
    assert store.repo is not before  # opened again: libgit2 lets go of the packs git deleted
    assert [store.read(f"p{i}.md")[0] for i in range(5)] == [b"p", b"p1", b"p2", b"p3", b"p4"]
    assert git_fsck(store.repo_dir, 60) == [] and git_fsck(origin, 60) == []
    store.commit([Change("p5.md", b"p5")], {"p5.md": ABSENT}, AUTHOR, "after the roll-up")
    store.repack()
    assert store.pack_count() == 1 and big.isdisjoint(p.name for p in (store.repo_dir / "objects" / "pack").glob("*"))
    assert store.read("p5.md")[0] == b"p5"


def test_a_roll_up_that_takes_a_group_pack_before_it_reaches_the_origin_loses_nothing(
    store: VaultStore, origin: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The roll-up repacks without the write lock: when its ``git repack --geometric=2 -d`` takes a group's pack
    in the clone after the pack is written there but before it is linked into the origin, the pack is written
    into the origin from the bytes in hand (it used to be read back from the deleted file: the write failed
    ``[origin-unavailable]`` and the roll-up test failed now and then)."""
    from notegate.vault import bulk

    real_share = bulk._share

    def share_after_a_roll_up(first: Path, other: Path, name: str, data) -> None:
        subprocess.run(
            ["git", "--git-dir", str(first.parent.parent), "repack", "--geometric=2", "-d", "-q"], check=True
        )
        assert not (first / f"{name}.pack").exists(), "the roll-up did not take the group's pack"
        real_share(first, other, name, data)

    monkeypatch.setattr(bulk, "_share", share_after_a_roll_up)
    result = store.commit([Change("raced.md", b"raced\n")], {"raced.md": ABSENT}, AUTHOR, "raced")
    assert origin_head(origin) == store.head() == result.commit
    assert store.read("raced.md")[0] == b"raced\n"
    assert git_fsck(store.repo_dir, 60) == [] and git_fsck(origin, 60) == []


def test_the_store_rolls_its_group_packs_up_as_it_writes(
    store: VaultStore, origin: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past ROLL_UP_AFTER group packs a thread of its own rolls them up: the packs stay few however long the
    writers go on, and no writer waits for git."""
    from notegate.vault import commit as commit_module

    monkeypatch.setattr(commit_module, "ROLL_UP_AFTER", 4)
    rolled = threading.Event()
    real = VaultStore.roll_up

    def roll_up(self: VaultStore) -> None:
        real(self)
        rolled.set()

    monkeypatch.setattr(VaultStore, "roll_up", roll_up)
    for i in range(30):
        store.commit([Change(f"q{i}.md", b"q%d" % i)], {f"q{i}.md": ABSENT}, AUTHOR, "q")
    assert rolled.wait(30)
    for _ in range(300):  # the last roll-up thread may still run
        if not store._rolling_up:
            break
        threading.Event().wait(0.05)
    assert store.pack_count() < 30 and store.loose_object_count() == 0
    assert [store.read(f"q{i}.md")[0] for i in range(30)] == [b"q%d" % i for i in range(30)]
    assert git_fsck(store.repo_dir, 60) == [] and git_fsck(origin, 60) == []


def test_no_roll_up_while_an_import_writes(store: VaultStore, monkeypatch: pytest.MonkeyPatch) -> None:
    """An import ends with a full repack: rolling its batches' packs up meanwhile would rewrite them twice."""
    from notegate.vault import bulk
    from notegate.vault import commit as commit_module

    monkeypatch.setattr(commit_module, "ROLL_UP_AFTER", 2)
    started: list[bool] = []
    monkeypatch.setattr(VaultStore, "roll_up", lambda self: started.append(True))
    with bulk.packed_blobs(store.repo):
        for i in range(4):
            store.commit([Change(f"i{i}.md", b"i")], {f"i{i}.md": ABSENT}, AUTHOR, "import batch")
    assert started == [] and store._group_packs >= 4  # (the seed wrote one more)
    store.commit([Change("after.md", b"a")], {"after.md": ABSENT}, AUTHOR, "after the import")
    for _ in range(200):
        if started:
            break
        threading.Event().wait(0.01)
    assert started == [True]


def test_maintenance_rolls_up_when_loose_objects_or_packs_pile_up(
    store: VaultStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[str] = []
    monkeypatch.setattr(store, "roll_up", lambda: calls.append("roll-up"))
    monkeypatch.setattr(store, "repack", lambda **_kw: calls.append("full"))
    from notegate.services.runtime import Runtime

    index = types.SimpleNamespace(compact=lambda: calls.append("index merge") or 0)
    runtime = types.SimpleNamespace(
        _envs={"personal": types.SimpleNamespace(name="personal", store=store, index=index)},
        policy=types.SimpleNamespace(repack_loose_objects=1),
        _compact=Runtime._compact,
    )

    Runtime.maintain(runtime)  # one pack, no loose object: no roll-up (the index's merge pass runs each time)
    monkeypatch.setattr(store, "needs_repack", lambda threshold: True)
    Runtime.maintain(runtime)
    # never the full repack: it would hold the writers for a whole vault
    assert calls == ["index merge", "roll-up", "index merge"]


def test_folder_case_collision_refused(store: VaultStore) -> None:
    """`Dir/x.md` next to `dir/b.md` would merge two folders on a case-insensitive clone."""
    with pytest.raises(CaseCollision) as info:
        store.commit([Change("Dir/x.md", b"x")], {"Dir/x.md": ABSENT}, AUTHOR, "case", new_paths=["Dir/x.md"])
    assert info.value.existing == "dir/"
    store.commit([Change("dir/x.md", b"x")], {"dir/x.md": ABSENT}, AUTHOR, "same folder", new_paths=["dir/x.md"])
    base = store.blob_id("dir/b.md")
    store.commit([Change("dir/b.md", None), Change("dir/x.md", None)], {"dir/b.md": base}, AUTHOR, "empty dir")
    store.commit([Change("Dir/x.md", b"x")], {"Dir/x.md": ABSENT}, AUTHOR, "now fine", new_paths=["Dir/x.md"])


def test_non_nfc_tree_paths_are_not_served(store: VaultStore, origin: Path, tmp_path: Path) -> None:
    """A clone that commits a decomposed (NFD) name must not slip past NFC-based checks such as privacy globs."""
    clone_and_push(origin, tmp_path / "wc", "tagebu\u0308cher/2025.md", "secret\n")
    store.fetch()
    notes = store.listing().notes
    assert "tagebu\u0308cher/2025.md" not in notes and "tageb\u00fccher/2025.md" not in notes


def test_reads_stay_right_when_pack_windows_are_evicted(store: VaultStore) -> None:
    """bound_pack_windows makes libgit2 unmap pack windows under load: with windows far smaller than the pack,
    every note (in pack order, backwards, and by listing) still reads back exactly as written."""
    import os

    from notegate.vault.store import bound_pack_windows

    texts = {f"big/n{i:02}.md": os.urandom(48 << 10).hex().encode() for i in range(40)}  # ~3.8 MB, incompressible
    store.commit([Change(path, text) for path, text in texts.items()], dict.fromkeys(texts, ABSENT), AUTHOR, "big")
    store.repack()
    saved = pygit2.settings.mwindow_size, pygit2.settings.mwindow_mapped_limit
    try:
        pygit2.settings.mwindow_size, pygit2.settings.mwindow_mapped_limit = 64 << 10, 256 << 10
        fresh = VaultStore("personal", store.repo_dir, store.origin_url)
        for path in [*texts, *reversed(texts)]:
            assert fresh.read(path)[0] == texts[path]
        assert {p: b for p, b in fresh.listing().notes.items() if p.startswith("big/")} == {
            p: str(pygit2.hash(t)) for p, t in texts.items()
        }
        bound_pack_windows()
        assert (pygit2.settings.mwindow_size, pygit2.settings.mwindow_mapped_limit) == (1 << 20, 8 << 20)
    finally:
        pygit2.settings.mwindow_size, pygit2.settings.mwindow_mapped_limit = saved
