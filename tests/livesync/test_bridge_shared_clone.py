"""The bridge and `notegate serve` share the environment's clone in state_dir (two processes, one repository on
disk). The store serialises writes across processes with an exclusive ``flock`` on ``write.lock`` beside the
clone (vault/commit.py ``write_lock``), not only a thread lock; this test shows it holds under load: a phone
pushing through the gate while a session writes over MCP, at the same time, on the same state_dir, every
acknowledged write ends in the origin and no ref or index lock is left behind."""

from __future__ import annotations

import asyncio
import json
import secrets
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pygit2
import pytest

from notegate.config import load_config
from notegate.livesync import documents
from support import mcp_http, mint, running, start_cli, text_of
from support.livesync import DB, Lab, require_npm

WRITES = 12  # each side: enough that the two processes' commits interleave many times
WITHIN = 120.0
BRIDGE = ("livesync", "bridge")


@pytest.fixture(scope="module")
def shared(tmp_path_factory) -> Iterator[tuple[Lab, object]]:
    require_npm()
    lab = Lab(tmp_path_factory.mktemp("shared-clone")).start()
    try:
        with running(lab.config) as server:
            lab.procs.append(
                start_cli([*BRIDGE, "--config", str(lab.config), "--poll-seconds", "0.5"], lab.root / "bridge.log")
            )
            yield lab, server
    finally:
        lab.stop()


def _phone_pushes(lab: Lab, acknowledged: dict[str, str], errors: list[str]) -> None:
    """LiveSync's own push (``_bulk_docs`` with ``new_edits: false``) through the gate, one note a request."""
    for i in range(WRITES):
        path, text = f"phone/note-{i}.md", f"# Phone {i}\n\nwritten on the phone, {i}\n"
        meta, chunks = documents.write_note(
            path, text, ctime=1, mtime=int(time.time() * 1000), rev=f"1-{secrets.token_hex(16)}"
        )
        chunks = [{**chunk, "_rev": f"1-{secrets.token_hex(16)}"} for chunk in chunks]
        body = json.dumps({"docs": [*chunks, meta], "new_edits": False}).encode()
        answer = lab.request("POST", f"/{DB}/_bulk_docs", token=lab.devices["phone"].token(), body=body)
        if answer.status == 201:
            acknowledged[path] = text
        else:
            errors.append(f"{path}: {answer.status} {answer.body}")
        time.sleep(0.1)


async def _session_writes(server, token: str, acknowledged: dict[str, str], errors: list[str]) -> None:
    async with mcp_http(server.url, token, start_session=True) as client:
        for i in range(WRITES):
            path, text = f"session/note-{i}.md", f"# Session {i}\n\nwritten over MCP, {i}\n"
            wrote = await client.call_tool(
                "write_note", {"path": path, "content": text, "base_revision": "absent", "confirmed": True}
            )
            if wrote.is_error:
                errors.append(f"{path}: {text_of(wrote)}")
            else:
                acknowledged[path] = text


def _main_tree(repo_path: str | Path) -> dict[str, str]:
    repo = pygit2.Repository(str(repo_path))
    tree = repo.references["refs/heads/main"].peel(pygit2.Commit).tree
    out: dict[str, str] = {}
    for folder in ("phone", "session"):
        if folder in tree:
            for entry in tree[folder]:
                out[f"{folder}/{entry.name}"] = entry.data.decode("utf-8")
    return out


def _locks(root: Path) -> list[str]:
    """Lock files git or libgit2 leave when a writer dies or two race (``write.lock`` is the flock's own file
    and stays by design)."""
    return [str(p) for p in root.rglob("*.lock") if p.name != "write.lock"]


def test_the_bridge_and_the_server_write_the_shared_clone_at_once_and_lose_nothing(shared) -> None:
    lab, server = shared
    config = load_config(lab.config)
    env = config.environment(None)
    phone: dict[str, str] = {}
    session: dict[str, str] = {}
    errors: list[str] = []
    pusher = threading.Thread(target=_phone_pushes, args=(lab, phone, errors))
    pusher.start()
    asyncio.run(_session_writes(server, mint(lab.config, name="mcp", tier="trusted"), session, errors))
    pusher.join(timeout=WITHIN)
    assert not errors, errors
    assert len(phone) == len(session) == WRITES
    expected = {**phone, **session}
    deadline = time.monotonic() + WITHIN
    found: dict[str, str] = {}
    while time.monotonic() < deadline:
        found = _main_tree(env.origin_url)
        if all(found.get(path) == text for path, text in expected.items()):
            break
        time.sleep(0.5)
    bridge_log = (lab.root / "bridge.log").read_text(errors="replace")[-3000:]
    assert {p: found.get(p) for p in expected} == expected, bridge_log
    clone = config.state_dir / "envs" / env.name
    assert not _locks(clone) and not _locks(Path(env.origin_url)), (_locks(clone), _locks(Path(env.origin_url)))
    checked = subprocess.run(
        ["git", "fsck", "--no-dangling"], cwd=env.origin_url, capture_output=True, text=True, timeout=60
    )
    assert checked.returncode == 0, checked.stderr
