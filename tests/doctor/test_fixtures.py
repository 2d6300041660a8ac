"""Each check has a failing fixture: `make run`'s setup broken one way, the doctor exits 1 and names exactly
that check as failed (through the CLI's entry point, `--json`)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from support.doctor import Doctor, failed, statuses


def _edit(config: Path, old: str, new: str) -> None:
    text = config.read_text(encoding="utf-8")
    assert old in text, old
    config.write_text(text.replace(old, new, 1), encoding="utf-8")


def _git(*args: str, cwd: Path) -> str:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(cwd),
        "GIT_AUTHOR_NAME": "someone",
        "GIT_AUTHOR_EMAIL": "someone@example.org",
        "GIT_COMMITTER_NAME": "someone",
        "GIT_COMMITTER_EMAIL": "someone@example.org",
    }
    done = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=60, check=True)
    return done.stdout


def _push_past_the_hook(demo: Path, clone: Path, *refspec: str) -> None:
    """Change the origin as someone with shell access to it would: with the pre-receive hook set aside.
    (The hook runs `notegate pre-receive`, which refuses rewrites and lands on another branch; these
    fixtures are about what the doctor sees after the origin changed by any means.)"""
    hook = demo.parent / "origin.git" / "hooks" / "pre-receive"
    aside = hook.with_name("pre-receive.aside")
    hook.rename(aside)
    try:
        _git("push", "-q", *refspec, cwd=clone)
    finally:
        aside.rename(hook)


def _workstation_clone(demo: Path, tmp_path: Path) -> Path:
    clone = tmp_path / "laptop"
    _git("clone", "-q", str(demo.parent / "origin.git"), str(clone), cwd=tmp_path)
    return clone


def test_the_fixture_is_green(doctor: Doctor, demo: Path) -> None:
    code, results = doctor("--config", str(demo))
    assert code == 0 and failed(results) == set(), results


# -- config and policy ---------------------------------------------------------------------------------
def test_broken_config(doctor: Doctor, demo: Path) -> None:
    _edit(demo, "[server]", "[server]\nprot = 8765")
    code, results = doctor("--config", str(demo))
    assert code == 1
    assert failed(results) == {"config.load"}
    [load] = [r for r in results if r["check"] == "config.load"]
    assert "unknown key 'prot' in [server]" in load["found"]
    assert set(statuses(results, "origin.reachable")) == {"warn"}  # not checked: the config does not load


def test_config_that_is_not_toml(doctor: Doctor, demo: Path) -> None:
    demo.write_text("[server\n", encoding="utf-8")
    code, results = doctor("--config", str(demo))
    assert code == 1 and failed(results) == {"config.load"}


def test_missing_config(doctor: Doctor, tmp_path: Path) -> None:
    code, results = doctor("--config", str(tmp_path / "nowhere.toml"))
    assert code == 1 and failed(results) == {"config.load"}


def test_route_reaching_a_protected_path(doctor: Doctor, demo: Path) -> None:
    _edit(demo, 'handoff = "handoffs/{project}.md"', 'handoff = "rules/{project}.md"')
    code, results = doctor("--config", str(demo))
    assert code == 1
    assert "policy.routes" in failed(results)
    [routes] = [r for r in results if r["check"] == "policy.routes"]
    assert "routes.handoff could promote to rules/" in routes["found"]
    assert failed(results) == {"policy.routes", "config.load"}  # the loader refuses it too, naming the route


def test_route_reaching_a_protected_glob_the_loader_lets_through(doctor: Doctor, demo: Path) -> None:
    """A protected glob with a wildcard in the file name: only the doctor's filled-in probes find it."""
    _edit(demo, 'protected = ["rules/**"]', 'protected = ["rules/**", "design/secret-*.md"]')
    code, results = doctor("--config", str(demo))
    assert code == 1 and failed(results) == {"policy.routes"}, results


@pytest.mark.parametrize(
    "glob",
    ["/private/**", "private//**", "private\\\\x/**", "../private/**", ".private/**", "private/a**b"],
)
def test_globs_that_match_no_note(doctor: Doctor, demo: Path, glob: str) -> None:
    _edit(demo, 'private = ["private/**"]', f'private = ["private/**", "{glob}"]')
    code, results = doctor("--config", str(demo))
    assert code == 1 and failed(results) == {"policy.globs"}, results


# -- device keys ---------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("table", "needle"),
    [
        ('public_key = "ed25519:tooshort"\nperson = "owner"', "does not parse as an Ed25519 key"),
        ('public_key = "ed25519:' + "A" * 42 + 'B"\nperson = "owner"', "does not parse as an Ed25519 key"),
        ('public_key = "ed25519:' + "A" * 43 + '"\nperson = "mallory"', "person is neither"),
    ],
)
def test_bad_device_key(doctor: Doctor, demo: Path, table: str, needle: str) -> None:
    with demo.open("a", encoding="utf-8") as handle:
        handle.write(f"\n[devices.laptop]\n{table}\n")
    code, results = doctor("--config", str(demo))
    assert code == 1
    assert failed(results) == {"device.keys", "config.load"}  # the loader refuses it as well
    [device] = [r for r in results if r["check"] == "device.keys"]
    assert device["subject"] == "laptop" and needle in device["found"]


def test_a_good_device_key_is_green(doctor: Doctor, demo: Path) -> None:
    from notegate.auth.devices import generate_device_key

    _pem, public_key = generate_device_key()
    with demo.open("a", encoding="utf-8") as handle:
        handle.write(f'\n[devices.laptop]\npublic_key = "{public_key}"\nperson = "owner"\n')
    code, results = doctor("--config", str(demo))
    assert code == 0, results
    assert public_key not in str(results)


# -- origins -------------------------------------------------------------------------------------------
def test_origin_unreachable(doctor: Doctor, demo: Path) -> None:
    (demo.parent / "origin.git").rename(demo.parent / "origin-moved.git")
    code, results = doctor("--config", str(demo))
    assert code == 1
    assert "origin.reachable" in failed(results)
    assert failed(results) == {"origin.reachable", "origin.hook"}  # the hook went with it


def test_remote_origin_unreachable(doctor: Doctor, demo: Path) -> None:
    """A URL origin nobody answers (a closed loopback port): refused within the timeout, and the hook
    cannot be checked from here (a warning, not a failure)."""
    _edit(demo, 'origin = "origin.git"', 'origin = "http://127.0.0.1:9/origin.git"')
    code, results = doctor("--config", str(demo))
    assert code == 1 and failed(results) == {"origin.reachable"}
    assert statuses(results, "origin.hook") == ["warn"]


def test_clone_behind_the_origin(doctor: Doctor, demo: Path, tmp_path: Path) -> None:
    clone = _workstation_clone(demo, tmp_path)
    (clone / "notes").mkdir()
    (clone / "notes" / "new.md").write_text("# New\n", encoding="utf-8")
    _git("add", "-A", cwd=clone)
    _git("commit", "-q", "-m", "A note pushed while the server was down", cwd=clone)
    _push_past_the_hook(demo, clone, "origin", "main")
    code, results = doctor("--config", str(demo))
    assert code == 1 and failed(results) == {"origin.sync"}
    [sync] = [r for r in results if r["check"] == "origin.sync"]
    assert "behind" in sync["found"] and "1 commit(s)" in sync["found"]


def test_clone_diverged_from_a_rewritten_origin(doctor: Doctor, demo: Path, tmp_path: Path) -> None:
    clone = _workstation_clone(demo, tmp_path)
    _git("commit", "-q", "--amend", "-m", "History rewritten", cwd=clone)
    _push_past_the_hook(demo, clone, "--force", "origin", "main")
    code, results = doctor("--config", str(demo))
    assert code == 1 and failed(results) == {"origin.sync"}
    [sync] = [r for r in results if r["check"] == "origin.sync"]
    assert "diverged" in sync["found"]


def test_origin_behind_the_clone(doctor: Doctor, demo: Path, tmp_path: Path) -> None:
    """The origin's main moved back to its parent: it lost a commit the server acknowledged."""
    clone = _workstation_clone(demo, tmp_path)
    (clone / "more.md").write_text("# More\n", encoding="utf-8")
    _git("add", "-A", cwd=clone)
    _git("commit", "-q", "-m", "One more", cwd=clone)
    _push_past_the_hook(demo, clone, "origin", "main")
    from notegate.config import load_config
    from notegate.services.runtime import Runtime

    runtime = Runtime(load_config(demo))  # the server fetches it
    runtime.environment(None, index_now=False)
    runtime.close()
    _push_past_the_hook(demo, clone, "--force", "origin", "HEAD~1:main")
    code, results = doctor("--config", str(demo))
    assert code == 1 and failed(results) == {"origin.sync"}
    [sync] = [r for r in results if r["check"] == "origin.sync"]
    assert "1 commit(s) ahead" in sync["found"]


@pytest.mark.parametrize("breakage", ["missing", "not-executable", "not-ours"])
def test_pre_receive_hook(doctor: Doctor, demo: Path, breakage: str) -> None:
    hook = demo.parent / "origin.git" / "hooks" / "pre-receive"
    if breakage == "missing":
        hook.unlink()
    elif breakage == "not-executable":
        hook.chmod(0o644)
    else:
        hook.write_text("#!/bin/sh\nexit 0\n", encoding="utf-8")
    code, results = doctor("--config", str(demo))
    assert code == 1 and failed(results) == {"origin.hook"}
    [result] = [r for r in results if r["check"] == "origin.hook"]
    assert {"missing": "is missing", "not-executable": "not executable", "not-ours": "not notegate's"}[
        breakage
    ] in result["found"]


# -- integrity -----------------------------------------------------------------------------------------
def test_corrupted_state_database(doctor: Doctor, demo: Path) -> None:
    state = demo.parent / "state" / "state.sqlite"
    for side in ("-wal", "-shm"):
        Path(f"{state}{side}").unlink(missing_ok=True)
    data = bytearray(state.read_bytes())
    page = 4096
    assert len(data) > 4 * page
    for offset in range(2 * page, 4 * page, 7):  # garble pages 3 and 4: b-tree pages of the tables
        data[offset] ^= 0x5A
    state.write_bytes(bytes(data))
    code, results = doctor("--config", str(demo))
    assert code == 1 and failed(results) == {"state.integrity"}, results


def test_truncated_state_database(doctor: Doctor, demo: Path) -> None:
    state = demo.parent / "state" / "state.sqlite"
    for side in ("-wal", "-shm"):
        Path(f"{state}{side}").unlink(missing_ok=True)
    with state.open("r+b") as handle:
        handle.truncate(3 * 4096 + 100)
    code, results = doctor("--config", str(demo))
    assert code == 1 and failed(results) == {"state.integrity"}, results


def _packed_at(repo: Path, oid: str) -> tuple[Path, int, int]:
    """The pack holding ``oid`` in ``repo``, the object's offset in it and its size there."""
    for index in (repo / "objects" / "pack").glob("*.idx"):
        listed = subprocess.run(["git", "verify-pack", "-v", str(index)], capture_output=True, text=True, check=True)
        for line in listed.stdout.splitlines():
            fields = line.split()
            if fields and fields[0] == oid:
                return index.with_suffix(".pack"), int(fields[4]), int(fields[3])
    raise AssertionError(f"{oid} is in no pack of {repo.name}")


@pytest.mark.parametrize("where", ["clone", "origin"])
def test_corrupted_git_object(doctor: Doctor, demo: Path, where: str) -> None:
    repo = demo.parent / ("state/envs/personal/vault.git" if where == "clone" else "origin.git")
    import pygit2

    # A note's blob (not a commit or a tree, which listing the origin's refs would trip over first), in the
    # pack its commit wrote (a group commit writes one pack, hard-linked into the origin).
    blob = str(pygit2.Repository(str(repo)).revparse_single("main:rules/digest.md").id)
    pack, offset, size = _packed_at(repo, blob)
    data = bytearray(pack.read_bytes())
    for at in range(offset + 4, offset + size):  # past the object's header and zlib's: garble the stream
        data[at] ^= 0xFF
    pack.unlink()  # a file of its own: the other repository's link to the same pack keeps the good bytes
    pack.write_bytes(bytes(data))
    code, results = doctor("--config", str(demo))
    assert code == 1 and failed(results) == {"git.fsck"}, results
    [bad] = [r for r in results if r["check"] == "git.fsck" and r["status"] == "fail"]
    assert bad["subject"] == f"personal {where}"


def test_a_workstation_vault_is_checked_too(doctor: Doctor, demo: Path, tmp_path: Path) -> None:
    clone = _workstation_clone(demo, tmp_path)
    code, results = doctor("--config", str(demo), "--vault", str(clone))
    assert code == 0, results
    assert {r["subject"] for r in results if r["check"] == "git.fsck"} >= {f"vault {clone}"}
    (clone / ".stfolder").mkdir()
    code, results = doctor("--vault", str(clone))
    assert code == 1 and failed(results) == {"syncer.scope"}
    shutil.rmtree(clone / ".stfolder")


def test_a_vault_whose_sync_stopped_is_red_with_the_stops_rule(doctor: Doctor, demo: Path, tmp_path: Path) -> None:
    from notegate.sync.daemon import EXIT_CONFLICT, MARKER_NAME

    clone = _workstation_clone(demo, tmp_path)
    marker = clone / ".git" / MARKER_NAME
    marker.write_text(
        json.dumps({"code": EXIT_CONFLICT, "rule": "sync-conflict", "message": "1 note(s) changed here and there"}),
        encoding="utf-8",
    )
    code, results = doctor("--vault", str(clone))
    assert code == 1 and failed(results) == {"sync.stopped"}, results
    [stop] = [r for r in results if r["check"] == "sync.stopped"]
    assert "[sync-conflict]" in stop["found"] and f"exit {EXIT_CONFLICT}" in stop["found"]
    assert "notegate sync --resume" in stop["remedy"]
    marker.write_text("{not json", encoding="utf-8")  # an unreadable marker still stops the vault
    code, results = doctor("--vault", str(clone))
    assert code == 1 and "[sync-stopped]" in next(r["found"] for r in results if r["check"] == "sync.stopped")
    marker.unlink()
    code, results = doctor("--vault", str(clone))
    assert code == 0 and statuses(results, "sync.stopped") == ["ok"], results
