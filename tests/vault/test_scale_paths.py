"""What the 100,000-note work changed in shared read paths: ``NotePath.parse`` normalises once, and the
index's full build reads blobs straight from the object database.  Each shortcut must answer exactly as
the long way did."""

from __future__ import annotations

import pygit2
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from notegate.errors import PathRejected
from notegate.vault.paths import NotePath
from notegate.vault.store import Author, Change, VaultStore
from support import clone_and_push

# Text that looks like paths: segments of letters, marks, odd characters, '..', dots and slashes.
_PIECES = [*"aZé\u0301.- _/#%\u200b\u202e\x00\\:?*", "..", "con", "CLAUDE", "ﬁ"]
_SEGMENT = st.lists(st.sampled_from(_PIECES), max_size=8).map("".join)
_RAW = st.builds(
    lambda parts, ext: "/".join(parts) + ext, st.lists(_SEGMENT, max_size=4), st.sampled_from([".md", ".MD", ""])
)


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
@given(_RAW)
def test_parse_once_builds_what_the_checking_constructor_accepts(raw: str) -> None:
    """parse skips the constructor's re-check; the constructor must still accept every value parse builds,
    and parse must refuse exactly what it refused before (only PathRejected escapes)."""
    try:
        path = NotePath.parse(raw)
    except PathRejected:
        return
    assert NotePath(path.value) == path  # the skipped re-check would have passed
    assert NotePath.parse(path.value) == path
    assert hash(NotePath(path.value)) == hash(path)


def test_parse_once_still_refuses_with_the_rule() -> None:
    with pytest.raises(PathRejected) as info:
        NotePath.parse("../x.md")
    assert info.value.rule == "path-traversal"
    with pytest.raises(PathRejected) as info:
        NotePath("cafe\u0301.md")  # the constructor keeps its own check
    assert info.value.rule == "path-not-normalised"


def test_fast_blob_read_is_the_same_bytes_and_refuses_a_tree(tmp_path) -> None:
    origin = tmp_path / "origin.git"
    pygit2.init_repository(str(origin), bare=True, initial_head="main")
    store = VaultStore.create("personal", tmp_path / "clone.git", str(origin))
    data = "# Note\n\nbody ünïcode\n".encode()
    result = store.commit([Change("a/note.md", data)], {"a/note.md": "absent"}, Author("Owner", "owner"), "add")
    blob = store.blob_id("a/note.md")
    assert store.read_unverified_blob_fast(blob) == store.read_unverified_blob(blob) == data
    tree = str(store.repo[result.commit].peel(pygit2.Tree).id)
    with pytest.raises(ValueError, match="not a blob"):
        store.read_unverified_blob_fast(tree)


def test_repack_without_deltas_packs_clone_and_origin(tmp_path) -> None:
    """The import's repack (no delta search) still leaves no loose object, here or in the local origin."""
    origin = tmp_path / "origin.git"
    pygit2.init_repository(str(origin), bare=True, initial_head="main")
    store = VaultStore.create("personal", tmp_path / "clone.git", str(origin))
    for i in range(5):
        store.commit([Change(f"r{i}.md", b"r%d\n" % i)], {f"r{i}.md": "absent"}, Author("Owner", "owner"), "r")
    clone_and_push(origin, tmp_path / "wc", "pushed.md", "pushed\n")  # a git push leaves loose objects in the origin
    assert store.pack_count() >= 5 and store.loose_object_count(origin) > 0  # one pack per group commit
    store.repack(deltas=False)
    assert store.loose_object_count() == 0 and store.pack_count() <= 2  # one pack (and maybe a cruft pack)
    assert store.loose_object_count(origin) == 0
    assert store.read("r4.md")[0] == b"r4\n"


def test_full_build_walks_only_recent_commits_for_last_commit(tmp_path) -> None:
    """An empty index's build names the last commit of notes changed in the recent commits; older notes are
    left to their first read (remember_last_commit), never given a wrong commit."""
    from notegate.vault.index import FULL_BUILD_WALK_LIMIT, SearchIndex

    origin = tmp_path / "origin.git"
    pygit2.init_repository(str(origin), bare=True, initial_head="main")
    store = VaultStore.create("personal", tmp_path / "clone.git", str(origin))
    commits = []
    for i in range(FULL_BUILD_WALK_LIMIT + 3):
        path = f"n/{i}.md"
        commits.append(store.commit([Change(path, b"x%d\n" % i)], {path: "absent"}, Author("O", "o"), "c").commit)
    index = SearchIndex(tmp_path / "index.sqlite", lambda p: (False, False), "fp")
    assert index.catch_up(store) == FULL_BUILD_WALK_LIMIT + 3
    newest = FULL_BUILD_WALK_LIMIT + 2
    assert index.last_commit(f"n/{newest}.md") == commits[newest]
    assert index.last_commit("n/0.md") is None  # beyond the walk: found on first read
    index.remember_last_commit("n/0.md", commits[0])
    assert index.last_commit("n/0.md") == commits[0]
    index.close()
