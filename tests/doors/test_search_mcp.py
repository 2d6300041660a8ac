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


FIELD_NOTES = {
    # a long note that mentions the words many times, and the short notes the queries name
    "guide/Everything.md": "# Everything\n\n" + "customize your site and contributions to the internal links. " * 30,
    "guide/Customize your site.md": "# Customize your site\n\nThemes and fonts.\n",
    "guide/Financial contributions.md": "---\naliases: [Donate, Support us]\n---\n# Financial contributions\n\nMoney.",
    "guide/Setup.md": "# Setup\n\n## Internal links\n\nHow notes point at each other.\n",
    "es/Contribuciones financieras.md": "# Contribuciones financieras\n\n**Dinero** para [[Proyecto|el proyecto]].\n",
}


async def test_named_notes_and_word_forms_come_first_and_each_hit_says_where(served: Server, vault: Path) -> None:
    """Issue 33: a note named by the query (title, alias, heading) outranks a long note that mentions the
    words; other forms of a word find the note (stemmed in the note's language: its folder); each hit says
    which part matched, with a plain-text snippet.  Before: the long note came first, 'financially
    contribute' found nothing, 'contribución' missed the Spanish note, hits had no part, snippets were
    Markdown.  Every note is searched for right after its write (no wait: searchable at once)."""
    owner = mint(vault, name="owner", tier="trusted")
    async with mcp_http(served.url, owner) as client:
        for path, text in FIELD_NOTES.items():
            args = {"path": path, "content": text, "base_revision": "absent", "confirmed": True}
            done = await client.call_tool("write_note", args)
            assert not done.is_error, text_of(done)

        async def top(query: str) -> list[tuple[str, str]]:
            found = await client.call_tool("search_notes", {"query": query})
            assert not found.is_error, text_of(found)
            return [(h["path"], h["part"]) for h in found.structured_content["hits"]]

        assert (await top("customizing your site"))[0] == ("guide/Customize your site.md", "title")
        assert (await top("financially contribute"))[0] == ("guide/Financial contributions.md", "title")
        assert (await top("support US"))[0] == ("guide/Financial contributions.md", "alias")  # any case
        assert (await top("internal link"))[0] == ("guide/Setup.md", "heading")
        assert (await top("contribución financiera"))[0] == ("es/Contribuciones financieras.md", "title")
        body = (await client.call_tool("search_notes", {"query": "dinero"})).structured_content["hits"][0]
        assert body["part"] == "body" and body["snippet"] == "Contribuciones financieras **Dinero** para el proyecto."
