"""A JSON Canvas (Obsidian's ``.canvas``) shown as a canvas: an SVG board and a list of its cards (pure).

Why server-rendered SVG: the console's CSP allows no script and no inline style, and SVG's geometry is
attributes (``x``, ``width``, ``viewBox``), not CSS, so the board is drawn with no script and scales to any
screen through its ``viewBox``.  Text cards are Markdown rendered by :func:`render.render_note` (the same
rules as a note: no markup the card chose) inside ``foreignObject``; file cards link to their note or file
(an image card shows the image, from the vault only); link cards show their URL, linked only when it is
http(s); groups are labelled boxes; edges are lines between card sides.  Below the board the cards are
listed in reading order (top to bottom, left to right), which is what a phone shows best.

Bounds: at most :data:`MAX_NODES` cards and :data:`MAX_EDGES` edges are drawn (the rest are counted),
coordinates must be finite numbers within :data:`MAX_COORD` (others drop the card), and every text is
escaped.  JSON Canvas 1.0 (jsoncanvas.org) is the format.
"""

from __future__ import annotations

import html
import json
import math
from collections.abc import Callable
from dataclasses import dataclass

from notegate.doors.web.render import allowed_link, file_url, note_url, render_note
from notegate.vault.links import Link, LinkTargets, resolve

__all__ = ["MAX_EDGES", "MAX_NODES", "render_canvas"]

MAX_NODES = 500
MAX_EDGES = 1000
MAX_COORD = 1e6
_MARGIN = 40.0
_SIDES = ("top", "right", "bottom", "left")


@dataclass(frozen=True)
class _Box:
    id: str
    kind: str
    x: float
    y: float
    w: float
    h: float
    raw: dict

    def side(self, name: str | None, toward: _Box) -> tuple[float, float]:
        """The middle of one side (JSON Canvas ``fromSide``/``toSide``), or the side facing ``toward``."""
        if name not in _SIDES:
            dx, dy = toward.x + toward.w / 2 - (self.x + self.w / 2), toward.y + toward.h / 2 - (self.y + self.h / 2)
            name = ("right" if dx > 0 else "left") if abs(dx) >= abs(dy) else ("bottom" if dy > 0 else "top")
        return {
            "top": (self.x + self.w / 2, self.y),
            "right": (self.x + self.w, self.y + self.h / 2),
            "bottom": (self.x + self.w / 2, self.y + self.h),
            "left": (self.x, self.y + self.h / 2),
        }[name]


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    return number if math.isfinite(number) and abs(number) <= MAX_COORD else None


def _boxes(nodes: object) -> tuple[list[_Box], int]:
    boxes: list[_Box] = []
    dropped = 0
    for node in nodes if isinstance(nodes, list) else ():
        if not isinstance(node, dict) or len(boxes) >= MAX_NODES:
            dropped += 1
            continue
        x, y, w, h = (_number(node.get(k)) for k in ("x", "y", "width", "height"))
        if x is None or y is None or w is None or h is None or w <= 0 or h <= 0:
            dropped += 1
            continue
        boxes.append(_Box(str(node.get("id", "")), str(node.get("type", "")), x, y, w, h, node))
    return boxes, dropped


def _f(value: float) -> str:
    return f"{value:.1f}"


def render_canvas(
    data: bytes,
    canvas_path: str,
    targets: LinkTargets,
    media_type: Callable[[str], str],
    *,
    query: str = "",
) -> str:
    """The HTML of a canvas page's body: the board and the card list. A file that is not a canvas object
    shows as a plain message (its bytes are still downloadable from the file route)."""
    try:
        canvas = json.loads(data.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError):
        canvas = None
    if not isinstance(canvas, dict):
        return '<p class="hint" id="canvas-unreadable">This file is not a JSON Canvas this page can draw.</p>'
    boxes, dropped = _boxes(canvas.get("nodes"))
    if not boxes:
        return '<p class="hint" id="canvas-empty">This canvas has no cards.</p>'

    def href(path: str) -> str:
        return (note_url(path) if path.endswith(".md") else file_url(path)) + query

    def card_html(box: _Box) -> str:
        raw = box.raw
        if box.kind == "text":
            return render_note(str(raw.get("text", ""))[:20000], canvas_path, targets, media_type, query=query)
        if box.kind == "file" and isinstance(raw.get("file"), str):
            target = raw["file"].split("#", 1)[0]
            path = resolve(Link("/" + target.lstrip("/"), embed=True, wiki=False, exact=True), canvas_path, targets)
            name = html.escape(target.rsplit("/", 1)[-1])
            if path is None or not (path.endswith(".md") or media_type(path)):
                return f'<p><span class="missing">{name}</span></p>'
            if media_type(path).startswith("image/"):
                return f'<p><img src="{html.escape(href(path))}" alt="{name}" class="embed"></p>'
            return f'<p><a href="{html.escape(href(path))}" class="wikilink">{name}</a></p>'
        if box.kind == "link" and isinstance(raw.get("url"), str):
            url = raw["url"].strip()
            shown = html.escape(url[:300])
            if allowed_link(url) and url.lower().startswith(("http://", "https://")):
                return f'<p><a href="{html.escape(url)}" rel="noopener noreferrer nofollow">{shown}</a></p>'
            return f"<p>{shown}</p>"
        return ""

    left = min(b.x for b in boxes) - _MARGIN
    top = min(b.y for b in boxes) - _MARGIN
    width = max(b.x + b.w for b in boxes) + _MARGIN - left
    height = max(b.y + b.h for b in boxes) + _MARGIN - top
    parts = [
        f'<svg class="canvas-board" id="canvas-board" viewBox="{_f(left)} {_f(top)} {_f(width)} {_f(height)}" '
        'xmlns="http://www.w3.org/2000/svg" role="img" aria-label="canvas">'
    ]
    cards: list[tuple[float, float, str]] = []
    for box in sorted(boxes, key=lambda b: b.kind != "group"):  # groups first: they lie under their cards
        geometry = f'x="{_f(box.x)}" y="{_f(box.y)}" width="{_f(box.w)}" height="{_f(box.h)}"'
        if box.kind == "group":
            label = html.escape(str(box.raw.get("label", ""))[:200])
            parts.append(f'<g class="group"><rect {geometry} rx="8"/>')
            parts.append(f'<text x="{_f(box.x + 8)}" y="{_f(box.y - 8)}">{label}</text></g>')
            continue
        body = card_html(box)
        parts.append(f'<g class="card" data-card="{html.escape(box.kind)}"><rect {geometry} rx="6"/>')
        parts.append(
            f'<foreignObject {geometry}><div xmlns="http://www.w3.org/1999/xhtml" class="card-body note-body" '
            f'dir="auto">{body}</div></foreignObject></g>'
        )
        cards.append((box.y, box.x, body))
    by_id = {b.id: b for b in boxes}
    edges = canvas.get("edges")
    drawn = 0
    for edge in edges if isinstance(edges, list) else ():
        if drawn >= MAX_EDGES:
            break
        if not isinstance(edge, dict):
            continue
        start, end = by_id.get(str(edge.get("fromNode"))), by_id.get(str(edge.get("toNode")))
        if start is None or end is None:
            continue
        (x1, y1), (x2, y2) = start.side(edge.get("fromSide"), end), end.side(edge.get("toSide"), start)
        parts.append(f'<line class="edge" x1="{_f(x1)}" y1="{_f(y1)}" x2="{_f(x2)}" y2="{_f(y2)}"/>')
        drawn += 1
    parts.append("</svg>")
    listed = "".join(f'<li dir="auto">{body}</li>' for _y, _x, body in sorted(cards, key=lambda c: (c[0], c[1])))
    parts.append(f'<h2>Cards</h2><ol class="canvas-cards" id="canvas-cards">{listed}</ol>')
    if dropped:
        parts.append(
            f'<p class="hint" id="canvas-dropped">{dropped} card(s) not drawn (malformed or over {MAX_NODES}).</p>'
        )
    return "".join(parts)
