"""The pre-receive hook, end to end: hostile commits built object by object, pushed by the real git CLI into
a bare origin made by `notegate init`, refused by the real hook with the exact rule and the commit named."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pygit2
import pytest

from notegate.policy import Policy
from notegate.sync.hookfile import HOOK_MARKER, hook_path, installed
from notegate.sync.incoming import inspect_update
from support import set_policy
from support.gitstreams import EXEC, FILE, GITLINK, LINK, PNG, Origin, accepted, commit, refused, rules_of, scratch_of

BIDI = "\u202e"


# Each hostile thing, alone in one commit on top of main: (what is added, the exact rule).
HOSTILE: list[tuple[str, dict, str]] = [
    ("obsidian plugin", {".obsidian/plugins/x/main.js": (FILE, b"module.exports = 1")}, "incoming-hidden-path"),
    ("mcp config", {".mcp.json": (FILE, b"{}")}, "incoming-hidden-path"),
    ("claude settings", {"notes/.claude/settings.json": (FILE, b"{}")}, "incoming-hidden-path"),
    ("upper-case .GIT", {".GIT/config": (FILE, b"[core]")}, "incoming-hidden-path"),
    ("8.3 alias of .git", {"notes/git~1/hooks.md": (FILE, b"x")}, "incoming-hidden-path"),
    ("fullwidth dot", {"notes/\uff0eobsidian/a.md": (FILE, b"x")}, "incoming-hidden-path"),
    ("trailing space", {".obsidian /a.md": (FILE, b"x")}, "incoming-hidden-path"),
    ("symlink", {"notes/link.md": (LINK, b"/etc/passwd")}, "incoming-symlink"),
    ("gitlink", {"vendor": (GITLINK, pygit2.Oid(hex="1" * 40))}, "incoming-submodule"),
    ("gitmodules", {".gitmodules": (FILE, b'[submodule "x"]\n\tpath = x\n\turl = ../x\n')}, "incoming-submodule"),
    ("executable", {"notes/run.md": (EXEC, b"#!/bin/sh\n")}, "incoming-executable"),
    ("group-writable mode", {"notes/odd.md": (0o100664, b"x")}, "incoming-mode"),
    ("reserved character", {"notes/a:b.md": (FILE, b"x")}, "path-reserved-char"),
    ("windows device name", {"notes/con.md": (FILE, b"x")}, "path-reserved-name"),
    ("instruction file", {"projects/CLAUDE.md": (FILE, b"# do this")}, "instruction-file-name"),
    ("instruction look-alike", {"notes/\uff21GENTS.md": (FILE, b"x")}, "instruction-file-name"),
    ("floor on a protected note", {"rules/house.md": (FILE, f"be nice{BIDI}".encode())}, "protected-floor-hold"),
    ("floor on a handoff", {"handoffs/x.md": (FILE, b"see CLAUDE.md")}, "protected-floor-hold"),
    ("not utf-8", {"notes/bad.md": (FILE, b"\xff\xfe bad")}, "content-not-utf8"),
    ("NUL in a note", {"notes/zero.md": (FILE, b"a\x00b")}, "content-binary"),
    ("unknown type", {"notes/tool.exe": (FILE, b"MZ")}, "file-type-refused"),
    ("html", {"notes/pic.html": (FILE, b"<html><script>alert(1)</script></html>")}, "file-type-refused"),
    ("fake svg", {"notes/pic.svg": (FILE, b"MZ\x90\x00")}, "attachment-type-mismatch"),
    ("fake png", {"notes/pic.png": (FILE, b"<html><script></script>")}, "attachment-type-mismatch"),
    ("note too large", {"notes/big.md": (FILE, b"x" * 4097)}, "note-too-large"),
    ("attachment too large", {"notes/big.png": (FILE, PNG + b"\x00" * 9000)}, "attachment-too-large"),
]


SMALL = replace(Policy(), max_note_bytes=4096, max_attachment_bytes=8192)


@pytest.mark.parametrize(("files", "rule"), [(f, r) for _, f, r in HOSTILE], ids=[n for n, _, _ in HOSTILE])
def test_each_refused_thing_is_found_with_its_rule(door: Origin, files: dict, rule: str) -> None:
    """The validator itself (no hook), one hostile thing per commit: exactly one finding, its exact rule."""
    bad = commit(door.scratch, [door.main], add=files)
    inspection = inspect_update(door.scratch, door.main, bad, SMALL)
    assert [(f.commit, f.rule) for f in inspection.findings] == [(bad, rule)], inspection.findings
    assert inspection.commits == 1


def test_every_refused_thing_through_the_real_hook(door: Origin) -> None:
    """One push of a chain of hostile commits through the real hook: each commit is named with its own rule
    (the owner pushes: these are refused whoever pushes), and nothing moves."""
    set_policy(door.config, max_note_bytes=4096, max_attachment_bytes=8192)
    before = door.main
    chain, tip = [], before
    for _, files, rule in HOSTILE:
        tip = commit(door.scratch, [tip], add=files)
        chain.append((tip, rule))
    findings = refused(door.push(tip))
    by_commit: dict[str, set[str]] = {}
    for sha, _, rule in findings:
        by_commit.setdefault(sha, set()).add(rule)
    assert by_commit == {sha[:12]: {rule} for sha, rule in chain}
    assert door.main == before


def test_good_notes_and_attachments_are_accepted(door: Origin) -> None:
    good = commit(
        door.scratch,
        [door.main],
        add={
            "notes/idea.md": (FILE, "# Idée\n\nplain text\n".encode()),
            "notes/pic.PNG": (FILE, PNG),
            "notes/board.canvas": (FILE, b'{"nodes": [], "edges": []}'),
            "notes/drawing.excalidraw.md": (FILE, b"# Excalidraw\n"),
            "notes/doc.pdf": (FILE, b"%PDF-1.7\n"),
        },
    )
    accepted(door.push(good))
    assert door.main == good


def test_a_hidden_path_in_the_second_of_three_commits_names_that_commit(door: Origin) -> None:
    first = commit(door.scratch, [door.main], add={"notes/one.md": (FILE, b"one")})
    second = commit(door.scratch, [first], add={".obsidian/app.json": (FILE, b"{}")})
    third = commit(door.scratch, [second], add={"notes/three.md": (FILE, b"three")})
    findings = refused(door.push(third))
    assert findings == [(second[:12], ".obsidian", "incoming-hidden-path")]


def test_a_merge_cannot_smuggle_what_neither_parent_has(door: Origin) -> None:
    base = door.main
    left = commit(door.scratch, [base], add={"notes/left.md": (FILE, b"left")})
    right = commit(door.scratch, [base], add={"notes/right.md": (FILE, b"right")})
    evil = commit(
        door.scratch,
        [left, right],
        base=left,
        add={"notes/right.md": (FILE, b"right"), "notes/CLAUDE.md": (FILE, b"x")},
    )
    assert rules_of_findings(refused(door.push(evil)), evil) == {"instruction-file-name"}
    clean = commit(door.scratch, [left, right], base=left, add={"notes/right.md": (FILE, b"right")})
    accepted(door.push(clean))


def rules_of_findings(findings: list[tuple[str, str, str]], sha: str) -> set[str]:
    assert all(c == sha[:12] for c, _, _ in findings), findings
    return {r for _, _, r in findings}


def _notes(n: int, prefix: str = "bulk") -> dict:
    return {f"{prefix}/n{i:03}.md": (FILE, f"note {i}\n{'lorem ipsum ' * 20}\n".encode()) for i in range(n)}


def test_twenty_deletions_are_accepted_and_twenty_one_refused(door: Origin) -> None:
    seeded = commit(door.scratch, [door.main], add=_notes(45))
    accepted(door.push(seeded))
    twenty = commit(door.scratch, [seeded], delete=tuple(f"bulk/n{i:03}.md" for i in range(20)))
    accepted(door.push(twenty))
    twenty_one = commit(door.scratch, [twenty], delete=tuple(f"bulk/n{i:03}.md" for i in range(20, 41)))
    assert refused(door.push(twenty_one)) == [(twenty_one[:12], "(the commit)", "too-many-deletions")]


def test_renames_are_not_deletions(door: Origin) -> None:
    seeded = commit(door.scratch, [door.main], add=_notes(30))
    accepted(door.push(seeded))
    names = tuple(f"bulk/n{i:03}.md" for i in range(30))
    exact = commit(door.scratch, [seeded], delete=names, add={f"moved/{n[5:]}": v for n, v in _notes(30).items()})
    accepted(door.push(exact))
    edited = {f"again/n{i:03}.md": (FILE, f"note {i}\n{'lorem ipsum ' * 20}\nedited\n".encode()) for i in range(30)}
    similar = commit(door.scratch, [exact], delete=tuple(f"moved/n{i:03}.md" for i in range(30)), add=edited)
    accepted(door.push(similar))


def test_too_many_files_in_one_commit(door: Origin) -> None:
    set_policy(door.config, max_files_per_commit=50)
    flood = commit(door.scratch, [door.main], add=_notes(51))
    assert rules_of_findings(refused(door.push(flood)), flood) == {"too-many-files"}


def test_non_fast_forward_is_refused(door: Origin) -> None:
    base = door.main
    ahead = commit(door.scratch, [base], add={"notes/a.md": (FILE, b"a")})
    accepted(door.push(ahead))
    rewrite = commit(door.scratch, [base], add={"notes/b.md": (FILE, b"b")})
    findings = refused(door.push(rewrite, force=True))
    assert findings == [(rewrite[:12], "(the commit)", "push-non-fast-forward")]
    assert door.main == ahead


def test_the_default_branch_is_never_deleted_and_only_branches_are_pushed(door: Origin) -> None:
    assert refused(door.push("")) == [(door.main[:12], "refs/heads/main", "push-delete-default-branch")]
    side = commit(door.scratch, [door.main], add={"notes/s.md": (FILE, b"s")})
    accepted(door.push(side, "refs/heads/side"))
    accepted(door.push("", "refs/heads/side"))  # another branch may go
    assert rules_of(door.push(side, "refs/tags/v1")) == {"push-not-a-branch"}


# ---------------------------------------------------------------- who may change protected paths


SESSION_LOADED = ("rules/new.md", "handoffs/p.md", "log/p.md", "design/p.md", "projects/p.md", "RULES/x.md")


def test_a_non_owner_may_not_change_what_sessions_load(door: Origin) -> None:
    change = commit(door.scratch, [door.main], add={path: (FILE, b"# changed\n") for path in SESSION_LOADED})
    findings = refused(door.push(change, pusher={"GL_USERNAME": "mallory"}))
    twin = (change[:12], "RULES", "path-case-collision")  # beside rules/: one folder on macOS and Windows
    assert sorted(findings) == sorted([twin, *((change[:12], path, "push-protected-path") for path in SESSION_LOADED)])
    assert rules_of(door.push(change, pusher={"NOTEGATE_PUSHER": "owner"})) == {"path-case-collision"}
    owners = commit(door.scratch, [door.main], add={p: (FILE, b"# changed\n") for p in SESSION_LOADED if p[0] != "R"})
    accepted(door.push(owners, pusher={"NOTEGATE_PUSHER": "owner"}))


def test_a_non_owner_may_not_delete_a_rule_but_may_write_elsewhere(door: Origin) -> None:
    gone = commit(door.scratch, [door.main], delete=("rules/digest.md",))
    assert rules_of(door.push(gone, pusher={"GITEA_PUSHER_NAME": "bob"})) == {"push-protected-path"}
    elsewhere = commit(door.scratch, [door.main], add={"notes/bob.md": (FILE, b"from bob")})
    accepted(door.push(elsewhere, pusher={"GITEA_PUSHER_NAME": "bob"}))


@pytest.mark.parametrize(
    "pusher",
    [{}, {"NOTEGATE_PUSHER": ""}, {"NOTEGATE_PUSHER": "owner", "REMOTE_USER": "mallory"}],
    ids=["no variable", "empty", "two that disagree"],
)
def test_an_unidentified_pusher_is_not_the_owner(door: Origin, pusher: dict[str, str]) -> None:
    change = commit(door.scratch, [door.main], add={"rules/x.md": (FILE, b"x")})
    result = door.push(change, pusher=pusher)
    assert rules_of(result) == {"push-protected-path"}
    assert "unidentified pusher" in result.stderr


def test_owner_pushers_maps_forge_logins_to_the_owner(door: Origin) -> None:
    text = door.config.read_text().replace("owner_pushers = []", 'owner_pushers = ["alice-gl", "notegate-bot"]')
    door.config.write_text(text)
    change = commit(door.scratch, [door.main], add={"rules/x.md": (FILE, b"x")})
    assert rules_of(door.push(change, pusher={"NOTEGATE_PUSHER": "owner"})) == {"push-protected-path"}
    accepted(door.push(change, pusher={"GL_USERNAME": "alice-gl"}))


def test_a_member_merging_the_owners_rules_into_a_branch_is_not_changing_them(door: Origin) -> None:
    base = door.main
    mine = commit(door.scratch, [base], add={"notes/m.md": (FILE, b"m")})
    accepted(door.push(mine, "refs/heads/member", pusher={"REMOTE_USER": "member"}))
    rules = commit(door.scratch, [base], add={"rules/new.md": (FILE, b"owner's rule")})
    accepted(door.push(rules, pusher={"NOTEGATE_PUSHER": "owner"}))
    merge = commit(door.scratch, [mine, rules], base=mine, add={"rules/new.md": (FILE, b"owner's rule")})
    accepted(door.push(merge, "refs/heads/member", pusher={"REMOTE_USER": "member"}))
    sneaky = commit(door.scratch, [merge, rules], base=merge, add={"rules/new.md": (FILE, b"member's rule")})
    assert rules_of(door.push(sneaky, "refs/heads/member", pusher={"REMOTE_USER": "member"})) == {"push-protected-path"}


# ---------------------------------------------------------------- installing the hook


def test_the_real_cli_end_to_end(tmp_path: Path) -> None:
    """`notegate init` (the real CLI) installs the hook; the real git CLI pushes through it."""
    cli = [sys.executable, "-m", "notegate"]
    subprocess.run([*cli, "init", str(tmp_path / "v")], check=True, capture_output=True, timeout=120)
    origin = tmp_path / "v" / "origin.git"
    assert installed(origin) and HOOK_MARKER in hook_path(origin).read_text()
    door = Origin(tmp_path / "v" / "notegate.toml", origin, scratch_of(origin, tmp_path / "s.git"))
    bad = commit(door.scratch, [door.main], add={"notes/.obsidian.md": (FILE, b"x")})
    assert refused(door.push(bad)) == [(bad[:12], "notes/.obsidian.md", "incoming-hidden-path")]


def test_hooks_install_refuses_a_foreign_hook_unless_forced(door: Origin, tmp_path: Path) -> None:
    other = tmp_path / "other.git"
    pygit2.init_repository(str(other), bare=True)
    hook_path(other).write_text("#!/bin/sh\necho mine\n")
    cli = [sys.executable, "-m", "notegate", "hooks", "install", str(other), "--config", str(door.config)]
    result = subprocess.run(cli, capture_output=True, text=True, timeout=60)
    assert result.returncode == 1 and "--force" in result.stderr and not installed(other)
    result = subprocess.run([*cli, "--force"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0 and installed(other)
    again = subprocess.run(cli, capture_output=True, text=True, timeout=60)  # ours: replaced without --force
    assert again.returncode == 0
    not_bare = subprocess.run([*cli[:4], str(tmp_path), "--config", str(door.config)], capture_output=True, text=True)
    assert not_bare.returncode == 2


def test_a_leading_bom_is_an_encoding_mark_where_sessions_load(door: Origin) -> None:
    """The hook's content rule is the server's and the import's (policy.decide_incoming_note)."""
    once = commit(door.scratch, [door.main], add={"projects/win.md": (FILE, b"\xef\xbb\xbf# Windows\r\n")})
    accepted(door.push(once, pusher={"NOTEGATE_PUSHER": "owner"}))
    twice = commit(door.scratch, [once], add={"projects/twice.md": (FILE, b"\xef\xbb\xbf\xef\xbb\xbf# Twice\n")})
    assert rules_of(door.push(twice, pusher={"NOTEGATE_PUSHER": "owner"})) == {"protected-floor-hold"}
