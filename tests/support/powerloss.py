"""The power-loss harness: a real server on :mod:`powerfs`, writers, a cut at a random instant, then checks.

One run (:func:`run_once`), for a seed and a workload:

1. the vault (config, origin, server clone, state and index) is laid in a backing folder and mounted through
   ``powerfs`` (every byte not flushed lives only in that process);
2. a real ``notegate serve`` starts on the mount; writers (the official MCP client) write, and every write the
   server acknowledged is recorded with the text it carried;
3. at a random instant (from the seed) the power is cut: ``powerfs`` is killed (its unflushed bytes are gone),
   then the server, and the dead mount is detached;
4. on the backing folder (the disk after the cut): ``git fsck --strict`` of the origin and the clone,
   ``PRAGMA integrity_check`` of the state and the index; every acknowledged write is in the origin's main
   with its text (or a later text of the same writer); nothing in the writers' folder is half-made;
5. mounted again, the server restarts and serves: each acknowledged note reads back, a search finds the last
   one (the index rebuilt or caught up), a new write is acknowledged.

:func:`run_once` returns what it found (lost writes and problems) rather than asserting, so the durability-off
control can report what it protects against.  The suite runs a few seeds (tests/e2e/test_power_loss.py);
``bench/power_loss.py`` runs hundreds.
"""

from __future__ import annotations

import asyncio
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import pygit2

HERE = Path(__file__).resolve().parent
WORKLOADS = ("single", "group", "append")


def fuse_missing() -> str | None:
    """Why the harness cannot run here (None when it can)."""
    if not os.path.exists("/dev/fuse"):
        return "no /dev/fuse on this machine"
    if shutil.which("fusermount3") is None:
        return "fusermount3 is not installed (Debian's fuse3)"
    try:
        import mfusepy  # noqa: F401
    except (ImportError, OSError) as exc:
        return f"the mfusepy bindings do not load ({exc})"
    return None


@dataclass
class Outcome:
    seed: int
    workload: str
    durable: bool
    acknowledged: int = 0
    lost: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    cut_after: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.lost and not self.problems

    def __str__(self) -> str:
        head = f"seed {self.seed} {self.workload} durability={'on' if self.durable else 'off'}"
        body = f"{self.acknowledged} acknowledged, cut {self.cut_after:.2f} s after the first"
        if self.ok:
            return f"{head}: ok ({body})"
        return f"{head}: {len(self.lost)} lost {self.lost[:5]}; problems {self.problems[:5]} ({body})"


class Rig:
    """A backing folder, its mount, the powerfs process and the server on it."""

    def __init__(self, root: Path) -> None:
        self.backing = root / "disk"
        self.mount = root / "mnt"
        self.fs: subprocess.Popen | None = None
        self.log = root / "powerfs.log"

    def up(self) -> None:
        # SQLite's -shm files hold only memory its connections share (rebuilt by the first connection after a
        # crash); a stale one under a FUSE mapping made SQLite report I/O errors no real disk would.
        for shm in self.backing.rglob("*-shm"):
            shm.unlink()
        self.mount.mkdir(parents=True, exist_ok=True)
        with open(self.log, "ab") as log:
            self.fs = subprocess.Popen(
                [sys.executable, str(HERE / "powerfs.py"), str(self.backing), str(self.mount)],
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        deadline = time.monotonic() + 20
        while not os.path.ismount(self.mount):
            if self.fs.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"powerfs did not mount: {self.log.read_text()[-2000:]}")
            time.sleep(0.02)

    def cut(self) -> None:
        """The power cut: the file system's memory goes first (nothing unflushed can reach the disk after it)."""
        if self.fs is not None and self.fs.poll() is None:
            self.fs.send_signal(signal.SIGKILL)
            self.fs.wait()
        self.detach()

    def detach(self) -> None:
        subprocess.run(["fusermount3", "-u", "-z", str(self.mount)], capture_output=True, check=False)

    def down(self) -> None:
        """A clean stop (flush everything, then unmount): for setting up and tearing down, never a cut."""
        if self.fs is not None and self.fs.poll() is None:
            os.path.exists(self.mount / ".powerfs-sync")  # a sync (the server's log too): see powerfs.py
            self.fs.send_signal(signal.SIGKILL)
            self.fs.wait()
        self.detach()


def lay_vault(template: Path, rig: Rig, durable: bool) -> Path:
    """Copy an initialised vault folder onto the backing disk; its clone's origin is the mount's path."""
    target = rig.backing / "vault"
    shutil.copytree(template, target, symlinks=True)
    config = target / "notegate.toml"
    text = config.read_text()
    text = text.replace("\ndurability = true\n", f"\ndurability = {'true' if durable else 'false'}\n")
    config.write_text(text)
    clone = target / "state" / "envs" / "personal" / "vault.git"
    pygit2.Repository(str(clone)).remotes.set_url("origin", str(rig.mount / "vault" / "origin.git"))
    return config


def _fsck(repo: Path) -> str | None:
    done = subprocess.run(
        ["git", "--git-dir", str(repo), "fsck", "--strict", "--no-dangling"], capture_output=True, text=True
    )
    return None if done.returncode == 0 else f"git fsck {repo.name}: {(done.stderr or done.stdout).strip()[:300]}"


def _integrity(path: Path) -> str | None:
    if not path.exists():
        return None
    try:
        with sqlite3.connect(path) as db:
            answer = db.execute("PRAGMA integrity_check").fetchone()[0]
    except sqlite3.DatabaseError as exc:
        return f"{path.name}: {exc}"
    return None if answer == "ok" else f"{path.name}: {answer}"


def _tree_files(repo: pygit2.Repository, folder: str) -> dict[str, bytes]:
    try:
        main = repo.references["refs/heads/main"].target
    except (KeyError, pygit2.GitError):
        return {}
    tree = repo[main].peel(pygit2.Tree)
    try:
        sub = tree[folder]
    except KeyError:
        return {}
    out: dict[str, bytes] = {}
    for entry in repo[sub.id].peel(pygit2.Tree):
        out[f"{folder}/{entry.name}"] = repo[entry.id].data
    return out


async def _writers(
    url: str, token: str, workload: str, rng: random.Random, n: int, acked: dict, tried: dict, count: int | None = None
) -> None:
    """Write until the server goes away. ``acked[path]`` is the list of texts acknowledged, in order;
    ``tried[path]`` every text sent (acknowledged or not); ``count`` writers (32 for a group commit, else 4)."""
    from support import mcp_http

    count = count or (32 if workload == "group" else 4)
    errors: list[str] = []

    async def one(w: int) -> None:
        path = f"power/c{n}-w{w}.md" if workload == "append" else None
        revision = "absent"
        try:
            async with mcp_http(url, token) as client:
                for i in range(10_000):
                    target = path or f"power/c{n}-w{w}-{i}.md"
                    line = f"writer {w} entry {i} tok{rng.randrange(10**9)}\n"
                    if workload == "append":
                        text = (tried.get(target, [""])[-1] if tried.get(target) else "") + line
                        tried.setdefault(target, []).append(text)
                        args = {"path": target, "text": line, "base_revision": revision, "confirmed": True}
                        result = await client.call_tool("append_note", args)
                    else:
                        tried.setdefault(target, []).append(line)
                        args = {"path": target, "content": line, "base_revision": "absent", "confirmed": True}
                        result = await client.call_tool("write_note", args)
                    if result.is_error:
                        errors.append(_text(result)[:300])
                        return
                    acked.setdefault(target, []).append(tried[target][-1])
                    revision = result.structured_content.get("new_revision") or revision
        except (Exception, BaseExceptionGroup) as exc:  # the server went away mid-call: never acknowledged
            while isinstance(exc, BaseExceptionGroup):
                exc = exc.exceptions[0]
            errors.append(f"{type(exc).__name__}: {str(exc)[:300]}")

    await asyncio.gather(*(one(w) for w in range(count)))
    if not acked and errors:
        raise RuntimeError(f"no write was acknowledged: {errors[0]}")


def _text(result) -> str:
    return " ".join(getattr(block, "text", "") for block in result.content)


def run_series(
    template: Path, root: Path, *, seeds: list[int], workloads: list[str], durable: bool, report=None, short=False
) -> list[Outcome]:
    """One cut per seed (its workload from ``workloads``, in turn), each on a fresh copy of ``template`` (an
    initialised vault folder).  ``report(outcome)`` is called after each.  The other writers' workloads
    (``powerwork.WORKLOADS``) run there, ``short`` in the suite's version (powerwork.run_once)."""
    from functools import partial

    from support import powerwork

    outcomes = []
    for n, seed in enumerate(seeds):
        workload = workloads[n % len(workloads)]
        run = partial(powerwork.run_once, short=short) if workload in powerwork.WORKLOADS else run_once
        outcome = run(template, root / f"cut-{seed}", seed=seed, workload=workload, durable=durable)
        outcomes.append(outcome)
        if report is not None:
            report(outcome)
        shutil.rmtree(root / f"cut-{seed}", ignore_errors=True)
    return outcomes


def run_once(template: Path, root: Path, *, seed: int, workload: str, durable: bool) -> Outcome:
    """One cut, the disk checked after it, then the server restarted on that disk and checked."""
    from support import mint

    outcome = Outcome(seed=seed, workload=workload, durable=durable)
    rng = random.Random(seed)
    rig = Rig(root)
    on_disk = lay_vault(template, rig, durable)
    token = mint(on_disk, tier="trusted")  # on the disk before the mount
    acked: dict[str, list[str]] = {}
    tried: dict[str, list[str]] = {}
    rig.up()
    server = None
    try:
        server = _start(rig.mount / "vault" / "notegate.toml", None)
        outcome.cut_after = rng.uniform(0.0, 1.5)
        asyncio.run(_scene(rig, server, token, outcome, rng, 0, acked, tried))
        outcome.acknowledged = sum(len(v) for v in acked.values())
    finally:
        if server is not None:
            server.kill()
        rig.cut()
    _check_disk(rig, outcome, acked, tried)
    if not outcome.ok and not durable:
        return outcome  # the control: what is left may not even start
    # Power back: the server restarts on the disk as the cut left it (the backing folder itself: what powerfs
    # adds, forgetting, is over) and serves.
    server = _start(on_disk, outcome)
    if server is not None:
        try:
            _serves(server.url, token, acked, outcome, 1)
        finally:
            server.kill()
    return outcome


def _start(config: Path, previous: Outcome | None):
    from support import Server

    server = Server(config)
    server.log = config.parents[2] / f"serve-{server.port}.log"  # beside the mount: a cut must not take it
    try:
        return server.start(timeout=120)
    except Exception as exc:
        if previous is None:
            raise
        previous.problems.append(f"the server does not start after the cut: {str(exc)[-300:]}")
        return None


async def _scene(rig: Rig, server, token: str, outcome: Outcome, rng: random.Random, n: int, fresh, tried) -> None:
    task = asyncio.ensure_future(_writers(server.url, token, outcome.workload, rng, n, fresh, tried))
    started = time.monotonic()
    while not fresh and time.monotonic() - started < 60:  # the cut comes once writes are flowing
        await asyncio.sleep(0.01)
    await asyncio.sleep(outcome.cut_after)
    rig.cut()
    server.kill()
    await asyncio.wait_for(task, 60)


def _check_disk(rig: Rig, outcome: Outcome, acked: dict, tried: dict) -> None:
    """The disk after the cut: git and SQLite clean, every acknowledged write there, nothing half-made."""
    disk = rig.backing / "vault"
    origin_dir, clone_dir = disk / "origin.git", disk / "state" / "envs" / "personal" / "vault.git"
    for problem in (
        _fsck(origin_dir),
        _fsck(clone_dir),
        _integrity(disk / "state" / "state.sqlite"),
        _integrity(disk / "state" / "envs" / "personal" / "index.sqlite"),
    ):
        if problem:
            outcome.problems.append(problem)
    try:
        files = _tree_files(pygit2.Repository(str(origin_dir)), "power")
    except (pygit2.GitError, KeyError, ValueError) as exc:
        outcome.problems.append(f"origin unreadable: {exc}")
        files = {}
    for path, texts in acked.items():
        have = files.get(path)
        if have is None:
            outcome.lost.append(path)
            continue
        later = tried[path][tried[path].index(texts[-1]) :]
        if have.decode("utf-8", "replace") not in later:
            outcome.lost.append(f"{path} (older text)")
    for path, data in files.items():
        if data.decode("utf-8", "replace") not in tried.get(path, []):
            outcome.problems.append(f"{path}: half-made or unknown text")


def _serves(url: str, token: str, acked: dict, previous: Outcome, n: int) -> None:
    """The restarted server serves what was acknowledged before the cut, searches it, takes a new write."""
    from support import mcp_http

    async def check() -> None:
        async with mcp_http(url, token) as client:
            for path in list(acked)[-20:]:
                read = await client.call_tool("read_note", {"path": path})
                if read.is_error:
                    previous.problems.append(f"{path}: not readable after the restart: {_text(read)[:300]}")
            if acked:
                last = next(reversed(acked))
                word = acked[last][-1].split()[-1]
                found = await client.call_tool("search_notes", {"query": word})
                if found.is_error or last not in str(found.structured_content):
                    previous.problems.append(f"search does not find {last} after the restart")
            wrote = await client.call_tool(
                "write_note",
                {"path": f"after/{n}.md", "content": "after\n", "base_revision": "absent", "confirmed": True},
            )
            if wrote.is_error:
                previous.problems.append(f"a write after the restart was refused: {_text(wrote)[:300]}")

    try:
        asyncio.run(check())
    except Exception as exc:
        while isinstance(exc, BaseExceptionGroup):
            exc = exc.exceptions[0]
        previous.problems.append(f"the server does not serve after the cut: {type(exc).__name__}: {str(exc)[:300]}")
