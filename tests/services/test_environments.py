"""Environments are isolated: a credential works in exactly one, and others are not there for it."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pygit2
import pytest

from notegate.config import load_config
from notegate.errors import UnknownEnvironment
from notegate.services.inbox import InboxService
from notegate.services.notes import NotesService
from notegate.services.runtime import Runtime
from support import notegate
from support.callers import make_caller


@pytest.fixture
def two_envs(vault: Path) -> Path:
    pygit2.init_repository(str(vault.parent / "household.git"), bare=True, initial_head="main")
    text = vault.read_text().replace(
        "[policy]",
        '[environments.household]\norigin = "household.git"\nowner = "partner"\nmembers = ["kid"]\n\n[policy]',
        1,
    )
    vault.write_text(text)
    return vault


def test_a_credential_cannot_reach_another_environment(two_envs: Path) -> None:
    rt = Runtime(load_config(two_envs))
    notes = NotesService(rt)
    owner = make_caller(login="owner")
    notes.write_note(owner, "projects/taxes.md", "owner's tax notes\n", "absent", confirmed=True)
    kid = make_caller(tier="restricted", client_class="hosted", login="kid")
    kid = kid.__class__(**{**kid.__dict__, "environment": "household"})
    partner = make_caller(tier="trusted", login="partner")
    partner = partner.__class__(**{**partner.__dict__, "environment": "household"})
    for call in (
        lambda: notes.read_note(kid, "projects/taxes.md", environment="personal"),
        lambda: notes.search_notes(kid, "tax", environment="personal"),
        lambda: InboxService(notes).inbox_write(kid, "capture", "x", title="x", environment="personal"),
        lambda: notes.write_note(partner, "rules/digest.md", "x\n", "absent", confirmed=True, environment="personal"),
        lambda: notes.list_notes(owner, environment="household"),  # the other way round too
    ):
        with pytest.raises(UnknownEnvironment) as info:
            call()
        assert "household" not in info.value.explain() or "this credential is for 'household'" in info.value.explain()
        assert "personal, household" not in info.value.explain()  # never lists the other environments
    assert notes.list_notes(kid).notes == []  # its own (empty) environment works
    rt.close()


def test_token_create_refuses_a_login_outside_the_environment(two_envs: Path) -> None:
    def create(*args: str) -> subprocess.CompletedProcess:
        return notegate("token", "create", "--config", str(two_envs), "--name", "t", "--class", "hosted", *args)

    refused = create("--environment", "household", "--login", "stranger")
    assert refused.returncode == 2 and "neither the owner nor a member" in refused.stderr
    assert create("--environment", "household", "--login", "kid").returncode == 0
    assert create("--login", "owner").returncode == 0
