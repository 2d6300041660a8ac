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

import pytest
from hypothesis import given
from hypothesis import settings as examples
from hypothesis import strategies as st

from support import mint, notegate, running
from support.runnable import KINDS, Block, blocks, marked


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


#: A line of a block's body as a page holds it: no fence of its own, not starting with white space.
BODY_LINE = st.text(st.characters(blacklist_categories=("Cs", "Zl", "Zp", "Cc")), min_size=1, max_size=30).filter(
    lambda line: not line[0].isspace() and "```" not in line
)


@given(
    indent=st.sampled_from(["", "  ", "    ", "\t"]),
    name=st.sampled_from(KINDS),
    lang=st.sampled_from(["sh", "python", "toml", ""]),
    body=st.lists(st.tuples(st.sampled_from(["", "  "]), BODY_LINE), min_size=1, max_size=6),
    before=st.sampled_from(["", "Some prose.\n\n", "```sh\nnot marked\n```\n\n"]),
)
@examples(max_examples=60, deadline=None)
def test_any_marked_block_reads_back_as_written_at_its_indentation(
    indent: str, name: str, lang: str, body: list[tuple[str, str]], before: str
) -> None:
    """The class of pages: whatever a marked block holds and however deep it sits, the runner gets exactly its
    lines (the block's own indentation removed, the rest kept); an unmarked block before it is not taken."""
    import tempfile

    lines = [extra + line for extra, line in body]
    lines[0] = body[0][1]  # the first line sits at the block's indentation, so the indentation is the block's
    page = before + f"{indent}<!-- runnable: {name} -->\n{indent}```{lang}\n"
    page += "".join(f"{indent}{line}\n" for line in lines) + f"{indent}```\n"
    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "p.md").write_text(page, encoding="utf-8")
        found = blocks(Path(folder))
    assert found == [Block(name, "p.md", lang, "".join(f"{line}\n" for line in lines))]


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


def _shell_folder(vault: Path, tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A folder holding ./vault (with a workstation token named laptop), the checkout's notegate on PATH, a HOME
    of its own and no NOTEGATE_/XDG_ variable: where a reader's shell block runs."""
    import shutil

    here = tmp_path / "here"
    shutil.copytree(vault.parent, here / "vault", symlinks=True)
    mint(here / "vault" / "notegate.toml", name="laptop", client_class="workstation")
    bin_dir, home = tmp_path / "bin", tmp_path / "home"
    bin_dir.mkdir()
    home.mkdir()
    shim = bin_dir / "notegate"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m notegate.cli "$@"\n')
    shim.chmod(0o755)
    env = {**os.environ, "HOME": str(home), "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}"}
    env = {k: v for k, v in env.items() if not k.startswith(("NOTEGATE_", "XDG_"))}
    return here, env


def _run_block(block: Block, here: Path, env: dict[str, str]) -> str:
    done = subprocess.run(
        ["sh", "-e", "-c", block.code], capture_output=True, text=True, env=env, cwd=here, timeout=300
    )
    assert done.returncode == 0, (str(block), done.stdout, done.stderr)
    return done.stdout


def test_the_shell_blocks_over_a_vault_run_as_written(vault: Path, tmp_path: Path) -> None:
    """Each ``sh-vault`` block, in page order, in one folder (``_shell_folder``); afterwards the vault says each
    page did what it says: the device guide's key is trusted by the server's config, the rotation guide's
    laptop token is revoked and laptop-2 live and in the token file, the sync guide's clone is in step."""
    from notegate.auth.tokens import list_tokens
    from notegate.config import load_config
    from notegate.state import StateDB

    here, env = _shell_folder(vault, tmp_path)
    home = Path(env["HOME"])
    config = here / "vault" / "notegate.toml"
    printed = {block.page: _run_block(block, here, env) for block in marked("sh-vault")}
    assert {"how-to/add-device.md", "how-to/rotate-keys.md", "how-to/sync-workstation.md"} <= set(printed)
    db = StateDB.for_config(load_config(config))
    try:
        state = {row.name: bool(row.revoked_at) for row in list_tokens(db)}
    finally:
        db.close()
    assert state == {"laptop": True, "laptop-2": False}, state
    token_file = home / ".config" / "notegate" / "token"
    assert token_file.read_text().startswith("ngt_") and token_file.stat().st_mode & 0o077 == 0

    # add a device: the key stays on this machine (600), the server's config names it for the owner
    trusted = load_config(config).devices
    assert set(trusted) == {"laptop"} and trusted["laptop"].person == "owner", trusted
    for name in ("laptop", "laptop-2024"):  # the rotation guide's new key too
        key = home / ".config" / "notegate" / "devices" / f"{name}.pem"
        assert key.stat().st_mode & 0o077 == 0, key
    assert re.search(r"^configured\s+laptop\s+ed25519:\S+\s+person owner$", printed["how-to/add-device.md"], re.M)

    # sync a workstation: the clone's last accepted origin commit is the origin's main
    assert "notegate sync: in sync" in printed["how-to/sync-workstation.md"]
    clone = home / "Obsidian" / "Vault"
    accepted = subprocess.run(
        ["git", "-C", str(clone), "rev-parse", "refs/notegate/accepted"], capture_output=True, text=True
    )
    main = subprocess.run(
        ["git", "-C", str(here / "vault" / "origin.git"), "rev-parse", "main"], capture_output=True, text=True
    )
    assert accepted.stdout and accepted.stdout == main.stdout, (accepted.stderr, main.stderr)


def test_the_backup_guide_backs_up_rehearses_and_restores_as_written(vault: Path, tmp_path: Path) -> None:
    """The ``sh-backup`` block (it needs `age-keygen`, Debian's `age`; CI installs it and sets
    NOTEGATE_REQUIRE_AGE=1): the rehearsal passes every check, and the restored folder holds the same tokens and
    the same commits as the vault backed up."""
    import shutil

    from notegate.auth.tokens import list_tokens
    from notegate.config import load_config
    from notegate.state import StateDB

    if shutil.which("age-keygen") is None:
        if os.environ.get("NOTEGATE_REQUIRE_AGE") == "1":
            pytest.fail("NOTEGATE_REQUIRE_AGE=1 but age-keygen is missing (apt-get install age)")
        pytest.skip("age-keygen is missing (apt-get install age): the backup guide's block needs it")
    [block] = marked("sh-backup")
    here, env = _shell_folder(vault, tmp_path)
    printed = _run_block(block, here, env)
    checks = re.search(r"^Rehearsal: (\d+) of (\d+) checks passed$", printed, re.M)
    assert checks and checks[1] == checks[2] and int(checks[1]) >= 7, printed
    restored = load_config(here / "restored" / "notegate.toml")

    def tokens(config_path: Path) -> list[tuple[str, bool]]:
        db = StateDB.for_config(load_config(config_path))
        try:
            return sorted((row.name, bool(row.revoked_at)) for row in list_tokens(db))
        finally:
            db.close()

    assert (
        tokens(here / "restored" / "notegate.toml") == tokens(here / "vault" / "notegate.toml") == [("laptop", False)]
    )

    def main_of(origin: str | Path) -> str:
        done = subprocess.run(["git", "--git-dir", str(origin), "rev-parse", "main"], capture_output=True, text=True)
        return done.stdout.strip()

    assert main_of(restored.environment(None).origin_url) == main_of(here / "vault" / "origin.git") != ""
