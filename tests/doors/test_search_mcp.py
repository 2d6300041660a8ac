"""Search and listing as a client meets them: the official SDK client against a real `notegate serve`."""

from __future__ import annotations

from pathlib import Path

import pytest

from support import Server, mcp_http, mint, text_of

pytestmark = pytest.mark.anyio

NOTES = {
    "ideas/q3.md": "# Q3\n\n" + "filler words here. " * 40 + "We agreed the release plan.\n" + "more filler. " * 40,
    "ideas/rival.md": "# Rival\n\nrelease soon; plan later. release plan-less? no: release, then plan.\n",
    "ideas/changelog.md": "# Changelog\n\nrelease notes\n",
    "private/diary.md": "# Diary\n\nmy release plan\n",
}


async def _write_all(url: str, token: str) -> None:
    async with mcp_http(url, token) as client:
        for path, text in NOTES.items():
            args = {"path": path, "content": text, "base_revision": "absent", "confirmed": True}
            done = await client.call_tool("write_note", args)
            assert not done.is_error, text_of(done)


async def test_phrase_then_all_words_then_any_word_each_hit_saying_which(served: Server, vault: Path) -> None:
    owner = mint(vault, name="owner", tier="trusted")
    await _write_all(served.url, owner)
    async with mcp_http(served.url, owner) as client:
        found = (await client.call_tool("search_notes", {"query": "release plan"})).structured_content
        tiers = [(h["path"], h["matched"]) for h in found["hits"]]
        # 'release plan-less' holds the phrase too ('-' separates words); the changelog only 'release'
        assert {p for p, _ in tiers} == {"ideas/q3.md", "ideas/rival.md", "private/diary.md"}
        assert {t for _, t in tiers} == {"phrase"} and found["matched"] == "phrase" and found["fallback"] is None
        loose = (await client.call_tool("search_notes", {"query": "changelog diary"})).structured_content
        assert {(h["path"], h["matched"]) for h in loose["hits"]} >= {
            ("ideas/changelog.md", "any-word"),
            ("private/diary.md", "any-word"),
        }
        assert loose["fallback"] == "no note holds every word; these hold only some of them."
        exact = (await client.call_tool("search_notes", {"query": '"agreed the release"'})).structured_content
        assert [(h["path"], h["matched"]) for h in exact["hits"]] == [("ideas/q3.md", "phrase")]
        assert exact["fallback"] is None
        assert "**release**" in exact["hits"][0]["snippet"]
        prefix = (await client.call_tool("search_notes", {"query": "rele*"})).structured_content
        assert prefix["hits"] and all(h["score"] > 0 for h in prefix["hits"])
        syntax = await client.call_tool("search_notes", {"query": 'title:release NEAR("plan" ^) -x'})
        assert not syntax.is_error and syntax.structured_content["hits"]


async def test_a_missing_folder_is_refused_and_a_private_one_looks_the_same(served: Server, vault: Path) -> None:
    owner = mint(vault, name="owner", tier="trusted")
    await _write_all(served.url, owner)
    phone = mint(vault, name="phone", tier="restricted")
    async with mcp_http(served.url, phone) as client:
        texts = {}
        for folder in ("private", "nothing-here"):
            refused = await client.call_tool("list_notes", {"folder": folder})
            assert refused.is_error
            texts[folder] = text_of(refused).replace(folder, "FOLDER")
        assert texts["private"] == texts["nothing-here"]
        assert "Refused [no-such-folder]: no such folder: FOLDER. List the whole vault" in texts["private"]
        cased = await client.call_tool("list_notes", {"folder": "IDEAS"})
        assert cased.is_error and "did you mean 'ideas'?" in text_of(cased)
        listed = await client.call_tool("list_notes", {"folder": "ideas"})
        assert not listed.is_error and len(listed.structured_content["notes"]) == 3
    async with mcp_http(served.url, owner) as client:
        mine = await client.call_tool("list_notes", {"folder": "private"})
        assert "private/diary.md" in [n["path"] for n in mine.structured_content["notes"]]
        assert "Refused [no-such-folder]" in text_of(await client.call_tool("list_notes", {"folder": "nothing-here"}))
