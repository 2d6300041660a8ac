"""The shared fixtures stand for what they claim: the `vault` fixture (a copy of a per-worker template) is
the directory `notegate init` makes, down to the server clone's origin."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pygit2

from notegate.config import load_config
from notegate.services.notes import NotesService
from notegate.services.runtime import Runtime
from notegate.services.vaultinit import init_directory
from support import mint
from support.callers import make_caller, without_meaning
from support.callers import vault_template as _template


def _clone_config(root: Path) -> str:
    clone = root / "state" / "envs" / "personal" / "vault.git" / "config"
    listed = subprocess.run(["git", "config", "--file", str(clone), "-l"], capture_output=True, text=True, check=True)
    return listed.stdout.replace(str(root), "ROOT")


def _files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if "objects" not in p.parts)


def test_the_vault_fixture_is_what_init_makes(vault: Path, tmp_path: Path) -> None:
    fresh = init_directory(tmp_path / "fresh")
    assert "search_meaning = false" in vault.read_text()  # meaning off, whatever the default (without_meaning)
    assert vault.read_text() == without_meaning(fresh.read_text())
    assert _files(vault.parent) == _files(fresh.parent)
    assert not list(fresh.parent.rglob("meaning.sqlite*"))  # init embeds nothing: the server does when it starts
    assert _clone_config(vault.parent) == _clone_config(fresh.parent)  # its own origin, not the template's
    for config in (vault, fresh):
        origin = pygit2.Repository(str(config.parent / "origin.git"))
        tree = origin[origin.references["refs/heads/main"].target].peel(pygit2.Tree)
        assert "rules/digest.md" in tree


def test_a_write_to_the_copy_reaches_its_own_origin_only(vault: Path, tmp_path_factory) -> None:
    runtime = Runtime(load_config(vault))
    try:
        done = NotesService(runtime).write_note(make_caller(), "mine.md", "# Mine\n", "absent", confirmed=True)
    finally:
        runtime.close()
    assert done.new_revision != "absent"
    mint(vault, name="only-here")
    heads = {}
    for name, root in (("copy", vault.parent), ("template", _template(tmp_path_factory))):
        origin = pygit2.Repository(str(root / "origin.git"))
        heads[name] = origin[origin.references["refs/heads/main"].target].peel(pygit2.Tree)
    assert "mine.md" in heads["copy"] and "mine.md" not in heads["template"]
    assert b"only-here" not in (_template(tmp_path_factory) / "state" / "state.sqlite").read_bytes()
