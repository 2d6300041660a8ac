"""``VaultStore.stream_blobs``: an index's first build reads every note through ``git cat-file --batch`` (git
inflates on the other core), and gets exactly the bytes the object store holds, in order, or a clear error."""

from __future__ import annotations

import os
from pathlib import Path

import pygit2
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from notegate.vault.store import VaultStore


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> VaultStore:
    root = tmp_path_factory.mktemp("stream")
    origin = root / "origin.git"
    pygit2.init_repository(str(origin), bare=True, initial_head="main")
    return VaultStore.create("personal", root / "srv" / "vault.git", str(origin))


@settings(max_examples=40, deadline=None)
@given(st.lists(st.binary(max_size=3000), min_size=1, max_size=12))
def test_streamed_bytes_are_the_stored_bytes_in_order(store: VaultStore, blobs: list[bytes]) -> None:
    """Any bytes (empty, NUL, newlines, a fake header line inside), repeated ids, in the order asked."""
    ids = [str(store.repo.create_blob(data)) for data in blobs]
    ids = ids + ids[::-1]
    assert list(store.stream_blobs(ids)) == [store.read_unverified_blob_fast(i) for i in ids]


def test_a_missing_or_non_blob_id_is_an_error(store: VaultStore) -> None:
    good = str(store.repo.create_blob(b"kept\n"))
    with pytest.raises(ValueError, match="is not a blob"):
        list(store.stream_blobs([good, "0" * 40]))
    tree = str(store.repo.TreeBuilder().write())
    with pytest.raises(ValueError, match="is not a blob"):
        list(store.stream_blobs([tree]))


@pytest.mark.parametrize("bad", ["HEAD", "main:a.md", "abc", "A" * 40, "0" * 40 + "\n" + "1" * 40])
def test_only_full_object_ids_reach_git(store: VaultStore, bad: str) -> None:
    """A revision expression or a second line never reaches git's stdin (it would read another object)."""
    with pytest.raises(ValueError, match="is not an object id"):
        next(store.stream_blobs([bad]))


def test_stopping_early_ends_the_child(store: VaultStore) -> None:
    ids = [str(store.repo.create_blob(b"x" * 70_000 + bytes([i]))) for i in range(50)]  # more than a pipe holds
    stream = store.stream_blobs(ids)
    assert next(stream) == b"x" * 70_000 + bytes([0])
    stream.close()  # kills git, joins the feeder: nothing left running
    children = [p for p in Path("/proc").iterdir() if p.name.isdigit()]
    for proc in children:
        try:
            cmdline = (proc / "cmdline").read_bytes()
            status = (proc / "status").read_text()
        except OSError:
            continue
        if b"cat-file" in cmdline and f"PPid:\t{os.getpid()}\n" in status:
            assert "State:\tZ" not in status, "git cat-file left as a zombie"
            pytest.fail("git cat-file still running after close()")


def test_a_git_hook_environment_cannot_redirect_the_reads(
    store: VaultStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Inside a git hook, GIT_OBJECT_DIRECTORY names the push's quarantine and GIT_DIR another repository; the
    child must still read this clone's objects, as libgit2 does in process."""
    blob = str(store.repo.create_blob(b"only in the clone\n"))
    elsewhere = tmp_path / "elsewhere.git"
    pygit2.init_repository(str(elsewhere), bare=True)
    monkeypatch.setenv("GIT_OBJECT_DIRECTORY", str(elsewhere / "objects"))
    monkeypatch.setenv("GIT_DIR", str(elsewhere))
    assert list(store.stream_blobs([blob])) == [b"only in the clone\n"]
