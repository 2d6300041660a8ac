"""The real server (`notegate serve` subprocess) driven by the official SDK client over HTTP on 127.0.0.1."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import anyio
import httpx2
import pygit2
import pytest

from support import TOOLS, Server, mcp_http, mint, notegate, running, set_policy, text_of, token_secret

pytestmark = pytest.mark.anyio


def origin_path(vault: Path) -> Path:
    return vault.parent / "origin.git"


def origin_commits(vault: Path) -> set[str]:
    repo = pygit2.Repository(str(origin_path(vault)))
    return {str(c.id) for c in repo.walk(repo.references["refs/heads/main"].target)}


async def test_missing_or_wrong_token_gets_401_challenge(served: Server) -> None:
    async with httpx2.AsyncClient() as http:
        for headers in ({}, {"Authorization": "Bearer ngt_0000_nope"}, {"Authorization": "Basic abc"}):
            response = await http.post(f"{served.url}/mcp", json={}, headers=headers)
            assert response.status_code == 401
            assert response.headers["www-authenticate"].startswith("Bearer")


async def test_revoked_token_is_refused(served: Server, vault: Path) -> None:
    token = mint(vault, name="gone")
    notegate("token", "revoke", "--config", str(vault), "gone").check_returncode()
    async with httpx2.AsyncClient() as http:
        response = await http.post(f"{served.url}/mcp", json={}, headers={"Authorization": f"Bearer {token}"})
        assert response.status_code == 401


async def test_tools_and_annotations(served: Server, vault: Path) -> None:
    async with mcp_http(served.url, mint(vault)) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    assert set(tools) >= set(TOOLS)
    assert tools["read_note"].annotations.read_only_hint is True
    assert tools["delete_note"].annotations.destructive_hint is True
    assert tools["append_note"].annotations.idempotent_hint is False
    assert tools["read_note"].output_schema is not None


async def test_hosted_two_step_flow(served: Server, vault: Path) -> None:
    token = mint(vault, name="claude-ai", client_class="hosted", tier="trusted")
    async with mcp_http(served.url, token, start_session=True) as client:
        listed = await client.call_tool("list_notes", {"folder": "rules"})
        assert [n["path"] for n in listed.structured_content["notes"]] == ["rules/digest.md"]
        found = await client.call_tool("search_notes", {"query": "handoff"})
        assert any(h["path"] == "rules/digest.md" for h in found.structured_content["hits"])
        args = {"path": "ideas/plan.md", "content": "# Plan\n", "base_revision": "absent"}
        skipped = await client.call_tool("write_note", {**args, "confirmed": True})
        assert skipped.is_error and "two-step-required" in text_of(skipped)
        preview = await client.call_tool("write_note", args)
        assert not preview.is_error
        assert preview.structured_content["status"] == "preview"
        assert "+# Plan" in preview.structured_content["diff"]
        missing = await client.call_tool("read_note", {"path": "ideas/plan.md"})
        assert missing.is_error and "no-such-note" in text_of(missing)
        done = await client.call_tool("write_note", {**args, "confirmed": True})
        assert done.structured_content["status"] == "committed"
        read = await client.call_tool("read_note", {"path": "ideas/plan.md"})
        assert read.structured_content["revision"] == done.structured_content["new_revision"]
        assert read.structured_content["last_change"]["client"] == "claude-ai"
    assert done.structured_content["commit"] in origin_commits(vault)


async def test_stale_write_refused_with_diff(served: Server, vault: Path) -> None:
    async with mcp_http(served.url, mint(vault, tier="trusted")) as client:
        read = await client.call_tool("read_note", {"path": "log/notegate-demo.md"})
        rev = read.structured_content["revision"]
        first = await client.call_tool(
            "write_note", {"path": "log/notegate-demo.md", "content": "new\n", "base_revision": rev, "confirmed": True}
        )
        assert not first.is_error
        second = await client.call_tool(
            "write_note",
            {"path": "log/notegate-demo.md", "content": "other\n", "base_revision": rev, "confirmed": True},
        )
        assert second.is_error
        text = text_of(second)
        assert "stale-revision" in text and first.structured_content["new_revision"] in text and "+new" in text


async def test_private_invisible_over_mcp(served: Server, vault: Path) -> None:
    owner = mint(vault, name="owner-laptop", tier="trusted")
    phone = mint(vault, name="phone", client_class="hosted", login="phone")
    async with mcp_http(served.url, owner) as client:
        await client.call_tool(
            "write_note",
            {"path": "private/pin.md", "content": "platypus code\n", "base_revision": "absent", "confirmed": True},
        )
    async with mcp_http(served.url, phone, start_session=True) as client:
        listed = await client.call_tool("list_notes", {})
        assert not any(n["path"].startswith("private/") for n in listed.structured_content["notes"])
        searched = await client.call_tool("search_notes", {"query": "platypus"})
        assert searched.structured_content["hits"] == []
        for tool, args in (
            ("read_note", {"path": "private/pin.md"}),
            ("note_history", {"path": "private/pin.md"}),
        ):
            result = await client.call_tool(tool, args)
            assert result.is_error and "no such note" in text_of(result)
        write = await client.call_tool(
            "write_note", {"path": "private/pin.md", "content": "x", "base_revision": "absent"}
        )
        assert write.is_error and "platypus" not in text_of(write)


async def test_restricted_is_refused_with_a_remedy(served: Server, vault: Path) -> None:
    async with mcp_http(served.url, mint(vault, name="phone", client_class="hosted"), start_session=True) as client:
        result = await client.call_tool("write_note", {"path": "x.md", "content": "x", "base_revision": "absent"})
    assert result.is_error
    assert "restricted" in text_of(result) and "Refused [" in text_of(result)


async def test_32_writers_same_note_one_commit(served: Server, vault: Path) -> None:
    token = mint(vault, tier="trusted")
    before = origin_commits(vault)
    outcomes: list[str] = []
    async with mcp_http(served.url, token) as client:
        rev = (await client.call_tool("read_note", {"path": "handoffs/notegate-demo.md"})).structured_content[
            "revision"
        ]

        async def write(i: int) -> None:
            r = await client.call_tool(
                "write_note",
                {
                    "path": "handoffs/notegate-demo.md",
                    "content": f"writer {i}\n",
                    "base_revision": rev,
                    "confirmed": True,
                },
            )
            outcomes.append(
                "stale" if r.is_error and "stale-revision" in text_of(r) else "ok" if not r.is_error else text_of(r)
            )

        async with anyio.create_task_group() as tg:
            for i in range(32):
                tg.start_soon(write, i)
    assert sorted(outcomes) == ["ok"] + ["stale"] * 31
    assert len(origin_commits(vault) - before) == 1


async def test_32_writers_distinct_notes_all_committed(served: Server, vault: Path) -> None:
    token = mint(vault, tier="trusted")
    commits: list[str] = []
    async with mcp_http(served.url, token) as client:

        async def write(i: int) -> None:
            r = await client.call_tool(
                "write_note",
                {"path": f"burst/{i}.md", "content": f"{i}\n", "base_revision": "absent", "confirmed": True},
            )
            assert not r.is_error, text_of(r)
            commits.append(r.structured_content["commit"])

        async with anyio.create_task_group() as tg:
            for i in range(32):
                tg.start_soon(write, i)
        listed = await client.call_tool("list_notes", {"folder": "burst"})
    assert len(listed.structured_content["notes"]) == 32
    assert set(commits) <= origin_commits(vault) and len(set(commits)) == 32


async def test_origin_unreachable_refuses_and_acknowledges_nothing(served: Server, vault: Path) -> None:
    token = mint(vault, tier="trusted")
    origin = origin_path(vault)
    bearer = {"Authorization": f"Bearer {token}"}  # /healthz shows an environment's head to its own tokens only
    async with mcp_http(served.url, token) as client:
        health = httpx2.get(f"{served.url}/healthz", headers=bearer).json()["environments"]["personal"]["head"]
        shutil.move(origin, vault.parent / "moved.git")
        try:
            r = await client.call_tool(
                "write_note", {"path": "lost.md", "content": "x\n", "base_revision": "absent", "confirmed": True}
            )
            assert r.is_error and "origin-unavailable" in text_of(r) and "Nothing was written" in text_of(r)
            assert str(vault.parent) not in text_of(r)
            assert (
                httpx2.get(f"{served.url}/healthz", headers=bearer).json()["environments"]["personal"]["head"] == health
            )
            read = await client.call_tool("read_note", {"path": "lost.md"})
            assert read.is_error
        finally:
            shutil.move(vault.parent / "moved.git", origin)
        r = await client.call_tool(
            "write_note", {"path": "lost.md", "content": "x\n", "base_revision": "absent", "confirmed": True}
        )
        assert not r.is_error


async def test_foreign_push_becomes_searchable(vault: Path, tmp_path: Path) -> None:
    set_policy(vault, fetch_interval_seconds=0.2)
    with running(vault) as server:
        wc = tmp_path / "wc"
        subprocess.run(["git", "clone", "-q", str(origin_path(vault)), str(wc)], check=True)
        (wc / "elsewhere.md").write_text("# Elsewhere\naxolotl facts\n")
        subprocess.run(["git", "-C", str(wc), "add", "-A"], check=True)
        subprocess.run(
            ["git", "-C", str(wc), "-c", "user.name=W", "-c", "user.email=w@x", "commit", "-qm", "w"], check=True
        )
        subprocess.run(["git", "-C", str(wc), "push", "-q", "origin", "HEAD:main"], check=True)
        async with mcp_http(server.url, mint(vault)) as client:
            with anyio.fail_after(15):
                while True:
                    r = await client.call_tool("search_notes", {"query": "axolotl"})
                    if r.structured_content["hits"]:
                        break
                    await anyio.sleep(0.1)
        assert r.structured_content["hits"][0]["path"] == "elsewhere.md"


async def test_unknown_environment_over_mcp(served: Server, vault: Path) -> None:
    async with mcp_http(served.url, mint(vault)) as client:
        r = await client.call_tool("list_notes", {"environment": "work"})
    assert r.is_error and "unknown-environment" in text_of(r)


async def test_server_log_never_holds_note_contents_or_tokens(served: Server, vault: Path) -> None:
    token = mint(vault, tier="trusted")
    secret_words = "aardwolf-velvet-marmalade"
    async with mcp_http(served.url, token) as client:
        first = await client.call_tool(
            "write_note",
            {"path": "diary.md", "content": f"{secret_words}\n", "base_revision": "absent", "confirmed": True},
        )
        assert not first.is_error
        stale = await client.call_tool(
            "write_note", {"path": "diary.md", "content": "other\n", "base_revision": "absent", "confirmed": True}
        )
        assert stale.is_error and secret_words in text_of(stale)  # the caller gets the diff…
        await client.call_tool("read_note", {"path": "diary.md"})
    served.stop()
    log = served.log.read_text()
    assert "stale-revision" in log  # …the log keeps only the rule
    assert secret_words not in log and token not in log and token_secret(token) not in log
