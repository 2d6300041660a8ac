"""kill -9 the server during a stream of writes: every acknowledged write survives, nothing is corrupt."""

from __future__ import annotations

import signal
import subprocess
from pathlib import Path

import anyio
import pygit2
import pytest

from support import Server, mcp_http, mint

pytestmark = pytest.mark.anyio


async def test_kill_during_writes_then_restart(vault: Path) -> None:
    token = mint(vault, tier="trusted")
    server = Server(vault).start()
    acknowledged: dict[str, str] = {}
    try:

        async def writer(w: int) -> None:
            try:
                async with mcp_http(server.url, token) as client:
                    for i in range(200):
                        path = f"crash/{w}-{i}.md"
                        r = await client.call_tool(
                            "write_note",
                            {"path": path, "content": f"{w} {i}\n", "base_revision": "absent", "confirmed": True},
                        )
                        if r.is_error:
                            return
                        acknowledged[path] = r.structured_content["commit"]
            except (Exception, BaseExceptionGroup):  # the server died mid-call: that write was never acknowledged
                return

        async def killer() -> None:
            while len(acknowledged) < 40:
                await anyio.sleep(0.01)
            server.kill(signal.SIGKILL)

        with anyio.fail_after(120):
            async with anyio.create_task_group() as tg:
                for w in range(4):
                    tg.start_soon(writer, w)
                tg.start_soon(killer)
    finally:
        server.kill()
    assert len(acknowledged) >= 40
    origin = vault.parent / "origin.git"
    server_repo = vault.parent / "state" / "envs" / "personal" / "vault.git"
    for repo in (origin, server_repo):
        fsck = subprocess.run(["git", "--git-dir", str(repo), "fsck", "--no-dangling"], capture_output=True, text=True)
        assert fsck.returncode == 0, fsck.stderr
    repo = pygit2.Repository(str(origin))
    reachable = {str(c.id) for c in repo.walk(repo.references["refs/heads/main"].target)}
    assert set(acknowledged.values()) <= reachable
    tree = repo[repo.references["refs/heads/main"].target].peel(pygit2.Tree)
    for path in acknowledged:
        assert path in tree

    restarted = Server(vault).start()
    try:
        async with mcp_http(restarted.url, token) as client:
            listed = await client.call_tool("list_notes", {"folder": "crash", "limit": 1000})
            served = {n["path"] for n in listed.structured_content["notes"]}
            assert set(acknowledged) <= served
        # The index matches HEAD after the restart.
        from notegate.config import load_config
        from notegate.services.runtime import Runtime

        rt = Runtime(load_config(vault))
        env = rt.environment(None)
        assert env.index.indexed_commit == env.store.head() == str(repo.references["refs/heads/main"].target)
        assert env.index.paths() == env.store.listing().notes
        rt.close()
    finally:
        restarted.stop()
