"""Group commit against real bare repositories: writes queued behind one push are chained, one commit each,
pushed together, acknowledged only once the origin took them; a conflict fails only its own write."""

from __future__ import annotations

import shutil
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pygit2
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from notegate.errors import OriginUnavailable
from notegate.vault.store import ABSENT, MAIN_REF, Author, CaseCollision, Change, CommitResult, Conflict, VaultStore

AUTHOR = Author("Tester", "tester")


def make_origin(path: Path) -> Path:
    pygit2.init_repository(str(path), bare=True, initial_head="main")
    # every move of the origin's main is logged: one entry per accepted push
    subprocess.run(["git", "--git-dir", str(path), "config", "core.logAllRefUpdates", "always"], check=True)
    return path


@pytest.fixture
def origin(tmp_path: Path) -> Path:
    return make_origin(tmp_path / "origin.git")


@pytest.fixture
def store(seeded_store: VaultStore) -> VaultStore:
    return seeded_store


def origin_head(origin: Path) -> str:
    return str(pygit2.Repository(str(origin)).references[MAIN_REF].target)


def origin_pushes(origin: Path) -> int:
    """Moves of the origin's main, from its reflog."""
    log = subprocess.run(
        ["git", "--git-dir", str(origin), "reflog", "show", "--format=%H", "refs/heads/main"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return len(log.split())


Outcome = CommitResult | BaseException


def grouped(store: VaultStore, writes: list[Callable[[], CommitResult]], before_release=None) -> list[Outcome]:
    """Run ``writes`` in threads while this thread holds the write lock, so all of them queue; release the
    lock once every one is queued: the next holder commits them as one group."""
    outcomes: list[Outcome | None] = [None] * len(writes)

    def run(i: int) -> None:
        try:
            outcomes[i] = writes[i]()
        except BaseException as exc:  # the test inspects each write's own outcome
            outcomes[i] = exc

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(writes))]
    with store.write_lock():
        for t in threads:
            t.start()
        deadline = time.monotonic() + 30
        while len(store._queue) < len(writes):  # every write is queued behind this hold
            assert time.monotonic() < deadline, "writes did not queue"
            time.sleep(0.005)
        if before_release is not None:
            before_release()
    for t in threads:
        t.join(30)
    assert all(o is not None for o in outcomes)
    return outcomes  # type: ignore[return-value]


def writer(store: VaultStore, path: str, data: bytes | None, expected: str, **kw) -> Callable[[], CommitResult]:
    return lambda: store.commit([Change(path, data)], {path: expected}, AUTHOR, f"write {path}", **kw)


def chain_of(store: VaultStore, results: list[CommitResult], base: str) -> list[str]:
    """The results' commits in parent order, checking that they form one line on ``base``."""
    by_parent = {r.parent: r.commit for r in results}
    assert len(by_parent) == len(results), "two writes share a parent: not a chain"
    order, cursor = [], base
    while cursor in by_parent:
        cursor = by_parent[cursor]
        order.append(cursor)
    assert len(order) == len(results)
    return order


def test_queued_writes_are_chained_one_commit_each_and_pushed_once(store: VaultStore, origin: Path) -> None:
    base = store.head()
    pushes = origin_pushes(origin)
    paths = [f"group/n{i}.md" for i in range(8)]
    outcomes = grouped(store, [writer(store, p, f"{p}\n".encode(), ABSENT) for p in paths])
    assert all(isinstance(o, CommitResult) for o in outcomes)
    order = chain_of(store, outcomes, base)  # type: ignore[arg-type]
    assert origin_head(origin) == store.head() == order[-1]
    assert origin_pushes(origin) == pushes + 1  # eight commits, one push
    for path, result in zip(paths, outcomes, strict=True):
        assert isinstance(result, CommitResult)
        changed = store.changed_notes(result.parent, result.commit)
        assert changed == [(path, result.blobs[path])]  # each commit holds its own write only
        assert store.commit_info(result.commit).message == f"write {path}"
        assert store.read(path) == (f"{path}\n".encode(), result.blobs[path])


def test_a_conflict_in_a_group_fails_only_its_own_write(store: VaultStore, origin: Path) -> None:
    base_a = store.blob_id("a.md")
    writes = [
        writer(store, "a.md", b"first\n", base_a),
        writer(store, "x1.md", b"x1\n", ABSENT),
        writer(store, "a.md", b"second\n", base_a),  # same base as the first: stale once the first lands
        writer(store, "x2.md", b"x2\n", ABSENT),
    ]
    outcomes = grouped(store, writes)
    a_results = [outcomes[0], outcomes[2]]
    conflicts = [o for o in a_results if isinstance(o, Conflict)]
    assert len(conflicts) == 1 and conflicts[0].rule == "stale-revision"
    assert isinstance(outcomes[1], CommitResult) and isinstance(outcomes[3], CommitResult)
    winner = next(o for o in a_results if isinstance(o, CommitResult))
    assert store.read("a.md") == (store.read_unverified_blob(winner.blobs["a.md"]), winner.blobs["a.md"])
    assert conflicts[0].current == winner.blobs["a.md"]
    assert origin_head(origin) == store.head()


def test_a_case_collision_within_a_group_is_refused_alone(store: VaultStore) -> None:
    writes = [
        writer(store, "Notes/Plan.md", b"one\n", ABSENT, new_paths=["Notes/Plan.md"]),
        writer(store, "notes/plan.md", b"two\n", ABSENT, new_paths=["notes/plan.md"]),
        writer(store, "other.md", b"three\n", ABSENT, new_paths=["other.md"]),
    ]
    outcomes = grouped(store, writes)
    assert isinstance(outcomes[0], CommitResult) and isinstance(outcomes[2], CommitResult)
    assert isinstance(outcomes[1], CaseCollision) and outcomes[1].rule == "path-case-collision"
    assert store.blob_id("notes/plan.md") == ABSENT


def test_a_group_replays_on_top_when_the_origin_moved(store: VaultStore, origin: Path, tmp_path: Path) -> None:
    def foreign_push() -> None:
        wc = tmp_path / "wc"
        subprocess.run(["git", "clone", "-q", str(origin), str(wc)], check=True)
        (wc / "foreign.md").write_text("from a workstation\n")
        git = ["git", "-C", str(wc), "-c", "user.name=W", "-c", "user.email=w@x"]
        subprocess.run([*git, "add", "-A"], check=True)
        subprocess.run([*git, "commit", "-qm", "w"], check=True)
        subprocess.run([*git, "push", "-q", "origin", "HEAD:main"], check=True)

    paths = [f"r{i}.md" for i in range(4)]
    outcomes = grouped(store, [writer(store, p, b"r\n", ABSENT) for p in paths], before_release=foreign_push)
    assert all(isinstance(o, CommitResult) for o in outcomes)
    assert store.head() == origin_head(origin)
    assert store.blob_id("foreign.md") != ABSENT
    assert all(store.blob_id(p) != ABSENT for p in paths)


def test_an_unreachable_origin_fails_the_whole_group_and_acknowledges_nothing(
    store: VaultStore, origin: Path, tmp_path: Path
) -> None:
    head = store.head()
    outcomes = grouped(
        store,
        [writer(store, f"u{i}.md", b"u\n", ABSENT) for i in range(3)],
        before_release=lambda: shutil.move(origin, tmp_path / "gone.git"),
    )
    assert all(isinstance(o, OriginUnavailable) and o.rule == "origin-unavailable" for o in outcomes)
    assert store.head() == head
    shutil.move(tmp_path / "gone.git", origin)
    assert store.commit([Change("u0.md", b"u\n")], {"u0.md": ABSENT}, AUTHOR, "again").commit == origin_head(origin)


def test_a_group_over_a_real_transport_is_pushed_once(tmp_path: Path) -> None:
    """A file:// origin goes through libgit2's push (the path remote origins take), not the local copy."""
    origin = make_origin(tmp_path / "remote.git")
    store = VaultStore.create("personal", tmp_path / "srv" / "vault.git", origin.as_uri())
    store.commit([Change("a.md", b"alpha\n")], {}, AUTHOR, "seed")
    base, pushes = store.head(), origin_pushes(origin)
    outcomes = grouped(store, [writer(store, f"t{i}.md", b"t\n", ABSENT) for i in range(5)])
    assert all(isinstance(o, CommitResult) for o in outcomes)
    order = chain_of(store, outcomes, base)  # type: ignore[arg-type]
    assert origin_head(origin) == order[-1]
    assert origin_pushes(origin) == pushes + 1
    fsck = subprocess.run(["git", "--git-dir", str(origin), "fsck", "--no-dangling"], capture_output=True, text=True)
    assert fsck.returncode == 0, fsck.stderr


def test_a_push_leaves_the_tracking_ref_to_the_fetch(tmp_path: Path) -> None:
    """The fetch writes refs/remotes/origin/main without the write lock; a push that wrote it too (libgit2's
    push through the named remote does, after the origin took the commit) failed at its lock file whenever a
    fetch held it, and the caller was told nothing was written while the commit was in the origin.  Here a
    fetch holds the lock for the whole push (its lock file): the push goes through and says so."""
    origin = make_origin(tmp_path / "remote.git")
    store = VaultStore.create("personal", tmp_path / "srv" / "vault.git", origin.as_uri())
    store.commit([Change("a.md", b"alpha\n")], {}, AUTHOR, "seed")
    store.fetch()
    tracking = store.repo.references["refs/remotes/origin/main"].target
    held = Path(store.repo.path) / "refs" / "remotes" / "origin" / "main.lock"
    held.parent.mkdir(parents=True, exist_ok=True)
    held.write_text("")
    try:
        made = store.commit([Change("b.md", b"beta\n")], {"b.md": ABSENT}, AUTHOR, "during a fetch")
    finally:
        held.unlink()
    assert made.commit == origin_head(origin) == store.head()
    assert store.repo.references["refs/remotes/origin/main"].target == tracking  # untouched by the push
    store.fetch()
    assert str(store.repo.references["refs/remotes/origin/main"].target) == made.commit


def test_a_push_whose_answer_is_lost_after_the_origin_took_it_is_a_push_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The connection fails after the origin updated main (its answer lost): the origin is asked its main,
    and the write is acknowledged, not refused as "nothing was written"."""
    origin = make_origin(tmp_path / "remote.git")
    store = VaultStore.create("personal", tmp_path / "srv" / "vault.git", origin.as_uri())
    store.commit([Change("a.md", b"alpha\n")], {}, AUTHOR, "seed")
    real = pygit2.Remote.push

    def push_then_lose_the_answer(self, *args, **kwargs):
        real(self, *args, **kwargs)
        raise pygit2.GitError("unexpected disconnect while reading sideband packet")

    monkeypatch.setattr(pygit2.Remote, "push", push_then_lose_the_answer)
    made = store.commit([Change("b.md", b"beta\n")], {"b.md": ABSENT}, AUTHOR, "answer lost")
    assert made.commit == origin_head(origin) == store.head()

    def push_nothing(self, *args, **kwargs):
        raise pygit2.GitError("unexpected disconnect while reading sideband packet")

    monkeypatch.setattr(pygit2.Remote, "push", push_nothing)
    with pytest.raises(OriginUnavailable) as refused:
        store.commit([Change("c.md", b"gamma\n")], {"c.md": ABSENT}, AUTHOR, "not taken")
    assert refused.value.rule == "origin-unavailable"
    assert origin_head(origin) == made.commit == store.head()


def test_a_commit_inside_a_held_lock_commits_alone(store: VaultStore, origin: Path) -> None:
    """A contract fetches, plans and commits under one hold: its commit must not wait for itself."""
    with store.write_lock():
        result = store.commit([Change("held.md", b"h\n")], {"held.md": ABSENT}, AUTHOR, "held")
    assert result.commit == store.head() == origin_head(origin)


# Property: a group gives every write the outcome it would have had alone, in queue order.
_PATHS = ["p.md", "q.md", "dir/r.md"]
_write = st.tuples(st.sampled_from(_PATHS), st.booleans(), st.booleans())  # path, base is current?, delete?


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(_write, min_size=1, max_size=6))
def test_a_group_matches_the_same_writes_made_one_by_one(tmp_path_factory, writes) -> None:
    root = tmp_path_factory.mktemp("prop")
    origin = make_origin(root / "origin.git")
    store = VaultStore.create("personal", root / "srv" / "vault.git", str(origin))
    store.commit([Change(p, f"seed {p}\n".encode()) for p in _PATHS], {}, AUTHOR, "seed")
    start = {p: store.blob_id(p) for p in _PATHS}

    # the serial model: each write's base is either the seed's blob or a wrong one
    model = dict(start)
    expected: list[bool] = []
    requests = []
    for i, (path, current, delete) in enumerate(writes):
        base = start[path] if current else "0" * 40
        data = None if delete else f"{path} {i}\n".encode()
        ok = model[path] == base
        expected.append(ok)
        if ok:
            model[path] = ABSENT if data is None else str(pygit2.hash(data))
        requests.append(writer(store, path, data, base))
    # queue order is the order the threads enqueue in: start them one at a time
    outcomes: list[Outcome | None] = [None] * len(requests)
    threads = []
    with store.write_lock():
        for i, request in enumerate(requests):

            def run(i: int = i, request=request) -> None:
                try:
                    outcomes[i] = request()
                except BaseException as exc:
                    outcomes[i] = exc

            t = threading.Thread(target=run)
            t.start()
            threads.append(t)
            while len(store._queue) < i + 1:
                time.sleep(0.001)
    for t in threads:
        t.join(30)
    assert [isinstance(o, CommitResult) for o in outcomes] == expected
    assert all(
        isinstance(o, Conflict) and o.rule == "stale-revision" for o in outcomes if not isinstance(o, CommitResult)
    )
    assert {p: store.blob_id(p) for p in _PATHS} == model
    assert store.head() == origin_head(origin)


def test_a_local_origin_shares_the_written_objects_and_both_stay_self_contained(
    store: VaultStore, origin: Path, tmp_path: Path
) -> None:
    packs_before = {p.name for p in (store.repo_dir / "objects" / "pack").glob("*.pack")}
    result = store.commit([Change("deep/er/note.md", b"once\n")], {"deep/er/note.md": ABSENT}, AUTHOR, "once")
    blob = result.blobs["deep/er/note.md"]
    assert store.loose_object_count() == 0 and store.loose_object_count(origin) == 0  # no loose file at all
    (new_pack,) = {p.name for p in (store.repo_dir / "objects" / "pack").glob("*.pack")} - packs_before
    listed = subprocess.run(
        ["git", "verify-pack", "-v", str(store.repo_dir / "objects" / "pack" / new_pack)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert blob in listed and result.commit in listed  # the write's objects are the one pack's
    for suffix in (".pack", ".idx"):  # one file, two names: the data written once
        name = new_pack.removesuffix(".pack") + suffix
        ours = store.repo_dir / "objects" / "pack" / name
        assert ours.stat().st_ino == (origin / "objects" / "pack" / name).stat().st_ino
    for repo in (store.repo_dir, origin):
        fsck = subprocess.run(["git", "--git-dir", str(repo), "fsck", "--no-dangling"], capture_output=True)
        assert fsck.returncode == 0, fsck.stderr
    shutil.move(origin, tmp_path / "away.git")  # the clone borrows nothing: it still serves the write
    reopened = VaultStore("personal", store.repo_dir, str(origin))
    assert reopened.read("deep/er/note.md") == (b"once\n", blob)


def test_a_group_is_acknowledged_after_its_index_catch_up_which_runs_outside_the_write_lock(store: VaultStore) -> None:
    """The catch-up (``on_advance``) runs before the write is acknowledged -- an acknowledged write is
    searchable at once -- but after the write lock is released, so the next write commits meanwhile."""
    in_callback, release = threading.Event(), threading.Event()
    seen: list[tuple[str | None, str]] = []

    def slow_catch_up(old: str | None, new: str) -> None:
        seen.append((old, new))
        in_callback.set()
        assert release.wait(30)

    first: list[Outcome] = []
    thread = threading.Thread(
        target=lambda: first.append(writer(store, "slow.md", b"slow\n", ABSENT, on_advance=slow_catch_up)())
    )
    thread.start()
    assert in_callback.wait(30)
    second = writer(store, "next.md", b"next\n", ABSENT)()  # would wait for the lock, were it still held
    assert not first, "acknowledged before its catch-up finished"
    release.set()
    thread.join(30)
    (result,) = first
    assert isinstance(result, CommitResult)
    assert seen == [(result.parent, result.commit)]
    assert second.parent == result.commit and store.head() == second.commit


def test_a_catch_up_that_fails_fails_its_whole_group(store: VaultStore) -> None:
    """A callback's error is every writer's of the group, raised in its own thread (nothing acknowledged
    that the index does not hold); the commits themselves stand, as they did when it ran under the lock."""

    def broken(old: str | None, new: str) -> None:
        raise RuntimeError("index broke")

    outcomes = grouped(
        store,
        [writer(store, "b1.md", b"1\n", ABSENT, on_advance=broken), writer(store, "b2.md", b"2\n", ABSENT)],
    )
    assert all(isinstance(o, RuntimeError) and str(o) == "index broke" for o in outcomes)
    assert store.blob_id("b1.md") != ABSENT and store.blob_id("b2.md") != ABSENT
