"""The store's fetch as a whole: the vet runs outside the write lock (a long range no longer stalls the
environment's writers), and when the origin lost commits the server acknowledged the store re-applies them
on the origin's tip, or stops with the lost commits named -- it never drops them and never rewrites the
origin."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from pathlib import Path

import pygit2
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from notegate.vault import converge
from notegate.vault.store import Author, Change, VaultStore

AUTHOR = Author("Tester", "tester")


@dataclass(frozen=True)
class Said:
    ok: bool
    tags: tuple[str, ...] = ()

    def rules(self) -> list[str]:
        return list(self.tags)


class Vet:
    """A vet that refuses any range whose tip holds ``bad.md``, optionally slow; counts its calls."""

    def __init__(self, seconds: float = 0.0) -> None:
        self.seconds = seconds
        self.calls: list[tuple[str | None, str]] = []
        self.running = threading.Event()

    def __call__(self, repo: pygit2.Repository, good: str | None, tip: str) -> Said:
        self.calls.append((good, tip))
        self.running.set()
        time.sleep(self.seconds)
        tree = repo[tip].peel(pygit2.Tree)
        return Said(ok="bad.md" not in tree, tags=("incoming-hidden-path",) if "bad.md" in tree else ())


def origin_main(origin: Path) -> str:
    return str(pygit2.Repository(str(origin)).references["refs/heads/main"].target)


def set_origin(origin: Path, commit: str) -> None:
    """What the owner does behind the hook: the origin's main set to ``commit``, forced."""
    pygit2.Repository(str(origin)).references.create("refs/heads/main", pygit2.Oid(hex=commit), force=True)


def owner_commit(origin: Path, parent: str, path: str, text: bytes) -> str:
    """A commit made in the origin itself (no ref moves) on ``parent``, changing one file."""
    repo = pygit2.Repository(str(origin))
    builder = repo.TreeBuilder(repo[parent].peel(pygit2.Tree))
    if "/" in path:
        raise ValueError("top-level paths only")
    builder.insert(path, repo.create_blob(text), pygit2.enums.FileMode.BLOB)
    sig = pygit2.Signature("Owner", "owner@example.com")
    return str(repo.create_commit(None, sig, sig, f"owner: {path}", builder.write(), [pygit2.Oid(hex=parent)]))


@pytest.fixture
def setup(tmp_path: Path, origin: Path):
    vet = Vet()
    store = VaultStore.create("personal", tmp_path / "srv" / "vault.git", str(origin), vet=vet)
    good = store.commit([Change("a.md", b"alpha\n")], {}, AUTHOR, "seed").commit
    return store, vet, good


def write(store: VaultStore, path: str, text: bytes) -> str:
    return store.commit([Change(path, text)], {path: store.blob_id(path)}, AUTHOR, f"write {path}").commit


def test_a_slow_vet_leaves_the_write_lock_free(setup, origin: Path) -> None:
    """Fails before: the fetch held the write lock for the whole vet (a 20,000-commit range: writers waited
    9-15 s).  Now another holder takes the lock at once, and a writer that needs the same tip waits for the one
    verdict being made instead of making it a second time."""
    store, vet, good = setup
    vet.seconds = 1.5
    tip = owner_commit(origin, good, "owner.md", b"# from the owner\n")
    set_origin(origin, tip)
    fetching = threading.Thread(target=store.fetch)
    fetching.start()
    assert vet.running.wait(10)
    started = time.perf_counter()
    with store.write_lock():
        held_after = time.perf_counter() - started
    written = write(store, "mine.md", b"mine\n")  # must build on the owner's tip: waits for its verdict
    fetching.join(10)
    assert held_after < 0.5, held_after
    assert vet.calls == [(good, tip)]  # judged once
    assert pygit2.Repository(str(origin))[written].parents[0].id == pygit2.Oid(hex=tip)
    assert store.head() == written == origin_main(origin)


def test_a_refused_tip_refuses_writes_and_the_origin_is_not_rewritten(setup, origin: Path) -> None:
    store, _vet, good = setup
    ours = write(store, "ours.md", b"acknowledged\n")
    bad = owner_commit(origin, good, "bad.md", b"x\n")  # a sibling of our write, behind the hook
    set_origin(origin, bad)
    store.fetch()
    assert store.refusal is not None and store.head() == ours
    with pytest.raises(Exception) as refused:
        write(store, "later.md", b"later\n")
    assert refused.value.rule == "origin-refused"
    assert origin_main(origin) == bad  # never rewound, never replaced


def test_a_reset_to_the_last_good_commit_and_a_commit_on_top_converge(setup, origin: Path) -> None:
    """Fails before: the server's head (its acknowledged write) was no longer in the origin's history, so every
    later fetch refused the origin as a rewrite, for good."""
    store, _vet, good = setup
    ours = write(store, "ours.md", b"acknowledged\n")
    set_origin(origin, owner_commit(origin, good, "bad.md", b"x\n"))
    store.fetch()
    assert store.refusal is not None
    fixed = owner_commit(origin, good, "owner.md", b"# repaired\n")
    set_origin(origin, fixed)
    old, new = store.fetch()
    assert (old, store.refusal) == (ours, None)
    assert new == store.head() == origin_main(origin)
    replayed = store.commit_info(new)
    assert str(replayed.parents[0].id) == fixed and replayed.message == "write ours.md"
    assert store.read("ours.md")[0] == b"acknowledged\n" and store.read("owner.md")[0] == b"# repaired\n"
    assert store.read("bad.md") is None


def test_a_plain_reset_to_before_our_writes_converges(setup, origin: Path) -> None:
    store, _vet, good = setup
    write(store, "one.md", b"one\n")
    write(store, "two.md", b"two\n")
    set_origin(origin, good)  # the owner removes everything after `good`, the server's writes with it
    _old, new = store.fetch()
    assert store.refusal is None and new == origin_main(origin)
    assert store.read("one.md")[0] == b"one\n" and store.read("two.md")[0] == b"two\n"
    walked = [str(c.id) for c in store.repo.walk(new)]
    assert len(walked) == 3  # `good`, then one new commit per lost commit


def test_the_same_path_changed_on_both_sides_stops_with_a_task(setup, origin: Path) -> None:
    store, _vet, good = setup
    ours = write(store, "a.md", b"ours\n")
    theirs = owner_commit(origin, good, "a.md", b"theirs\n")
    set_origin(origin, theirs)
    store.fetch()
    refusal = store.refusal
    assert refusal is not None and isinstance(refusal.verdict, converge.Stuck)
    assert refusal.verdict.lost == (ours,) and "a.md" in refusal.verdict.why
    assert refusal.verdict.rules() == ["push-non-fast-forward"] and ours[:12] in refusal.verdict.task_text("x")
    assert store.head() == ours and origin_main(origin) == theirs
    with pytest.raises(Exception) as refused:
        write(store, "later.md", b"later\n")
    assert refused.value.rule == "origin-refused"
    # the owner merges the server's commit back (here: pushes it back as main): the server moves on
    set_origin(origin, ours)
    store.fetch()
    assert store.refusal is None and store.head() == ours


def test_a_case_collision_with_the_origins_new_note_stops(setup, origin: Path) -> None:
    store, _vet, good = setup
    write(store, "Note.md", b"ours\n")
    set_origin(origin, owner_commit(origin, good, "note.md", b"theirs\n"))
    store.fetch()
    assert isinstance(store.refusal.verdict, converge.Stuck)


def test_the_origin_already_holding_our_change_moves_main_without_a_commit(setup, origin: Path) -> None:
    store, _vet, good = setup
    write(store, "same.md", b"same\n")
    same = owner_commit(origin, good, "same.md", b"same\n")
    set_origin(origin, same)
    store.fetch()
    assert store.refusal is None and store.head() == same


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    ours=st.lists(st.sampled_from(["p.md", "q.md", "r.md", "s.md"]), min_size=1, max_size=4),
    theirs=st.lists(st.sampled_from(["q.md", "t.md", "u.md"]), max_size=3),
    rewind=st.integers(min_value=0, max_value=4),
)
def test_no_acknowledged_write_is_ever_dropped(tmp_path_factory, ours, theirs, rewind) -> None:
    """Whatever the owner does to the origin's main (rewind by some commits, then commits of their own), the
    server either ends on a tip holding every write it acknowledged, or stays refused on its own head --
    and the origin is never rewound by the server."""
    root = tmp_path_factory.mktemp("conv")
    origin = root / "origin.git"
    pygit2.init_repository(str(origin), bare=True, initial_head="main")
    store = VaultStore.create("personal", root / "srv" / "vault.git", str(origin), vet=Vet())
    history = [store.commit([Change("a.md", b"alpha\n")], {}, AUTHOR, "seed").commit]
    acknowledged: dict[str, bytes] = {"a.md": b"alpha\n"}
    for i, path in enumerate(ours):
        text = f"ours {i}\n".encode()
        history.append(write(store, path, text))
        acknowledged[path] = text
    tip = history[max(0, len(history) - 1 - rewind)]
    for path in theirs:
        tip = owner_commit(origin, tip, path, b"theirs\n")
    set_origin(origin, tip)
    store.fetch()
    if store.refusal is None:
        assert store.head() == origin_main(origin)
        for path, text in acknowledged.items():  # ours, unless the owner's commits changed it since
            assert store.read(path)[0] == (b"theirs\n" if path in theirs else text)
        assert store.is_ancestor_or_self(tip, store.head())  # built on the origin's tip: nothing of theirs lost
    else:
        assert store.head() == history[-1] and origin_main(origin) == tip


def test_a_remote_push_is_a_compare_and_swap_from_the_judged_tip(tmp_path: Path, origin: Path) -> None:
    """Fails before: pushed through a transport (a remote origin), a write on our head fast-forwarded an origin
    rewound to an older commit of ours -- a tip the server never fetched nor judged -- at the first attempt.
    Now the push stops at negotiation, the server fetches, re-applies what the origin lost, and pushes again."""
    vet = Vet()
    store = VaultStore.create("personal", tmp_path / "srv" / "vault.git", f"file://{origin}", vet=vet)
    good = store.commit([Change("a.md", b"alpha\n")], {}, AUTHOR, "seed").commit
    write(store, "ours.md", b"ours\n")
    set_origin(origin, good)  # rewound behind the server's back
    result = store.commit([Change("later.md", b"later\n")], {"later.md": "absent"}, AUTHOR, "later")
    assert result.pushes == 2
    assert origin_main(origin) == result.commit == store.head()
    assert store.read("ours.md")[0] == b"ours\n" and store.read("later.md")[0] == b"later\n"


def test_writers_fetches_and_an_owner_pushing_at_once_lose_nothing(setup, origin: Path) -> None:
    """Stress: writer threads, a fetch loop whose vet takes a while (outside the lock), and an owner appending
    commits to the origin (a proper compare-and-swap push) all at once.  Every acknowledged write and every
    owner commit ends on the origin's main, which is the server's main, and nothing is refused."""
    store, vet, _good = setup
    vet.seconds = 0.02
    acknowledged: dict[str, bytes] = {}
    owner_paths: list[str] = []
    stop = threading.Event()
    errors: list[BaseException] = []

    def writer(n: int) -> None:
        try:
            for i in range(8):
                path, text = f"w{n}-{i}.md", f"{n} {i}\n".encode()
                store.commit([Change(path, text)], {path: "absent"}, AUTHOR, f"write {path}")
                acknowledged[path] = text
        except BaseException as exc:  # reported below
            errors.append(exc)

    def fetcher() -> None:
        while not stop.is_set():
            try:
                store.fetch()
            except BaseException as exc:
                errors.append(exc)
                return

    def owner() -> None:
        repo = pygit2.Repository(str(origin))
        for i in range(6):
            while True:
                ref = repo.references["refs/heads/main"]
                made = owner_commit(origin, str(ref.target), f"owner{i}.md", b"owner\n")
                try:
                    ref.set_target(pygit2.Oid(hex=made), "owner push")
                    break
                except (pygit2.GitError, OSError):  # the server pushed first, or holds main.lock: build again
                    time.sleep(0.002)  # as a person's next push would: not a spin against the server's writer
                    continue
            owner_paths.append(f"owner{i}.md")
            time.sleep(0.03)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(3)]
    threads += [threading.Thread(target=owner)]
    loop = threading.Thread(target=fetcher)
    loop.start()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    stop.set()
    loop.join(120)
    assert errors == []
    store.fetch()
    assert store.refusal is None and store.head() == origin_main(origin)
    assert all(store.read(p)[0] == text for p, text in acknowledged.items()) and len(acknowledged) == 24
    assert all(store.read(p) is not None for p in owner_paths) and len(owner_paths) == 6
