"""The console's Markdown renderer: hostile notes in a table, a hypothesis property (no Markdown at all yields
script, an event handler, or a link or source outside the vault and http(s)), and linear time."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from notegate.doors.web.render import allowed_link, render_note
from notegate.vault.links import LinkTargets
from support.timing import assert_catches_quadratic, assert_linear, fill
from support.web_notes import unsafe_markup

TARGETS = LinkTargets(["notes/a.md", "notes/Beta.md", "img/d.png", "docs/paper.pdf", "img/evil.svg", "private/p.md"])
TYPES = {"png": "image/png", "pdf": "application/pdf"}


def media_type(path: str) -> str:
    return TYPES.get(path.rsplit(".", 1)[-1], "")  # as the policy: SVG is never an attachment type


def render(text: str) -> str:
    return render_note(text, "notes/n.md", TARGETS, media_type)


HOSTILE = [
    # (note text, what must not be in the HTML)
    ("<script>alert(1)</script>", "<script"),
    ('<img src=x onerror="alert(1)">', "<img src"),
    ("[x](javascript:alert(1))", 'href="javascript:'),
    ("[x](JaVaScRiPt:alert(1))", 'href="JaVaScRiPt'),
    ("[x](java&#9;script:alert(1))", "href="),
    ("[x](&#106;avascript:alert(1))", "href="),
    ("[x](data:text/html,<script>alert(1)</script>)", "href="),
    ("[x](vbscript:msgbox(1))", "href="),
    ("[x](file:///etc/passwd)", "href="),
    ("[x](//evil.example/)", "href="),
    ("[x](/\\evil.example/)", "href="),
    ("<javascript:alert(1)>", "href="),
    ("<data:text/html,hi>", "href="),
    ("![x](data:image/svg+xml,<svg onload=alert(1)>)", "<img"),
    ("![x](https://evil.example/track.png)", "<img"),  # images come from the vault only
    ("![x](evil.svg)", "<img"),
    ("![[evil.svg]]", "<img"),
    ("[[evil.svg]]", "/files/img/evil.svg"),
    ("[x](../img/evil.svg)", "/files/img/evil.svg"),
    ('[x](https://ok.example/ "t" onclick="alert(1)")', 'onclick="'),
    ("[x]: javascript:alert(1)\n\n[x]", "href="),
    ("```\n<script>alert(1)</script>\n```", "<script"),
    ('<a href="javascript:alert(1)">x</a>', "<a href"),
]


@pytest.mark.parametrize(("text", "absent"), HOSTILE)
def test_hostile_markdown_renders_inert(text: str, absent: str) -> None:
    html = render(text)
    assert absent not in html, html
    assert unsafe_markup(html) == [], html


RESOLVED = [
    ("[[a]]", '<a href="/notes/notes/a.md" class="wikilink">a</a>'),
    ("[[beta|the other one]]", '<a href="/notes/notes/Beta.md" class="wikilink">the other one</a>'),
    ("[[a#Heading]]", '<a href="/notes/notes/a.md" class="wikilink">a#Heading</a>'),
    ("[[nowhere]]", '<span class="missing">nowhere</span>'),
    ("![[d.png]]", '<img src="/files/img/d.png" alt="d.png" class="embed" />'),
    ("![chart](../img/d.png)", '<img src="/files/img/d.png" alt="chart" class="embed" />'),
    ("![[paper.pdf]]", '<a href="/files/docs/paper.pdf" class="attachment">paper.pdf</a>'),
    ("[the paper](../docs/paper.pdf)", '<a href="/files/docs/paper.pdf">the paper</a>'),
    ("[rel](a.md)", '<a href="/notes/notes/a.md">rel</a>'),
    ("[ext](https://example.org/x?a=1)", '<a href="https://example.org/x?a=1" rel="noopener noreferrer nofollow">'),
    ("[gone](missing.md)", '<p dir="auto">gone</p>'),
]


@pytest.mark.parametrize(("text", "expected"), RESOLVED)
def test_links_and_embeds_resolve_in_the_vault(text: str, expected: str) -> None:
    assert expected in render(text)


def test_front_matter_is_shown_as_a_table_of_escaped_properties() -> None:
    html = render("---\ntitle: <b>x</b>\ntags: [a, b]\n---\n# Body\n")
    assert html.startswith('<table class="properties">') and "&lt;b&gt;" in html and "<b>" not in html
    assert '<td dir="auto">a, b</td>' in html and '<h1 dir="auto">Body</h1>' in html


def test_front_matter_outside_the_subset_is_shown_as_an_escaped_block() -> None:
    html = render("---\ntitle: <b>x</b>\nnested:\n  key: v\n---\n# Body\n")
    assert html.startswith('<pre class="front-matter">') and "&lt;b&gt;" in html and '<h1 dir="auto">Body</h1>' in html


@pytest.mark.parametrize(
    ("url", "ok"),
    [
        ("https://a.example/", True),
        ("http://a.example", True),
        ("notes/a.md", True),
        ("../a.md", True),
        ("javascript:x", False),
        ("https:x", False),
        ("//a.example", False),
        ("a\\b", False),
        ("data:image/png;base64,AAAA", False),
        ("mailto:a@b", False),
        ("a:b/c", False),
    ],
)
def test_allowed_link(url: str, ok: bool) -> None:
    assert allowed_link(url) is ok


FRAGMENTS = [
    "<script>",
    "</script>",
    "<img src=x onerror=alert(1)>",
    "javascript:",
    "data:text/html,",
    "vbscript:",
    "JAVA\tSCRIPT:",
    "&#106;",
    "&colon;",
    "[",
    "]",
    "(",
    ")",
    "![",
    "[[",
    "]]",
    "|",
    "<",
    ">",
    '"',
    "'",
    " onclick=",
    "\n",
    "\n\n",
    "`",
    "```",
    "    ",
    "> ",
    "- ",
    "#",
    "*",
    "\\",
    "//",
    "evil.svg",
    "a.md",
    "d.png",
    "https://x.example/",
    "[x]: ",
    "%0a",
    "\x00",
]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=8)), max_size=40).map("".join))
def test_no_markdown_yields_script_handlers_or_foreign_urls(text: str) -> None:
    html = render(text)
    assert unsafe_markup(html) == [], (text, html)
    assert "<script" not in html.lower()


SHAPES = {
    "wikilinks": lambda n: fill("[[a]] ", n),
    "open wikilinks": lambda n: fill("[[a ", n),
    "open brackets": lambda n: fill("[", n),
    "embeds": lambda n: fill("![[d.png]] ", n),
    "links": lambda n: fill("[x](a.md) ", n),
    "hostile links": lambda n: fill("[x](javascript:a) ", n),
    "angle brackets": lambda n: fill("<a ", n),
    "front matter": lambda n: "---\n" + fill("k: v\n", n),
}


@pytest.mark.parametrize("shape", SHAPES)
def test_rendering_is_linear(shape: str) -> None:
    assert_linear(render, SHAPES[shape], small=4096)


def test_the_timing_stick_catches_quadratic_at_these_sizes() -> None:
    assert_catches_quadratic(SHAPES["wikilinks"], small=4096)
