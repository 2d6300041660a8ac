"""A base's views as HTML (doors/web/bases_view.py): hostile names, values and display names render inert; a
link value points into the vault or stays plain text; covers only from the vault's images; a hypothesis
property: whatever a note's properties hold, the markup stays within the renderer's safe set."""

from __future__ import annotations

from datetime import datetime

from hypothesis import given, settings
from hypothesis import strategies as st

from notegate.doors.web.bases_view import render_base
from notegate.vault.basexpr import FileFacts, LinkValue
from notegate.vault.links import LinkTargets
from support.web_notes import unsafe_markup

NOW = datetime(2026, 1, 5)
PATHS = ["a/Note.md", "img/c.png", "x.base"]
TARGETS = LinkTargets(PATHS)
BASE = """properties:
  title:
    displayName: '<script>alert(1)</script>'
views:
  - type: table
    name: '"><img src=x onerror=alert(1)>'
    order: [file.name, title, url, who, cover]
  - type: cards
    name: Cards
    image: cover
    order: [file.name, title, url, who]
  - type: list
    name: List
    order: [file.name, title, who]
"""


def media_type(path: str) -> str:
    return "image/png" if path.endswith(".png") else "application/x-obsidian-base" if path.endswith(".base") else ""


def render(properties: dict[str, object]) -> str:
    files = (FileFacts("a/Note.md", 10, None, properties), FileFacts("x.base", 5))
    return render_base(BASE, "x.base", files, TARGETS, media_type, now=NOW, max_rows=10)


def test_hostile_values_render_inert() -> None:
    html = render(
        {
            "title": "<b onmouseover=alert(1)>x</b>",
            "url": "javascript:alert(1)",
            "who": [LinkValue("javascript:alert(1)"), LinkValue("//evil.example/x"), LinkValue("Note")],
            "cover": LinkValue("https://evil.example/track.png"),
        }
    )
    assert unsafe_markup(html) == []
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html and "&lt;b onmouseover=alert(1)&gt;" in html
    assert 'href="/notes/a/Note.md" class="wikilink">Note</a>' in html  # the one link that resolves
    assert "evil.example/track.png" not in html.split('class="base-cards"')[1].split("</ul>")[0].split("<dl>")[0]


def test_an_external_url_is_a_link_and_a_cover_is_a_vault_image() -> None:
    html = render({"url": "https://example.org/a b", "cover": LinkValue("img/c.png"), "title": "t"})
    assert '<img src="/files/img/c.png" alt="" class="embed base-cover">' in html
    assert 'href="https://example.org/a b"' not in html  # a space: not a URL the note renderer would link
    ok = render({"url": "https://example.org/a"})
    assert '<a href="https://example.org/a" rel="noopener noreferrer nofollow">' in ok


VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=30)
    | st.builds(LinkValue, st.text(max_size=20), st.text(max_size=10)),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=12,
)  # fmt: skip


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.sampled_from(["title", "url", "who", "cover"]), VALUES))
def test_any_property_values_keep_the_markup_safe(properties: dict[str, object]) -> None:
    assert unsafe_markup(render(properties)) == []
