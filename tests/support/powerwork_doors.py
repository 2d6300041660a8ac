"""The power-loss harness's workloads through the server's doors: inbox promotion, contracts, import batches.

What each promises after a cut is in tests/support/powerwork.py's docstring; :mod:`powerwork_base` has
:class:`~powerwork_base.Work`.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import time
from pathlib import Path

from support.powerloss import Outcome, _text
from support.powerwork_base import Work, _cli, _main_files, _run, _say

#: Files per import batch (the policy's max_files_per_commit for the import workload) and per imported folder.
BATCH = 4
FOLDER_FILES = 10


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
