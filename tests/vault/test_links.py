"""Links and embeds as Obsidian reads them (vault/links.py): what is found, what resolves, and in linear time."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from notegate.vault.links import Link, LinkTargets, canvas_links, links_in, resolve, resolves
from support.timing import assert_catches_quadratic, assert_linear, fill

FOUND = [
    # (text, [(target, embed, wiki)])
    ("see [[Note]]", [("Note", False, True)]),
    ("![[img.png]] twice ![[img.png]]", [("img.png", True, True)]),  # duplicates once
    ("[[Note|alias]] [[Other#Heading]] [[#local heading]]", [("Note", False, True), ("Other", False, True)]),
    ("[t](x.md) ![a](pics/p%20q.png)", [("x.md", False, False), ("pics/p q.png", True, False)]),
    ('[t](<my note.md>) [t](y.md "title")', [("my note.md", False, False), ("y.md", False, False)]),
    ("[web](https://example.org/x.md) [mail](mailto:a@b) [h](#top)", []),  # URLs and anchors are not files
    ("[[broken\n]] [t\n](x.md)", []),  # a wikilink or a link text does not span lines
    # code is not links (Obsidian): a fenced block to its closing fence, an inline span to its matching run
    ("```python\n# [[in code]] [t](c.md)\n```\n[[after]]", [("after", False, True)]),
    ("~~~~\n[[a]]\n~~~\n[[still code]]\n~~~~\n[[b]]", [("b", False, True)]),  # a shorter fence closes nothing
    ("```\n[[open to the end]]", []),
    ("`[[x]]` ``[[y]] ` [[z]]`` [[w]]", [("w", False, True)]),  # `` closes ``, not `
    ("` [[unpaired]]", [("unpaired", False, True)]),
    ("```not`a fence [[v]]```", []),  # a backtick in the info string: an inline span, not a fence
    ("  ```\r\n[[crlf code]]\r\n```\r\n[[u]]", [("u", False, True)]),
]


@pytest.mark.parametrize(("text", "expected"), FOUND)
def test_links_found(text: str, expected: list[tuple[str, bool, bool]]) -> None:
    assert [(link.target, link.embed, link.wiki) for link in links_in(text)] == expected


VAULT = LinkTargets(["notes/Alpha.md", "projects/b.md", "attachments/img.png", "deep/a/b/c.md"])

RESOLVES = [
    # (note path, link, resolves?)
    ("x.md", Link("Alpha", embed=False, wiki=True), True),  # a bare name, anywhere, any case
    ("x.md", Link("alpha.md", embed=False, wiki=True), True),
    ("x.md", Link("img.png", embed=True, wiki=True), True),  # an embed by file name
    ("x.md", Link("projects/b", embed=False, wiki=True), True),  # a path from the root
    ("x.md", Link("Missing", embed=False, wiki=True), False),
    ("x.md", Link("img.jpg", embed=True, wiki=True), False),
    ("projects/n.md", Link("b.md", embed=False, wiki=False), True),  # relative to the note's folder
    ("deep/a/x.md", Link("../a/b/c.md", embed=False, wiki=False), True),
    ("x.md", Link("../outside.md", embed=False, wiki=False), False),  # leaves the vault
    ("x.md", Link("/projects/b.md", embed=False, wiki=False), True),  # from the root
    ("other/n.md", Link("nowhere/b.md", embed=False, wiki=False), True),  # Obsidian's fallback: by name
    ("x.md", Link("c.md", embed=False, wiki=False), True),
    ("x.md", Link("z.md", embed=False, wiki=False), False),
]


@pytest.mark.parametrize(("note", "link", "expected"), RESOLVES)
def test_resolution(note: str, link: Link, expected: bool) -> None:
    assert resolves(link, note, VAULT) is expected


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from('[]()!|#<>"/ %2Fax.md\n'), max_size=80))
def test_links_in_never_raises_and_finds_only_what_is_written(text: str) -> None:
    for link in links_in(text):
        assert link.target and "\n" not in link.target
        resolves(link, "a/b.md", VAULT)  # never raises either


SHAPES = {
    "open-brackets": lambda n: fill("[", n),
    "open-wikilinks": lambda n: fill("[[a", n),
    "unclosed-markdown": lambda n: fill("[a](b", n),
    "titles-unclosed": lambda n: fill('[a](b "', n),
    "many-links": lambda n: fill("[[a]] [t](b.md) ", n),
    "backtick-runs": lambda n: fill("`` ` ``` [[a]] ", n),
    "unpaired-backticks": lambda n: fill("`x``y```z", n),
    "fences": lambda n: fill("```\n[[a]]\n", n),
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_links_in_is_linear(shape: str) -> None:
    assert_linear(links_in, SHAPES[shape])


def test_the_ratio_catches_a_quadratic_scan() -> None:
    assert_catches_quadratic(SHAPES["unclosed-markdown"])


@pytest.mark.parametrize(
    ("canvas", "targets"),
    [
        ({"nodes": [{"type": "file", "file": "a/b.md"}, {"type": "text", "text": "[[x]]"}]}, ["/a/b.md"]),
        ({"nodes": [{"type": "file", "file": "img.png#crop"}, {"type": "file", "file": "img.png"}]}, ["/img.png"]),
        ({"nodes": "not a list"}, []),
        ([{"type": "file", "file": "x.md"}], []),  # not a canvas
        ({"nodes": [{"type": "file", "file": 3}, "junk", {"type": "file"}]}, []),
    ],
)
def test_canvas_links(canvas: object, targets: list[str]) -> None:
    assert [link.target for link in canvas_links(canvas)] == targets


def test_canvas_paths_are_from_the_vault_root() -> None:
    [link] = canvas_links({"nodes": [{"type": "file", "file": "projects/b.md"}]})
    assert resolves(link, "deep/a/board.canvas", VAULT)
    [gone] = canvas_links({"nodes": [{"type": "file", "file": "gone.md"}]})
    assert not resolves(gone, "deep/a/board.canvas", VAULT)


RESOLVE_CASES = [
    # (link, written in, resolves to)
    (Link("Beta", embed=False, wiki=True), "projects/alpha.md", "projects/Beta.md"),
    (Link("beta", embed=False, wiki=True), "x.md", "projects/Beta.md"),  # case-folded, spelled as the vault does
    (Link("d.png", embed=True, wiki=True), "x.md", "img/d.png"),
    (Link("same", embed=False, wiki=True), "x.md", "same.md"),  # the shortest path wins
    (Link("../img/d.png", embed=True, wiki=False), "notes/n.md", "img/d.png"),
    (Link("/projects/Beta.md", embed=False, wiki=False), "notes/n.md", "projects/Beta.md"),
    (Link("nowhere", embed=False, wiki=True), "x.md", None),
    (Link("../../out.md", embed=False, wiki=False), "a.md", None),
]


@pytest.mark.parametrize(("link", "note", "expected"), RESOLVE_CASES)
def test_resolve_names_the_path_resolves_finds(link: Link, note: str, expected: str | None) -> None:
    targets = LinkTargets(["projects/Beta.md", "img/d.png", "deep/er/same.md", "same.md"])
    assert resolve(link, note, targets) == expected
    assert resolves(link, note, targets) is (expected is not None)
