"""The console shows a vault as Obsidian does (issue 30 §2): tables, callouts, highlights, tags, comments, block
ids, footnotes, task lists, math as text, right-to-left blocks, properties, and note embeds with a depth
limit; every construct either renders or shows as plain text, never as markup the note chose; each new rule
is linear in the note."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from notegate.doors.web.render import MAX_EMBED_DEPTH, MAX_EMBEDS, render_note, section_of
from notegate.vault.links import LinkTargets
from support.timing import assert_linear, fill
from support.web_notes import unsafe_markup

NOTES = {
    "a.md": "# A\n\nintro line ^intro\n\n## Setup\n\nsetup text\n\n### Detail\n\ndeep\n\n## Other\n\nnot shown\n",
    "loop.md": "loop body\n\n![[loop]]\n",
    "ping.md": "ping\n\n![[pong]]\n",
    "pong.md": "pong\n\n![[ping]]\n",
    "Internal links.md": "# Internal links\n\nhow to link\n",
    "private.md": "secret\n",
}
TARGETS = LinkTargets([p for p in NOTES if p != "private.md"] + ["img/d.png"])


def media_type(path: str) -> str:
    return "image/png" if path.endswith(".png") else ""


def render(text: str, read=NOTES.get) -> str:
    html = render_note(text, "n.md", TARGETS, media_type, read=read)
    assert unsafe_markup(html) == [], html
    return html


def test_a_table_is_a_table_and_an_escaped_pipe_link_resolves() -> None:
    html = render("| a | b |\n| - | - |\n| [[Internal links\\|links]] | x |\n")
    assert "<table>" in html and '<th dir="auto">a</th>' in html
    assert '<a href="/notes/Internal%20links.md" class="wikilink">links</a>' in html
    assert "missing" not in html


@pytest.mark.parametrize(
    ("text", "opening"),
    [
        ("> [!info] Read this\n> body", '<div class="callout callout-info" data-callout="info" dir="auto">'),
        ("> [!WARNING]\n> body", '<div class="callout callout-warning" data-callout="warning" dir="auto">'),
        ("> [!faq]- Folded\n> body", '<details class="callout callout-question" data-callout="question" dir="auto">'),
        ("> [!tip]+ Open\n> body", '<details class="callout callout-tip" data-callout="tip" dir="auto" open>'),
        ("> [!custom] Mine\n> body", '<div class="callout callout-note" data-callout="note" dir="auto">'),
    ],
)
def test_callouts_render_as_callouts(text: str, opening: str) -> None:
    html = render(text)
    assert html.startswith(opening), html
    assert "[!" not in html and '<p dir="auto">body</p>' in html


def test_a_callout_title_is_escaped_text() -> None:
    html = render('> [!info] <img src=x onerror="alert(1)"> **t**\n> body')
    assert "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;" in html and "<img" not in html


def test_highlights_tags_comments_and_block_ids() -> None:
    html = render("a ==marked== #project/alpha %%hidden%% b ^block-1\n\n%%\nblock comment\n\nacross paragraphs\n%%\n")
    assert "<mark>marked</mark>" in html
    assert '<span class="tag">#project/alpha</span>' in html
    assert "hidden" not in html and "block comment" not in html and "across" not in html
    assert "^block-1" not in html
    assert "#1" in render("issue #1 and a#b")  # a number is no tag, nor a hash inside a word
    assert 'class="tag"' not in render("issue #1 and a#b")


def test_footnotes_tasks_math_and_strikethrough() -> None:
    html = render("x[^1] ~~old~~ $a+b$\n\n- [ ] todo\n- [x] done\n\n[^1]: the source\n")
    assert 'class="footnote-ref"' in html and "the source" in html
    assert html.count('type="checkbox"') == 2 and 'checked="checked"' in html
    assert '<code class="math">a+b</code>' in html
    assert "<s>old</s>" in html
    assert "$5 and $10" in render("costs $5 and $10")  # money stays text


def test_right_to_left_blocks_take_their_direction_from_their_text() -> None:
    html = render("# عنوان\n\nفایل‌ها را ببینید\n\n- مورد\n")
    assert html.count('dir="auto"') == 3


def test_properties_are_a_table() -> None:
    html = render("---\naliases: [Start, Home]\nstatus: draft\n---\nbody\n")
    assert html.startswith('<table class="properties">')
    assert '<th scope="row">aliases</th><td dir="auto">Start, Home</td>' in html


def test_a_note_embed_shows_the_note_or_its_section() -> None:
    whole = render("![[a]]")
    assert '<div class="embed-note" dir="auto">' in whole and "not shown" in whole
    heading = render("![[a#Setup]]")
    assert "setup text" in heading and "deep" in heading and "not shown" not in heading and "intro" not in heading
    block = render("![[a#^intro]]")
    assert "intro line" in block and "setup text" not in block
    missing = render("![[a#No such heading]]")
    assert "embed-note" not in missing and 'href="/notes/a.md"' in missing


def test_embeds_stop_at_cycles_depth_and_count() -> None:
    assert render("![[loop]]").count("embed-note") == 1  # loop.md embeds itself: shown once, then a link
    ping = render("![[ping]]")
    assert ping.count('class="embed-note"') == 2 and ping.count("ping") >= 2  # ping > pong > (ping: a link)
    chain = {f"c{i}.md": f"level {i}\n\n![[c{i + 1}]]\n" for i in range(10)}
    deep = render_note("![[c0]]", "n.md", LinkTargets(chain), media_type, read=chain.get)
    assert deep.count('class="embed-note"') == MAX_EMBED_DEPTH
    many = {f"m{i}.md": "x\n" for i in range(40)}
    wide = render_note(
        "\n\n".join(f"![[m{i}]]" for i in range(40)), "n.md", LinkTargets(many), media_type, read=many.get
    )
    assert wide.count('class="embed-note"') == MAX_EMBEDS


def test_an_embed_reads_only_what_the_viewer_may_read() -> None:
    """The renderer shows only what ``read`` returns: a note the viewer cannot read is a link at most."""
    html = render("![[a]]", read=lambda path: None)
    assert "embed-note" not in html and "intro" not in html
    assert "secret" not in render("![[private]]")  # not in the viewer's targets: missing, never read


def test_section_of_takes_a_heading_to_the_next_of_its_level() -> None:
    text = NOTES["a.md"]
    assert section_of(text, "Setup") == "## Setup\n\nsetup text\n\n### Detail\n\ndeep\n"
    assert section_of(text, "A#Setup#Detail") == "### Detail\n\ndeep\n"
    assert section_of(text, "^intro") == "intro line ^intro"
    assert section_of(text, "nothing") is None


FRAGMENTS = ["> [!", "info]", "- ", "==", "%%", "#", "^a", "$", "| a |", "\n", "[^1]", "![[a", "]]", "<b>", "`", "~~"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=6)), max_size=40).map("".join))
def test_no_obsidian_syntax_yields_markup_the_note_chose(text: str) -> None:
    html = render(text)
    assert "<script" not in html.lower() and "<b>" not in html


SHAPES = {
    "unclosed highlights": lambda n: fill("==a ", n),
    "unclosed comments": lambda n: fill("%%a ", n),
    "tags": lambda n: fill("#tag ", n),
    "block ids": lambda n: fill("a ^b ", n),
    "dollars": lambda n: fill("$a ", n),
    "callouts": lambda n: fill("> [!info] t\n> b\n\n", n),
    "nested callouts": lambda n: fill("> [!info] t\n", n),
    "table rows": lambda n: "| a | b |\n| - | - |\n" + fill("| [[a\\|b]] | ==c== |\n", n),
    "comment lines": lambda n: "%%\n" + fill("a\n", n),
    "footnotes": lambda n: fill("x[^1] ", n) + "\n\n[^1]: y\n",
}


@pytest.mark.parametrize("shape", SHAPES)
def test_rendering_obsidian_syntax_is_linear(shape: str) -> None:
    assert_linear(lambda text: render_note(text, "n.md", TARGETS, media_type), SHAPES[shape], small=4096)


def test_a_link_to_a_heading_of_this_note_is_no_missing_link() -> None:
    html = render("see [[#Setup]] and [[#^block-1|that line]]")
    assert 'class="missing"' not in html
    assert html.count('href="/notes/n.md"') == 2 and ">Setup</a>" in html and ">that line</a>" in html
