"""Bases embedded in a note (doors/web/render.py's ``bases`` hook): ``![[X.base]]``, ``![[X.base#View]]`` and
```base blocks reach the hook with the right arguments; they count against the note embeds' depth and page
limits; without the hook they stay a link and a code block; inside a line a base embed is a link."""

from __future__ import annotations

from notegate.doors.web.render import MAX_EMBED_DEPTH, MAX_EMBEDS, render_note
from notegate.vault.links import LinkTargets

TARGETS = LinkTargets(["Books.base", "Cat.md"])


def media_type(path: str) -> str:
    return "application/x-obsidian-base" if path.endswith(".base") else ""


class Hook:
    def __init__(self) -> None:
        self.calls: list[tuple] = []

    def __call__(self, path, view, text, this):
        self.calls.append((path, view, text, this))
        return f'<section class="base-view" data-n="{len(self.calls)}"></section>'


def test_each_form_of_embed_reaches_the_hook() -> None:
    hook = Hook()
    text = "![[Books.base]]\n\n![[Books.base#Shelf]]\n\n```base\nviews: []\n```\n\n```yaml\nviews: []\n```\n"
    html = render_note(text, "Cat.md", TARGETS, media_type, bases=hook)
    assert hook.calls == [
        ("Books.base", "", None, "Cat.md"),
        ("Books.base", "Shelf", None, "Cat.md"),
        (None, "", "views: []\n", "Cat.md"),
    ]
    assert html.count('class="embed-base"') == 3 and "<code" in html  # the yaml block stays code


def test_without_the_hook_a_base_is_a_link_and_a_block_is_code() -> None:
    html = render_note("![[Books.base]]\n\n```base\nviews: []\n```\n", "Cat.md", TARGETS, media_type)
    assert '<a href="/files/Books.base" class="wikilink">Books.base</a>' in html
    assert "embed-base" not in html and "views: []" in html


def test_a_base_embed_inside_a_line_is_a_link() -> None:
    hook = Hook()
    html = render_note("see ![[Books.base]] here", "Cat.md", TARGETS, media_type, bases=hook)
    assert hook.calls == [] and 'class="wikilink">Books.base</a>' in html


def test_bases_count_against_the_page_and_depth_limits() -> None:
    hook = Hook()
    many = "\n\n".join(["![[Books.base]]", "```base\nviews: []\n```"] * MAX_EMBEDS)
    render_note(many, "Cat.md", TARGETS, media_type, bases=hook)
    assert len(hook.calls) == MAX_EMBEDS
    deep = Hook()
    chain = {f"D{i}.md": f"![[D{i + 1}]]\n\n![[Books.base]]\n" for i in range(8)}  # each level holds a base
    targets = LinkTargets(["Books.base", *chain])
    render_note(chain["D0.md"], "D0.md", targets, media_type, read=chain.get, bases=deep)
    assert len(deep.calls) == MAX_EMBED_DEPTH  # as deep as note embeds go, no deeper
    assert sorted(call[3] for call in deep.calls) == [f"D{i}.md" for i in range(MAX_EMBED_DEPTH)]  # `this`: each level
