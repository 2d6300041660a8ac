"""`notegate import` on a real vault: what it skips, refuses and never follows, and the one commit it makes."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pygit2
import pytest

from notegate.config import load_config
from notegate.services.importer import import_folder, importing_caller, scan_source
from notegate.services.notes import NotesService, parse_trailers
from notegate.services.runtime import Environment, Runtime
from support import notegate

AWS_KEY = "AKIA" + "QWERTYUIOPASDFGH"  # built here so no credential-looking literal sits in the repository


@pytest.fixture
def env(rt: Runtime) -> Environment:
    return rt.environment(None)


@pytest.fixture
def src(tmp_path: Path) -> Path:
    folder = tmp_path / "src"
    folder.mkdir()
    return folder


def put(src: Path, rel: str, data: str | bytes) -> Path:
    path = src / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        path.write_text(data, encoding="utf-8")
    else:
        path.write_bytes(data)
    return path


def run(rt: Runtime, env: Environment, src: Path, **kw):
    return import_folder(NotesService(rt), env, importing_caller("owner"), src, message="Import test", **kw)


def test_importing_caller_is_the_owner_trusted_through_the_cli_connector() -> None:
    caller = importing_caller("alice")
    assert (caller.login, caller.client, caller.client_class, caller.tier) == (
        "alice",
        "notegate-import",
        "workstation",
        "trusted",
    )
    assert caller.connector_id == "cli:import"


def test_hidden_paths_are_skipped(rt: Runtime, env: Environment, src: Path) -> None:
    put(src, ".obsidian/workspace.md", "x\n")
    put(src, ".trash/old.md", "x\n")
    put(src, "notes/.draft.md", "x\n")
    put(src, "notes/kept.md", "kept\n")
    report = run(rt, env, src)
    assert report.skipped == [
        (".obsidian/", "hidden folder"),
        (".trash/", "hidden folder"),
        ("notes/.draft.md", "hidden file"),
    ]
    assert report.added == ["notes/kept.md"]
    assert not any(p.startswith(".") or "/." in p for p in env.store.listing().notes)


def test_symlinks_are_refused_and_never_followed(rt: Runtime, env: Environment, src: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    put(outside, "secret.md", "outside file\n")
    put(outside, "dir/inner.md", "outside folder\n")
    (src / "link.md").symlink_to(outside / "secret.md")
    (src / "linked").symlink_to(outside / "dir", target_is_directory=True)
    (src / "dangling.md").symlink_to(tmp_path / "missing.md")
    put(src, "real.md", "real\n")
    report = run(rt, env, src)
    assert sorted(report.refused) == [
        ("dangling.md", "symlink: never followed"),
        ("link.md", "symlink: never followed"),
        ("linked/", "symlink: never followed"),
    ]
    assert report.added == ["real.md"]
    notes = env.store.listing().notes
    assert "link.md" not in notes and "linked/inner.md" not in notes and "dangling.md" not in notes


def test_files_of_no_allowed_type_are_skipped(rt: Runtime, env: Environment, src: Path) -> None:
    put(src, "a.txt", "text\n")
    put(src, "b.MD.bak", "x\n")
    put(src, "d.html", "<html><script>x()</script></html>")
    put(src, "Makefile", "all:\n")
    put(src, "c.md", "note\n")
    report = run(rt, env, src)
    assert report.skipped == [
        ("Makefile", "files without an extension: not a type the policy allows (attachment_types)"),
        ("a.txt", ".txt files: not a type the policy allows (attachment_types)"),
        ("b.MD.bak", ".bak files: not a type the policy allows (attachment_types)"),
        ("d.html", ".html files: not a type the policy allows (attachment_types)"),
    ]
    assert report.added == ["c.md"]


def test_a_fifo_is_refused_as_not_a_regular_file(src: Path) -> None:
    os.mkfifo(src / "pipe.md")
    candidates, skipped, refused = scan_source(src)
    assert (candidates, skipped, refused) == ([], [], [("pipe.md", "not a regular file")])


def test_case_collisions_inside_the_source_are_refused(rt: Runtime, env: Environment, src: Path) -> None:
    put(src, "ideas/Cat.md", "upper\n")
    put(src, "ideas/cat.md", "lower\n")
    report = run(rt, env, src)
    assert report.added == ["ideas/Cat.md"]
    assert report.refused == [
        (
            "ideas/cat.md",
            "path-case-collision: it differs only in case from ideas/Cat.md in the source — rename one of the two",
        )
    ]
    assert "ideas/cat.md" not in env.store.listing().notes


def test_case_collisions_with_the_vault_are_refused(rt: Runtime, env: Environment, src: Path) -> None:
    """A note name differing only in case is refused; a folder differing only in case takes the vault's
    spelling (the vault's own `Design/` lands in `design/`)."""
    put(src, "projects/Notegate-Demo.md", "other spelling\n")
    put(src, "Design/new.md", "other folder spelling\n")
    report = run(rt, env, src)
    assert report.refused == [
        (
            "projects/Notegate-Demo.md",
            "path-case-collision: it differs only in case from projects/notegate-demo.md in the vault"
            " — rename one of the two",
        ),
    ]
    assert report.added == ["design/new.md"] and report.landed == [("Design/new.md", "design/new.md")]


def test_identical_existing_notes_are_unchanged(rt: Runtime, env: Environment, src: Path) -> None:
    data, _ = env.store.read("projects/notegate-demo.md")
    put(src, "projects/notegate-demo.md", data)
    put(src, "ideas/new.md", "new\n")
    report = run(rt, env, src)
    assert report.unchanged == ["projects/notegate-demo.md"]
    assert report.added == ["ideas/new.md"] and report.refused == []


def test_differing_existing_notes_are_refused_and_not_overwritten(rt: Runtime, env: Environment, src: Path) -> None:
    before, blob = env.store.read("log/notegate-demo.md")
    put(src, "log/notegate-demo.md", "# replaced by the import\n")
    head = env.store.head()
    report = run(rt, env, src)
    assert report.refused == [
        (
            "log/notegate-demo.md",
            "import-exists: log/notegate-demo.md is in the vault with other content; not overwritten"
            " — rename one of them, or change the vault's copy first",
        )
    ]
    assert report.commit is None and env.store.head() == head
    assert env.store.read("log/notegate-demo.md") == (before, blob)


def test_every_note_is_checked_like_any_write(rt: Runtime, env: Environment, src: Path) -> None:
    put(src, "bad/CON.md", "reserved name\n")
    put(src, "latin1.md", "caf\xe9\n".encode("latin-1"))
    put(src, "big.md", "x" * (rt.policy.max_note_bytes + 1))
    put(src, "keys.md", f"aws {AWS_KEY}\n")
    report = run(rt, env, src)
    reasons = dict(report.refused)
    assert reasons["bad/CON.md"].startswith("path-reserved-name: ")
    assert reasons["latin1.md"].startswith("content-not-utf8: not UTF-8; looks like cp1252: pass --encoding cp1252")
    assert reasons["big.md"] == (
        f"note-too-large: {rt.policy.max_note_bytes + 1:,} bytes: over `max_note_bytes` (1 MiB)"
        " — split it or raise the limit"
    )
    assert reasons["keys.md"].startswith("credential-warning: ") and "--allow-secrets" in reasons["keys.md"]
    assert AWS_KEY not in reasons["keys.md"]  # the report never repeats the secret
    assert report.added == [] and report.commit is None


def test_an_owner_may_insist_on_a_credential(rt: Runtime, env: Environment, src: Path) -> None:
    put(src, "keys.md", f"aws {AWS_KEY}\n")
    report = run(rt, env, src, allow_secrets=True)
    assert report.added == ["keys.md"] and report.refused == []


def test_the_import_is_one_pushed_commit_with_import_trailers(
    rt: Runtime, env: Environment, src: Path, vault: Path
) -> None:
    for i in range(5):
        put(src, f"imported/n{i}.md", f"# Note {i}\nbody {i}\n")
    head = env.store.head()
    scanned: list[int] = []
    progressed: list[int] = []
    report = run(rt, env, src, on_scanned=scanned.append, progress=progressed.append)
    assert report.added == [f"imported/n{i}.md" for i in range(5)]
    assert scanned == [5] and progressed == [1] * 5
    commit = env.store.commit_info(report.commit)
    assert [str(p) for p in commit.parent_ids] == [head]  # exactly one commit on top
    assert env.store.head() == report.commit
    origin = pygit2.Repository(str(vault.parent / "origin.git"))
    assert str(origin.references["refs/heads/main"].target) == report.commit  # pushed before returning
    assert commit.message.splitlines()[0] == "Import test"
    trailers = parse_trailers(commit.message)
    assert trailers["Notegate-Client"] == "notegate-import"
    assert trailers["Notegate-Connector"] == "cli:import"
    assert trailers["Notegate-Tier"] == "trusted"
    assert env.store.read("imported/n3.md")[0] == b"# Note 3\nbody 3\n"
    assert [h.path for h in env.index.search("body")][:1]  # indexed as it committed


def test_nothing_is_committed_when_every_note_is_refused(rt: Runtime, env: Environment, src: Path) -> None:
    put(src, "projects/Notegate-Demo.md", "collides with projects/notegate-demo.md\n")
    put(src, "notes.txt", "skipped\n")
    head = env.store.head()
    report = run(rt, env, src)
    assert report.added == [] and report.commit is None
    assert [r.split(":", 1)[0] for _, r in report.refused] == ["path-case-collision"]
    assert env.store.head() == head


def test_the_cli_refuses_a_symlinked_folder(vault: Path, src: Path, tmp_path: Path) -> None:
    put(tmp_path / "outside", "inner.md", "outside\n")
    (src / "linked").symlink_to(tmp_path / "outside", target_is_directory=True)
    put(src, "real.md", "real\n")
    done = notegate("import", "--config", str(vault), str(src), "--quiet", "--json")
    assert done.returncode == 1, done.stderr  # something was refused
    report = json.loads(done.stdout)
    assert report["refused"] == [["linked/", "symlink: never followed"]]
    assert report["added"] == ["real.md"]
    rt = Runtime(load_config(vault))
    try:
        notes = rt.environment(None).store.listing().notes
        assert "real.md" in notes and "linked/inner.md" not in notes
    finally:
        rt.close()
