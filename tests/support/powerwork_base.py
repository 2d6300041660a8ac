"""The power-loss harness's other writers: what every workload shares (tests/support/powerwork.py runs them).

:class:`Work` is one workload's shape (prepare on the disk, drive until the cut, check the disk, check the
restarted server); the helpers run ``notegate`` and ``git`` as a user would and read a repository's main.
"""

from __future__ import annotations

import asyncio
import os
import random
import subprocess
from pathlib import Path

import pygit2

from support.powerloss import Outcome

CLI_TIMEOUT = 120

#: Pushes to the origin are the owner's (what an SSH forced command or a forge sets for the pre-receive hook).
OWNER = {"NOTEGATE_PUSHER": "owner", "GIT_TERMINAL_PROMPT": "0"}


def _cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """``notegate ARGS`` as a user runs it, in a process of its own (a cut takes the disk from under what it was
    doing): a fork of the warm fork server (support.zygote), so each command skips ~2 s of interpreter start
    and imports; the git hook the pushes run is still git's own fresh interpreter."""
    from support import notegate

    return notegate(*args, cwd=cwd, timeout=CLI_TIMEOUT, env={**os.environ, **OWNER})


def _git(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **OWNER}
    return subprocess.run(["git", *args], capture_output=True, text=True, timeout=CLI_TIMEOUT, cwd=cwd, env=env)


def _main_files(repo_dir: Path) -> dict[str, bytes]:
    """Every file of the repository's main, by path ({} when unreadable or empty)."""
    try:
        repo = pygit2.Repository(str(repo_dir))
        tree = repo[repo.references["refs/heads/main"].target].peel(pygit2.Tree)
    except (KeyError, pygit2.GitError, ValueError):
        return {}
    out: dict[str, bytes] = {}

    def walk(node: pygit2.Tree, prefix: str) -> None:
        for entry in node:
            if entry.type_str == "tree":
                walk(repo[entry.id].peel(pygit2.Tree), f"{prefix}{entry.name}/")
            elif entry.type_str == "blob":
                out[f"{prefix}{entry.name}"] = repo[entry.id].data

    walk(tree, "")
    return out


def _say(out: subprocess.CompletedProcess[str]) -> str:
    return (out.stderr or out.stdout).strip()[-300:]


class Work:
    """One workload: ``prepare`` on the disk before the mount, ``drive`` until the cut, ``check_disk`` on the
    disk after it, ``check_served`` once the server restarted on it (power back: the disk as the cut left it)."""

    background = True  # MCP writers beside it (powerloss._writers)
    cut_at = 0.0  # time.monotonic() of the cut
    cut_window = (0.0, 2.0)  # seconds after the workload's first acknowledgement

    @property
    def suite_window(self) -> tuple[float, float]:
        """The cut window of the suite's one cut per workload (``short``): half the long run's, which still cuts
        inside the workload's second or third operation; a workload whose promise needs longer overrides it."""
        low, high = self.cut_window
        return low, low + (high - low) / 2

    def __init__(self, root: Path, rng: random.Random) -> None:
        self.root = root
        self.rng = rng
        self.acked = 0
        self.errors: list[str] = []

    def prepare(self, disk: Path, mount: Path) -> None:
        self.disk, self.mount = disk, mount  # the vault folder on the backing disk, and as mounted

    def powered(self) -> bool:
        """Whether the power is still on (after the cut the mount point is a bare folder: writing there would
        write past the harness)."""
        return os.path.ismount(self.mount.parent)

    async def drive(self, url: str) -> None:
        raise NotImplementedError

    def check_disk(self, outcome: Outcome) -> None:
        pass

    def check_served(self, url: str, outcome: Outcome) -> None:
        pass


def _run(coro, outcome: Outcome) -> None:
    try:
        asyncio.run(coro)
    except Exception as exc:
        while isinstance(exc, BaseExceptionGroup):
            exc = exc.exceptions[0]
        outcome.problems.append(f"after the restart: {type(exc).__name__}: {str(exc)[:300]}")
