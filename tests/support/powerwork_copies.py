"""The power-loss harness's workloads that copy the vault elsewhere: backup, restore, ``notegate sync`` on a
workstation clone, and plain ``git push`` through the hook's quarantine.

What each promises after a cut is in tests/support/powerwork.py's docstring; :mod:`powerwork_base` has
:class:`~powerwork_base.Work`.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import pygit2

from support.powerloss import Outcome, _text
from support.powerwork_base import Work, _cli, _git, _main_files, _run, _say


# ---------------------------------------------------------------- a backup in progress
class Backup(Work):
    cut_window = (0.0, 3.0)

    def prepare(self, disk: Path, mount: Path) -> None:
        import pyrage

        super().prepare(disk, mount)
        self.identity = pyrage.x25519.Identity.generate()
        self.identity_file = self.root / "backup.key"
        self.identity_file.write_text(str(self.identity) + "\n")
        self.folders: list[str] = []  # acknowledged backups' folder names

    async def drive(self, url: str) -> None:
        recipient = str(self.identity.to_public())
        while self.powered():
            args = ("backup", "--config", str(self.mount / "notegate.toml"), "--to", str(self.mount / "backups"))
            done = await asyncio.to_thread(_cli, *args, "--recipient", recipient, "--json")
            if done.returncode != 0:
                self.errors.append(_say(done))
                return
            self.folders.append(Path(json.loads(done.stdout)["folder"]).name)
            self.acked += 1

    def check_disk(self, outcome: Outcome) -> None:
        from notegate.errors import NotegateError
        from notegate.services.restore import open_backup, restore_into

        backups = self.disk / "backups"
        names = sorted(p.name for p in backups.iterdir()) if backups.is_dir() else []
        for name in self.folders:
            if name not in names:
                outcome.lost.append(f"backup {name}")
        for name in names:
            if name.endswith(".partial"):
                continue  # never taken for a backup (restore checks the manifest and seal too)
            try:
                opened = open_backup(backups / name, self.identity_file)
                with tempfile.TemporaryDirectory(prefix="power-restore-") as scratch:
                    restore_into(opened, Path(scratch) / "r")
            except NotegateError as exc:
                outcome.problems.append(f"backup {name} is not whole after the cut: {exc.explain()[:300]}")
        self.left = [name for name in names if name.endswith(".partial")]

    def check_served(self, url: str, outcome: Outcome) -> None:
        """The next backup after the restart succeeds and removes the ``.partial`` folder the cut left: none stays
        for good (issue 28)."""
        backups = self.mount / "backups"
        args = ("backup", "--config", str(self.mount / "notegate.toml"), "--to", str(backups))
        done = _cli(*args, "--recipient", str(self.identity.to_public()), "--json")
        if done.returncode != 0:
            outcome.problems.append(f"a backup after the cut failed: {_say(done)}")
            return
        removed = json.loads(done.stdout)["removed"]
        if sorted(removed) != self.left:
            outcome.problems.append(f"the next backup removed {removed}, the cut left {self.left}")
        still = sorted(p.name for p in backups.iterdir() if p.name.endswith(".partial"))
        if still:
            outcome.problems.append(f"{still} left in the backups folder after the next backup")


# ---------------------------------------------------------------- a restore in progress
_BACKUPS: dict[Path, tuple[Path, Path, str, str]] = {}  # template -> (backup folder, identity, token, a note)


class Restore(Work):
    cut_window = (0.0, 3.0)

    def prepare(self, disk: Path, mount: Path) -> None:
        super().prepare(disk, mount)
        self.backup, self.identity_file, self.token, self.note = self._backup_of(disk)
        self.folders: list[str] = []  # acknowledged restores

    def _backup_of(self, disk: Path) -> tuple[Path, Path, str, str]:
        """One backup of the template's vault (with a token of its own and a note), shared by every cut."""
        import pyrage

        from support import mint

        template = self.root.parent
        if template not in _BACKUPS or not _BACKUPS[template][0].exists():
            scratch = template / "restore-source"
            shutil.rmtree(scratch, ignore_errors=True)
            shutil.copytree(disk, scratch / "vault", symlinks=True)
            config = scratch / "vault" / "notegate.toml"
            clone = scratch / "vault" / "state" / "envs" / "personal" / "vault.git"
            pygit2.Repository(str(clone)).remotes.set_url("origin", str(scratch / "vault" / "origin.git"))
            token = mint(config, name="restored", tier="trusted")
            identity = pyrage.x25519.Identity.generate()
            (scratch / "key").write_text(str(identity) + "\n")
            taken = _cli(
                "backup", "--config", str(config), "--to", str(scratch / "backups"),
                "--recipient", str(identity.to_public()), "--json",
            )  # fmt: skip
            if taken.returncode != 0:
                raise RuntimeError(f"the restore workload's backup failed: {_say(taken)}")
            folder = Path(json.loads(taken.stdout)["folder"])
            files = _main_files(scratch / "vault" / "origin.git")
            note = next(p for p in sorted(files) if p.endswith(".md") and not p.startswith(("inbox/", "private/")))
            _BACKUPS[template] = (folder, scratch / "key", token, note)
        return _BACKUPS[template]

    async def drive(self, url: str) -> None:
        for k in range(10_000):
            if not self.powered():
                return
            target = self.mount / f"restored-{k}"
            args = ("restore", "--from", str(self.backup), "--identity", str(self.identity_file), "--to", str(target))
            done = await asyncio.to_thread(_cli, *args)
            if done.returncode != 0:
                self.errors.append(_say(done))
                return
            self.folders.append(target.name)
            self.acked += 1

    def check_disk(self, outcome: Outcome) -> None:
        from notegate.services.backup_manifest import MANIFEST_NAME, parse_manifest
        from support.powerloss import _fsck, _integrity

        refs = parse_manifest((self.backup / MANIFEST_NAME).read_bytes()).environments["personal"].refs
        self.complete: list[str] = []
        for folder in sorted(self.disk.glob("restored-*")):
            if not (folder / "notegate.toml").exists():
                if folder.name in self.folders:
                    outcome.lost.append(f"{folder.name} (an acknowledged restore has no config)")
                continue  # cut short: nothing serves it
            origin = folder / "origins" / "personal.git"
            found = [_integrity(folder / "state" / "state.sqlite"), _fsck(origin)]
            if not (folder / "state" / "state.sqlite").exists():
                found.append("no state database")
            try:
                held = {name: str(pygit2.Repository(str(origin)).references[name].target) for name in refs}
            except (KeyError, pygit2.GitError) as exc:
                held = {"error": str(exc)}
            if held != refs:
                found.append(f"refs {held} are not the backup's")
            if not (origin / "hooks" / "pre-receive").exists():
                found.append("no pre-receive hook")
            problems = [p for p in found if p]
            outcome.problems += [f"{folder.name} has a config but is not whole: {p}" for p in problems]
            if not problems:
                self.complete.append(folder.name)

    def check_served(self, url: str, outcome: Outcome) -> None:
        from support import Server, mcp_http

        if not self.complete:
            return
        server = Server(self.mount / self.complete[-1] / "notegate.toml")
        server.log = self.root / "restored-serve.log"
        try:
            server.start(timeout=120)
        except Exception as exc:
            outcome.problems.append(f"{self.complete[-1]} does not serve: {str(exc)[-300:]}")
            return

        async def read() -> None:
            async with mcp_http(server.url, self.token) as client:
                got = await client.call_tool("read_note", {"path": self.note})
                if got.is_error:
                    outcome.problems.append(f"{self.complete[-1]}: {self.note} not readable: {_text(got)[:300]}")

        try:
            _run(read(), outcome)
        finally:
            server.kill()


# ---------------------------------------------------------------- notegate sync on a workstation clone
class Sync(Work):
    cut_window = (1.0, 8.0)
    #: The suite's one cut comes after the first saves settled (sync.daemon.SETTLE_SECONDS), while a sync may
    #: be pushing them.
    suite_window = (3.5, 5.5)

    def prepare(self, disk: Path, mount: Path) -> None:
        from notegate.sync.hookfile import install_hook

        super().prepare(disk, mount)
        install_hook(disk / "origin.git", mount / "notegate.toml", "personal")  # git runs it on the mount
        cloned = _git("clone", "--quiet", str(disk / "origin.git"), str(disk / "ws"))
        if cloned.returncode != 0:
            raise RuntimeError(f"git clone: {_say(cloned)}")
        _git("-C", str(disk / "ws"), "remote", "set-url", "origin", str(mount / "origin.git"))
        self.saved: dict[str, list[str]] = {}  # work-tree path -> texts saved (flushed), in order
        self.tried: dict[str, list[str]] = {}  # ... and every text the editor began to save
        self.ticks = 0
        self.stop = False

    def _save(self, path: str, text: str) -> None:
        """A careful editor's save: a temporary file, flushed, renamed over the note, the folder flushed."""
        target = self.mount / "ws" / path
        target.parent.mkdir(parents=True, exist_ok=True)
        temporary = target.parent / f".{target.name}.swp"
        self.tried.setdefault(path, []).append(text)
        with open(temporary, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, target)
        fd = os.open(target.parent, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        self.saved.setdefault(path, []).append(text)

    def _sync(self, config: Path, ws: Path) -> subprocess.CompletedProcess[str]:
        return _cli("sync", "--config", str(config), "--device", "ws1", "--once", str(ws))

    async def drive(self, url: str) -> None:
        async def editor() -> None:
            try:
                for i in range(10_000):
                    if not self.powered():
                        return
                    path = f"local/e{i % 3}.md"
                    await asyncio.to_thread(self._save, path, f"saved {i} tok{self.rng.randrange(10**9)}\n")
                    self.acked += 1
                    await asyncio.sleep(0.3)
            except OSError as exc:  # the cut
                self.errors.append(f"editor: {exc}")

        async def syncer() -> None:
            while True:
                done = await asyncio.to_thread(self._sync, self.mount / "notegate.toml", self.mount / "ws")
                self.ticks += 1
                if not self.powered():
                    return  # the cut
                if done.returncode != 0:
                    self.errors.append(_say(done))
                    await asyncio.sleep(0.2)

        await asyncio.gather(editor(), syncer())

    def check_disk(self, outcome: Outcome) -> None:
        ws = self.disk / "ws"
        for path, texts in self.saved.items():
            have = (ws / path).read_text(encoding="utf-8") if (ws / path).exists() else None
            later = self.tried[path][self.tried[path].index(texts[-1]) :]
            if have not in later:
                outcome.lost.append(f"ws/{path}: a saved edit ({'gone' if have is None else 'older text'})")

    def check_served(self, url: str, outcome: Outcome) -> None:
        from support.powerloss import _tree_files

        # notegate sync commits a file settled for 3 s (sync.daemon.SETTLE_SECONDS): the last save was before the cut
        time.sleep(max(0.0, 3.2 - (time.monotonic() - self.cut_at)))
        for _ in range(2):
            done = self._sync(self.mount / "notegate.toml", self.mount / "ws")
            if done.returncode != 0:
                outcome.problems.append(f"notegate sync after the cut: {_say(done)}")
                return
        files = _main_files(self.mount / "origin.git")
        for path, texts in self.saved.items():
            later = self.tried[path][self.tried[path].index(texts[-1]) :]
            if files.get(path, b"").decode("utf-8", "replace") not in later:
                outcome.lost.append(f"{path}: a saved edit is not in the origin after sync")
        self.files_after = files
        self.power = _tree_files(pygit2.Repository(str(self.mount / "origin.git")), "power")


# ---------------------------------------------------------------- the hook's quarantine
class Quarantine(Work):
    background = False  # the server stays idle: every push fast-forwards
    cut_window = (0.0, 6.0)  # a push (git, the hook's own interpreter) takes a second or two

    def prepare(self, disk: Path, mount: Path) -> None:
        from notegate.sync.hookfile import install_hook

        super().prepare(disk, mount)
        install_hook(disk / "origin.git", mount / "notegate.toml", "personal")
        self.clone = self.root / "pusher"
        cloned = _git("clone", "--quiet", str(disk / "origin.git"), str(self.clone))
        if cloned.returncode != 0:
            raise RuntimeError(f"git clone: {_say(cloned)}")
        _git("-C", str(self.clone), "remote", "set-url", "origin", str(mount / "origin.git"))
        for key, value in (("user.name", "owner"), ("user.email", "owner@example.org")):
            _git("-C", str(self.clone), "config", key, value)
        self.pushed: dict[str, str] = {}

    def _push(self, i: int) -> subprocess.CompletedProcess[str]:
        path = f"pushed/q{i}.md"
        text = f"pushed {i} tok{self.rng.randrange(10**9)}\n"
        (self.clone / "pushed").mkdir(exist_ok=True)
        (self.clone / path).write_text(text)
        _git("-C", str(self.clone), "add", path)
        _git("-C", str(self.clone), "commit", "--quiet", "-m", f"push {i}")
        done = _git("-C", str(self.clone), "push", "--quiet", "origin", "HEAD:main")
        if done.returncode == 0:
            self.pushed[path] = text
        return done

    async def drive(self, url: str) -> None:
        for i in range(10_000):
            if not self.powered():
                return
            done = await asyncio.to_thread(self._push, i)
            if done.returncode != 0:
                self.errors.append(_say(done))
                return
            self.acked += 1

    def check_disk(self, outcome: Outcome) -> None:
        files = _main_files(self.disk / "origin.git")
        for path, text in self.pushed.items():
            if files.get(path) != text.encode():
                outcome.lost.append(f"{path} (an accepted push)")

    def check_served(self, url: str, outcome: Outcome) -> None:
        """A push after the restart is accepted, and removes the quarantine folder a push cut short left once it is
        older than the bound (the folder is dated back a day here: the bound's wait, not the harness's)."""
        from notegate.sync.quarantine import STALE_QUARANTINE_SECONDS

        objects = self.mount / "origin.git" / "objects"
        left = [p for p in objects.iterdir() if p.name.startswith(("tmp_objdir-incoming-", "incoming-"))]
        then = time.time() - STALE_QUARANTINE_SECONDS - 60
        for folder in left:
            for parent, dirs, files in os.walk(folder):
                for name in [*dirs, *files]:
                    os.utime(os.path.join(parent, name), (then, then), follow_symlinks=False)
            os.utime(folder, (then, then))
        self.left = len(left)
        _git("-C", str(self.clone), "fetch", "--quiet", "origin")
        _git("-C", str(self.clone), "reset", "--quiet", "--hard", "origin/main")
        done = self._push(10_000)
        if done.returncode != 0:
            outcome.problems.append(f"a push after the cut was refused: {_say(done)}")
        still = [p.name for p in left if os.path.lexists(p)]
        if still:
            outcome.problems.append(f"quarantine folder(s) a cut push left stay after the next push: {still}")
