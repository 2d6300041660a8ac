"""The runtime's side of an origin that lost commits the server acknowledged and that the server cannot
re-apply alone (the owner changed the same note differently): the owner's task names the lost commits, writes
are refused [origin-refused], the origin is left as the owner made it, and pushing the server's commit back
resolves the task."""

from __future__ import annotations

import pygit2
import pytest

from notegate.config import load_config
from notegate.errors import NotegateError
from notegate.services.inbox import InboxService
from notegate.services.notes import NotesService
from notegate.services.runtime import FETCH_TASK, Runtime
from support.callers import make_caller
from support.gitstreams import FILE, commit, forge_push, scratch_at

OWNER = make_caller()


@pytest.fixture
def rt(door) -> Runtime:
    runtime = Runtime(load_config(door.config))
    runtime.environment(None)
    yield runtime
    runtime.close()


def test_a_lost_commit_the_origin_changed_too_is_a_task_naming_it(door, rt: Runtime) -> None:
    notes = NotesService(rt)
    env = rt.environment(None)
    good = env.store.head()
    scratch = scratch_at(door, good)
    ours = notes.write_note(OWNER, "notes/shared.md", "# ours\n", "absent", confirmed=True).commit
    theirs = commit(scratch, [good], add={"notes/shared.md": (FILE, b"# theirs\n")})
    forge_push(door.origin, door.scratch, theirs)
    assert rt.sync("personal") == (ours, ours)
    refusal = env.store.refusal
    assert refusal is not None and refusal.verdict.rules() == ["push-non-fast-forward"]
    (task,) = [r for r in rt.state.tasks("personal") if r["kind"] == FETCH_TASK]
    assert ours[:12] in task["text"] and "notes/shared.md" in task["text"] and "# ours" not in task["text"]
    assert InboxService(notes).list_inbox(OWNER).items[0].kind == "task"
    with pytest.raises(NotegateError) as refused:
        notes.write_note(OWNER, "notes/other.md", "# x\n", "absent", confirmed=True)
    assert refused.value.rule == "origin-refused"
    assert door.main == theirs
    # the owner pushes the server's commit back (the origin has its objects: it held it before)
    pygit2.Repository(str(door.origin)).references.create("refs/heads/main", pygit2.Oid(hex=ours), force=True)
    rt.sync("personal")
    assert env.store.refusal is None and env.store.head() == ours
    assert [r for r in rt.state.tasks("personal") if r["kind"] == FETCH_TASK] == []
