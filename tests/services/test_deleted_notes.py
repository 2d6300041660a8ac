"""NotesService.deleted_notes: notes absent at the tip, newest deletion first, with the change that deleted
them, under the same visibility as every read (a restricted caller never learns a private note existed), and
refused to a machine by its exact rule."""

from __future__ import annotations

import pytest

from notegate.errors import PolicyDenied
from notegate.services.notes import NotesService
from notegate.vault.store import ABSENT
from support.callers import make_caller


def _write(notes: NotesService, caller, path: str, text: str) -> str:
    return notes.write_note(caller, path, text, ABSENT, confirmed=True).commit or ""


def _delete(notes: NotesService, caller, path: str) -> str:
    base = notes.read_note(caller, path).revision
    return notes.delete_note(caller, path, base, confirmed=True).commit or ""


def test_deleted_notes_newest_first_visible_only(notes: NotesService, trusted) -> None:
    _write(notes, trusted, "notes/a.md", "a\n")
    _write(notes, trusted, "private/secret-plan.md", "p\n")
    _write(notes, trusted, "notes/b.md", "b\n")
    _delete(notes, trusted, "notes/a.md")
    gone_private = _delete(notes, trusted, "private/secret-plan.md")
    gone_b = _delete(notes, trusted, "notes/b.md")
    found = notes.deleted_notes(trusted)
    assert [d.path for d in found] == ["notes/b.md", "private/secret-plan.md", "notes/a.md"]
    assert found[0].deleted_by.commit == gone_b and found[1].deleted_by.commit == gone_private
    restricted = make_caller(tier="restricted")
    assert [d.path for d in notes.deleted_notes(restricted)] == ["notes/b.md", "notes/a.md"]
    assert [d.path for d in notes.deleted_notes(trusted, limit=1)] == ["notes/b.md"]
    _write(notes, trusted, "notes/a.md", "again\n")  # back at the tip: no longer deleted
    assert "notes/a.md" not in [d.path for d in notes.deleted_notes(trusted)]


def test_a_machine_is_refused_by_its_rule(notes: NotesService) -> None:
    with pytest.raises(PolicyDenied) as refused:
        notes.deleted_notes(make_caller(tier="machine", client_class="machine"))
    assert refused.value.rule == "machine-no-mcp"
