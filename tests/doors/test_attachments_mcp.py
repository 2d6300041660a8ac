"""Attachments through the MCP door: the real `notegate serve` and the official SDK client over HTTP.

What a session meets: list_notes marks attachments with their size and media type; read_attachment gives an
image as image content, a PDF as an embedded resource and a canvas as JSON text; a private attachment is not
there for a restricted caller; a restricted write is refused by its exact rule; search finds a canvas text
node and never a word inside a PNG's bytes; no MCP resources are advertised.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pygit2
import pytest
from mcp_types import EmbeddedResource, ImageContent, TextContent

from support import Server, mcp_http, mint, text_of
from support.attachments import b64, png

pytestmark = pytest.mark.anyio


PDF = b"%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n"
CANVAS = json.dumps(
    {
        "nodes": [
            {"id": "a", "type": "text", "text": "The quokka migration plan", "x": 0, "y": 0, "width": 20, "height": 8},
            {"id": "b", "type": "file", "file": "images/diagram.png", "x": 300, "y": 0, "width": 200, "height": 80},
        ],
        "edges": [{"id": "e", "fromNode": "a", "toNode": "b"}],
    }
).encode()


async def put(client, path: str, data: bytes) -> dict:
    result = await client.call_tool(
        "write_attachment", {"path": path, "content_base64": b64(data), "base_revision": "absent", "confirmed": True}
    )
    assert not result.is_error, text_of(result)
    assert result.structured_content["status"] == "committed"
    return result.structured_content


async def test_attachments_are_listed_read_and_searched(served: Server, vault: Path) -> None:
    picture = png("zebrapixelword")
    async with mcp_http(served.url, mint(vault, tier="trusted")) as client:
        written = await put(client, "images/diagram.png", picture)
        await put(client, "docs/spec.pdf", PDF)
        await put(client, "boards/plan.canvas", CANVAS)

        listed = (await client.call_tool("list_notes", {})).structured_content["notes"]
        by_path = {n["path"]: n for n in listed}
        assert by_path["images/diagram.png"] == {
            "path": "images/diagram.png",
            "revision": written["new_revision"],
            "quarantined": False,
            "kind": "attachment",
            "size": len(picture),
            "media_type": "image/png",
        }
        assert by_path["docs/spec.pdf"]["media_type"] == "application/pdf"
        assert by_path["boards/plan.canvas"]["size"] == len(CANVAS)
        assert by_path["rules/digest.md"]["kind"] == "note" and by_path["rules/digest.md"]["size"] is None

        image = await client.call_tool("read_attachment", {"path": "images/diagram.png"})
        assert not image.is_error, text_of(image)
        [block] = image.content
        assert isinstance(block, ImageContent) and block.mime_type == "image/png"
        assert base64.b64decode(block.data) == picture
        assert image.structured_content["revision"] == written["new_revision"]
        assert image.structured_content["content"] == "image"

        pdf = await client.call_tool("read_attachment", {"path": "docs/spec.pdf"})
        [block] = pdf.content
        assert isinstance(block, EmbeddedResource)
        assert block.resource.mime_type == "application/pdf"
        assert base64.b64decode(block.resource.blob) == PDF
        assert str(block.resource.uri) == "note://docs/spec.pdf"

        canvas = await client.call_tool("read_attachment", {"path": "boards/plan.canvas"})
        [block] = canvas.content
        assert isinstance(block, TextContent) and json.loads(block.text) == json.loads(CANVAS)

        found = await client.call_tool("search_notes", {"query": "quokka migration"})
        assert [h["path"] for h in found.structured_content["hits"]] == ["boards/plan.canvas"]
        assert found.structured_content["hits"][0]["matched"] == "phrase"
        for word in ("zebrapixelword", "IHDR", "Catalog", "fromNode"):
            none = await client.call_tool("search_notes", {"query": word})
            assert none.structured_content["hits"] == [], word

        note = await client.call_tool("read_attachment", {"path": "rules/digest.md"})
        assert note.is_error and "Refused [path-not-attachment]" in text_of(note)
        gone = await client.call_tool("read_attachment", {"path": "images/none.png"})
        assert gone.is_error and "Refused [no-such-note]" in text_of(gone)


async def test_a_private_attachment_is_not_there_for_a_restricted_caller(served: Server, vault: Path) -> None:
    async with mcp_http(served.url, mint(vault, name="owner", tier="trusted")) as owner:
        await put(owner, "private/scan.png", png())
        seen = await owner.call_tool("read_attachment", {"path": "private/scan.png"})
        assert not seen.is_error
    async with mcp_http(served.url, mint(vault, name="phone", tier="restricted")) as phone:
        listed = (await phone.call_tool("list_notes", {})).structured_content["notes"]
        assert all(not n["path"].startswith("private/") for n in listed)
        hidden = await phone.call_tool("read_attachment", {"path": "private/scan.png"})
        never = await phone.call_tool("read_attachment", {"path": "private/never.png"})
        assert hidden.is_error and "Refused [no-such-note]" in text_of(hidden)
        assert text_of(hidden).replace("scan", "never") == text_of(never)  # the same words as one never made
        folder = await phone.call_tool("list_notes", {"folder": "private"})
        assert folder.is_error and "Refused [no-such-folder]" in text_of(folder)


async def test_attachment_writes_are_refused_by_their_exact_rules(served: Server, vault: Path) -> None:
    args = {"path": "images/x.png", "content_base64": b64(png()), "base_revision": "absent", "confirmed": True}
    async with mcp_http(served.url, mint(vault, name="phone", tier="restricted")) as phone:
        refused = await phone.call_tool("write_attachment", args)
        assert refused.is_error and "Refused [attachment-write-trusted]" in text_of(refused)
        inbox = await phone.call_tool("write_attachment", {**args, "path": "inbox/captures/x.png"})
        assert inbox.is_error and "Refused [attachment-write-trusted]" in text_of(inbox)
        private = await phone.call_tool("write_attachment", {**args, "path": "private/x.png"})
        assert private.is_error and "Refused [no-such-note]" in text_of(private)
    async with mcp_http(served.url, mint(vault, name="owner", tier="trusted")) as owner:
        cases = {
            "attachment-type-mismatch": {**args, "content_base64": b64(b"<html><script>alert(1)</script>")},
            "file-type-refused": {**args, "path": "images/x.html", "content_base64": b64(b"<html/>")},
            "attachment-not-base64": {**args, "content_base64": "not base64!"},
            "path-not-attachment": {**args, "path": "images/x.md"},
            "path-hidden-segment": {**args, "path": ".obsidian/x.png"},
        }
        for rule, call in cases.items():
            result = await owner.call_tool("write_attachment", call)
            assert result.is_error and f"Refused [{rule}]" in text_of(result), (rule, text_of(result))
        first = await put(owner, "images/x.png", png())
        stale = await owner.call_tool("write_attachment", args)
        assert stale.is_error and "Refused [stale-revision]" in text_of(stale)
        assert first["new_revision"] in text_of(stale)
    repo = pygit2.Repository(str(vault.parent / "origin.git"))
    tree = repo[repo.references["refs/heads/main"].target].peel(pygit2.Tree)
    assert (tree / "images" / "x.png").data == png()
    assert "x.html" not in [e.name for e in tree / "images"]


async def test_hosted_attachment_write_is_two_step(served: Server, vault: Path) -> None:
    token = mint(vault, name="claude-ai", client_class="hosted", tier="trusted")
    args = {"path": "images/y.png", "content_base64": b64(png()), "base_revision": "absent"}
    async with mcp_http(served.url, token, start_session=True) as client:
        skipped = await client.call_tool("write_attachment", {**args, "confirmed": True})
        assert skipped.is_error and "Refused [two-step-required]" in text_of(skipped)
        preview = await client.call_tool("write_attachment", args)
        assert preview.structured_content["status"] == "preview"
        assert "image/png" in preview.structured_content["diff"]
        done = await client.call_tool("write_attachment", {**args, "confirmed": True})
        assert done.structured_content["status"] == "committed", text_of(done)


async def test_no_resources_are_advertised(served: Server, vault: Path) -> None:
    async with mcp_http(served.url, mint(vault)) as client:
        assert client.server_capabilities.resources is None
        assert client.server_capabilities.tools is not None
