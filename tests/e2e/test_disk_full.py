"""A full disk against the real server, on a real small file system (tmpfs): a named refusal, never a half-write.

Issue 28: on a small file system filled by ordinary writes, the first write that did not fit was answered
only "Error executing tool write_note", a note acknowledged a moment earlier could not be read while the disk
stayed full, and freeing space did not always bring writes back without a restart.  Here the vault (config,
origin, state) lives on a tmpfs of a few MiB that a ballast file fills; each test checks one promise.
"""

from __future__ import annotations

import asyncio
import errno
import json
import os
import shutil
import sqlite3
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pygit2
import pytest

from notegate.config import load_config
from support import Server, mcp_http, mint, notegate, set_policy, text_of

pytestmark = pytest.mark.anyio

DISK_BYTES = 24 << 20
MIN_FREE = 4 << 20


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A tmpfs of DISK_BYTES mounted under the test's folder (root only; skipped with the reason otherwise)."""
    mount = tmp_path / "disk"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={DISK_BYTES}", "tmpfs", str(mount)], capture_output=True, text=True
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here ({done.stderr.strip() or 'mount failed'}): needs root")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


@pytest.fixture
def vault_on_disk(vault: Path, small_disk: Path) -> Path:
    """The test's `notegate init` directory, moved onto the small disk (its clone pointed at the copy's origin)."""
    target = small_disk / "vault"
    shutil.copytree(vault.parent, target, symlinks=True)
    config = target / "notegate.toml"
    set_policy(config, min_free_bytes=MIN_FREE)
    loaded = load_config(config)
    for name, env in loaded.environments.items():
        clone = loaded.state_dir / "envs" / name / "vault.git"
        pygit2.Repository(str(clone)).remotes.set_url("origin", env.origin_url)
    return config


def fill(disk: Path, leave: int) -> Path:
    """A ballast file that leaves about ``leave`` bytes free on ``disk`` (0: until the disk refuses a byte)."""
    ballast = disk / f"ballast-{uuid.uuid4().hex[:8]}"
    st = os.statvfs(disk)
    want = max(0, st.f_bavail * st.f_frsize - leave)
    fd = os.open(ballast, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        written = 0
        for size in (1 << 16, 4096, 512, 1):
            while leave == 0 or written + size <= want:
                try:
                    written += os.write(fd, b"\0" * size)
                except OSError as exc:
                    assert exc.errno == errno.ENOSPC
                    break
    finally:
        os.close(fd)
    return ballast


def origin_head(config: Path) -> str:
    repo = pygit2.Repository(str(config.parent / "origin.git"))
    return str(repo.references["refs/heads/main"].target)


def fsck_clean(config: Path) -> None:
    for repo in (config.parent / "origin.git", config.parent / "state" / "envs" / "personal" / "vault.git"):
        done = subprocess.run(["git", "--git-dir", str(repo), "fsck", "--strict"], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
    with sqlite3.connect(config.parent / "state" / "state.sqlite") as db:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def clone_head(config: Path) -> str:
    repo = pygit2.Repository(str(config.parent / "state" / "envs" / "personal" / "vault.git"))
    return str(repo.references["refs/heads/main"].target)


def machine_token(config: Path) -> str:
    """A machine token for the capture contract (its write budget unbounded: the disk is what is tested)."""
    from notegate.auth.tokens import create_token
    from notegate.state import StateDB

    set_policy(config, machine_writes_per_hour=0, machine_bytes_per_hour=0)
    db = StateDB.for_config(load_config(config))
    try:
        token, _ = create_token(
            db, name="share-sheet", client_class="machine", tier=None, login="owner", now=time.time(),
            contracts=("capture",),
        )  # fmt: skip
    finally:
        db.close()
    return token


def capture(url: str, token: str, key: str) -> httpx2.Response:
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    body = {"text": f"capture {key}", "title": f"cap {key}", "id": key}
    return httpx2.post(f"{url}/contracts/capture", headers=headers, content=json.dumps(body).encode(), timeout=60)


async def write(client, path: str, text: str, base: str = "absent"):
    return await client.call_tool(
        "write_note", {"path": path, "content": text, "base_revision": base, "confirmed": True}
    )


async def test_below_min_free_a_write_is_refused_whole_and_reads_work(vault_on_disk: Path, small_disk: Path) -> None:
    """Below min_free_bytes the write is refused [disk-full] before anything is built; reads answer; freeing
    space brings writes back with no restart.  Every door's writes alike: an append, and a machine contract
    answered 507 with the same refusal (then accepted once space is freed)."""
    token = mint(vault_on_disk, tier="trusted")
    machine = machine_token(vault_on_disk)
    server = Server(vault_on_disk).start()
    try:
        async with mcp_http(server.url, token) as client:
            first = await write(client, "notes/kept.md", "kept\n")
            assert not first.is_error, text_of(first)
            before = origin_head(vault_on_disk)
            ballast = fill(small_disk, MIN_FREE // 2)
            refused = await write(client, "notes/refused.md", "refused\n")
            assert refused.is_error
            message = text_of(refused)
            assert "Refused [disk-full]: the disk holding " in message, message
            assert "min_free_bytes" in message and "4.0 MiB" in message and "no restart" in message
            appended = await client.call_tool(
                "append_note",
                {"path": "notes/kept.md", "text": "more\n", "base_revision": first.structured_content["new_revision"],
                 "confirmed": True},
            )  # fmt: skip
            assert appended.is_error and "Refused [disk-full]: the disk holding " in text_of(appended)
            posted = await asyncio.to_thread(capture, server.url, machine, "low-1")
            assert posted.status_code == 507, posted.text
            assert "Refused [disk-full]: the disk holding " in posted.text and "min_free_bytes" in posted.text
            assert origin_head(vault_on_disk) == before and clone_head(vault_on_disk) == before
            read = await client.call_tool("read_note", {"path": "notes/kept.md"})
            assert not read.is_error and "kept" in text_of(read)
            ballast.unlink()
            again = await write(client, "notes/refused.md", "now it fits\n")
            assert not again.is_error, text_of(again)
            posted = await asyncio.to_thread(capture, server.url, machine, "low-1")  # the same id, retried
            assert posted.status_code == 200 and posted.json()["status"] == "committed", posted.text
        fsck_clean(vault_on_disk)
    finally:
        server.kill()


async def test_a_disk_full_to_the_last_byte(vault_on_disk: Path, small_disk: Path) -> None:
    """With no margin (min_free_bytes = 0) the disk fills for real: the write is refused [disk-full], nothing
    half-made stays in the clone, the origin or the state, a note acknowledged before is still read (its
    audit row is lost and logged, the answer stands), and once space is freed the next write works."""
    set_policy(vault_on_disk, min_free_bytes=0)
    token = mint(vault_on_disk, tier="trusted")
    server = Server(vault_on_disk).start()
    try:
        async with mcp_http(server.url, token) as client:
            first = await write(client, "notes/kept.md", "kept\n")
            assert not first.is_error, text_of(first)
            before = origin_head(vault_on_disk)
            ballast = fill(small_disk, 0)
            refused = await write(client, "notes/big.md", "x" * 200_000 + "\n")
            assert refused.is_error
            assert "Refused [disk-full]: " in text_of(refused), text_of(refused)
            assert "environment 'personal'" in text_of(refused) and "not acknowledged" in text_of(refused)
            assert origin_head(vault_on_disk) == before and clone_head(vault_on_disk) == before
            absent = await client.call_tool("read_note", {"path": "notes/big.md"})
            assert absent.is_error and "Refused [no-such-note]" in text_of(absent), text_of(absent)  # nothing half-made
            read = await client.call_tool("read_note", {"path": "notes/kept.md"})
            assert not read.is_error, text_of(read)
            assert "kept" in text_of(read)
            ballast.unlink()
            again = await write(client, "notes/big.md", "fits now\n")
            assert not again.is_error, text_of(again)
            read = await client.call_tool("read_note", {"path": "notes/big.md"})
            assert "fits now" in text_of(read)
        log = server.log.read_text()
        assert "Traceback" not in log, log[-3000:]
        assert '"audit-lost"' in log or "audit-lost" in log
        fsck_clean(vault_on_disk)
    finally:
        server.kill()


async def test_healthz_and_doctor_report_free_space(vault_on_disk: Path, small_disk: Path) -> None:
    """/healthz and `notegate doctor` name the free space of each disk and go red below min_free_bytes."""
    token = mint(vault_on_disk, tier="trusted")
    server = Server(vault_on_disk).start()
    try:
        bearer = {"Authorization": f"Bearer {token}"}
        healthy = httpx2.get(f"{server.url}/healthz", headers=bearer).json()
        disk = healthy["environments"]["personal"]["disk"]
        assert disk["status"] == "ok" and disk["min_free_bytes"] == MIN_FREE and disk["free_bytes"] > MIN_FREE
        assert httpx2.get(f"{server.url}/healthz").json() == {"status": "ok"}
        fill(small_disk, MIN_FREE // 2)
        low = httpx2.get(f"{server.url}/healthz", headers=bearer)
        assert low.status_code == 200  # reads are still served: a readiness probe must keep the replica
        assert low.json()["environments"]["personal"]["disk"]["status"] == "low"
        assert httpx2.get(f"{server.url}/healthz").json() == {"status": "degraded", "disk": "low"}
    finally:
        server.kill()
    doctor = notegate("doctor", "--json", "--config", str(vault_on_disk))
    assert doctor.returncode == 1
    space = [c for c in json.loads(doctor.stdout) if c["check"] == "disk.free"]
    assert {c["subject"] for c in space} == {
        "the server's clone of environment 'personal'",
        "the origin of environment 'personal'",
        "the state database",
    }
    assert all(c["status"] == "fail" and "MiB free (min_free_bytes 4.0 MiB)" in c["found"] for c in space), space
    assert all("[disk-full]" in c["remedy"] for c in space)
