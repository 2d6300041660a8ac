"""The runtime on real git origins: clone and fetch on open, serving the last state when the origin is gone,
sync, classification by policy, and environments kept apart."""

from __future__ import annotations

import dataclasses
import logging
import threading
from pathlib import Path

import pygit2
import pytest

from notegate.config import load_config
from notegate.errors import OriginUnavailable, UnknownEnvironment
from notegate.policy import Policy
from notegate.services.notes import NotesService
from notegate.services.runtime import Runtime, policy_fingerprint
from notegate.state import StateDB
from support import set_policy
from support.callers import make_caller

OWNER = make_caller()


def second_clone(vault: Path, state_dir: str = "state2") -> Path:
    """Another deployment of the same origin (its own clone and index): a foreign writer."""
    other = vault.parent / f"{state_dir}.toml"
    other.write_text(vault.read_text().replace('state_dir = "state"', f'state_dir = "{state_dir}"', 1))
    return other


def origin_head(vault: Path) -> str:
    return str(pygit2.Repository(str(vault.parent / "origin.git")).references["refs/heads/main"].target)


@pytest.fixture
def foreign(vault: Path):
    """Another replica: its own clone and index, the same state database (replicas share one; a commit no
    replica recorded is refused as forged provenance: tests/sync/test_provenance_door.py)."""
    runtime = Runtime(load_config(second_clone(vault)))
    own = runtime.state
    runtime.state = StateDB.for_config(load_config(vault))
    own.close()
    yield runtime
    runtime.close()


def test_opening_an_environment_clones_the_origin(vault: Path, foreign: Runtime) -> None:
    env = foreign.environment(None)
    assert (foreign.env_dir("personal") / "vault.git" / "HEAD").exists()
    assert foreign.env_dir("personal") == load_config(second_clone(vault)).state_dir / "envs" / "personal"
    assert env.store.head() == origin_head(vault)
    assert len(env.store.listing().notes) == 8
    assert env.index.indexed_commit == env.store.head() and env.index.count() == 8


def test_an_environment_is_opened_once(rt: Runtime) -> None:
    assert rt.environment(None) is rt.environment("personal")


def test_an_unknown_environment_is_refused(rt: Runtime) -> None:
    with pytest.raises(UnknownEnvironment) as info:
        rt.environment("work")
    assert info.value.rule == "unknown-environment"


def test_opening_fetches_what_others_pushed(vault: Path, foreign: Runtime) -> None:
    pushed = NotesService(foreign).write_note(OWNER, "ideas/elsewhere.md", "pelican\n", "absent", confirmed=True)
    rt = Runtime(load_config(vault))  # its clone exists already, one commit behind
    try:
        env = rt.environment(None)
        assert env.store.head() == pushed.commit
        assert [h.path for h in env.index.search("pelican")] == ["ideas/elsewhere.md"]
    finally:
        rt.close()


def test_an_unreachable_origin_serves_the_last_fetched_state(vault: Path, caplog) -> None:
    head = origin_head(vault)
    origin = vault.parent / "origin.git"
    origin.rename(vault.parent / "origin-away.git")
    rt = Runtime(load_config(vault))
    try:
        with caplog.at_level(logging.WARNING, logger="notegate"):
            env = rt.environment(None)
        assert "environment personal: serving the last fetched state" in caplog.text
        assert env.store.head() == head
        assert NotesService(rt).read_note(OWNER, "rules/digest.md").text.startswith("# House rules")
        with pytest.raises(OriginUnavailable) as info:
            rt.sync("personal")
        assert info.value.rule == "origin-unavailable"
        assert str(vault.parent) not in info.value.explain()  # no machine path in the refusal
        with pytest.raises(OriginUnavailable) as write:
            NotesService(rt).write_note(OWNER, "ideas/x.md", "x\n", "absent", confirmed=True)
        assert write.value.rule == "origin-unavailable"
        assert env.store.head() == head  # nothing acknowledged
        with caplog.at_level(logging.WARNING, logger="notegate"):
            rt.sync_all()  # logs, does not raise
        assert "fetch failed for environment personal" in caplog.text
    finally:
        rt.close()
        (vault.parent / "origin-away.git").rename(origin)


def test_sync_picks_up_a_foreign_push(rt: Runtime, foreign: Runtime) -> None:
    env = rt.environment(None)
    before = env.store.head()
    assert rt.sync("personal") == (before, before)  # nothing new
    foreign.environment(None)
    pushed = NotesService(foreign).write_note(OWNER, "ideas/far.md", "albatross\n", "absent", confirmed=True)
    assert env.index.search("albatross") == []
    assert rt.sync("personal") == (before, pushed.commit)
    assert env.store.head() == pushed.commit
    assert [h.path for h in env.index.search("albatross")] == ["ideas/far.md"]
    assert env.index.indexed_commit == pushed.commit


def test_classify_follows_the_default_policy(rt: Runtime) -> None:
    assert rt.classify("private/diary.md") == (True, False)
    assert rt.classify("Private/Diary.md") == (True, False)  # case does not hide a private note
    assert rt.classify("inbox/captures/a.md") == (False, True)
    assert rt.classify("INBOX/captures/a.md") == (False, True)
    assert rt.classify("ideas/a.md") == (False, False)
    assert rt.classify("inboxes/a.md") == (False, False)


def test_classify_follows_a_changed_policy(vault: Path) -> None:
    set_policy(vault, private=["secret/**", "people/*.md"])
    rt = Runtime(load_config(vault))
    try:
        assert rt.classify("secret/a/b.md") == (True, False)
        assert rt.classify("people/ann.md") == (True, False)
        assert rt.classify("private/diary.md") == (False, False)
        env = rt.environment(None)  # the index was built under the old policy: it reclassified
        assert [h.path for h in env.index.search("invisible", include_private=False)] == ["private/README.md"]
    finally:
        rt.close()


def test_the_policy_fingerprint_follows_only_what_classifies_paths() -> None:
    base = Policy()
    assert policy_fingerprint(base) == policy_fingerprint(Policy())
    assert policy_fingerprint(base) != policy_fingerprint(Policy(private=("secret/**",)))
    assert policy_fingerprint(base) == policy_fingerprint(Policy(max_note_bytes=base.max_note_bytes + 1))


@pytest.fixture
def two_envs(vault: Path) -> Path:
    pygit2.init_repository(str(vault.parent / "household.git"), bare=True, initial_head="main")
    vault.write_text(
        vault.read_text().replace(
            "[policy]", '[environments.household]\norigin = "household.git"\nowner = "partner"\n\n[policy]', 1
        )
    )
    return vault


def test_two_environments_are_isolated(two_envs: Path) -> None:
    rt = Runtime(load_config(two_envs))
    try:
        personal, household = rt.environment("personal"), rt.environment("household")
        assert rt.env_dir("personal") != rt.env_dir("household")
        assert household.store.head() is None and household.store.listing().notes == {}
        partner = dataclasses.replace(make_caller(login="partner"), environment="household")
        done = NotesService(rt).write_note(
            partner, "ideas/shared.md", "gazelle\n", "absent", confirmed=True, environment="household"
        )
        assert household.store.head() == done.commit
        assert "ideas/shared.md" not in personal.store.listing().notes
        assert personal.index.search("gazelle") == []
        assert [h.path for h in household.index.search("gazelle")] == ["ideas/shared.md"]
        personal_origin = pygit2.Repository(str(two_envs.parent / "origin.git"))
        assert done.commit not in personal_origin  # the commit went to its own origin only
        assert len(personal.store.listing().notes) == 8
    finally:
        rt.close()


def test_open_all_with_a_background_index(two_envs: Path) -> None:
    rt = Runtime(load_config(two_envs))
    try:
        rt.open_all(background_index=True)
        for thread in [t for t in threading.enumerate() if t.name.startswith("index-")]:
            thread.join(timeout=60)
        assert rt.environment("personal").index.indexed_commit == rt.environment("personal").store.head()
        assert rt.environment("personal").index.count() == 8
        assert rt.environment("household").index.count() == 0
    finally:
        rt.close()


def test_a_read_during_a_first_start_index_build_answers_from_git(vault: Path) -> None:
    """Reads are served before the index is ready: while a full build holds the index (here paused in its
    progress callback, a real build in progress), read_note answers at once with the note's last commit
    from git; it waited for the whole build before (31 s at 100,000 notes in bench_scale)."""
    from notegate.services.notes import NotesService

    rt = Runtime(load_config(vault))
    try:
        notes = NotesService(rt)
        caller = make_caller()
        done = notes.write_note(caller, "ideas/during.md", "# During\n", "absent", confirmed=True)
        env = rt.environment(None)
        building, release = threading.Event(), threading.Event()

        def pause(_count: int) -> None:
            building.set()
            release.wait(60)

        builder = threading.Thread(target=env.index.rebuild, args=(env.store, pause), daemon=True)
        builder.start()
        assert building.wait(30), "the build never started"
        answered: list = []
        reader = threading.Thread(target=lambda: answered.append(notes.read_note(caller, "ideas/during.md")))
        reader.start()
        reader.join(20)
        still_building = builder.is_alive()
        release.set()
        builder.join(60)
        assert still_building and answered, "read_note waited for the index build"
        assert answered[0].text == "# During\n"
        assert answered[0].last_change is not None and answered[0].last_change.commit == done.commit
    finally:
        rt.close()


def test_the_runtime_bounds_libgit2s_pack_windows(rt: Runtime) -> None:
    """A server's listing and index build would otherwise keep every pack page they touched resident (at
    100,000 notes: 59 MB for the listing, the whole pack for the index build)."""
    from notegate.vault.store import PACK_MAPPED_LIMIT_BYTES, PACK_WINDOW_BYTES

    assert pygit2.settings.mwindow_size == PACK_WINDOW_BYTES
    assert pygit2.settings.mwindow_mapped_limit == PACK_MAPPED_LIMIT_BYTES
