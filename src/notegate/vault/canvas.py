"""The searchable text of an Obsidian canvas (JSON Canvas 1.0, jsoncanvas.org): its text nodes (pure).

Why only text nodes: a canvas is JSON whose ``nodes`` are text cards, embedded files, links and groups;
what a person wrote is the ``text`` of nodes with ``"type": "text"``.  Keys, ids, colours and coordinates
are not words anyone searches for, and file nodes point at attachments, whose bytes are never indexed.

Invariants: total (any bytes give a string, never an exception: malformed JSON, a nesting too deep for the
parser or the wrong shapes all give ""), and linear in the input (the standard library's JSON scanner, then
one pass over the nodes).
"""

from __future__ import annotations

import json

__all__ = ["CANVAS_SUFFIX", "canvas_text", "is_canvas"]

CANVAS_SUFFIX = ".canvas"


def is_canvas(path: str) -> bool:
    return path.casefold().endswith(CANVAS_SUFFIX)


def canvas_text(data: bytes) -> str:
    """The text of every text node, in file order, one paragraph each ("" for anything else)."""
    try:
        doc = json.loads(data.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return ""
    nodes = doc.get("nodes") if isinstance(doc, dict) else None
    if not isinstance(nodes, list):
        return ""
    texts = [
        node["text"]
        for node in nodes
        if isinstance(node, dict) and node.get("type") == "text" and isinstance(node.get("text"), str)
    ]
    return "\n\n".join(texts)
