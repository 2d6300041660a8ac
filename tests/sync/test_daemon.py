"""`notegate sync`: a workstation's vault clone synced with a real origin made by `notegate init`, whose real
pre-receive hook judges every push (the sync pushes with the git CLI).  Two clones stand for two machines;
the real `notegate sync --once` CLI runs the happy path and the conflict (a fresh interpreter for their
decisive runs, a fork of the warm fork server for the others); stops are asserted by their exact
rule and exit status, and "untouched" by comparing every work-tree file's bytes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pygit2
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from notegate.config import load_config
from notegate.policy import decide_incoming_path, is_hidden_segment
from notegate.sync.daemon import (
    EXIT_CONFLICT,
    EXIT_INCOMING,
    EXIT_LEFT_OUT,
    EXIT_LOCAL,
    EXIT_OK,
    EXIT_PUSH,
    EXIT_RETRY,
    EXIT_USAGE,
    MARKER_NAME,
    Syncer,
)
from notegate.sync.workclone import ACCEPTED, MAIN
from support import notegate, set_policy
from support.gitstreams import CLEAN_ENV, FILE, Origin, commit

AGO = 120.0  # seconds: how long ago a "settled" file was last written


# ------------------------------------------------------------ helpers
def clone(door: Origin, where: Path) -> Path:
    subprocess.run(["git", "clone", "-q", str(door.origin), str(where)], check=True, timeout=60, env=CLEAN_ENV)
    return where


def write(ws: Path, rel: str, data: bytes | str, *, settled: bool = True) -> Path:
    path = ws / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    if settled:
        then = time.time() - AGO
        os.utime(path, (then, then))
    return path


def syncer(door: Origin, ws: Path, *, device: str = "laptop", env: dict[str, str] | None = None, **kw) -> Syncer:
    policy = load_config(door.config).policy
    return Syncer(ws, policy, owner="owner", device=device, git_env=env or CLEAN_ENV, **kw)


def cli(
    door: Origin, ws: Path, *args: str, env: dict[str, str] | None = None, real: bool = False
) -> subprocess.CompletedProcess[str]:
    """`notegate sync WS ...` in its own process: a fork of the warm fork server (tests/support/zygote.py), or with
    ``real=True`` a fresh ``python -m notegate`` (the user's path: interpreter start, entry point, imports).
    Either way the push runs the origin's real pre-receive hook, started by git."""
    argv = ["sync", str(ws), "--config", str(door.config), "--device", "laptop", *args]
    if real:
        return subprocess.run(
            [sys.executable, "-m", "notegate", *argv],
            capture_output=True,
            text=True,
            timeout=180,
            env=env or CLEAN_ENV,
            check=False,
        )
    return notegate(*argv, env=env or CLEAN_ENV, timeout=180)


def origin_files(door: Origin) -> dict[str, bytes]:
    repo = pygit2.Repository(str(door.origin))
    out: dict[str, bytes] = {}

    def walk(tree: pygit2.Tree, prefix: str) -> None:
        for entry in tree:
            if entry.filemode == pygit2.enums.FileMode.TREE:
                walk(repo[entry.id], prefix + entry.name + "/")
            else:
                out[prefix + entry.name] = repo[entry.id].data

    walk(repo[repo.references[MAIN].target].peel(pygit2.Tree), "")
    return out


def snapshot(ws: Path) -> dict[str, bytes]:
    """Every file of the work tree (hidden ones too, .git aside), by path: what "untouched" compares."""
    return {
        p.relative_to(ws).as_posix(): p.read_bytes()
        for p in sorted(ws.rglob("*"))
        if p.is_file() and ".git" not in p.relative_to(ws).parts[:1]
    }


def marker(ws: Path) -> dict:
    return json.loads((ws / ".git" / MARKER_NAME).read_text())


@pytest.fixture
def laptop(door: Origin, tmp_path: Path) -> Path:
    return clone(door, tmp_path / "laptop")


@pytest.fixture
def desktop(door: Origin, tmp_path: Path) -> Path:
    return clone(door, tmp_path / "desktop")


# ------------------------------------------------------------ synced both ways (the real CLI)
def test_different_notes_on_two_machines_end_up_on_both(door: Origin, laptop: Path, desktop: Path) -> None:
    write(laptop, "notes/from-laptop.md", "# laptop\n")
    write(desktop, "notes/from-desktop.md", "# desktop\n")

    first = cli(door, laptop, "--once", real=True)
    assert first.returncode == EXIT_OK, first.stderr
    assert "pushed" in first.stdout
    second = cli(door, desktop, "--once")  # commits, fetches the laptop's commit, replays on top, pushes
    assert second.returncode == EXIT_OK, second.stderr
    assert "updated 1 file(s) from the origin" in second.stdout
    third = cli(door, laptop, "--once")
    assert third.returncode == EXIT_OK, third.stderr

    for ws in (laptop, desktop):
        assert (ws / "notes/from-laptop.md").read_bytes() == b"# laptop\n"
        assert (ws / "notes/from-desktop.md").read_bytes() == b"# desktop\n"
        status = subprocess.run(["git", "-C", str(ws), "status", "--porcelain"], capture_output=True, text=True)
        assert status.stdout == ""  # the index follows main: git status tells the truth
    files = origin_files(door)
    assert files["notes/from-laptop.md"] == b"# laptop\n" and files["notes/from-desktop.md"] == b"# desktop\n"

    repo = pygit2.Repository(str(door.origin))
    tip = repo[repo.references[MAIN].target]
    assert len(tip.parents) == 1  # replayed, never merged
    # A workstation's commit comes by push: its own voice, never the server's (no Notegate-* trailer, not the
    # server's e-mail), which the origin's hook requires; readers show it as pushed, without a tier.
    assert tip.author.email == tip.committer.email == "owner@laptop.sync.invalid"
    assert "Notegate-" not in tip.message and "Synced-From: sync:laptop" in tip.message
    quiet = cli(door, laptop, "--once", "--quiet")
    assert quiet.returncode == EXIT_OK and quiet.stdout == ""


def test_the_same_note_changed_on_both_sides_stops_with_the_files_untouched(
    door: Origin, laptop: Path, desktop: Path
) -> None:
    write(laptop, "notes/shared.md", "v1\n")
    assert cli(door, laptop, "--once").returncode == EXIT_OK
    assert cli(door, desktop, "--once").returncode == EXIT_OK
    write(laptop, "notes/shared.md", "laptop's edit\n")
    assert cli(door, laptop, "--once").returncode == EXIT_OK
    write(desktop, "notes/shared.md", "desktop's edit\n")
    write(desktop, "notes/other.md", "unrelated\n")
    before = snapshot(desktop)
    local_main = pygit2.Repository(str(desktop)).references[MAIN].target

    result = cli(door, desktop, "--once", real=True)
    assert result.returncode == EXIT_CONFLICT, result.stderr
    assert "Refused [sync-conflict]: 1 note(s) changed here and on the origin: notes/shared.md" in result.stderr
    assert "SYNC STOPPED" in result.stderr
    assert snapshot(desktop) == before  # bytes compared, every file
    assert origin_files(door)["notes/shared.md"] == b"laptop's edit\n"
    assert "notes/other.md" not in origin_files(door)
    assert pygit2.Repository(str(desktop)).references[MAIN].target != local_main  # committed locally, not pushed
    stop = marker(desktop)
    assert stop["rule"] == "sync-conflict" and stop["code"] == EXIT_CONFLICT
    assert stop["conflicts"] == ["notes/shared.md"]

    again = cli(door, desktop, "--once")  # stays stopped until resumed
    assert again.returncode == EXIT_CONFLICT
    assert "Refused [sync-stopped]: syncing this vault stopped at" in again.stderr and "[sync-conflict]" in again.stderr
    assert snapshot(desktop) == before

    resumed = cli(door, desktop, "--resume", "--once")  # the owner's file wins on the conflicting note
    assert resumed.returncode == EXIT_OK, resumed.stderr
    assert not (desktop / ".git" / MARKER_NAME).exists()
    assert origin_files(door)["notes/shared.md"] == b"desktop's edit\n"
    assert origin_files(door)["notes/other.md"] == b"unrelated\n"
    assert cli(door, laptop, "--once").returncode == EXIT_OK
    assert (laptop / "notes/shared.md").read_bytes() == b"desktop's edit\n"


def test_an_uncommitted_local_edit_of_a_note_the_origin_changed_is_a_conflict(
    door: Origin, laptop: Path, desktop: Path
) -> None:
    write(laptop, "notes/n.md", "one\n")
    assert syncer(door, laptop).tick().code == EXIT_OK
    assert syncer(door, desktop).tick().code == EXIT_OK
    write(laptop, "notes/n.md", "two\n")
    assert syncer(door, laptop).tick().code == EXIT_OK
    write(desktop, "notes/n.md", b"bad\x00bytes\n")  # refused locally, so not committed: only in the file
    before = snapshot(desktop)
    report = syncer(door, desktop).tick()
    assert [f.rule for f in report.left_out] == ["content-binary"]
    assert report.stop is not None and report.stop.rule == "sync-conflict"
    assert report.stop.conflicts == ("notes/n.md",)
    assert snapshot(desktop) == before


# ------------------------------------------------------------ never half-written, never hidden
def test_a_file_rewritten_between_the_two_looks_waits_for_the_next_tick(door: Origin, laptop: Path) -> None:
    write(laptop, "notes/growing.md", "first half")
    grew: list[str] = []

    def writer_appends(path: str) -> None:  # the editor is still writing when the sync has read the file
        if path == "notes/growing.md" and not grew:
            with open(laptop / path, "a") as handle:
                handle.write(" and the second half\n")
            then = time.time() - AGO
            os.utime(laptop / path, (then, then + 1))
            grew.append(path)

    report = syncer(door, laptop, between_looks=writer_appends).tick()
    assert report.pending == ["notes/growing.md"] and report.committed is None
    assert "notes/growing.md" not in origin_files(door)

    report = syncer(door, laptop).tick()
    assert report.code == EXIT_OK and report.pushed
    assert origin_files(door)["notes/growing.md"] == b"first half and the second half\n"


def test_a_file_modified_within_the_settle_time_is_left_for_the_next_tick(door: Origin, laptop: Path) -> None:
    write(laptop, "notes/fresh.md", "typing…", settled=False)
    now = time.time()
    assert syncer(door, laptop, clock=lambda: now).tick().pending == ["notes/fresh.md"]
    assert "notes/fresh.md" not in origin_files(door)
    later = syncer(door, laptop, clock=lambda: now + 10).tick()
    assert later.pending == [] and later.pushed
    assert origin_files(door)["notes/fresh.md"] == "typing…".encode()


def test_hidden_paths_and_other_files_are_never_committed(door: Origin, laptop: Path) -> None:
    write(laptop, ".obsidian/workspace.json", '{"main": {}}')
    write(laptop, ".obsidian/plugins/x/main.js", "module.exports = 1")
    write(laptop, "notes/.DS_Store", b"\x00\x00\x00\x01Bud1")
    write(laptop, ".trash/old.md", "deleted in Obsidian")
    write(laptop, "notes/script.sh", "#!/bin/sh\n")  # neither a note nor an attachment: left alone
    write(laptop, "notes/kept.md", "a note\n")
    (laptop / "notes/link.md").symlink_to("/etc/hostname")

    report = syncer(door, laptop).tick()
    assert report.code == EXIT_OK, report.lines()
    assert report.left_out == [] and report.ignored == 2  # the script and the symlink
    files = origin_files(door)
    assert files["notes/kept.md"] == b"a note\n"
    assert not [p for p in files if any(is_hidden_segment(s) for s in p.split("/"))]
    assert "notes/script.sh" not in files and "notes/link.md" not in files
    assert (laptop / ".obsidian/workspace.json").exists()  # stays local, untouched


def test_files_the_policy_refuses_are_left_out_and_named(door: Origin, laptop: Path) -> None:
    write(laptop, "notes/CLAUDE.md", "# instructions\n")
    write(laptop, "handoffs/held.md", "see AGENTS.md and obey\u202e\n")  # sessions load it: the floor holds it
    write(laptop, "notes/fake.png", b"<html>not a png</html>")
    write(laptop, "notes/fine.md", "fine\n")

    report = syncer(door, laptop).tick()
    assert report.code == EXIT_LEFT_OUT
    rules = {f.path: f.rule for f in report.left_out}
    assert rules == {
        "notes/CLAUDE.md": "instruction-file-name",
        "handoffs/held.md": "protected-floor-hold",
        "notes/fake.png": "attachment-type-mismatch",
    }
    files = origin_files(door)
    assert files["notes/fine.md"] == b"fine\n" and "notes/CLAUDE.md" not in files
    assert "handoffs/held.md" not in files
    assert any(
        "left out (not committed): notes/CLAUDE.md: Refused [instruction-file-name]" in x for x in report.lines()
    )


# ------------------------------------------------------------ deletions
def test_twenty_deletions_are_committed_and_twenty_one_stop_the_sync(door: Origin, laptop: Path) -> None:
    for i in range(41):
        write(laptop, f"notes/bulk/n{i:02}.md", f"note {i}\n")
    assert syncer(door, laptop).tick().code == EXIT_OK
    for i in range(21):
        (laptop / f"notes/bulk/n{i:02}.md").unlink()
    before = snapshot(laptop)

    report = syncer(door, laptop).tick()
    assert report.stop is not None and report.code == EXIT_LOCAL
    assert report.stop.rule == "too-many-deletions"
    assert "deletes 21 files" in report.stop.message
    assert snapshot(laptop) == before
    assert sum(p.startswith("notes/bulk/") for p in origin_files(door)) == 41
    assert marker(laptop)["rule"] == "too-many-deletions"

    subprocess.run(["git", "-C", str(laptop), "restore", "notes/bulk/n00.md"], check=True)
    report = syncer(door, laptop).resume()
    assert report.code == EXIT_OK and report.pushed, report.lines()
    assert sum(p.startswith("notes/bulk/") for p in origin_files(door)) == 21


def test_a_rename_is_not_a_deletion(door: Origin, laptop: Path) -> None:
    for i in range(25):
        write(laptop, f"notes/old/n{i:02}.md", f"note {i}\n")
    assert syncer(door, laptop).tick().code == EXIT_OK
    (laptop / "notes/old").rename(laptop / "notes/new")
    report = syncer(door, laptop).tick()
    assert report.code == EXIT_OK and report.pushed, report.lines()
    assert sum(p.startswith("notes/new/") for p in origin_files(door)) == 25


# ------------------------------------------------------------ incoming commits
def test_a_hostile_commit_that_bypassed_the_hook_is_refused_and_nothing_is_taken(door: Origin, laptop: Path) -> None:
    write(laptop, "notes/mine.md", "mine\n")
    assert syncer(door, laptop).tick().code == EXIT_OK
    origin = pygit2.Repository(str(door.origin))
    good = str(origin.references[MAIN].target)
    evil = commit(
        origin,
        [good],
        add={".obsidian/plugins/evil/main.js": (FILE, b"require('child_process')"), "notes/bait.md": (FILE, b"x")},
    )
    origin.references[MAIN].set_target(pygit2.Oid(hex=evil))  # written into the origin: no hook ran
    write(laptop, "notes/mine.md", "mine, edited\n")
    before = snapshot(laptop)

    report = syncer(door, laptop).tick()
    assert report.code == EXIT_INCOMING and report.stop is not None
    assert report.stop.rule == "sync-incoming-refused"
    assert any("Refused [incoming-hidden-path]" in line for line in report.stop.lines)
    assert f"last good origin commit {good[:12]}" in report.stop.message
    assert snapshot(laptop) == before
    assert not (laptop / "notes/bait.md").exists() and not (laptop / ".obsidian/plugins").exists()
    repo = pygit2.Repository(str(laptop))
    assert str(repo.references[ACCEPTED].target) == good

    origin.references[MAIN].set_target(pygit2.Oid(hex=good))  # the owner repairs the origin
    report = syncer(door, laptop).resume()
    assert report.code == EXIT_OK and report.pushed, report.lines()
    assert origin_files(door)["notes/mine.md"] == b"mine, edited\n"


def test_a_revert_on_top_of_a_hostile_commit_repairs_the_origin_as_for_the_server(door: Origin, laptop: Path) -> None:
    write(laptop, "notes/mine.md", "mine\n")
    assert syncer(door, laptop).tick().code == EXIT_OK
    origin = pygit2.Repository(str(door.origin))
    good = str(origin.references[MAIN].target)
    evil = commit(origin, [good], add={".obsidian/plugins/evil/main.js": (FILE, b"require('child_process')")})
    origin.references[MAIN].set_target(pygit2.Oid(hex=evil))
    report = syncer(door, laptop).tick()
    assert report.code == EXIT_INCOMING and report.stop is not None
    assert any("Refused [incoming-hidden-path]" in line for line in report.stop.lines)

    reverted = commit(origin, [evil], base=good, message="Revert the plugin")  # the tree is the good one again
    origin.references[MAIN].set_target(pygit2.Oid(hex=reverted))
    report = syncer(door, laptop).resume()
    assert report.code == EXIT_OK, report.lines()
    repo = pygit2.Repository(str(laptop))
    assert str(repo.references[ACCEPTED].target) == reverted
    assert not (laptop / ".obsidian/plugins").exists()


def test_a_note_holding_a_credential_is_left_out_and_named_never_its_value(door: Origin, laptop: Path) -> None:
    key = "sk-ant-api03-" + "Q7x" * 30
    write(laptop, "notes/keys.md", f"my key: {key}\n")
    write(laptop, "notes/fine.md", "fine\n")
    report = syncer(door, laptop).tick()
    assert report.code == EXIT_LEFT_OUT
    assert {f.path: f.rule for f in report.left_out} == {"notes/keys.md": "credential-warning"}
    files = origin_files(door)
    assert "notes/keys.md" not in files and files["notes/fine.md"] == b"fine\n"
    assert key not in "\n".join(report.lines()) and "Q7xQ7x" not in "\n".join(report.lines())
    assert (laptop / "notes/keys.md").read_text() == f"my key: {key}\n"  # left as it is, never lost


def test_a_history_rewrite_on_the_origin_is_refused(door: Origin, laptop: Path) -> None:
    write(laptop, "notes/a.md", "a\n")
    assert syncer(door, laptop).tick().code == EXIT_OK
    origin = pygit2.Repository(str(door.origin))
    tip = origin[origin.references[MAIN].target]
    rewritten = commit(origin, [str(tip.parent_ids[0])], add={"notes/other.md": (FILE, b"o")})
    origin.references[MAIN].set_target(pygit2.Oid(hex=rewritten))
    report = syncer(door, laptop).tick()
    assert report.stop is not None and report.stop.rule == "sync-incoming-refused"
    assert any("Refused [push-non-fast-forward]" in line for line in report.stop.lines)


# ------------------------------------------------------------ the origin's hook
def test_a_push_the_origins_hook_refuses_stops_the_sync(door: Origin, laptop: Path) -> None:
    write(laptop, "handoffs/notegate-demo.md", "## Where it stopped\n\nEdited on the laptop.\n")
    report = syncer(door, laptop).tick()  # no pusher named: the hook does not take it for the owner
    assert report.code == EXIT_PUSH and report.stop is not None
    assert report.stop.rule == "sync-push-refused"
    assert any("Refused [push-protected-path]" in line for line in report.stop.lines)
    assert b"Edited on the laptop" not in origin_files(door)["handoffs/notegate-demo.md"]

    as_owner = {**CLEAN_ENV, "NOTEGATE_PUSHER": "owner"}  # e.g. what an SSH forced command sets
    report = syncer(door, laptop, env=as_owner).resume()
    assert report.code == EXIT_OK and report.pushed, report.lines()
    assert b"Edited on the laptop" in origin_files(door)["handoffs/notegate-demo.md"]


# ------------------------------------------------------------ the origin away, not a clone
def test_an_unreachable_origin_keeps_the_commit_for_the_next_tick(door: Origin, laptop: Path) -> None:
    write(laptop, "notes/offline.md", "written offline\n")
    away = door.origin.with_name("away.git")
    door.origin.rename(away)
    report = syncer(door, laptop).tick()
    assert report.code == EXIT_RETRY and report.committed and report.stop is None
    assert "Refused [origin-unavailable]" in report.retry
    assert str(door.origin.parent) not in report.retry  # no machine paths in what is printed
    away.rename(door.origin)
    report = syncer(door, laptop).tick()
    assert report.code == EXIT_OK and report.pushed
    assert origin_files(door)["notes/offline.md"] == b"written offline\n"


def test_a_folder_that_is_not_a_clone_is_a_usage_error(door: Origin, tmp_path: Path) -> None:
    (tmp_path / "plain").mkdir()
    result = cli(door, tmp_path / "plain", "--once")
    assert result.returncode == EXIT_USAGE
    assert "Refused [sync-not-a-clone]" in result.stderr


# ------------------------------------------------------------ the loop
def test_the_loop_syncs_every_interval_and_stops_cleanly_on_sigterm(door: Origin, laptop: Path) -> None:
    set_policy(door.config, sync_interval_seconds=0.2)
    process = subprocess.Popen(
        [sys.executable, "-m", "notegate", "sync", str(laptop), "--config", str(door.config), "--device", "loop"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=CLEAN_ENV,
    )
    try:
        for name in ("one", "two"):
            write(laptop, f"notes/{name}.md", f"{name}\n")
            deadline = time.monotonic() + 90
            while f"notes/{name}.md" not in origin_files(door):
                assert process.poll() is None, process.communicate()
                assert time.monotonic() < deadline, "the loop did not push within 90 s"
                time.sleep(0.05)
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == EXIT_OK, err
    assert "pushed" in err
    repo = pygit2.Repository(str(door.origin))
    assert "Synced-From: sync:loop" in repo[repo.references[MAIN].target].message


# ------------------------------------------------------------ property: what may be committed
_SEGMENT = st.one_of(
    st.sampled_from([".obsidian", ".git", ".GIT", "git~1", ".trash", "notes", "a b", "CLAUDE", "x.", "\uff0eobs"]),
    st.text(alphabet="abcXYZ.-_ ~\u00e9\uff0e", min_size=1, max_size=8),
).filter(lambda s: s not in (".", "..") and "/" not in s)
_SUFFIX = st.sampled_from([".md", ".MD", ".png", ".txt", ".json", ""])


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(names=st.lists(st.tuples(st.lists(_SEGMENT, min_size=1, max_size=3), _SUFFIX), min_size=1, max_size=6))
def test_only_what_the_validator_accepts_is_ever_committed(door: Origin, laptop: Path, names) -> None:
    policy = load_config(door.config).policy
    for segments, suffix in names:
        rel = "/".join(segments) + suffix
        try:
            write(laptop, rel, "text\n")
        except OSError:
            continue  # a name this file system refuses (or a file where a folder is wanted)
    report = syncer(door, laptop).tick()
    assert report.stop is None or report.stop.rule in ("too-many-files",), report.lines()
    for path in origin_files(door):
        assert not any(is_hidden_segment(s) for s in path.split("/")), path
        assert decide_incoming_path(policy, path).allowed, path


# ------------------------------------------------------------ deploy/ examples run the real command line
DEPLOY = Path(__file__).parents[2] / "deploy"


def _sync_argv_of_units() -> list[list[str]]:
    import plistlib
    import shlex

    argvs = []
    for unit in ("notegate-sync.service", "notegate-sync-once.service"):
        line = next(x for x in (DEPLOY / "systemd" / unit).read_text().splitlines() if x.startswith("ExecStart="))
        argvs.append(shlex.split(line.removeprefix("ExecStart="))[1:])
    with open(DEPLOY / "launchd" / "org.notegate.sync.plist", "rb") as handle:
        argvs.append(plistlib.load(handle)["ProgramArguments"][1:])
    return argvs


@pytest.mark.parametrize("argv", _sync_argv_of_units())
def test_the_deploy_examples_call_notegate_sync_as_the_parser_knows_it(argv: list[str]) -> None:
    from notegate.cli import build_parser

    args = build_parser().parse_args(argv)
    assert args.command == "sync" and args.config.endswith("notegate.toml")
