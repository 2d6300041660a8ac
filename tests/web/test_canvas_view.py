"""A `.canvas` drawn as a canvas (issue 30 §2): an SVG board with text, file, link and group cards and
edges, a card list for phones; hostile cards render inert; malformed canvases say so; bounded."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from notegate.doors.web.canvas_view import MAX_NODES, render_canvas
from notegate.vault.links import LinkTargets
from support.web_notes import unsafe_markup

TARGETS = LinkTargets(["notes/a.md", "img/d.png", "Boards/plan.canvas"])


def media_type(path: str) -> str:
    return {"png": "image/png", "canvas": "application/json"}.get(path.rsplit(".", 1)[-1], "")


def draw(canvas: object) -> str:
    html = render_canvas(json.dumps(canvas).encode(), "Boards/plan.canvas", TARGETS, media_type)
    board = {"svg", "g", "rect", "foreignobject", "text", "line"}  # the board's own elements, no others
    assert [p for p in unsafe_markup(html) if p.removeprefix("tag <").removesuffix(">") not in board] == [], html
    return html


def node(id_: str, kind: str, x: float = 0, y: float = 0, **extra) -> dict:
    return {"id": id_, "type": kind, "x": x, "y": y, "width": 200, "height": 100, **extra}


def test_every_card_kind_and_an_edge() -> None:
    html = draw(
        {
            "nodes": [
                node("g", "group", -20, -20, label="Plan <b>"),
                node("t", "text", 0, 0, text="# Card\n\n**bold** [[a]]"),
                node("f", "file", 300, 0, file="notes/a.md"),
                node("i", "file", 0, 200, file="img/d.png"),
                node("l", "link", 300, 200, url="https://example.org/x"),
                node("m", "file", 600, 0, file="gone.md"),
            ],
            "edges": [{"id": "e", "fromNode": "t", "fromSide": "right", "toNode": "f", "toSide": "left"}],
        }
    )
    assert html.startswith('<svg class="canvas-board" id="canvas-board" viewBox="')
    assert "Plan &lt;b&gt;" in html and "<b>" not in html
    assert "<strong>bold</strong>" in html and 'href="/notes/notes/a.md"' in html
    assert '<img src="/files/img/d.png"' in html
    assert 'href="https://example.org/x" rel="noopener noreferrer nofollow"' in html
    assert '<span class="missing">gone.md</span>' in html
    assert '<line class="edge" x1="200.0" y1="50.0" x2="300.0" y2="50.0"/>' in html
    assert html.count('<li dir="auto">') == 5  # every card but the group, in reading order


def test_hostile_cards_render_inert() -> None:
    html = draw(
        {
            "nodes": [
                node("a", "text", text="<script>alert(1)</script> [x](javascript:alert(1))"),
                node("b", "link", 0, 200, url="javascript:alert(1)"),
                node("c", "file", 0, 400, file="../../etc/passwd"),
                node('d" onload="x', "text", 0, 600, text="ok"),
            ],
            "edges": [],
        }
    )
    assert "<script" not in html and 'href="javascript' not in html and "onload=" not in html.replace("&quot;", "")


def test_a_file_that_is_not_a_canvas_says_so() -> None:
    assert 'id="canvas-unreadable"' in render_canvas(b"\xff\xfe", "x.canvas", TARGETS, media_type)
    assert 'id="canvas-unreadable"' in render_canvas(b"[1, 2]", "x.canvas", TARGETS, media_type)
    assert 'id="canvas-empty"' in draw({"nodes": [], "edges": []})


def test_malformed_and_excess_cards_are_counted_not_drawn() -> None:
    nodes = [node(str(i), "text", i * 10, 0, text="x") for i in range(MAX_NODES + 5)]
    nodes += [{"id": "nan", "type": "text", "x": "1e999", "y": 0, "width": 1, "height": 1}, "not a node"]
    html = draw({"nodes": nodes, "edges": [{"fromNode": "0", "toNode": "nope"}]})
    assert html.count('class="card"') == MAX_NODES
    assert f"{5 + 2} card(s) not drawn" in html


@settings(max_examples=100, deadline=None)
@given(
    st.recursive(
        st.none() | st.booleans() | st.floats(allow_nan=True) | st.integers() | st.text(max_size=20),
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=6),
        max_leaves=30,
    )
)
def test_any_json_draws_or_says_why_without_raising(value: object) -> None:
    html = render_canvas(json.dumps(value).encode(), "x.canvas", TARGETS, media_type)
    assert "<script" not in html
