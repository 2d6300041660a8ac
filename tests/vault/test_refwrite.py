"""The store's ref updates in Python (vault/refwrite.py): git's lock-file protocol, read and written as git does.

Checked against git itself: what ``update_ref`` writes is what ``git rev-parse`` reads, a lock git holds stops it,
a ref only in ``packed-refs`` is found, and a compare-and-swap whose expectation is stale writes nothing.  The
point of the module is that its flushes are ``os.fsync`` calls, which release the GIL, in git's order.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pygit2
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from notegate.vault import durable, refwrite

MAIN = "refs/heads/main"


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout.strip()


def commits(repo_dir: Path, count: int) -> list[str]:
    repo = pygit2.Repository(str(repo_dir))
    tree = repo.TreeBuilder().write()
    sig = pygit2.Signature("t", "t@example.invalid", 0, 0)
    made: list[str] = []
    for i in range(count):
        made.append(str(repo.create_commit(None, sig, sig, f"c{i}", tree, [made[-1]] if made else [])))
    return made


@pytest.fixture
def bare(tmp_path: Path) -> Path:
    repo = tmp_path / "r.git"
    pygit2.init_repository(str(repo), bare=True, initial_head="main")
    return repo


def test_a_new_ref_is_created_and_git_reads_it(bare: Path) -> None:
    first, _second = commits(bare, 2)
    assert refwrite.read_ref(bare, MAIN) is None
    assert refwrite.update_ref(bare, MAIN, first, None)
    assert git(bare, "rev-parse", MAIN) == first
    assert (bare / "refs/heads/main").read_text() == first + "\n"
    assert not (bare / "refs/heads/main.lock").exists()
    assert refwrite.update_ref(bare, "refs/notegate/first/of/its/folder", first, None)  # its folders are made
    assert git(bare, "rev-parse", "refs/notegate/first/of/its/folder") == first


def test_a_stale_expectation_writes_nothing(bare: Path) -> None:
    first, second, third = commits(bare, 3)
    assert refwrite.update_ref(bare, MAIN, first, None)
    assert not refwrite.update_ref(bare, MAIN, third, second)  # it is at first, not second
    assert not refwrite.update_ref(bare, MAIN, third, None)  # it exists
    assert git(bare, "rev-parse", MAIN) == first
    assert not (bare / "refs/heads/main.lock").exists()
    assert refwrite.update_ref(bare, MAIN, second, first)
    assert refwrite.update_ref(bare, MAIN, third)  # forced
    assert git(bare, "rev-parse", MAIN) == third


def test_a_lock_git_holds_stops_the_update(bare: Path) -> None:
    first, second = commits(bare, 2)
    refwrite.update_ref(bare, MAIN, first, None)
    (bare / "refs/heads/main.lock").write_text(second + "\n")  # git mid-update
    with pytest.raises(FileExistsError):
        refwrite.update_ref(bare, MAIN, second, first)
    assert (bare / "refs/heads/main.lock").read_text() == second + "\n"  # not ours to remove
    assert git(bare, "rev-parse", MAIN) == first


def test_git_is_stopped_by_our_lock(bare: Path) -> None:
    """The exclusion works both ways: while our lock file exists, git's own update of the ref fails."""
    first, second = commits(bare, 2)
    refwrite.update_ref(bare, MAIN, first, None)
    (bare / "refs/heads/main.lock").write_text("")
    done = subprocess.run(["git", "-C", str(bare), "update-ref", MAIN, second, first], capture_output=True, text=True)
    assert done.returncode != 0 and "lock" in done.stderr


def test_a_packed_ref_is_read_and_a_loose_one_shadows_it(bare: Path) -> None:
    first, second, third = commits(bare, 3)
    git(bare, "update-ref", MAIN, first)
    git(bare, "tag", "-a", "-m", "t", "v1", first)  # a peeled line (^...) in packed-refs
    git(bare, "pack-refs", "--all")
    assert not (bare / "refs/heads/main").exists()
    assert refwrite.read_ref(bare, MAIN) == first
    assert not refwrite.update_ref(bare, MAIN, third, second)
    assert refwrite.update_ref(bare, MAIN, second, first)
    assert git(bare, "rev-parse", MAIN) == second
    assert git(bare, "fsck", "--strict", "--no-dangling") == ""


def test_a_ref_that_is_not_an_object_id_is_not_overwritten(bare: Path) -> None:
    first, second = commits(bare, 2)
    (bare / "refs/heads/main").write_text("ref: refs/heads/other\n")
    with pytest.raises(OSError, match="does not hold an object id"):
        refwrite.update_ref(bare, MAIN, second, first)
    assert (bare / "refs/heads/main").read_text() == "ref: refs/heads/other\n"
    assert not (bare / "refs/heads/main.lock").exists()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    steps=st.lists(st.tuples(st.sampled_from(["ours", "git", "pack"]), st.integers(0, 5), st.booleans()), max_size=12)
)
def test_ours_and_gits_updates_agree_in_any_order(tmp_path_factory: pytest.TempPathFactory, steps: list) -> None:
    """Any interleaving of our compare-and-swap, git's ``update-ref`` and ``pack-refs``: ours succeeds exactly when
    its expectation is the value git reads, and afterwards git reads what ours wrote."""
    repo = tmp_path_factory.mktemp("r") / "r.git"
    pygit2.init_repository(str(repo), bare=True, initial_head="main")
    ids = commits(repo, 6)
    model: str | None = None
    for kind, target, right in steps:
        if kind == "pack":
            git(repo, "pack-refs", "--all")
        elif kind == "git":
            git(repo, "update-ref", MAIN, ids[target])
            model = ids[target]
        else:
            expected = model if right else ids[(ids.index(model) + 1) % 6] if model else ids[0]
            assert refwrite.update_ref(repo, MAIN, ids[target], expected) == (expected == model)
            if expected == model:
                model = ids[target]
        assert refwrite.read_ref(repo, MAIN) == model
        if model is not None:
            assert git(repo, "rev-parse", MAIN) == model


def test_with_durability_on_the_lock_file_is_flushed_before_its_rename_and_the_folder_after(
    bare: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """git's ``core.fsync`` order for a ref: the new value on disk before the name points at it, the name on disk
    before the update returns.  Done with ``os.fsync`` (which releases the GIL: bench/probe_ref_gil.py measures
    what libgit2's own flushes cost the other threads)."""
    import os

    first, second = commits(bare, 2)
    refwrite.update_ref(bare, MAIN, first, None)
    events: list[tuple[str, str]] = []
    real_fsync, real_rename = os.fsync, os.rename

    def fsync(fd: int) -> None:
        events.append(("fsync", os.readlink(f"/proc/self/fd/{fd}")))
        real_fsync(fd)

    def rename(src: str, dst: str) -> None:
        events.append(("rename", str(dst)))
        real_rename(src, dst)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "rename", rename)
    durable.enable(True)
    try:
        assert refwrite.update_ref(bare, MAIN, second, first)
    finally:
        durable.enable(False)
    heads = str((bare / "refs/heads").resolve())
    assert events == [("fsync", heads + "/main.lock"), ("rename", str(bare / MAIN)), ("fsync", heads)]
    events.clear()
    assert refwrite.update_ref(bare, MAIN, first, second)
    assert events == [("rename", str(bare / MAIN))]  # durability off: nothing flushed


@pytest.mark.parametrize("setting", [None, "false", "true", "always"])
def test_the_reflog_is_kept_as_git_keeps_it(bare: Path, setting: str | None) -> None:
    """Bare and unset or false: no reflog; true or always: one line per move, as git reads them back."""
    first, second, third = commits(bare, 3)
    if setting is not None:
        git(bare, "config", "core.logAllRefUpdates", setting)
    refwrite.update_ref(bare, MAIN, first, None, "one")
    refwrite.update_ref(bare, MAIN, second, first, "two")
    refwrite.update_ref(bare, MAIN, third, message="three")  # forced: the old value is read under the lock
    if setting in (None, "false"):
        assert not (bare / "logs" / MAIN).exists()
        return
    shown = git(bare, "reflog", "show", "--format=%H %gs", MAIN).splitlines()
    assert shown == [f"{third} three", f"{second} two", f"{first} one"]
    olds = [line.split()[0] for line in (bare / "logs" / MAIN).read_text().splitlines()]
    assert olds == ["0" * 40, first, second]


def test_an_existing_reflog_is_appended_to_whatever_the_setting(bare: Path) -> None:
    first, second = commits(bare, 2)
    git(bare, "config", "core.logAllRefUpdates", "false")
    git(bare, "update-ref", "--create-reflog", MAIN, first)
    refwrite.update_ref(bare, MAIN, second, first, "moved")
    assert git(bare, "reflog", "show", "--format=%H %gs", MAIN).splitlines()[0] == f"{second} moved"


def test_a_repository_whose_refs_are_not_files_is_not_written(bare: Path) -> None:
    """git 2.45's reftable keeps refs in tables: a loose file written beside them would be no ref at all."""
    first, _second = commits(bare, 2)
    git(bare, "config", "extensions.refStorage", "reftable")
    with pytest.raises(OSError, match="reftable"):
        refwrite.update_ref(bare, MAIN, first, None)
    assert not (bare / MAIN).exists() and not (bare / "refs/heads/main.lock").exists()
