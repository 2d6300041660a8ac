"""A refused fetch where the owner meets it: the real `notegate serve`, its background fetch loop, /healthz,
and the official MCP client (list_inbox's task note, the write refusal), then the repair by a force-push."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pygit2
import pytest

from support import mcp_http, mint, running, set_policy, text_of
from support.fetchdoor import health, shows_refusal, until
from support.gitstreams import FILE, commit, forge_push

pytestmark = pytest.mark.anyio


async def test_a_refused_fetch_over_the_real_server_and_its_repair(vault: Path, tmp_path: Path) -> None:
    set_policy(vault, fetch_interval_seconds=0.2)
    owner = mint(vault, name="laptop", tier="trusted", login="owner")
    origin = vault.parent / "origin.git"
    good = str(pygit2.Repository(str(origin)).references["refs/heads/main"].target)
    scratch = pygit2.clone_repository(str(origin), str(tmp_path / "scratch.git"), bare=True)
    bad = commit(
        scratch,
        [good],
        add={
            ".obsidian/plugins/x/main.js": (FILE, b"require('child_process')"),
            "rules/planted.md": (FILE, "# Rules\n\nobey\u200b\n".encode()),
        },
    )
    with running(vault) as server:
        assert health(server.url, None) == {"status": "ok"}
        assert health(server.url, owner)["environments"]["personal"]["fetch"] == "ok"
        async with mcp_http(server.url, owner) as client:
            # the server's own commit meets the git door's rules, even for a trusted writer
            held = await client.call_tool(
                "write_note", {"path": "design/x.md", "content": "see CLAUDE.md\n", "base_revision": "absent"}
            )
            assert held.is_error and shows_refusal(held, "Refused [protected-floor-hold]: design/x.md: ")
            alias = await client.call_tool(
                "write_note", {"path": "obsidi~1/x.md", "content": "# x\n", "base_revision": "absent"}
            )
            assert alias.is_error and shows_refusal(alias, "Refused [incoming-hidden-path]: obsidi~1/x.md: ")

            forge_push(origin, scratch, bad)
            details = until(lambda: health(server.url, owner)["environments"]["personal"].get("fetch_refused"))
            assert details == {"commit": bad[:12], "rules": 2}
            assert health(server.url, None) == {"status": "ok"}  # anonymous: still only the bare status
            assert health(server.url, owner)["environments"]["personal"]["head"] == good

            listed = await client.call_tool("list_inbox", {})
            assert not listed.is_error, text_of(listed)
            task = listed.structured_content["items"][0]
            assert task["kind"] == "task" and task["version"] == bad and task["path"].startswith("task:")
            assert "incoming-hidden-path" in task["preview"] and "git revert" in task["preview"]
            read = await client.call_tool("read_note", {"path": "rules/digest.md"})
            assert not read.is_error
            write = await client.call_tool(
                "write_note",
                {"path": "notes/while-refused.md", "content": "# x\n", "base_revision": "absent", "confirmed": True},
            )
            assert write.is_error and shows_refusal(write, "Refused [origin-refused]: ")
            assert bad[:12] in text_of(write)

            forge_push(origin, scratch, good)  # the owner force-pushes back to the last good commit
            until(lambda: health(server.url, owner)["environments"]["personal"]["fetch"] == "ok")
            listed = await client.call_tool("list_inbox", {})
            assert all(i["kind"] != "task" for i in listed.structured_content["items"])
            write = await client.call_tool(
                "write_note",
                {"path": "notes/after.md", "content": "# after\n", "base_revision": "absent", "confirmed": True},
            )
            assert not write.is_error, text_of(write)
    log = "".join(p.read_text() for p in vault.parent.glob("serve-*.log"))
    assert "refused the origin's tip" in log and "child_process" not in log and "obey" not in log
    subprocess.run(["git", "--git-dir", str(origin), "fsck", "--no-dangling"], check=True, capture_output=True)
