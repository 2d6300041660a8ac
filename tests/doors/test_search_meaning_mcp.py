"""Search by meaning as a client meets it: the official SDK client against a real `notegate serve` with
``[server] search_meaning = "auto"`` (on where installed; off is the default for now) or ``true``, the model
loaded from its installed files (nothing downloaded); and "auto" where it is not installed: off, said once in
the log and in /healthz, keyword search as before."""

from __future__ import annotations

import os
import time
from pathlib import Path

import httpx2
import pytest

from notegate.vault.meaning_installed import install_hint, missing_parts
from support import Server, mcp_http, mint, notegate, text_of

pytestmark = [pytest.mark.anyio]

if missing_parts():  # the `meaning` extra and the model's files; CI sets NOTEGATE_REQUIRE_MEANING=1
    if os.environ.get("NOTEGATE_REQUIRE_MEANING") == "1":
        raise RuntimeError(f"search by meaning is not installed: {install_hint(missing_parts())}")
    pytest.skip(f"search by meaning is not installed ({install_hint(missing_parts())})", allow_module_level=True)

NOTES = {
    # No note holds the word "backup", nor a form of it in its name (a file named backups.md is found by the
    # word forms of its name): the keyword search finds none of them for it.
    "howto/copies.md": "# Back up your files\n\nCopy the vault folder to another disk or to cloud storage every "
    "week, so a broken laptop loses nothing.\n",
    "howto/cooking.md": "# Pasta\n\nBoil water, add salt, cook the spaghetti for nine minutes.\n",
    "howto/garden.md": "# Tomatoes\n\nWater the tomato plants in the evening and tie them to stakes.\n",
    "private/offsite.md": "# Back up the vault offsite\n\nCopy the vault folder to a second disk and to cloud "
    "storage, so a stolen laptop loses nothing.\n",
}


def init_default(directory: Path) -> Path:
    """A `notegate init` directory as it is made, with search by meaning "auto" (on where installed), as an
    owner turns it on (the default is off for now: config.py says why)."""
    done = notegate("init", str(directory))
    assert done.returncode == 0, done.stderr
    config = directory / "notegate.toml"
    text = config.read_text()
    assert "\nsearch_meaning = false\n" in text  # `notegate init` writes every default
    config.write_text(text.replace("\nsearch_meaning = false\n", '\nsearch_meaning = "auto"\n', 1))
    return config


@pytest.fixture
def meaning_served(tmp_path: Path):
    server = Server(init_default(tmp_path / "vault")).start()
    try:
        yield server
    finally:
        server.stop()


async def _search_until(client, query: str, path: str, seconds: float = 60.0) -> dict:
    """Search until ``path`` is a hit: the vectors are computed in the background after the writes."""
    deadline = time.monotonic() + seconds
    while True:
        found = await client.call_tool("search_notes", {"query": query})
        assert not found.is_error, text_of(found)
        result = found.structured_content
        if any(h["path"] == path for h in result["hits"]) or time.monotonic() > deadline:
            return result
        time.sleep(0.05)


async def test_a_note_found_by_meaning_says_so_and_a_private_one_only_to_who_may_see_it(
    meaning_served: Server,
) -> None:
    """On where installed ("auto"); /healthz says so to the environment's token."""
    vault = meaning_served.config_path
    owner = mint(vault, name="owner", tier="trusted")
    health = httpx2.get(f"{meaning_served.url}/healthz", headers={"Authorization": f"Bearer {owner}"}).json()
    assert health["environments"]["personal"]["meaning"]["status"] == "on", health
    async with mcp_http(meaning_served.url, owner) as client:
        for path, text in NOTES.items():
            args = {"path": path, "content": text, "base_revision": "absent", "confirmed": True}
            done = await client.call_tool("write_note", args)
            assert not done.is_error, text_of(done)
        # By keyword at once, as before: the write's own words.
        at_once = (await client.call_tool("search_notes", {"query": "spaghetti"})).structured_content
        assert [(h["path"], h["matched"]) for h in at_once["hits"]][:1] == [("howto/cooking.md", "all-words")]
        # By meaning shortly after: no note holds "backup".
        mine = await _search_until(client, "backup", "private/offsite.md")
        matched = {h["path"]: h["matched"] for h in mine["hits"]}
        assert matched.get("howto/copies.md") == "meaning" and matched.get("private/offsite.md") == "meaning"
        assert "howto/cooking.md" not in matched  # nothing near it in meaning
        assert mine["matched"] == "meaning" and mine["fallback"] is None
        first = next(h for h in mine["hits"] if h["path"] == "howto/copies.md")
        assert first["snippet"].startswith(
            "Back up your files"
        )  # plain text, as every snippet and 0 < first["score"] <= 1
    phone = mint(vault, name="phone", tier="restricted")
    async with mcp_http(meaning_served.url, phone) as client:
        theirs = await _search_until(client, "backup", "howto/copies.md")
        paths = [h["path"] for h in theirs["hits"]]
        assert "howto/copies.md" in paths
        assert not [p for p in paths if p.startswith("private/")], paths  # the nearest note, and never shown
        folder = await client.call_tool("search_notes", {"query": "backup", "folder": "private"})
        assert folder.is_error or folder.structured_content["hits"] == []


BLOCKED = ("tokenizers", "safetensors", "wordllama", "huggingface_hub", "hf_xet")
BLOCKER = f'''import sys

class Blocked:
    """This interpreter has none of wordllama and its dependencies (the meaning extra before issue 33's size cut)."""

    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {BLOCKED!r}:
            raise ModuleNotFoundError(f"blocked by the test: {{name}}", name=name)
        return None

sys.meta_path.insert(0, Blocked())
'''


async def test_meaning_needs_only_numpy_and_the_model_files(vault: Path, tmp_path: Path, monkeypatch) -> None:
    """The `meaning` extra is numpy alone: a server whose interpreter cannot import wordllama, tokenizers,
    safetensors or huggingface-hub starts with search by meaning on and finds a note by meaning."""
    import support

    blocker = tmp_path / "blocker"
    blocker.mkdir()
    (blocker / "sitecustomize.py").write_text(BLOCKER)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(blocker), os.environ.get("PYTHONPATH", "")]))
    monkeypatch.setattr(support, "FRESH_INTERPRETER", True)  # a new interpreter, so the blocker runs first
    text = vault.read_text()
    vault.write_text(text.replace("\nsearch_meaning = false\n", "\nsearch_meaning = true\n", 1))
    server = Server(vault).start()
    try:
        owner = mint(vault, name="owner", tier="trusted")
        async with mcp_http(server.url, owner) as client:
            path = "howto/copies.md"
            args = {"path": path, "content": NOTES[path], "base_revision": "absent", "confirmed": True}
            assert not (await client.call_tool("write_note", args)).is_error
            found = await _search_until(client, "backup", path)
            assert {h["path"]: h["matched"] for h in found["hits"]}.get(path) == "meaning", found
    finally:
        server.stop()
    assert "blocked by the test" not in server.log.read_text()


NUMPY_BLOCKER = '''import sys

class Blocked:
    """This interpreter has no numpy (notegate installed without the meaning extra)."""

    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "numpy":
            raise ModuleNotFoundError(f"blocked by the test: {name}", name=name)
        return None

sys.meta_path.insert(0, Blocked())
'''


async def test_auto_without_numpy_is_off_said_once_and_keyword_search_works(tmp_path: Path, monkeypatch) -> None:
    """``pip install notegate`` without the extra, or the container image: "auto" starts, says once in the log
    why search by meaning is off (and /healthz, to the environment's token), and searches by keyword."""
    import support

    blocker = tmp_path / "blocker"
    blocker.mkdir()
    (blocker / "sitecustomize.py").write_text(NUMPY_BLOCKER)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(blocker), os.environ.get("PYTHONPATH", "")]))
    monkeypatch.setattr(support, "FRESH_INTERPRETER", True)  # a new interpreter, so the blocker runs first
    vault = init_default(tmp_path / "vault")
    server = Server(vault).start()
    try:
        owner = mint(vault, name="owner", tier="trusted")
        health = httpx2.get(f"{server.url}/healthz", headers={"Authorization": f"Bearer {owner}"}).json()
        meaning = health["environments"]["personal"]["meaning"]
        assert meaning["status"] == "off" and "missing: numpy" in meaning["reason"], health
        assert "python -m notegate.vault.meaning_model install" in meaning["reason"]
        async with mcp_http(server.url, owner) as client:
            path = "howto/cooking.md"
            args = {"path": path, "content": NOTES[path], "base_revision": "absent", "confirmed": True}
            assert not (await client.call_tool("write_note", args)).is_error
            found = (await client.call_tool("search_notes", {"query": "spaghetti"})).structured_content
            assert [(h["path"], h["matched"]) for h in found["hits"]] == [(path, "all-words")]
    finally:
        server.stop()
    lines = [line for line in server.log.read_text().splitlines() if "search by meaning is off" in line]
    assert len(lines) == 1 and "missing: numpy" in lines[0], lines
