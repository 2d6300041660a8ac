"""`notegate status` on a real vault: in sync after init, behind after someone pushes to the origin, the origin
unreachable, tokens counted; --json carries the same facts. Real git (CLI clone and push), real state DB; the
first command is the installed `notegate` script, the rest forks of the warm CLI (tests/support/zygote.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from support import notegate

NOTEGATE = str(Path(sys.executable).parent / "notegate")


def status(vault: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return notegate("status", "--config", str(vault), *extra, timeout=120)


def git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, timeout=60)


def test_a_fresh_vault_is_in_sync_and_tokens_are_counted(vault: Path) -> None:
    made = subprocess.run(
        [NOTEGATE, "token", "create", "--config", str(vault), "--name", "laptop", "--class", "workstation"],
        capture_output=True,
        text=True,
    )
    assert made.returncode == 0, made.stderr
    shown = status(vault)
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert lines[0].startswith("notegate ") and "environment personal" in lines
    assert "  origin       reachable; in sync" in lines
    assert "tokens         1 active, 0 revoked" in lines
    assert "last review    never" in lines and "last reflect   never" in lines
    assert "ngt_" not in shown.stdout
    [env] = json.loads(status(vault, "--json").stdout)["environments"]
    assert env["in_sync"] is True and env["index_fresh"] is True and env["notes"] > 0
    assert (env["inbox_waiting"], env["inbox_held"]) == (0, 0)


def test_a_push_the_server_has_not_fetched_shows_as_behind(vault: Path, tmp_path: Path) -> None:
    origin = vault.parent / "origin.git"
    clone = tmp_path / "clone"
    git("clone", "-q", str(origin), str(clone), cwd=tmp_path)
    (clone / "ideas.md").write_text("# Ideas\n")
    git("add", "ideas.md", cwd=clone)
    git("-c", "user.name=o", "-c", "user.email=o@example.org", "commit", "-qm", "ideas", cwd=clone)
    git("push", "-q", "origin", "HEAD:main", cwd=clone)
    shown = status(vault)
    assert shown.returncode == 1
    assert "  origin       reachable; behind by 1" in shown.stdout.splitlines()


def test_an_unreachable_origin_is_said_and_fails(vault: Path) -> None:
    origin = vault.parent / "origin.git"
    origin.rename(origin.with_name("moved.git"))
    shown = status(vault)
    assert shown.returncode == 1
    assert "  origin       UNREACHABLE; unknown (origin unreachable)" in shown.stdout.splitlines()
    [env] = json.loads(status(vault, "--json").stdout)["environments"]
    assert env["origin_reachable"] is False and env["in_sync"] is None
