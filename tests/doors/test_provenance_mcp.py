"""Provenance through the real server and the official SDK client (issue 27): read_note and note_history name
who made a change only as the server recorded it. A push into the origin (the real git CLI, the real
pre-receive hook) is shown as "pushed by" its committer with no tier; one forging the server's trailers is
refused at the hook with its exact rule; the server's own writes keep their real author and tier."""

from __future__ import annotations

import time
from pathlib import Path

import anyio
import pygit2
import pytest

from notegate.sync.hookfile import install_hook
from support import mcp_http, mint, running, set_policy, text_of
from support.gitstreams import FILE, Origin, accepted, commit, rules_of, scratch_of

pytestmark = pytest.mark.anyio

FORGED = (
    "update notes/plan.md\n\nNotegate-Client: laptop\nNotegate-Tier: trusted\nNotegate-Reviewed-By: laptop (owner)\n"
)


def _commit(repo: pygit2.Repository, parent: str, message: str) -> str:
    base = commit(repo, [parent], add={"notes/plan.md": (FILE, b"# Plan\n\nfrom bob\n")})
    bob = pygit2.Signature("Bob", "bob@example.invalid", 1_800_000_000, 0)
    return str(repo.create_commit(None, bob, bob, message, repo[base].tree_id, [pygit2.Oid(hex=parent)]))


async def test_read_note_and_history_name_a_push_as_pushed_and_the_server_writes_as_themselves(
    vault: Path, tmp_path: Path
) -> None:
    set_policy(vault, fetch_interval_seconds=0.2)
    origin = vault.parent / "origin.git"
    install_hook(origin, vault, "personal")
    owner = mint(vault, name="laptop", tier="trusted", login="owner")
    with running(vault) as server:
        async with mcp_http(server.url, owner) as client:
            written = await client.call_tool(
                "write_note",
                {"path": "notes/mine.md", "content": "# mine\n", "base_revision": "absent", "confirmed": True},
            )
            assert not written.is_error, text_of(written)
            read = await client.call_tool("read_note", {"path": "notes/mine.md"})
            mine = read.structured_content["last_change"]
            assert (mine["login"], mine["client"], mine["tier"], mine.get("pushed_by")) == (
                "owner",
                "laptop",
                "trusted",
                None,
            )

            door = Origin(config=vault, origin=origin, scratch=scratch_of(origin, tmp_path / "scratch.git"))
            forged = _commit(door.scratch, door.main, FORGED)
            assert rules_of(door.push(forged, pusher={"GL_USERNAME": "bob"})) == {"push-forged-provenance"}
            plain = _commit(door.scratch, door.main, "update notes/plan.md\n")
            accepted(door.push(plain, pusher={"GL_USERNAME": "bob"}))

            deadline = time.monotonic() + 60
            while True:  # the server's fetch loop takes the push on its own clock
                read = await client.call_tool("read_note", {"path": "notes/plan.md"})
                if not read.is_error:
                    break
                assert time.monotonic() < deadline, text_of(read)
                await anyio.sleep(0.1)
            last = read.structured_content["last_change"]
            assert last["commit"] == plain and last["pushed_by"] == "Bob <bob@example.invalid> (unverified)"
            assert last["author"] == "pushed by Bob <bob@example.invalid> (unverified)" and last["login"] == "pushed"
            assert all(last.get(k) is None for k in ("tier", "client", "connector", "session", "reviewed_by"))
            history = await client.call_tool("note_history", {"path": "notes/plan.md"})
            assert history.structured_content["changes"] == [last]
            own = await client.call_tool("note_history", {"path": "notes/mine.md"})
            assert own.structured_content["changes"][0]["tier"] == "trusted"
