"""Every block the documentation marks runnable is run as written against a real ``notegate serve``
(issue 34). The Python client recipes run in tests/doors/test_readme_client.py (the OAuth one needs the
consent approved mid-run); the shell blocks run here."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from support import mint, notegate, running
from support.runnable import KINDS, blocks, marked


def test_every_marked_block_has_a_runner_and_every_runner_a_block() -> None:
    found = blocks()
    unknown = [str(block) for block in found if block.name not in KINDS]
    assert unknown == [], f"runnable blocks no test knows how to run: {unknown}"
    assert {block.name for block in found} == set(KINDS)
    assert all(block.code.strip() for block in found)


def test_a_marker_inside_a_list_item_is_read_at_its_indentation(tmp_path: Path) -> None:
    page = tmp_path / "p.md"
    page.write_text("- item\n\n  <!-- runnable: sh-machine -->\n  ```sh\n  echo one \\\n    two\n  ```\n")
    [block] = blocks(tmp_path)
    assert block.code == "echo one \\\n  two\n" and block.lang == "sh"


def test_the_machine_contract_examples_commit_as_written(vault: Path, tmp_path: Path) -> None:
    """Each curl block of the machine-contracts guide, as a reader pastes it with $TOKEN set: the server's
    answer is JSON saying it committed."""
    made = notegate(
        "token", "create", "--config", str(vault), "--name", "phone", "--class", "machine",
        *(arg for name in ("health-daily", "capture", "session-state") for arg in ("--contract", name)),
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    token = made.stdout.strip()
    examples = marked("sh-machine")
    assert len(examples) >= 3
    with running(vault) as server:
        for block in examples:
            code = block.code.replace("http://localhost:8765", server.url)
            assert code != block.code, f"{block} names no http://localhost:8765: the test cannot aim it"
            env = {**os.environ, "TOKEN": token}
            done = subprocess.run(["sh", "-e", "-c", code], capture_output=True, text=True, env=env, timeout=120)
            assert done.returncode == 0, (str(block), done.stderr)
            answer = json.loads(done.stdout)
            assert answer["status"] == "committed", (str(block), answer)
            assert re.fullmatch(r"[0-9a-f]{40}", answer["commit"]), answer


def test_the_shell_blocks_over_a_vault_run_as_written(vault: Path, tmp_path: Path) -> None:
    """Each ``sh-vault`` block in a folder holding ./vault (with a workstation token named laptop), the
    checkout's notegate on PATH and a HOME of its own; afterwards the vault's tokens say the block did what
    its page says (the rotation guide: laptop revoked, laptop-2 live and in the token file)."""
    import shutil

    from notegate.auth.tokens import list_tokens
    from notegate.config import load_config
    from notegate.state import StateDB

    here = tmp_path / "here"
    shutil.copytree(vault.parent, here / "vault", symlinks=True)
    config = here / "vault" / "notegate.toml"
    mint(config, name="laptop", client_class="workstation")
    bin_dir, home = tmp_path / "bin", tmp_path / "home"
    bin_dir.mkdir()
    home.mkdir()
    shim = bin_dir / "notegate"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m notegate.cli "$@"\n')
    shim.chmod(0o755)
    env = {**os.environ, "HOME": str(home), "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}"}
    env = {k: v for k, v in env.items() if not k.startswith(("NOTEGATE_", "XDG_"))}
    for block in marked("sh-vault"):
        done = subprocess.run(
            ["sh", "-e", "-c", block.code], capture_output=True, text=True, env=env, cwd=here, timeout=300
        )
        assert done.returncode == 0, (str(block), done.stdout, done.stderr)
    db = StateDB.for_config(load_config(config))
    try:
        state = {row.name: bool(row.revoked_at) for row in list_tokens(db)}
    finally:
        db.close()
    assert state == {"laptop": True, "laptop-2": False}, state
    token_file = home / ".config" / "notegate" / "token"
    assert token_file.read_text().startswith("ngt_") and token_file.stat().st_mode & 0o077 == 0
