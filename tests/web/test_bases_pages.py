"""A vault built on Obsidian Bases, imported and shown by the real server (issue 30 §2, "a Bases file renders"):
a ``.base`` page shows each view's rows (filters, sorts, formulas, display names, cards, list), a category
page shows an embedded view and a ```base block, an unsupported function or broken YAML says so instead of
failing, ``[server] base_rows`` bounds the rows, and a restricted caller's facts never hold a private note."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from notegate.services.basefacts import BaseFacts
from notegate.services.notes import NotesService
from support.web_bases import BOOKS_BASE, NOTES, UNSUPPORTED_BASE
from support.web_harness import Console, serve_console, set_server
from support.web_notes import Signed, attach, png, sign_in, unsafe_markup, write


def _views(page: str) -> dict[str, list[str]]:
    """Each view's name -> the paths of its rows, in order."""
    found: dict[str, list[str]] = {}
    for match in re.finditer(r'<section class="base-view" data-view="([^"]*)".*?</section>', page, re.DOTALL):
        found[match.group(1)] = re.findall(r'class="[^"]*base-row[^"]*" data-path="([^"]*)"', match.group(0))
    return found


def _import_vault(console: Console) -> None:
    for path, text in NOTES.items():
        write(console, path, text)
    attach(console, "img/dune.png", png(30, 40))
    attach(console, "Books.base", BOOKS_BASE.encode())
    attach(console, "Broken/Regex.base", UNSUPPORTED_BASE.encode())
    attach(console, "Broken/Aliases.base", b"a: &x [1, 2]\nb: *x\nviews: []\n")


@pytest.fixture
def served(vault: Path) -> Iterator[Console]:
    with serve_console(vault) as console:
        _import_vault(console)
        yield console


@pytest.fixture
def owner(served: Console) -> Signed:
    return sign_in(served, "owner")


def test_a_base_file_shows_each_view_with_its_rows(owner: Signed) -> None:
    response = owner.client.get("/notes/Books.base")
    assert response.status_code == 200
    views = _views(response.text)
    # the owner reads private notes in the console (as a trusted session does), so the private book is a row
    assert views["All books"] == ["private/Secret Book.md", "Books/Dune.md", "Books/Neuromancer.md", "Books/Emma.md"]
    assert views["Shelf"] == ["Books/Dune.md", "Books/Neuromancer.md", "private/Secret Book.md"]
    assert views["Reading"] == ["Books/Neuromancer.md"]
    page = response.text
    assert '<th scope="col">Author</th>' in page and '<th scope="col">Stars</th>' in page  # display names
    assert '<td data-label="Stars" dir="auto">*****</td>' in page  # a formula
    assert '<td data-label="rating" dir="auto">Average: 5.25</td>' in page  # a summary over every row
    assert 'href="/notes/People/Frank%20Herbert.md" class="wikilink">Frank Herbert</a>' in page  # a link property
    assert '<img src="/files/img/dune.png" alt="" class="embed base-cover">' in page  # a card's cover
    assert "Archive/Old Book.md" not in page  # not: file.inFolder("Archive")
    assert (
        unsafe_markup(re.search(r'<article id="base" class="note-body">(.*?)</article>', page, re.DOTALL).group(1))
        == []
    )


def test_a_category_page_shows_its_embedded_base_and_base_block(owner: Signed) -> None:
    response = owner.client.get("/notes/Categories/Science fiction.md")
    assert response.status_code == 200
    views = _views(response.text)
    assert views["Shelf"] == ["Books/Dune.md", "Books/Neuromancer.md", "private/Secret Book.md"]
    assert views["Sci-fi"] == ["Books/Dune.md", "Books/Neuromancer.md"]  # scifi and its nested scifi/cyberpunk
    assert response.text.count('class="embed-base"') == 2
    assert "filters:" not in response.text  # the block is shown as its view, not as code


def test_what_this_page_cannot_evaluate_says_so(owner: Signed) -> None:
    regex = owner.client.get("/notes/Broken/Regex.base")
    assert regex.status_code == 200 and _views(regex.text) == {"Regex": []}
    assert "unsupported here (regular expressions are not evaluated on this page)" in regex.text
    aliases = owner.client.get("/notes/Broken/Aliases.base")
    assert aliases.status_code == 200
    assert "This base cannot be shown: YAML anchors and aliases are not read here." in aliases.text


def test_base_rows_bounds_every_view(vault: Path) -> None:
    set_server(vault, base_rows=2)
    with serve_console(vault) as console:
        _import_vault(console)
        page = sign_in(console, "owner").client.get("/notes/Books.base").text
    assert _views(page)["All books"] == ["private/Secret Book.md", "Books/Dune.md"]
    assert 'data-shown="2" data-matched="4">2 of 4 files (the rest are not shown)' in page


def test_a_restricted_callers_facts_hold_no_private_note(served: Console, restricted) -> None:
    facts = BaseFacts(NotesService(served.runtime)).facts(restricted)
    paths = {f.path for f in facts.files}
    assert "Books/Dune.md" in paths and not any(p.startswith("private/") for p in paths)
    dune = facts.by_path["Books/Dune.md"]
    assert dune.properties["rating"] == 5 and dune.tags == ("book", "scifi") and dune.mtime is not None
    assert "People/Frank Herbert.md" in dune.links


def test_a_file_time_survives_the_time_cache_being_cleared_by_another_thread(served: Console, restricted) -> None:
    """The commit-time cache is shared by the console's threads and cleared when large: a clear by another
    thread right after this one stored a time made this one's read of it fail (KeyError, the page a 500)."""

    class ClearedAtOnce(dict):
        def __setitem__(self, key, value) -> None:  # stored, then another thread's clear
            super().__setitem__(key, value)
            self.clear()

    facts = BaseFacts(NotesService(served.runtime))
    facts._times = ClearedAtOnce()
    assert facts.facts(restricted).by_path["Books/Dune.md"].mtime is not None
