"""Each repair the git door's page (docs/explanation/git-door.md) describes for a refused origin, against the real
`notegate serve` and the official MCP client, when the server had acknowledged a write the refused commit's history
does not hold: the write made while the origin is refused is refused and the origin is left as it is; after the
owner's repair the server re-applies its lost write by itself, serves the owner's commits and its own, and `/healthz`
says ok."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pygit2
import pytest

from support import mcp_http, mint, running, set_policy, text_of
from support.fetchdoor import health, shows_refusal, until
from support.gitstreams import FILE, commit, forge_push

pytestmark = pytest.mark.anyio


def origin_main(origin: Path) -> str:
    return str(pygit2.Repository(str(origin)).references["refs/heads/main"].target)


def holds(origin: Path, tip: str, path: str) -> bytes | None:
    tree = pygit2.Repository(str(origin))[tip].peel(pygit2.Tree)
    return tree[path].data if path in tree else None


async def _refused_after_a_write(server, client, owner: str, origin: Path, tmp_path: Path):
    """The server acknowledges a write (W on G); then the origin's main is moved, behind the hook, to a bad
    commit on G (a sibling of W) and the server's fetch refuses it.  Returns (G, scratch)."""
    good = origin_main(origin)
    scratch = pygit2.clone_repository(str(origin), str(tmp_path / "scratch.git"), bare=True)
    written = await client.call_tool(
        "write_note",
        {"path": "notes/ours.md", "content": "# acknowledged\n", "base_revision": "absent", "confirmed": True},
    )
    assert not written.is_error, text_of(written)
    ours = origin_main(origin)
    assert str(pygit2.Repository(str(origin))[ours].parents[0].id) == good
    bad = commit(scratch, [good], add={".obsidian/plugins/x/main.js": (FILE, b"require('child_process')")})
    forge_push(origin, scratch, bad)
    until(lambda: health(server.url, owner)["environments"]["personal"].get("fetch_refused"))
    # a write while the origin's tip is refused: refused, and the origin is neither rewound nor replaced
    write = await client.call_tool(
        "write_note", {"path": "notes/while.md", "content": "# x\n", "base_revision": "absent", "confirmed": True}
    )
    assert write.is_error and shows_refusal(write, "Refused [origin-refused]: ")
    assert origin_main(origin) == bad
    return good, scratch


async def test_a_reset_to_the_last_good_commit_and_a_commit_on_top_is_served_with_our_write(
    vault: Path, tmp_path: Path
) -> None:
    """Fails before: the server's head (its acknowledged write) was not in the repaired origin's history, so
    its fetch refused the origin as a rewrite for good, never served the owner's new commit, and the write
    stayed gone from the origin."""
    set_policy(vault, fetch_interval_seconds=0.2)
    owner = mint(vault, name="laptop", tier="trusted", login="owner")
    origin = vault.parent / "origin.git"
    with running(vault) as server:
        async with mcp_http(server.url, owner) as client:
            good, scratch = await _refused_after_a_write(server, client, owner, origin, tmp_path)
            fixed = commit(scratch, [good], add={"notes/owner.md": (FILE, b"# the owner's repair\n")})
            forge_push(origin, scratch, fixed)  # reset to the last good commit, and a commit on top
            until(lambda: health(server.url, owner)["environments"]["personal"]["fetch"] == "ok")
            tip = origin_main(origin)
            assert pygit2.Repository(str(origin)).descendant_of(tip, fixed)
            assert holds(origin, tip, "notes/ours.md") == b"# acknowledged\n"
            assert health(server.url, owner)["environments"]["personal"]["head"] == tip
            for path in ("notes/ours.md", "notes/owner.md"):
                read = await client.call_tool("read_note", {"path": path})
                assert not read.is_error, text_of(read)
            listed = await client.call_tool("list_inbox", {})
            assert all(i["kind"] != "task" for i in listed.structured_content["items"])
            after = await client.call_tool(
                "write_note",
                {"path": "notes/after.md", "content": "# after\n", "base_revision": "absent", "confirmed": True},
            )
            assert not after.is_error, text_of(after)
            assert origin_main(origin) == after.structured_content["commit"]
    subprocess.run(["git", "--git-dir", str(origin), "fsck", "--no-dangling"], check=True, capture_output=True)


async def test_removing_the_bad_commit_converges(vault: Path, tmp_path: Path) -> None:
    """The owner resets the origin's main to the commit before the bad one, which drops the server's write
    too (fails before: refused as a rewind for good); the server re-applies its write on it."""
    set_policy(vault, fetch_interval_seconds=0.2)
    owner = mint(vault, name="laptop", tier="trusted", login="owner")
    origin = vault.parent / "origin.git"
    with running(vault) as server:
        async with mcp_http(server.url, owner) as client:
            good, scratch = await _refused_after_a_write(server, client, owner, origin, tmp_path)
            forge_push(origin, scratch, good)
            until(lambda: health(server.url, owner)["environments"]["personal"]["fetch"] == "ok")
            tip = origin_main(origin)
            assert str(pygit2.Repository(str(origin))[tip].parents[0].id) == good
            assert holds(origin, tip, "notes/ours.md") == b"# acknowledged\n"
            assert health(server.url, owner)["environments"]["personal"]["head"] == tip


async def test_reverting_the_bad_commit_on_top_keeps_our_write(vault: Path, tmp_path: Path) -> None:
    """The other repair, a revert on top of the refused commit: our write is re-applied on it."""
    set_policy(vault, fetch_interval_seconds=0.2)
    owner = mint(vault, name="laptop", tier="trusted", login="owner")
    origin = vault.parent / "origin.git"
    with running(vault) as server:
        async with mcp_http(server.url, owner) as client:
            good, scratch = await _refused_after_a_write(server, client, owner, origin, tmp_path)
            bad = origin_main(origin)
            reverted = commit(scratch, [bad], base=good, message="Revert the planted commit")
            forge_push(origin, scratch, reverted)
            until(lambda: health(server.url, owner)["environments"]["personal"]["fetch"] == "ok")
            tip = origin_main(origin)
            assert pygit2.Repository(str(origin)).descendant_of(tip, reverted)
            assert holds(origin, tip, "notes/ours.md") == b"# acknowledged\n"
