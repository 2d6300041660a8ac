"""Issue 12: the server log says when a fetch moved HEAD, one JSON line (`event: fetch`, old and new short
ids), once; never the pushed note's text. A real `notegate serve
--log-format json`, its own fetch loop, and a push by the real git CLI from a clone of the origin."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

from support import Server, set_policy

SECRET_TEXT = "a sentence only the pushed note holds"


def fetch_events(server: Server) -> list[dict]:
    lines = [line for line in server.log.read_text().splitlines() if line.startswith("{")]
    return [e for e in map(json.loads, lines) if e.get("event") == "fetch"]


def git(*args: str, cwd: Path) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_a_fetch_that_moved_head_is_one_line(vault: Path, tmp_path: Path) -> None:
    set_policy(vault, fetch_interval_seconds=0.2)
    origin = vault.parent / "origin.git"
    work = tmp_path / "laptop"
    git("clone", "-q", str(origin), str(work), cwd=tmp_path)
    git("config", "user.email", "owner@example.invalid", cwd=work)
    git("config", "user.name", "Owner", cwd=work)
    server = Server(vault, extra_args=("--log-format", "json")).start()
    try:
        before = git("rev-parse", "HEAD", cwd=work)
        (work / "notes").mkdir(exist_ok=True)
        (work / "notes" / "pushed.md").write_text(f"# Pushed\n\n{SECRET_TEXT}\n")
        git("add", "notes/pushed.md", cwd=work)
        git("commit", "-q", "-m", "a note from the laptop", cwd=work)
        git("push", "-q", "origin", "HEAD:main", cwd=work)
        after = git("rev-parse", "HEAD", cwd=work)
        deadline = time.monotonic() + 30
        while not fetch_events(server):
            assert time.monotonic() < deadline, server.log.read_text()[-2000:]
            time.sleep(0.05)
        [moved] = fetch_events(server)
        assert moved["environment"] == "personal"
        assert (moved["old"], moved["new"]) == (before[:12], after[:12])
    finally:
        server.stop()
    assert len(fetch_events(server)) == 1  # one line for the one fetch that moved HEAD
    assert SECRET_TEXT not in server.log.read_text()
