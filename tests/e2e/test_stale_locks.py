"""A power cut between libgit2 creating ``refs/heads/main.lock`` and renaming it leaves the lock file behind.

Found by the power-loss harness (bench/power_loss.py, seed 1003): the restarted server could not update its
clone's main ("failed to lock file ... main.lock for writing") and did not start.  The runtime now removes the
lock files of its own clone at start, under the clone's write lock.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from support import Server, mcp_http, mint, text_of

pytestmark = pytest.mark.anyio


async def test_a_stale_ref_lock_in_the_clone_does_not_stop_the_server(vault: Path) -> None:
    clone = vault.parent / "state" / "envs" / "personal" / "vault.git"
    (clone / "refs" / "heads" / "main.lock").write_text("0" * 40 + "\n")  # what a cut mid-update leaves
    (clone / "packed-refs.lock").write_text("")
    token = mint(vault, tier="trusted")
    server = Server(vault).start()
    try:
        async with mcp_http(server.url, token) as client:
            wrote = await client.call_tool(
                "write_note",
                {"path": "notes/after.md", "content": "after\n", "base_revision": "absent", "confirmed": True},
            )
            assert not wrote.is_error, text_of(wrote)
            read = await client.call_tool("read_note", {"path": "notes/after.md"})
            assert "after" in text_of(read)
    finally:
        server.kill()
    assert not (clone / "refs" / "heads" / "main.lock").exists()
    assert "removed the stale lock file refs/heads/main.lock" in server.log.read_text()


async def test_a_stale_ref_lock_in_a_local_origin_is_removed_and_the_write_goes_on(vault: Path) -> None:
    """The same cut in the origin (seeds 1006, 1036, ...): every later write was refused [origin-unavailable]
    ("failed to lock file"). A lock older than any live ref update is removed and the push tried again; a
    fresh one is waited for first (a live update renames it within milliseconds)."""
    import os
    import time

    lock = vault.parent / "origin.git" / "refs" / "heads" / "main.lock"
    lock.write_text("0" * 40 + "\n")
    os.utime(lock, (time.time() - 60, time.time() - 60))
    token = mint(vault, tier="trusted")
    server = Server(vault).start()
    try:
        async with mcp_http(server.url, token) as client:
            wrote = await client.call_tool(
                "write_note", {"path": "notes/a.md", "content": "a\n", "base_revision": "absent", "confirmed": True}
            )
            assert not wrote.is_error, text_of(wrote)
            lock.write_text("0" * 40 + "\n")  # fresh, as a crash a moment ago leaves it: waited for, then removed
            again = await client.call_tool(
                "write_note", {"path": "notes/b.md", "content": "b\n", "base_revision": "absent", "confirmed": True}
            )
            assert not again.is_error, text_of(again)
    finally:
        server.kill()
    assert "removed a stale refs/heads/main.lock in the origin" in server.log.read_text()
