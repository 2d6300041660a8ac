"""`notegate doctor` as a user meets it: a real subprocess on `make run`'s setup, human and JSON output."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pygit2

from notegate.policy import Policy
from support.doctor import Doctor, notegate

EXPECTED_CHECKS = {
    "config.load",
    "policy.globs",
    "policy.routes",
    "policy.enforcers",
    "device.keys",
    "origin.reachable",
    "origin.sync",
    "origin.hook",
    "origin.pack-bound",
    "origin.quarantine",
    "syncer.scope",
    "state.integrity",
    "git.fsck",
    "disk.free",
    "members.config",
}


def test_green_on_make_runs_setup(demo: Path, isolated_env: dict[str, str]) -> None:
    done = notegate("doctor", "--config", str(demo), env=isolated_env)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[-1].startswith("doctor: all checks passed")
    assert not any(line.startswith(("FAIL", "WARN")) for line in lines), done.stdout
    assert "\033[" not in done.stdout  # not a TTY: no colour codes
    token = (demo.parent / "demo.token").read_text().strip()
    assert token not in done.stdout + done.stderr


def test_json_is_a_list_of_checks_and_a_failure_exits_1(demo: Path, isolated_env: dict[str, str]) -> None:
    green = notegate("doctor", "--config", str(demo), "--json", env=isolated_env)
    assert green.returncode == 0, green.stdout + green.stderr
    results = json.loads(green.stdout)
    assert isinstance(results, list)
    assert {r["check"] for r in results} == EXPECTED_CHECKS
    assert all(set(r) == {"check", "subject", "status", "found", "remedy"} for r in results)
    assert {r["status"] for r in results} == {"ok"}
    assert {r["subject"] for r in results if r["check"] == "git.fsck"} == {"personal clone", "personal origin"}

    (demo.parent / "origin.git" / "hooks" / "pre-receive").unlink()
    red = notegate("doctor", "--config", str(demo), "--json", env=isolated_env)
    assert red.returncode == 1
    [hook] = [r for r in json.loads(red.stdout) if r["check"] == "origin.hook"]
    assert hook["status"] == "fail" and "missing" in hook["found"] and hook["remedy"]


def test_human_output_is_loud_about_a_failure(demo: Path, isolated_env: dict[str, str]) -> None:
    (demo.parent / "origin.git" / "hooks" / "pre-receive").chmod(0o644)
    done = notegate("doctor", "--config", str(demo), env=isolated_env)
    assert done.returncode == 1
    [line] = [line for line in done.stdout.splitlines() if line.startswith("FAIL")]
    assert line.startswith("FAIL  origin.hook [personal]:") and "not executable" in line
    assert done.stdout.splitlines()[-1].startswith("DOCTOR FOUND 1 FAILURE(S)")


def test_config_from_the_environment_or_the_current_folder(demo: Path, isolated_env: dict[str, str]) -> None:
    by_env = notegate("doctor", "--json", env={**isolated_env, "NOTEGATE_CONFIG": str(demo)})
    in_dir = notegate("doctor", "--json", env=isolated_env, cwd=demo.parent)
    for done in (by_env, in_dir):
        assert done.returncode == 0, done.stdout + done.stderr
        assert {r["check"] for r in json.loads(done.stdout)} == EXPECTED_CHECKS
    nothing = notegate("doctor", env=isolated_env, cwd=Path(isolated_env["HOME"]))
    assert nothing.returncode == 2 and "nothing to check" in nothing.stderr


def test_the_origins_pack_bound_is_checked(demo: Path, doctor: Doctor) -> None:
    """`notegate init` set receive.maxInputSize to max_push_bytes; unset or larger, the doctor fails it."""
    origin = demo.parent / "origin.git"
    assert pygit2.Repository(str(origin)).config.get_int("receive.maxInputSize") == Policy().max_push_bytes

    def bound() -> dict[str, str]:
        _code, results = doctor("--config", str(demo))
        [result] = [r for r in results if r["check"] == "origin.pack-bound"]
        return result

    assert bound()["status"] == "ok"
    subprocess.run(["git", "-C", str(origin), "config", "receive.maxInputSize", "1g"], check=True)
    larger = bound()
    assert larger["status"] == "fail" and "above max_push_bytes" in larger["found"]
    assert "hooks install" in larger["remedy"]
    subprocess.run(["git", "-C", str(origin), "config", "--unset", "receive.maxInputSize"], check=True)
    assert bound()["status"] == "fail" and "not set" in bound()["found"]
    subprocess.run(["git", "-C", str(origin), "config", "receive.maxInputSize", "10m"], check=True)
    assert bound()["status"] == "ok"
