"""Power cuts under the writers beyond the MCP write path (issue 28), on the powerfs FUSE file system.

Two kinds of test.  The first three cut the power right after a command was acknowledged (it exited 0), so
each fails deterministically where that command did not flush what it wrote: ``notegate sync`` bringing the
origin's changes into a workstation clone, ``notegate backup``, ``notegate restore``.  The last runs the
harness's short version: one cut at a random instant under each other writer (tests/support/powerwork.py says what
each checks); ``make power-loss`` runs hundreds.  A failure prints its seed: replay it with
``python bench/power_loss.py --cuts 1 --seed SEED --workload NAME``.
"""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import subprocess
from pathlib import Path

import pytest

from support import Server, mcp_http, mint, notegate, text_of
from support.powerloss import Rig, fuse_missing, lay_vault, run_series
from support.powerwork import WORKLOADS

MISSING = fuse_missing()
if MISSING and os.environ.get("NOTEGATE_REQUIRE_FUSE") == "1":
    raise RuntimeError(f"NOTEGATE_REQUIRE_FUSE=1 but the power-loss harness cannot run: {MISSING}")
pytestmark = [
    pytest.mark.skipif(MISSING is not None, reason=f"power-loss harness: {MISSING}"),
    pytest.mark.slow,
]


def _key(folder: Path) -> tuple[Path, str]:
    import pyrage

    identity = pyrage.x25519.Identity.generate()
    key = folder / "backup.key"
    key.write_text(f"{identity}\n")
    return key, str(identity.to_public())


def _workstation(vault: Path, tmp_path: Path) -> tuple[Rig, Path, Path]:
    """A vault and a workstation clone of it on a mounted powerfs, and a note the server wrote since the clone
    was made (what the next ``notegate sync`` brings into the work tree).  Returns the rig, the vault folder on
    the backing disk and as mounted."""
    from notegate.sync.hookfile import install_hook

    rig = Rig(tmp_path / "power")
    on_disk = lay_vault(vault.parent, rig, durable=True)
    disk, mounted = on_disk.parent, rig.mount / "vault"
    install_hook(disk / "origin.git", mounted / "notegate.toml", "personal")
    assert subprocess.run(["git", "clone", "-q", str(disk / "origin.git"), str(disk / "ws")]).returncode == 0
    subprocess.run(["git", "-C", str(disk / "ws"), "remote", "set-url", "origin", str(mounted / "origin.git")])
    token = mint(on_disk, tier="trusted")
    rig.up()
    server = Server(mounted / "notegate.toml").start()
    try:

        async def write() -> None:
            async with mcp_http(server.url, token) as client:
                args = {"path": "pulled/n.md", "content": "from the server\n", "base_revision": "absent"}
                wrote = await client.call_tool("write_note", {**args, "confirmed": True})
                assert not wrote.is_error, text_of(wrote)

        asyncio.run(write())
    finally:
        server.kill()
    return rig, disk, mounted


def test_sync_flushes_the_files_it_brings_before_main_moves(vault: Path, tmp_path: Path) -> None:
    """The daemon writes the origin's changes into the work tree (a temporary file renamed over the note) and
    then moves main, which libgit2 flushes.  Were the files not flushed first, a cut would leave main naming the
    new text over an empty file, which the next tick takes for the owner's edit and pushes over the origin's.
    The index it writes after main must survive the cut too (git refuses an empty one)."""
    rig, disk, mounted = _workstation(vault, tmp_path)
    try:
        args = ("sync", "--config", str(mounted / "notegate.toml"), "--device", "ws1", "--once", str(mounted / "ws"))
        synced = notegate(*args)
        assert synced.returncode == 0, synced.stderr
        assert (mounted / "ws" / "pulled" / "n.md").read_text() == "from the server\n"
    finally:
        rig.cut()
    assert (disk / "ws" / "pulled" / "n.md").read_text() == "from the server\n"
    # libgit2 wrote the index without a flush: empty after a cut, git refused it and the clone never synced again
    status = subprocess.run(["git", "-C", str(disk / "ws"), "status", "--porcelain"], capture_output=True, text=True)
    assert status.returncode == 0 and status.stdout == "", status.stderr


def test_a_cut_while_sync_writes_the_work_tree_leaves_each_note_old_or_new(
    vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cut after the daemon wrote the origin's changes into the work tree and before main moved: each note must
    be the old text or the new one.  An empty one reads as the owner's edit of a note the origin changed: the
    sync stops on a conflict the owner never made (or, with no conflict, pushes the empty file)."""
    from notegate.config import load_config
    from notegate.sync import workclone
    from notegate.sync.daemon import Syncer
    from notegate.vault import durable

    rig, disk, mounted = _workstation(vault, tmp_path)
    config = load_config(mounted / "notegate.toml")

    def cut_instead(self, commit: str) -> None:  # the power goes just before main moves
        rig.cut()
        raise OSError("the power was cut")

    monkeypatch.setattr(workclone.WorkClone, "move_main", cut_instead)
    before = durable.enabled()
    durable.enable(True)
    try:
        env = {**os.environ, "NOTEGATE_PUSHER": "owner"}
        syncer = Syncer(mounted / "ws", config.policy, owner="owner", device="ws1", git_env=env)
        with pytest.raises(OSError):
            syncer.tick()
    finally:
        durable.enable(before)
        rig.cut()
    note = disk / "ws" / "pulled" / "n.md"
    assert not note.exists() or note.read_text() == "from the server\n"


def test_a_backup_acknowledged_before_a_cut_opens_whole(vault: Path, tmp_path: Path) -> None:
    """``notegate backup`` renames NAME.partial to NAME when done: a name that says whole, over files that age
    wrote without a flush.  After the cut the folder must open, check and decrypt."""
    from notegate.services.restore import open_backup, restore_into

    rig = Rig(tmp_path / "power")
    lay_vault(vault.parent, rig, durable=True)
    key, recipient = _key(tmp_path)
    mounted = rig.mount / "vault"
    rig.up()
    try:
        args = ("--to", str(rig.mount / "backups"), "--recipient", recipient, "--json")
        taken = notegate("backup", "--config", str(mounted / "notegate.toml"), *args)
        assert taken.returncode == 0, taken.stderr
        name = Path(json.loads(taken.stdout)["folder"]).name
    finally:
        rig.cut()
    opened = open_backup(rig.backing / "backups" / name, key)
    restore_into(opened, tmp_path / "restored")


def test_a_restore_acknowledged_before_a_cut_serves(vault: Path, tmp_path: Path) -> None:
    """``notegate restore --to`` writes a whole deployment; acknowledged, it must survive a cut and serve."""
    token = mint(vault, tier="trusted")
    key, recipient = _key(tmp_path)
    taken = notegate("backup", "--config", str(vault), "--to", str(tmp_path / "backups"), "--recipient", recipient)
    assert taken.returncode == 0, taken.stderr
    backup = next((tmp_path / "backups").iterdir())
    rig = Rig(tmp_path / "power")
    rig.backing.mkdir(parents=True)
    rig.up()
    try:
        restored = notegate("restore", "--from", str(backup), "--identity", str(key), "--to", str(rig.mount / "r"))
        assert restored.returncode == 0, restored.stderr
    finally:
        rig.cut()
    target = rig.backing / "r"
    with sqlite3.connect(target / "state" / "state.sqlite") as db:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    fsck = subprocess.run(["git", "--git-dir", str(target / "origins" / "personal.git"), "fsck", "--strict"])
    assert fsck.returncode == 0
    server = Server(target / "notegate.toml").start()
    try:

        async def read() -> None:
            async with mcp_http(server.url, token) as client:
                got = await client.call_tool("read_note", {"path": "rules/digest.md"})
                assert not got.is_error, text_of(got)

        asyncio.run(read())
    finally:
        server.kill()


@pytest.mark.parametrize("workload", WORKLOADS)
def test_no_acknowledged_operation_is_lost_at_a_power_cut(workload: str, vault: Path, tmp_path: Path) -> None:
    """One cut at a random instant under each writer: see tests/support/powerwork.py for what each promises.
    The suite's version (``short``): a shorter cut window and 2 MCP writers beside it; make power-loss keeps
    the long one."""
    seed = 100 + WORKLOADS.index(workload)
    kwargs = {"seeds": [seed], "workloads": [workload], "durable": True, "short": True}
    outcome = run_series(vault.parent, tmp_path / "power", **kwargs)[0]
    assert outcome.ok, str(outcome)
    assert outcome.acknowledged > 0, str(outcome)
