"""Environments fail alone: two environments, each with its own origin; one origin gone, refused or hanging
never stops the other's reads, writes or fetch.  Outside your scope an environment is not there."""

from __future__ import annotations

import dataclasses
import logging
import socket
import threading
from pathlib import Path

import pygit2
import pytest

from notegate.config import load_config
from notegate.errors import NotegateError
from notegate.services.notes import NotesService
from notegate.services.runtime import Runtime
from notegate.state import StateDB
from support.callers import make_caller
from support.gitstreams import FILE, commit, forge_push

OWNER = make_caller()
PARTNER = dataclasses.replace(make_caller(login="partner"), environment="household")


def household_config(vault: Path, origin: str = "household.git") -> Path:
    if origin == "household.git":
        pygit2.init_repository(str(vault.parent / "household.git"), bare=True, initial_head="main")
    text = vault.read_text().replace(
        "[policy]",
        f'[environments.household]\norigin = "{origin}"\nowner = "partner"\nmembers = ["kid"]\n\n[policy]',
        1,
    )
    vault.write_text(text)
    return vault


def foreign_of(vault: Path) -> Runtime:
    """Another replica of the same origins (its own clones): a writer the first server did not see.  It shares
    the state database, as replicas do: a commit no replica recorded is refused as forged provenance."""
    other = vault.parent / "foreign.toml"
    other.write_text(vault.read_text().replace('state_dir = "state"', 'state_dir = "state-foreign"', 1))
    runtime = Runtime(load_config(other))
    runtime.state = StateDB.for_config(load_config(vault))
    return runtime


def test_one_environment_down_or_refused_never_blocks_the_other(vault: Path, tmp_path: Path) -> None:
    config = household_config(vault)
    rt = Runtime(load_config(config))
    foreign = foreign_of(config)
    notes, elsewhere = NotesService(rt), NotesService(foreign)
    try:
        rt.open_all()
        notes.write_note(PARTNER, "notes/first.md", "# first\n", "absent", confirmed=True, environment="household")
        household = rt.environment("household")
        personal = rt.environment("personal")
        good = personal.store.head()

        # A's origin unreachable: B's fetch advances and B's writes succeed; A's writes are refused
        origin = config.parent / "origin.git"
        origin.rename(config.parent / "origin-away.git")
        pushed = elsewhere.write_note(PARTNER, "notes/foreign.md", "# from elsewhere\n", "absent", confirmed=True)
        rt.sync_all()
        assert household.store.head() == pushed.commit
        assert notes.write_note(PARTNER, "notes/b1.md", "# b1\n", "absent", confirmed=True).commit
        with pytest.raises(NotegateError) as down:
            notes.write_note(OWNER, "notes/a1.md", "# a1\n", "absent", confirmed=True)
        assert down.value.rule == "origin-unavailable"
        assert notes.read_note(OWNER, "rules/digest.md").text  # A's reads go on from its last fetched state

        # A's fetch refused: the same holds
        (config.parent / "origin-away.git").rename(origin)
        scratch_dir = tmp_path / "scratch.git"
        scratch = pygit2.clone_repository(str(origin), str(scratch_dir), bare=True)
        bad = commit(scratch, [good], add={".obsidian/plugins/x/main.js": (FILE, b"x")})
        forge_push(origin, scratch, bad)
        again = elsewhere.write_note(PARTNER, "notes/foreign2.md", "# again\n", "absent", confirmed=True)
        rt.sync_all()
        assert personal.store.head() == good and personal.store.refusal is not None
        assert household.store.head() == again.commit and household.store.refusal is None
        assert notes.write_note(PARTNER, "notes/b2.md", "# b2\n", "absent", confirmed=True).commit
        with pytest.raises(NotegateError) as refused:
            notes.write_note(OWNER, "notes/a2.md", "# a2\n", "absent", confirmed=True)
        assert refused.value.rule == "origin-refused"
        assert [r["kind"] for r in rt.state.tasks("personal")] == ["fetch-refused"]
        assert rt.state.tasks("household") == []
    finally:
        foreign.close()
        rt.close()


def test_outside_your_scope_an_environment_is_no_such_environment(vault: Path) -> None:
    config = household_config(vault)
    rt = Runtime(load_config(config))
    notes = NotesService(rt)
    try:
        stranger = make_caller(login="owner")  # the owner of personal: not a member of household
        kid = dataclasses.replace(
            make_caller(tier="restricted", client_class="hosted", login="kid"), environment="household"
        )
        for caller, where in ((stranger, "household"), (kid, "personal")):
            with pytest.raises(NotegateError) as info:
                notes.list_notes(caller, environment=where)
            assert info.value.rule == "unknown-environment"
            assert "personal, household" not in info.value.explain()
    finally:
        rt.close()


class SilentOrigin:
    """A TCP server that accepts connections and never answers: an origin that hangs."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.port = self.sock.getsockname()[1]
        self.conns: list[socket.socket] = []
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.conns.append(conn)

    def close(self) -> None:
        for conn in self.conns:
            conn.close()
        self.sock.close()


def test_a_hanging_origin_holds_up_only_its_own_environment(vault: Path, caplog) -> None:
    silent = SilentOrigin()
    config = household_config(vault, origin=f"http://127.0.0.1:{silent.port}/household.git")
    rt = Runtime(load_config(config))
    foreign = foreign_of(vault)
    try:
        personal = rt.environment("personal")
        pushed = NotesService(foreign).write_note(OWNER, "notes/far.md", "# far\n", "absent", confirmed=True)
        with caplog.at_level(logging.WARNING, logger="notegate"):
            rt.sync_all(wait_seconds=2)  # household's first open hangs in its fetch; personal's goes on
            assert personal.store.head() == pushed.commit
            assert NotesService(rt).write_note(OWNER, "notes/near.md", "# near\n", "absent", confirmed=True).commit
            rt.sync_all(wait_seconds=2)
        assert "environment household: the previous fetch is still running; skipped" in caplog.text
    finally:
        silent.close()  # the hanging fetch fails now and its thread ends
        foreign.close()
        rt.close()
