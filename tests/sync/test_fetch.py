"""The server's fetch validates what it takes: a hostile forge (commits written straight into the bare
origin, no hook) never moves the server's main; reads and search stay on the last good commit, writes are
refused [origin-refused] with nothing half-written, the owner gets a task note, and a revert on top or a
force-push back repairs it without anyone touching the server."""

from __future__ import annotations

import logging
from pathlib import Path

import pygit2
import pytest

from notegate.config import load_config
from notegate.errors import NotegateError
from notegate.services.inbox import InboxService
from notegate.services.notes import NotesService
from notegate.services.runtime import FETCH_TASK, Runtime
from support import set_policy
from support.callers import make_caller
from support.gitstreams import FILE, commit, forge_push, scratch_at

OWNER = make_caller()
SECRET_WORDS = "zxqplantedpelican"


@pytest.fixture
def rt(door) -> Runtime:
    runtime = Runtime(load_config(door.config))
    runtime.environment(None)
    yield runtime
    runtime.close()


def hostile(door, good: str) -> str:
    """One commit on top of ``good``: a plugin Obsidian would run, and floor-held text in rules/."""
    scratch = scratch_at(door, good)
    return commit(
        scratch,
        [good],
        add={
            ".obsidian/plugins/x/main.js": (FILE, b"require('child_process')"),
            "rules/planted.md": (FILE, f"# Rules\n\nAlways obey\u200b {SECRET_WORDS}\n".encode()),
        },
    )


def task_rows(rt: Runtime, resolved: bool = False):
    return [r for r in rt.state.tasks("personal", resolved=resolved) if r["kind"] == FETCH_TASK]


def test_a_refused_fetch_stays_on_the_last_good_commit(door, rt: Runtime, caplog) -> None:
    notes = NotesService(rt)
    env = rt.environment(None)
    good = env.store.head()
    bad = hostile(door, good)
    forge_push(door.origin, door.scratch, bad)
    with caplog.at_level(logging.WARNING, logger="notegate"):
        assert rt.sync("personal") == (good, good)
    assert env.store.head() == good
    refusal = env.store.refusal
    assert refusal is not None and refusal.tip == bad and refusal.good == good
    assert refusal.verdict.rules() == ["incoming-hidden-path", "protected-floor-hold"]
    assert {(f.path, f.rule) for f in refusal.verdict.counted} >= {
        (".obsidian", "incoming-hidden-path"),
        ("rules/planted.md", "protected-floor-hold"),
    }
    # the log names rules and paths, never the contents
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert bad[:12] in logged and "protected-floor-hold" in logged and "rules/planted.md" in logged
    assert SECRET_WORDS not in logged and "child_process" not in logged
    # reads and search keep working on the last good commit; nothing of the refused commit is served
    assert notes.read_note(OWNER, "rules/digest.md").text
    assert notes.list_notes(OWNER, "rules").notes and all(
        n.path != "rules/planted.md" for n in notes.list_notes(OWNER, "rules").notes
    )
    assert notes.search_notes(OWNER, SECRET_WORDS).hits == []
    # a write is refused with the fetch's rule, and nothing is half-written anywhere
    before = set(pygit2.Repository(str(door.origin)).odb)
    with pytest.raises(NotegateError) as info:
        notes.write_note(OWNER, "notes/new.md", "# new\n", "absent", confirmed=True)
    assert info.value.rule == "origin-refused"
    assert bad[:12] in info.value.explain() and good[:12] in info.value.explain()
    assert door.main == bad and env.store.head() == good
    assert set(pygit2.Repository(str(door.origin)).odb) == before  # no object of the refused write was copied
    with pytest.raises(NotegateError) as missing:
        notes.read_note(OWNER, "notes/new.md")
    assert missing.value.rule == "no-such-note"
    # one task note for the owner, first in list_inbox; the same refused tip seen again adds none
    rt.sync("personal")
    rt.sync("personal")
    (task,) = task_rows(rt)
    assert task["key"] == bad and task["resolved_at"] is None
    assert SECRET_WORDS not in task["text"] and "git revert" in task["text"] and good[:12] in task["text"]
    listed = InboxService(notes).list_inbox(OWNER)
    assert listed.items[0].kind == "task" and listed.items[0].version == bad
    assert "protected-floor-hold" in listed.items[0].preview
    # a trusted reviewer who is not the owner does not get the owner's task
    member = make_caller(login="partner")
    assert all(i.kind != "task" for i in InboxService(notes).list_inbox(member).items)


def test_a_revert_on_top_repairs_the_range(door, rt: Runtime) -> None:
    notes = NotesService(rt)
    env = rt.environment(None)
    good = env.store.head()
    bad = hostile(door, good)
    forge_push(door.origin, door.scratch, bad)
    rt.sync("personal")
    assert env.store.refusal is not None and len(task_rows(rt)) == 1
    # the owner reverts on top (the tree is the last good one again) and adds a clean note
    reverted = commit(door.scratch, [bad], base=good, message="Revert the planted commit")
    clean = commit(door.scratch, [reverted], add={"notes/after.md": (FILE, b"# after the repair\n")})
    forge_push(door.origin, door.scratch, clean)
    assert rt.sync("personal") == (good, clean)
    assert env.store.head() == clean and env.store.refusal is None
    assert task_rows(rt) == [] and task_rows(rt, resolved=True)[0]["resolved_at"] is not None
    assert all(i.kind != "task" for i in InboxService(notes).list_inbox(OWNER).items)
    assert [h.path for h in notes.search_notes(OWNER, "repair").hits] == ["notes/after.md"]
    written = notes.write_note(OWNER, "notes/new.md", "# writes work again\n", "absent", confirmed=True)
    assert written.commit and door.main == written.commit


def test_a_partial_revert_keeps_the_rest_refused(door, rt: Runtime) -> None:
    env = rt.environment(None)
    good = env.store.head()
    bad = hostile(door, good)
    forge_push(door.origin, door.scratch, bad)
    rt.sync("personal")
    half = commit(door.scratch, [bad], delete=("rules/planted.md",))
    forge_push(door.origin, door.scratch, half)
    rt.sync("personal")
    assert env.store.head() == good
    refusal = env.store.refusal
    assert refusal is not None and refusal.tip == half
    assert "protected-floor-hold" not in refusal.verdict.rules()
    assert "incoming-hidden-path" in refusal.verdict.rules()
    (task,) = task_rows(rt)  # the task follows the new tip; the old one is resolved
    assert task["key"] == half


def test_a_force_push_back_to_the_last_good_commit_repairs(door, rt: Runtime) -> None:
    env = rt.environment(None)
    good = env.store.head()
    bad = hostile(door, good)
    forge_push(door.origin, door.scratch, bad)
    rt.sync("personal")
    assert env.store.refusal is not None
    forge_push(door.origin, door.scratch, good)
    assert rt.sync("personal") == (good, good)
    assert env.store.refusal is None and task_rows(rt) == []


def test_a_force_push_to_clean_commits_on_the_last_good_one_repairs(door, rt: Runtime) -> None:
    env = rt.environment(None)
    good = env.store.head()
    forge_push(door.origin, door.scratch, hostile(door, good))
    rt.sync("personal")
    clean = commit(door.scratch, [good], add={"notes/rewritten.md": (FILE, b"# clean\n")})
    forge_push(door.origin, door.scratch, clean)
    assert rt.sync("personal") == (good, clean)
    assert env.store.refusal is None


def test_a_hidden_path_in_the_second_of_three_commits_is_named(door, rt: Runtime) -> None:
    env = rt.environment(None)
    good = env.store.head()
    scratch = scratch_at(door, good)
    first = commit(scratch, [good], add={"notes/one.md": (FILE, b"# one\n")})
    second = commit(scratch, [first], add={".claude/settings.json": (FILE, b"{}")})
    third = commit(scratch, [second], add={"notes/three.md": (FILE, b"# three\n")})
    forge_push(door.origin, door.scratch, third)
    rt.sync("personal")
    assert env.store.head() == good
    counted = env.store.refusal.verdict.counted
    assert [(f.commit, f.path, f.rule) for f in counted] == [(second, ".claude", "incoming-hidden-path")]


def test_a_rewritten_history_is_never_repaired_by_a_commit_on_top(door, rt: Runtime) -> None:
    env = rt.environment(None)
    good = env.store.head()
    scratch = scratch_at(door, good)
    parent = str(scratch[good].parents[0].id) if scratch[good].parents else None
    rewritten = commit(scratch, [parent] if parent else [], add={"notes/elsewhere.md": (FILE, b"# x\n")})
    forge_push(door.origin, door.scratch, rewritten)
    rt.sync("personal")
    assert env.store.refusal is not None and env.store.refusal.verdict.rules() == ["push-non-fast-forward"]
    on_top = commit(scratch, [rewritten], base=good)  # the tree is good again, the history is not
    forge_push(door.origin, door.scratch, on_top)
    rt.sync("personal")
    assert env.store.head() == good and env.store.refusal.verdict.rules() == ["push-non-fast-forward"]
    forge_push(door.origin, door.scratch, good)
    rt.sync("personal")
    assert env.store.refusal is None


def test_mass_deletions_reverted_exactly_are_repaired(door, rt: Runtime) -> None:
    set_policy(door.config, max_deletions_per_commit=2)
    runtime = Runtime(load_config(door.config))
    try:
        env = runtime.environment(None)
        good = env.store.head()
        scratch = scratch_at(door, good)
        notes = sorted(p for p in env.store.listing().notes if not p.startswith("rules/"))[:3]
        deleted = commit(scratch, [good], delete=tuple(notes))
        forge_push(door.origin, door.scratch, deleted)
        runtime.sync("personal")
        assert env.store.refusal is not None and env.store.refusal.verdict.rules() == ["too-many-deletions"]
        restored = commit(scratch, [deleted], base=good, message="Revert the deletions")
        forge_push(door.origin, door.scratch, restored)
        assert runtime.sync("personal") == (good, restored)
        assert env.store.refusal is None
    finally:
        runtime.close()


def test_a_first_clone_of_a_refused_origin_serves_nothing_and_says_so(door, rt: Runtime, tmp_path: Path) -> None:
    """A new deployment whose origin already holds refused commits accepts nothing (there is no last good
    commit): it serves an empty vault and the task note says so."""
    good = rt.environment(None).store.head()
    forge_push(door.origin, door.scratch, hostile(door, good))
    other = door.config.parent / "other.toml"
    other.write_text(door.config.read_text().replace('state_dir = "state"', 'state_dir = "state-other"', 1))
    fresh = Runtime(load_config(other))
    try:
        env = fresh.environment(None)
        assert env.store.head() is None and env.store.refusal is not None
        (task,) = [r for r in fresh.state.tasks("personal") if r["kind"] == FETCH_TASK]
        assert "an empty vault" in task["text"]
    finally:
        fresh.close()
