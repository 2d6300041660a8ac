"""A push and a fetch are judged as wholes: counts over the whole range (a mass deletion split over commits,
an emptied note), case and Unicode twins at the tip, the commits one push may bring and the time it may
take, and every object git would store -- through the real hook (the real git CLI, or git's own
receive-pack fed a hand-made pack) and the server's real fetch of an origin with no hook."""

from __future__ import annotations

import os
import random
import subprocess
from pathlib import Path

import pygit2
import pytest

from notegate.config import load_config
from notegate.policy import PUSHER_VARIABLES
from notegate.services.notes import NotesService
from notegate.services.runtime import Runtime
from notegate.vault.store import ABSENT
from support import set_policy
from support.callers import make_caller
from support.gitstreams import FILE, PNG, Origin, accepted, commit, forge_push, refused, rules_of, scratch_at


def _notes(n: int, prefix: str = "bulk") -> dict:
    return {f"{prefix}/n{i:03}.md": (FILE, f"note {i}\n{'lorem ipsum ' * 20}\n".encode()) for i in range(n)}


def _names(indices: range, prefix: str = "bulk") -> tuple[str, ...]:
    return tuple(f"{prefix}/n{i:03}.md" for i in indices)


# ---------------------------------------------------------------- counts over the range (the real hook)


def test_a_mass_deletion_split_over_three_commits_is_refused(door: Origin) -> None:
    """21 deletions in three commits of 7: each commit alone is under the limit of 20, the push is not."""
    seeded = commit(door.scratch, [door.main], add=_notes(45))
    accepted(door.push(seeded))
    first = commit(door.scratch, [seeded], delete=_names(range(0, 7)))
    second = commit(door.scratch, [first], delete=_names(range(7, 14)))
    third = commit(door.scratch, [second], delete=_names(range(14, 21)))
    result = door.push(third)
    assert refused(result) == [(third[:12], "(the commit)", "too-many-deletions")]
    assert "deletes 21 files, counted over all its commits" in result.stderr
    assert door.main == seeded
    accepted(door.push(second))  # 14 over two commits: under the limit


def test_an_emptied_note_counts_as_a_deletion(door: Origin) -> None:
    """15 deletions and 6 notes emptied to whitespace are 21 deletions; a note that was blank already, or is
    only shortened, is not."""
    seeded = commit(door.scratch, [door.main], add={**_notes(30), "bulk/blank.md": (FILE, b"\n")})
    accepted(door.push(seeded))
    emptied = {path: (FILE, b"" if i % 2 else b"  \n\n") for i, path in enumerate(_names(range(15, 21)))}
    gone = commit(door.scratch, [seeded], delete=_names(range(15)), add=emptied)
    result = door.push(gone)
    assert refused(result) == [(gone[:12], "(the commit)", "too-many-deletions")]
    assert "6 of them notes emptied to nothing" in result.stderr
    fine = commit(
        door.scratch,
        [seeded],
        delete=_names(range(15)),
        add={
            **dict(list(emptied.items())[:5]),
            "bulk/blank.md": (FILE, b""),
            "bulk/n025.md": (FILE, b"short\n"),
        },
    )
    accepted(door.push(fine))  # 15 + 5 = 20


def test_more_commits_than_max_commits_per_push_are_refused_unread(door: Origin) -> None:
    set_policy(door.config, max_commits_per_push=5)
    tips = [door.main]
    for i in range(6):
        tips.append(commit(door.scratch, [tips[-1]], add={f"notes/c{i}.md": (FILE, b"one more\n")}))
    assert refused(door.push(tips[-1])) == [(tips[-1][:12], "(the commit)", "too-many-commits")]
    accepted(door.push(tips[-2]))  # five
    accepted(door.push(tips[-1]))


def test_an_inspection_past_its_deadline_is_refused_not_accepted(door: Origin) -> None:
    set_policy(door.config, push_inspection_seconds=0.001)
    tip = door.main
    for i in range(40):
        tip = commit(door.scratch, [tip], add={f"notes/slow{i}.md": (FILE, f"note {i}\n".encode())})
    assert rules_of(door.push(tip)) == {"incoming-too-slow"}
    set_policy(door.config, push_inspection_seconds=60)
    accepted(door.push(tip))


# ---------------------------------------------------------------- case and Unicode twins


@pytest.mark.parametrize(
    ("existing", "twin", "where"),
    [
        ("notes/plan.md", "notes/Plan.md", "notes/Plan.md"),
        ("notes/strasse-ß.md", "notes/strasse-SS.md", "notes/strasse-SS.md"),
        ("notes/café.md", "notes/CAFÉ.md", "notes/CAFÉ.md"),
        ("notes/file.md", "notes/\ufb01le.md", "notes/\ufb01le.md"),
        ("notes/plan.md", "Notes/other.md", "Notes"),
    ],
    ids=["case", "sharp s", "accented", "ligature", "folder"],
)
def test_a_push_adding_a_twin_is_refused(door: Origin, existing: str, twin: str, where: str) -> None:
    seeded = commit(door.scratch, [door.main], add={existing: (FILE, b"# one\n")})
    accepted(door.push(seeded))
    both = commit(door.scratch, [seeded], add={twin: (FILE, b"# two\n")})
    assert refused(door.push(both)) == [(both[:12], where, "path-case-collision")]
    renamed = commit(door.scratch, [seeded], delete=(existing,), add={twin: (FILE, b"# one\n")})
    accepted(door.push(renamed))  # a rename that changes only the case is no twin


def test_twins_added_in_one_push_over_two_commits_are_refused(door: Origin) -> None:
    first = commit(door.scratch, [door.main], add={"notes/idea.md": (FILE, b"# a\n")})
    second = commit(door.scratch, [first], add={"notes/IDEA.md": (FILE, b"# b\n")})
    assert rules_of(door.push(second)) == {"path-case-collision"}


# ---------------------------------------------------------------- the server's fetch (an origin with no hook)


@pytest.fixture
def bare(door: Origin) -> Origin:
    """The same origin without notegate's hook: a forge that checks nothing."""
    (door.origin / "hooks" / "pre-receive").unlink()
    return door


def _runtime(door: Origin) -> Runtime:
    runtime = Runtime(load_config(door.config))
    runtime.environment(None)
    return runtime


def test_the_fetch_counts_an_emptied_note_as_a_deletion_over_its_whole_range(bare: Origin) -> None:
    """The server's fetch counts over the foreign pushes since its own newest commit, as the hook counts one
    push: emptied notes are deletions, and three pushes of one deletion each are three."""
    set_policy(bare.config, max_deletions_per_commit=2)
    runtime = _runtime(bare)
    try:
        env = runtime.environment(None)
        good = env.store.head()
        scratch = scratch_at(bare, good)
        notes = sorted(p for p in env.store.listing().notes if not p.startswith("rules/"))[:3]
        emptied = commit(scratch, [good], add={path: (FILE, b"\n") for path in notes})
        forge_push(bare.origin, bare.scratch, emptied)
        runtime.sync("personal")
        assert env.store.head() == good
        assert env.store.refusal is not None and env.store.refusal.verdict.rules() == ["too-many-deletions"]
        one_by_one = good
        for path in notes:  # the same, one note per commit, as three pushes behind no hook would bring it
            one_by_one = commit(scratch, [one_by_one], add={path: (FILE, b"\n")})
            forge_push(bare.origin, bare.scratch, one_by_one)
        runtime.sync("personal")
        assert env.store.head() == good
        assert env.store.refusal is not None and env.store.refusal.verdict.rules() == ["too-many-deletions"]
    finally:
        runtime.close()


def test_the_fetch_counts_from_the_servers_own_newest_commit(bare: Origin) -> None:
    """What lies behind a commit this server made (a replica built it on a tip it had vetted) is not counted
    again: two deletions, a server commit, two more deletions pass a limit of two."""
    set_policy(bare.config, max_deletions_per_commit=2)
    runtime = _runtime(bare)
    try:
        env = runtime.environment(None)
        good = env.store.head()
        scratch = scratch_at(bare, good)
        notes = sorted(p for p in env.store.listing().notes if not p.startswith("rules/"))[:4]
        first = commit(scratch, [good], add={path: (FILE, b"\n") for path in notes[:2]})
        forge_push(bare.origin, bare.scratch, first)
        assert runtime.sync("personal") == (good, first)
        laptop = make_caller(tier="trusted", client_class="workstation", login="owner", client="laptop")
        made = NotesService(runtime).write_note(
            laptop, "notes/server-made.md", "by the server\n", ABSENT, confirmed=True
        )
        second = commit(scratch_at(bare, made.commit), [made.commit], add={path: (FILE, b"\n") for path in notes[2:]})
        forge_push(bare.origin, bare.scratch, second)
        assert runtime.sync("personal") == (made.commit, second)
    finally:
        runtime.close()


def test_the_fetch_refuses_a_twin(bare: Origin) -> None:
    runtime = _runtime(bare)
    try:
        env = runtime.environment(None)
        good = env.store.head()
        scratch = scratch_at(bare, good)
        existing = sorted(p for p in env.store.listing().notes if p.startswith("handoffs/") or p.startswith("log/"))[0]
        folder, name = existing.rsplit("/", 1)
        twin = f"{folder}/{name[:-3].upper()}.md"
        forge_push(bare.origin, bare.scratch, commit(scratch, [good], add={twin: (FILE, b"# twin\n")}))
        runtime.sync("personal")
        assert env.store.head() == good
        assert env.store.refusal is not None and env.store.refusal.verdict.rules() == ["path-case-collision"]
        assert [f.path for f in env.store.refusal.verdict.counted] == [twin]
    finally:
        runtime.close()


# ---------------------------------------------------------------- what the push stores


def _pkt(data: bytes) -> bytes:
    return f"{len(data) + 4:04x}".encode() + data


def receive_pack(door: Origin, old: str, new: str, objects: list[str]) -> subprocess.CompletedProcess[bytes]:
    """Push a hand-made pack of exactly ``objects`` with git's own receive-pack (protocol v0): what a
    client other than git may send, extra objects and all.  The origin's hook runs as for any push."""
    pack = subprocess.run(
        ["git", "-C", door.scratch.path, "pack-objects", "--stdout"],
        input="\n".join(objects).encode() + b"\n",
        capture_output=True,
        check=True,
        timeout=60,
    ).stdout
    command = _pkt(f"{old} {new} refs/heads/main\0report-status\n".encode()) + b"0000"
    env = {k: v for k, v in os.environ.items() if k not in PUSHER_VARIABLES and not k.startswith("GIT_")}
    env["NOTEGATE_PUSHER"] = "owner"
    return subprocess.run(
        ["git", "receive-pack", str(door.origin)], input=command + pack, capture_output=True, env=env, timeout=120
    )


def _new_objects(door: Origin, base: str, tip: str) -> list[str]:
    listed = subprocess.run(
        ["git", "-C", door.scratch.path, "rev-list", "--objects", tip, f"^{base}"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    return [line.split(" ", 1)[0] for line in listed.splitlines()]


def _object_bytes(origin: Path) -> int:
    return sum(f.stat().st_size for f in (origin / "objects").rglob("*") if f.is_file())


def test_a_hand_made_pack_with_a_blob_no_commit_names_is_refused(door: Origin) -> None:
    base = door.main
    clean = commit(door.scratch, [base], add={"notes/clean.md": (FILE, b"# clean\n")})
    stowaway = str(door.scratch.create_blob(random.Random(7).randbytes(300_000)))
    size_before = _object_bytes(door.origin)
    result = receive_pack(door, base, clean, [*_new_objects(door, base, clean), stowaway])
    assert b"pre-receive hook declined" in result.stdout, result
    assert b"Refused [push-unreferenced-object]: the push brings 1 object(s)" in result.stderr, result.stderr
    assert door.main == base
    assert pygit2.Oid(hex=stowaway) not in pygit2.Repository(str(door.origin)).odb
    assert _object_bytes(door.origin) < size_before + 100_000  # nothing of it was kept
    # the same hand-made route without the stowaway is accepted: the refusal is about the blob
    result = receive_pack(door, base, clean, _new_objects(door, base, clean))
    assert b"ok refs/heads/main" in result.stdout, result
    assert door.main == clean


def test_a_push_larger_than_max_push_bytes_is_refused(door: Origin) -> None:
    set_policy(door.config, max_push_bytes=50_000)
    big = commit(door.scratch, [door.main], add={"notes/big.png": (FILE, PNG + random.Random(3).randbytes(120_000))})
    assert rules_of(door.push(big)) == {"push-too-large"}
    small = commit(door.scratch, [door.main], add={"notes/small.png": (FILE, PNG + b"\0" * 1000)})
    accepted(door.push(small))


def test_git_itself_refuses_a_pack_over_receive_max_input_size(door: Origin) -> None:
    """`notegate init` sets receive.maxInputSize (max_push_bytes): git stops a larger pack while receiving."""
    subprocess.run(["git", "-C", str(door.origin), "config", "receive.maxInputSize", "20k"], check=True)
    big = commit(door.scratch, [door.main], add={"notes/big.png": (FILE, PNG + random.Random(4).randbytes(60_000))})
    result = door.push(big)
    assert result.returncode != 0 and "maximum allowed size" in result.stderr, result.stderr
