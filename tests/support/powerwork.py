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
  taken for a backup) or a complete one that opens, checks and decrypts; every acknowledged one is there.
* ``restore``: ``notegate restore --to`` a new folder in a loop.  A restored folder with a config is complete
  (state, origins, hooks) and serves; one cut short has no config, so nothing serves half of it; the running
  deployment is unharmed.
* ``sync``: ``notegate sync --once`` on a workstation clone on the same disk, while an editor saves notes there
  (write, ``fsync``, rename: a careful editor) and the server writes other notes it pulls in.  After the cut and
  one more sync: no saved edit is lost, the origin holds every saved edit's last text, and no file the origin
  holds is one nobody wrote (a half-written work-tree file pushed back).
* ``quarantine``: plain ``git push`` of commits into the origin, each vetted by the pre-receive hook in git's
  quarantine.  An acknowledged push is in the origin; a push after the restart is accepted (no stale lock).

Each run ends as :func:`powerloss.run_once` does: ``git fsck --strict``, ``integrity_check``, every acknowledged
MCP write there, and the server restarted on the disk serves.  Returns an :class:`~powerloss.Outcome`.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pygit2

from support.powerloss import Outcome, Rig, _check_disk, _serves, _start, _text, _writers, lay_vault

WORKLOADS = ("promote", "contract", "import", "backup", "restore", "sync", "quarantine")
#: Files per import batch (the policy's max_files_per_commit for the import workload) and per imported folder.
BATCH = 4
FOLDER_FILES = 10
CLI_TIMEOUT = 120
#: Run each workload without the MCP writers beside it (bench/power_loss.py --alone): the durability-off control
#: then counts what the workload itself loses, not what the writers lose.
ALONE = {"on": False}


#: Pushes to the origin are the owner's (what an SSH forced command or a forge sets for the pre-receive hook).
OWNER = {"NOTEGATE_PUSHER": "owner", "GIT_TERMINAL_PROMPT": "0"}


def _cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """``notegate ARGS`` as a user runs it: its own interpreter (a cut kills what it was doing on the disk)."""
    return subprocess.run(
        [sys.executable, "-m", "notegate.cli", *args],
        capture_output=True,
        text=True,
        timeout=CLI_TIMEOUT,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        env={**os.environ, **OWNER},
    )


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


# ---------------------------------------------------------------- inbox promotion
class Promote(Work):
    def prepare(self, disk: Path, mount: Path) -> None:
        from support import mint

        super().prepare(disk, mount)
        config = disk / "notegate.toml"
        self.phone = mint(config, name="phone", client_class="hosted", login="phone")
        self.reviewer = mint(config, name="reviewer", tier="trusted", login="reviewer")
        self.written: dict[str, str] = {}  # inbox item -> its text (acknowledged)
        self.promoted: dict[str, str] = {}  # inbox item -> route target (acknowledged)

    async def drive(self, url: str) -> None:
        from support import mcp_http

        try:
            async with mcp_http(url, self.phone, start_session=True) as phone, mcp_http(url, self.reviewer) as rev:
                for i in range(10_000):
                    text = f"entry {i} tok{self.rng.randrange(10**9)}"
                    wrote = await phone.call_tool("inbox_write", {"kind": "log", "text": text, "project": f"p{i}"})
                    if wrote.is_error:
                        self.errors.append(_text(wrote)[:300])
                        return
                    self.written[wrote.structured_content["path"]] = text
                    self.acked += 1
                    listed = await rev.call_tool("list_inbox", {})
                    for item in listed.structured_content["items"]:
                        if item["path"] in self.written and item["path"] not in self.promoted:
                            args = {"item": item["path"], "version": item["version"]}
                            done = await rev.call_tool("promote_inbox", args)
                            if done.is_error:
                                self.errors.append(_text(done)[:300])
                                return
                            self.promoted[item["path"]] = done.structured_content["target"]
                            self.acked += 1
        except (Exception, BaseExceptionGroup) as exc:  # the cut
            self.errors.append(type(exc).__name__)

    def check_disk(self, outcome: Outcome) -> None:
        files = _main_files(self.disk / "origin.git")
        for item, text in self.written.items():
            target = f"log/{item.rsplit('/', 1)[1]}"
            in_inbox = text in files.get(item, b"").decode("utf-8", "replace")
            routed = text in files.get(target, b"").decode("utf-8", "replace")
            if in_inbox and routed:
                outcome.problems.append(f"{item}: both in the inbox and promoted")
            elif item in self.promoted and not routed:
                outcome.lost.append(f"{item} (an acknowledged promotion)")
            elif not in_inbox and not routed:
                outcome.lost.append(f"{item} (an acknowledged inbox item)")
            elif item in self.promoted and in_inbox:
                outcome.problems.append(f"{item}: promoted but still in the inbox")
        self.still = [item for item, text in self.written.items() if text.encode() in files.get(item, b"")]

    def check_served(self, url: str, outcome: Outcome) -> None:
        from support import mcp_http

        async def check() -> None:
            async with mcp_http(url, self.reviewer) as rev:
                listed = await rev.call_tool("list_inbox", {})
                if listed.is_error:
                    outcome.problems.append(f"list_inbox after the restart: {_text(listed)[:300]}")
                    return
                items = {i["path"]: i for i in listed.structured_content["items"]}
                for item in self.still:
                    if item not in items:
                        outcome.problems.append(f"{item}: in the origin, not listed after the restart")
                    elif items[item]["authors"] != ["phone (phone)"]:
                        outcome.problems.append(f"{item}: authors after the restart {items[item]['authors']}")
                if self.still and self.still[-1] in items:
                    last = items[self.still[-1]]
                    done = await rev.call_tool("promote_inbox", {"item": last["path"], "version": last["version"]})
                    if done.is_error:
                        outcome.problems.append(f"a promotion after the restart was refused: {_text(done)[:300]}")

        _run(check(), outcome)


# ---------------------------------------------------------------- contracts
class Contract(Work):
    def prepare(self, disk: Path, mount: Path) -> None:
        from notegate.auth.tokens import create_token
        from notegate.config import load_config
        from notegate.state import StateDB
        from support import set_policy

        super().prepare(disk, mount)
        config = disk / "notegate.toml"
        set_policy(config, machine_writes_per_hour=0, machine_bytes_per_hour=0)
        db = StateDB.for_config(load_config(config))
        try:
            self.token, _ = create_token(
                db, name="share-sheet", client_class="machine", tier=None, login="owner", now=time.time(),
                contracts=("capture",),
            )  # fmt: skip
        finally:
            db.close()
        self.sent: dict[str, dict] = {}  # id -> body (every one sent)
        self.answered: dict[str, dict] = {}  # id -> the acknowledged answer

    def _post(self, http, url: str, body: dict):
        headers = {"Authorization": f"Bearer {self.token}", "Content-Type": "application/json"}
        return http.post(f"{url}/contracts/capture", headers=headers, content=json.dumps(body).encode())

    async def drive(self, url: str) -> None:
        import httpx2

        async def poster(w: int) -> None:
            try:
                async with httpx2.AsyncClient(timeout=30) as http:
                    for i in range(10_000):
                        key = f"c{w}-{i}"
                        text = f"capture {key} tok{self.rng.randrange(10**9)}"
                        body = {"text": text, "title": f"cap {key}", "id": key}
                        self.sent[key] = body
                        answer = await self._post(http, url, body)
                        if answer.status_code != 200 or answer.json().get("status") != "committed":
                            self.errors.append(answer.text[:300])
                            return
                        self.answered[key] = answer.json()
                        self.acked += 1
            except Exception as exc:  # the cut
                self.errors.append(type(exc).__name__)

        await asyncio.gather(*(poster(w) for w in range(3)))

    def check_disk(self, outcome: Outcome) -> None:
        files = _main_files(self.disk / "origin.git")
        for key, answer in self.answered.items():
            path = answer["changed"][0]
            if self.sent[key]["text"] not in files.get(path, b"").decode("utf-8", "replace"):
                outcome.lost.append(f"capture {key} ({path})")

    def check_served(self, url: str, outcome: Outcome) -> None:
        import httpx2

        with httpx2.Client(timeout=30) as http:
            for key, answer in list(self.answered.items())[-10:]:
                again = self._post(http, url, self.sent[key])
                body = again.json() if again.status_code == 200 else {}
                if body.get("status") != "already-recorded" or body.get("commit") != answer["commit"]:
                    outcome.problems.append(f"capture {key} replayed after the restart: {again.text[:200]}")
            unanswered = [k for k in self.sent if k not in self.answered]
            for key in unanswered[:3]:
                again = self._post(http, url, self.sent[key])
                if again.status_code != 200 or again.json().get("status") not in ("committed", "already-recorded"):
                    outcome.problems.append(f"capture {key} (never answered) replayed: {again.text[:200]}")
        files = _main_files(self.mount / "origin.git")
        for key in unanswered[:3]:
            count = sum(self.sent[key]["text"] in f.decode("utf-8", "replace") for f in files.values())
            if count != 1:
                outcome.problems.append(f"capture {key} (never answered) is in the origin {count} times")


# ---------------------------------------------------------------- import batches
class Import(Work):
    cut_window = (0.0, 4.0)

    def prepare(self, disk: Path, mount: Path) -> None:
        from support import set_policy

        super().prepare(disk, mount)
        set_policy(disk / "notegate.toml", max_files_per_commit=BATCH)
        self.sources = self.root / "sources"
        self.done: list[int] = []
        self.started: list[int] = []

    def _source(self, k: int) -> Path:
        folder = self.sources / str(k)
        if not folder.exists():
            folder.mkdir(parents=True)
            for j in range(FOLDER_FILES):
                (folder / f"n{j:02d}.md").write_text(f"import {k} note {j} tok{self.rng.randrange(10**9)}\n")
        return folder

    def _import(self, k: int, config: Path) -> subprocess.CompletedProcess[str]:
        return _cli("import", "--config", str(config), "--into", f"imp/{k}", "--quiet", str(self._source(k)))

    async def drive(self, url: str) -> None:
        for k in range(10_000):
            if not self.powered():
                return
            self.started.append(k)
            done = await asyncio.to_thread(self._import, k, self.mount / "notegate.toml")
            if done.returncode != 0:
                self.errors.append(_say(done))
                return
            self.done.append(k)
            self.acked += 1

    def _counts(self, files: dict[str, bytes], outcome: Outcome) -> dict[int, int]:
        counts: dict[int, int] = {}
        for k in self.started:
            source = self._source(k)
            present = 0
            for note in sorted(source.iterdir()):
                have = files.get(f"imp/{k}/{note.name}")
                if have is None:
                    continue
                present += 1
                if have != note.read_bytes():
                    outcome.problems.append(f"imp/{k}/{note.name}: half-made or unknown text")
            counts[k] = present
        return counts

    def check_disk(self, outcome: Outcome) -> None:
        counts = self._counts(_main_files(self.disk / "origin.git"), outcome)
        for k, present in counts.items():
            if k in self.done and present != FOLDER_FILES:
                outcome.lost.append(f"import {k}: {FOLDER_FILES - present} of an acknowledged import's files")
            elif present % BATCH and present != FOLDER_FILES:
                outcome.problems.append(f"import {k}: {present} files, not whole batches of {BATCH}")
        self.partial = [k for k, present in counts.items() if present != FOLDER_FILES]

    def check_served(self, url: str, outcome: Outcome) -> None:
        for k in self.partial[:1]:  # running it again completes it
            again = self._import(k, self.mount / "notegate.toml")
            if again.returncode != 0:
                outcome.problems.append(f"import {k} run again after the cut: {_say(again)}")
        counts = self._counts(_main_files(self.mount / "origin.git"), outcome)
        for k in self.partial[:1]:
            if counts.get(k) != FOLDER_FILES:
                outcome.problems.append(f"import {k} run again: {counts.get(k)} of {FOLDER_FILES} files")


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
        _git("-C", str(self.clone), "fetch", "--quiet", "origin")
        _git("-C", str(self.clone), "reset", "--quiet", "--hard", "origin/main")
        done = self._push(10_000)
        if done.returncode != 0:
            outcome.problems.append(f"a push after the cut was refused: {_say(done)}")


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


def _run(coro, outcome: Outcome) -> None:
    try:
        asyncio.run(coro)
    except Exception as exc:
        while isinstance(exc, BaseExceptionGroup):
            exc = exc.exceptions[0]
        outcome.problems.append(f"after the restart: {type(exc).__name__}: {str(exc)[:300]}")


def run_once(template: Path, root: Path, *, seed: int, workload: str, durable: bool) -> Outcome:
    """One cut under ``workload`` (and MCP writers beside it), the disk checked, the server restarted on it."""
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
        outcome.cut_after = rng.uniform(*work.cut_window)
        asyncio.run(_scene(rig, server, token, work, outcome, rng, acked, tried))
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


async def _scene(rig: Rig, server, token: str, work: Work, outcome: Outcome, rng, acked, tried) -> None:
    tasks = [asyncio.ensure_future(work.drive(server.url))]
    if work.background and not ALONE["on"]:
        tasks.append(asyncio.ensure_future(_writers(server.url, token, "single", rng, 0, acked, tried)))
    started = time.monotonic()
    while not work.acked and time.monotonic() - started < 90 and not tasks[0].done():
        await asyncio.sleep(0.01)
    await asyncio.sleep(outcome.cut_after)
    rig.cut()
    work.cut_at = time.monotonic()
    server.kill()
    await asyncio.wait_for(asyncio.gather(*tasks, return_exceptions=True), 180)
