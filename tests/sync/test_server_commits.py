"""The server keeps the git door's rules on its own pushes (libgit2's local transport runs no hooks): what
the hook would refuse the server refuses first, and everything the server commits passes the validator."""

from __future__ import annotations

from pathlib import Path

import pygit2
import pytest

from notegate.config import load_config
from notegate.errors import NotegateError
from notegate.services.notes import NotesService
from notegate.sync.incoming import inspect_update
from support.callers import make_caller

OWNER = make_caller()


def _write(notes: NotesService, path: str, text: str, base: str = "absent") -> str:
    result = notes.write_note(OWNER, path, text, base, confirmed=True)
    assert result.new_revision
    return result.new_revision


@pytest.mark.parametrize(
    ("path", "rule"),
    [
        (".obsidian/plugins/x/main.md", "path-hidden-segment"),
        ("notes/.claude/x.md", "path-hidden-segment"),
        ("notes/git~1/x.md", "path-reserved-name"),
        ("notes/\uff0eobsidian/x.md", "path-lookalike-separator"),
        ("notes/CLAUDE.md", "instruction-file-name"),
        ("notes/a:b.md", "path-reserved-char"),
        ("notes/tool.exe", "path-not-markdown"),
    ],
)
def test_what_the_hook_refuses_the_server_refuses_first(notes: NotesService, path: str, rule: str) -> None:
    with pytest.raises(NotegateError) as info:
        notes.write_note(OWNER, path, "# x\n", "absent", confirmed=True)
    assert info.value.rule == rule


def test_everything_the_server_commits_passes_the_validator(vault: Path, notes: NotesService) -> None:
    """A session of writes, appends, moves and deletes through the service; then every commit in the
    origin's history, from the first, is inspected with the rules the hook applies, owner or not."""
    config = load_config(vault)
    revisions = {}
    for i in range(25):
        revisions[f"notes/n{i}.md"] = _write(notes, f"notes/n{i}.md", f"# Note {i}\n\nsome text {i}\n")
    revisions["handoffs/p.md"] = _write(notes, "handoffs/p.md", "# Handoff\n\n## Where it stopped\nhere\n")
    appended = notes.append_note(OWNER, "notes/n0.md", "\nmore\n", revisions["notes/n0.md"], confirmed=True)
    assert appended.new_revision
    for i in range(1, 10):
        notes.move_note(OWNER, f"notes/n{i}.md", f"archive/n{i}.md", revisions[f"notes/n{i}.md"], confirmed=True)
    for i in range(10, 25):
        notes.delete_note(OWNER, f"notes/n{i}.md", revisions[f"notes/n{i}.md"], confirmed=True)
    origin = pygit2.Repository(config.environment(None).origin_url)
    tip = str(origin.references["refs/heads/main"].target)
    inspection = inspect_update(origin, None, tip, config.policy)
    assert inspection.ok, [f.line() for f in inspection.findings]
    assert inspection.commits >= 1 + 25 + 1 + 1 + 9 + 15
