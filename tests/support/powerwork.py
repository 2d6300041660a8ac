"""The power-loss harness beyond the write path: every other writer, cut at a random instant (issue 28).

:mod:`powerloss` cuts the power under MCP writes (single writes, group commits, appends).  This module runs the
same cut -- ``powerfs`` killed, so every byte not flushed is gone -- under the other writers, each beside a few
ordinary MCP writers (so the server is busy as it would be), and checks what each promises:

* ``promote``: a restricted phone writes inbox items, a trusted reviewer promotes them.  An acknowledged item is
  in the inbox or promoted; an acknowledged promotion is at its route's target and gone from the inbox; an item
  is never both; the authorship rows survive with the commits (the restarted server lists the item's authors).
* ``contract``: captures posted to ``POST /contracts/capture``.  An acknowledged capture is in the origin; its
  replay after the restart answers ``already-recorded`` with the same commit (the idempotency row and the
  commit agree), and a replay of one never answered lands exactly once.
* ``import``: ``notegate import`` of small folders in batches of :data:`BATCH` files.  An acknowledged import
  is whole; one cut short holds whole batches only (never a batch in part), and running it again completes it.
* ``backup``: ``notegate backup`` in a loop.  After the cut every backup folder is a ``.partial`` one (never
  taken for a backup) or a complete one that opens, checks and decrypts; every acknowledged one is there.  The
  next backup after the restart removes every ``.partial`` folder the cut left, and no other.
* ``restore``: ``notegate restore --to`` a new folder in a loop.  A restored folder with a config is complete
  (state, origins, hooks) and serves; one cut short has no config, so nothing serves half of it; the running
  deployment is unharmed.
* ``sync``: ``notegate sync --once`` on a workstation clone on the same disk, while an editor saves notes there
  (write, ``fsync``, rename: a careful editor) and the server writes other notes it pulls in.  After the cut and
  one more sync: no saved edit is lost, the origin holds every saved edit's last text, and no file the origin
  holds is one nobody wrote (a half-written work-tree file pushed back).
* ``quarantine``: plain ``git push`` of commits into the origin, each vetted by the pre-receive hook in git's
  quarantine.  An acknowledged push is in the origin; a push after the restart is accepted (no stale lock) and
  removes the quarantine folder a cut push left, once a day old (the harness dates it back).

Each run ends as :func:`powerloss.run_once` does: ``git fsck --strict``, ``integrity_check``, every acknowledged
MCP write there, and the server restarted on the disk serves.  Returns an :class:`~powerloss.Outcome`.

The workloads live in :mod:`powerwork_doors` (promote, contract, import) and :mod:`powerwork_copies` (backup,
restore, sync, quarantine), over :mod:`powerwork_base`; this module is the driver: mount, cut, power back, check.
"""

from __future__ import annotations

import asyncio
import random
import time
from pathlib import Path

from support.powerloss import Outcome, Rig, _check_disk, _serves, _start, _writers, lay_vault
from support.powerwork_base import Work
from support.powerwork_copies import Backup, Quarantine, Restore, Sync
from support.powerwork_doors import Contract, Import, Promote

WORKLOADS = ("promote", "contract", "import", "backup", "restore", "sync", "quarantine")
#: Run each workload without the MCP writers beside it (bench/power_loss.py --alone): the durability-off control
#: then counts what the workload itself loses, not what the writers lose.
ALONE = {"on": False}


KINDS = {
    "promote": Promote,
    "contract": Contract,
    "import": Import,
    "backup": Backup,
    "restore": Restore,
    "sync": Sync,
    "quarantine": Quarantine,
}


def _power_back(rig: Rig) -> None:
    """The disk after the cut, where the workloads named it: the dead mount's folder becomes a link to the backing
    folder, so every path they wrote down (the hook's config, a clone's remote, a restored folder) resolves.  Not a
    second powerfs mount: what it adds (forgetting) is over, and a remount under load made SQLite fail to open
    its files now and then, as no real disk would."""
    rig.detach()
    try:
        rig.mount.rmdir()
    except OSError:  # something wrote into the bare folder after the cut: keep it aside, for a look
        rig.mount.rename(rig.mount.with_name("mnt-after-cut"))
    rig.mount.symlink_to(rig.backing, target_is_directory=True)


def _errors(log: Path) -> str:
    """The last error lines of a server's log (a traceback's last line, a refusal)."""
    try:
        lines = log.read_text(errors="replace").splitlines()
    except OSError:
        return "(no log)"
    found = [ln for ln in lines if "Error" in ln or "error" in ln or "Traceback" in ln]
    return " | ".join(found[-4:])[-900:] or "(nothing)"


#: MCP writers beside a workload: the long run's, and the suite's (``short``: fewer, the server as busy enough).
WRITERS, SUITE_WRITERS = 4, 2


def run_once(template: Path, root: Path, *, seed: int, workload: str, durable: bool, short: bool = False) -> Outcome:
    """One cut under ``workload`` (and MCP writers beside it), the disk checked, the server restarted on it.
    ``short`` is the suite's version: the workload's ``suite_window`` and :data:`SUITE_WRITERS` writers."""
    from support import mint

    outcome = Outcome(seed=seed, workload=workload, durable=durable)
    rng = random.Random(seed)
    rig = Rig(root)
    on_disk = lay_vault(template, rig, durable)
    token = mint(on_disk, tier="trusted")
    work = KINDS[workload](root, rng)
    work.prepare(on_disk.parent, rig.mount / "vault")
    acked: dict[str, list[str]] = {}
    tried: dict[str, list[str]] = {}
    rig.up()
    server = None
    try:
        server = _start(rig.mount / "vault" / "notegate.toml", None)
        outcome.cut_after = rng.uniform(*(work.suite_window if short else work.cut_window))
        writers = SUITE_WRITERS if short else WRITERS
        asyncio.run(_scene(rig, server, token, work, outcome, rng, acked, tried, writers))
    finally:
        if server is not None:
            server.kill()
        rig.cut()
    outcome.acknowledged = work.acked + sum(len(v) for v in acked.values())
    if work.acked == 0:
        outcome.problems.append(f"the {workload} workload acknowledged nothing: {work.errors[:1]}")
    _check_disk(rig, outcome, acked, tried)
    work.check_disk(outcome)
    if not outcome.ok and not durable:
        return outcome  # the control: what is left may not even start
    # Power back: the server restarts on the disk as the cut left it (as powerloss.run_once does).
    _power_back(rig)
    try:
        server = _start(rig.mount / "vault" / "notegate.toml", outcome)
        if server is not None:
            before = len(outcome.problems)
            try:
                _serves(server.url, token, acked, outcome, 1)
                try:
                    work.check_served(server.url, outcome)
                except Exception as exc:  # a finding (with its seed), not a crash of the series
                    outcome.problems.append(f"after the restart: {type(exc).__name__}: {str(exc)[:300]}")
            finally:
                server.kill()
                if len(outcome.problems) > before:  # what the server said (the log goes with the cut's folder)
                    outcome.problems.append(f"server log: {_errors(server.log)}")
        if workload == "sync":  # nothing the writers did not write reached the origin through the sync
            for path, data in getattr(work, "power", {}).items():
                if data.decode("utf-8", "replace") not in tried.get(path, []):
                    outcome.problems.append(f"{path}: pushed by sync after the cut with a text nobody wrote")
    finally:
        rig.down()
    return outcome


async def _scene(rig: Rig, server, token: str, work: Work, outcome: Outcome, rng, acked, tried, writers) -> None:
    tasks = [asyncio.ensure_future(work.drive(server.url))]
    if work.background and not ALONE["on"]:
        mcp = _writers(server.url, token, "single", rng, 0, acked, tried, count=writers)
        tasks.append(asyncio.ensure_future(mcp))
    started = time.monotonic()
    while not work.acked and time.monotonic() - started < 90 and not tasks[0].done():
        await asyncio.sleep(0.01)
    await asyncio.sleep(outcome.cut_after)
    rig.cut()
    work.cut_at = time.monotonic()
    server.kill()
    await asyncio.wait_for(asyncio.gather(*tasks, return_exceptions=True), 180)
