"""`notegate token create` as the owner meets it: --output into folders that do not exist yet, a file that
cannot be written (no live token left behind), a name already taken. Separate processes (forks of the warm
CLI, tests/support/zygote.py: exit status, stdout and stderr as a fresh interpreter gives them), real state DB; the
first test runs the real `python -m notegate.cli`."""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path

from support import notegate


def cli(*args: str, real: bool = False) -> subprocess.CompletedProcess:
    return notegate(*args, timeout=120, real=real)


def tokens(vault: Path) -> list[dict]:
    listed = cli("token", "list", "--config", str(vault), "--json")
    assert listed.returncode == 0, listed.stderr
    return json.loads(listed.stdout)


def test_output_creates_missing_private_folders(vault: Path, tmp_path: Path) -> None:
    target = tmp_path / "home" / ".config" / "notegate" / "token"
    made = cli("token", "create", "--config", str(vault), "--name", "laptop", "--class", "workstation",
               "--output", str(target), real=True)  # fmt: skip
    assert made.returncode == 0, made.stderr
    assert made.stdout == ""  # the secret went to the file only
    token = target.read_text().strip()
    assert token.startswith("ngt_") and token not in made.stderr
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o600
    for folder in (tmp_path / "home", tmp_path / "home" / ".config", target.parent):
        assert stat.S_IMODE(os.stat(folder).st_mode) == 0o700, folder
    [row] = tokens(vault)
    assert row["name"] == "laptop" and row["revoked_at"] is None


def test_an_unwritable_output_leaves_no_live_token(vault: Path, tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where a folder should be\n")
    target = blocker / "token"
    failed = cli("token", "create", "--config", str(vault), "--name", "laptop", "--class", "workstation",
                 "--output", str(target))  # fmt: skip
    assert failed.returncode == 1
    assert failed.stderr.strip() == (
        f"notegate token: Refused [token-output-failed]: cannot write the token file {target} (Not a directory). "
        "No token was created. Choose a file in a folder you can write to, or leave out --output to print the token."
    )
    assert "ngt_" not in failed.stdout + failed.stderr
    assert tokens(vault) == []
    assert blocker.read_text() == "a file where a folder should be\n"


def test_a_duplicate_name_is_refused_with_its_rule(vault: Path, tmp_path: Path) -> None:
    first = cli("token", "create", "--config", str(vault), "--name", "laptop", "--class", "workstation")
    assert first.returncode == 0, first.stderr
    target = tmp_path / "second.token"
    again = cli("token", "create", "--config", str(vault), "--name", "Laptop", "--class", "hosted",
                "--output", str(target))  # fmt: skip
    assert again.returncode == 1 and again.stdout == ""
    assert again.stderr.strip() == (
        "notegate token: Refused [token-name-taken]: a live token named 'Laptop' already exists in this "
        "environment. Pick another --name, or revoke the old token first (notegate token revoke NAME)."
    )
    assert not target.exists()
    assert [r["name"] for r in tokens(vault)] == ["laptop"]
    assert cli("token", "revoke", "--config", str(vault), "laptop").returncode == 0
    reused = cli("token", "create", "--config", str(vault), "--name", "laptop", "--class", "workstation")
    assert reused.returncode == 0, reused.stderr
