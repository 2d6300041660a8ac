"""The vectors beside the index follow git: embedded in the background after writes, dropped with deleted
notes, rebuilt from git when their file is gone or was made by another model."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from notegate.config import load_config
from notegate.services.notes import NotesService
from notegate.services.runtime import Runtime
from notegate.vault.meaning_installed import install_hint, missing_parts
from support.callers import make_caller

if missing_parts():  # the `meaning` extra and the model's files; CI sets NOTEGATE_REQUIRE_MEANING=1
    if os.environ.get("NOTEGATE_REQUIRE_MEANING") == "1":
        raise RuntimeError(f"search by meaning is not installed: {install_hint(missing_parts())}")
    pytest.skip(f"search by meaning is not installed ({install_hint(missing_parts())})", allow_module_level=True)

OWNER = make_caller(tier="trusted", client_class="workstation", login="owner")


@pytest.fixture
def meaning_vault(vault: Path) -> Path:
    text = vault.read_text()
    vault.write_text(text.replace("\nsearch_meaning = false\n", "\nsearch_meaning = true\n", 1))
    return vault


def _vectors(rt: Runtime) -> dict[str, str]:
    env = rt.environment(None)
    assert env.meaning is not None and env.meaning.wait_idle(120)
    return env.meaning.vectors.blobs()


def test_vectors_follow_writes_and_deletes_and_are_rebuilt_from_git(meaning_vault: Path) -> None:
    rt = Runtime(load_config(meaning_vault))
    try:
        svc = NotesService(rt)
        for name in ("a", "b", "c"):
            svc.write_note(OWNER, f"ideas/{name}.md", f"# {name}\n\nabout {name}\n", "absent", confirmed=True)
        first = _vectors(rt)
        assert first == rt.environment(None).index.paths()  # every indexed note, at the blob it was made from
        assert {"ideas/a.md", "ideas/b.md", "ideas/c.md"} <= set(first)
        svc.delete_note(OWNER, "ideas/b.md", first["ideas/b.md"], confirmed=True)
        assert "ideas/b.md" not in _vectors(rt)
        svc.write_note(OWNER, "ideas/a.md", "# a\n\nchanged\n", first["ideas/a.md"], confirmed=True)
        assert _vectors(rt)["ideas/a.md"] != first["ideas/a.md"]
        after = _vectors(rt)
    finally:
        rt.close()
    config = load_config(meaning_vault)
    state = config.state_dir / "envs" / config.default_environment
    (state / "meaning.sqlite").unlink()
    for stale in state.glob("meaning.sqlite-*"):
        stale.unlink()
    rt = Runtime(load_config(meaning_vault))
    try:
        assert _vectors(rt) == after  # rebuilt from git
    finally:
        rt.close()
    with sqlite3.connect(state / "meaning.sqlite") as db:
        db.execute("UPDATE meta SET value = 'another model' WHERE key = 'model'")
    rt = Runtime(load_config(meaning_vault))
    try:
        assert _vectors(rt) == after  # a file made by another model is emptied and rebuilt
    finally:
        rt.close()

