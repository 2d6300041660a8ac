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


def test_only_the_hits_returned_are_described(meaning_vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A hit's snippet reads its note from git and scans it: the keyword hits that the fusion with meaning
    drops are never described (before: every keyword hit was, then fused, then some were thrown away).  The
    meaning list is fixed here (one note, holding no word of the query), so the fusion is known: the first
    keyword hit stays first (it holds every word), the meaning hit outranks the second."""
    import notegate.vault.query as query

    rt = Runtime(load_config(meaning_vault))
    try:
        svc = NotesService(rt)
        notes = {
            "ideas/plan.md": "# Plan\n\nthe plan for spring, and its plan b\n",
            "ideas/other.md": "# Other\n\nrelease notes, a plan later, and more words around it\n",
            "ideas/copies.md": "# Back up your files\n\nCopy the vault folder to another disk every week.\n",
        }
        for path, text in notes.items():
            svc.write_note(OWNER, path, text, "absent", confirmed=True)
        env = rt.environment(None)
        assert env.meaning is not None and env.meaning.wait_idle(120)
        monkeypatch.setattr(env.meaning, "search", lambda *a, **k: [("ideas/copies.md", 0.9)])
        made: list[int] = []
        real = query.front_matter_end  # make_snippet asks it once per snippet, and nothing else of query does

        def counted(text: str) -> int:
            made.append(1)
            return real(text)

        monkeypatch.setattr(query, "front_matter_end", counted)
        found = svc.search_notes(OWNER, "plan", limit=2)
        assert [h.matched for h in found.hits] == ["all-words", "meaning"], found
        assert found.hits[1].path == "ideas/copies.md" and found.hits[1].snippet.startswith("Back up your files")
        assert len(made) == 2, made  # the two hits returned, not the keyword hit the meaning hit outranked
        assert found.more  # three notes found for two places
    finally:
        rt.close()


def test_a_write_through_the_service_embeds_only_its_note(meaning_vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The background catch-up after a write embeds that note alone and never reads every index row (before:
    each catch-up compared all the index's rows with all the vectors, for one changed note)."""
    from notegate.vault.index import SearchIndex
    from notegate.vault.meaning import Embedder, note_text

    rt = Runtime(load_config(meaning_vault))
    try:
        svc = NotesService(rt)
        _vectors(rt)  # the first catch-up of the process: every row compared, once
        embedded: list[str] = []
        real = Embedder.embed

        def counted(self: Embedder, texts: list[str]):
            embedded.extend(texts)
            return real(self, texts)

        def every_row(self: SearchIndex) -> dict[str, str]:
            raise AssertionError("a one-note catch-up read every index row")

        monkeypatch.setattr(Embedder, "embed", counted)
        monkeypatch.setattr(SearchIndex, "paths", every_row)
        svc.write_note(OWNER, "ideas/one.md", "# One\n\nabout one thing\n", "absent", confirmed=True)
        env = rt.environment(None)
        assert env.meaning is not None and env.meaning.wait_idle(120)
        assert embedded == [note_text("ideas/one.md", b"# One\n\nabout one thing\n")]
        monkeypatch.undo()
        assert env.meaning.vectors.blobs() == env.index.paths()
    finally:
        rt.close()


def test_every_note_the_query_names_comes_before_the_notes_only_meaning_found(
    meaning_vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 33: a query that names a note ranks it first.  Four language folders each hold a note called
    "Tags" and a long meaning list outranks a single keyword hit by rank: every named note stays on top, in
    the hybrid as in keyword search (before: named notes past the first were fused as plain keyword hits, and
    the Obsidian help vault lost one of its 200 exact-title queries to meaning neighbours)."""
    rt = Runtime(load_config(meaning_vault))
    try:
        svc = NotesService(rt)
        named = [f"{lang}/Tags.md" for lang in ("da", "de", "en", "km")]
        for path in named:
            svc.write_note(OWNER, path, "# Tags\n\nHow to tag a note.\n", "absent", confirmed=True)
        near = [f"release/v{i}.md" for i in range(6)]
        for path in near:
            svc.write_note(OWNER, path, "# Release\n\nchanges\n", "absent", confirmed=True)
        env = rt.environment(None)
        assert env.meaning is not None and env.meaning.wait_idle(120)
        monkeypatch.setattr(env.meaning, "search", lambda *a, **k: [(p, 0.9) for p in near])
        found = svc.search_notes(OWNER, "tags", limit=4)
        assert [h.path for h in found.hits] == named, found
        assert {h.part for h in found.hits} == {"title"}
        assert found.more
    finally:
        rt.close()


def test_a_write_that_leaves_the_embedded_text_as_it_was_keeps_its_vector(
    meaning_vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A note is embedded by its title and first NOTE_CHARS characters: an append past them (a log, a handoff)
    keeps the vector, recorded against the new blob, without embedding the note again; a change to its start
    embeds it again."""
    from notegate.vault.meaning import NOTE_CHARS, Embedder

    rt = Runtime(load_config(meaning_vault))
    try:
        svc = NotesService(rt)
        start = "# Log\n\n" + "an entry about the spring garden plan\n" * (NOTE_CHARS // 30)
        svc.write_note(OWNER, "log/garden.md", start, "absent", confirmed=True)
        before = _vectors(rt)
        env = rt.environment(None)
        assert env.meaning is not None
        kept = env.meaning.vectors.sources(["log/garden.md"])["log/garden.md"]
        embedded: list[str] = []
        real = Embedder.embed

        def counted(self: Embedder, texts: list[str]):
            embedded.extend(texts)
            return real(self, texts)

        monkeypatch.setattr(Embedder, "embed", counted)
        entry = "- a new entry at the end\n"
        svc.append_note(OWNER, "log/garden.md", entry, before["log/garden.md"], confirmed=True)
        after = _vectors(rt)
        assert after["log/garden.md"] != before["log/garden.md"]  # the new blob is recorded
        assert after == env.index.paths()
        assert embedded == []
        assert env.meaning.vectors.sources(["log/garden.md"])["log/garden.md"] == kept  # the same vector
        svc.write_note(
            OWNER, "log/garden.md", "# Log\n\nabout the harbour\n" + start, after["log/garden.md"], confirmed=True
        )
        _vectors(rt)
        assert len(embedded) == 1 and "harbour" in embedded[0]
    finally:
        rt.close()


def test_a_vectors_file_of_the_layout_before_is_rebuilt(meaning_vault: Path) -> None:
    """A vectors file without the text digests (the layout before) is dropped and rebuilt from git."""
    rt = Runtime(load_config(meaning_vault))
    try:
        NotesService(rt).write_note(OWNER, "ideas/a.md", "# a\n\nabout a\n", "absent", confirmed=True)
        made = _vectors(rt)
    finally:
        rt.close()
    config = load_config(meaning_vault)
    path = config.state_dir / "envs" / config.default_environment / "meaning.sqlite"
    with sqlite3.connect(path) as db:
        db.execute("DROP TABLE vectors")
        db.execute("CREATE TABLE vectors (path TEXT PRIMARY KEY, blob TEXT NOT NULL, scale REAL, vec BLOB)")
        db.execute(
            "UPDATE meta SET value = 'wordllama-0.4.0-l2_supercat-256-f16 title+1500 int8-1' WHERE key = 'model'"
        )
    rt = Runtime(load_config(meaning_vault))
    try:
        assert _vectors(rt) == made
        with sqlite3.connect(path) as db:
            assert "source" in {row[1] for row in db.execute("PRAGMA table_info(vectors)")}
    finally:
        rt.close()
