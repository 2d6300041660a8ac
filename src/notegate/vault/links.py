"""Links and embeds in a note, and whether they resolve in a vault (pure: text and path sets in, values out).

What counts, as Obsidian reads it:

* ``[[target]]``, ``[[target|alias]]``, ``[[target#heading]]`` and the embed ``![[target]]``: ``target`` is a
  vault path or a bare name (``x`` means ``x.md``; ``img.png`` means that file), found anywhere in the vault
  when it is not a full path (Obsidian's "shortest path when possible").
* ``[text](x.md)`` and ``![alt](img.png)``: relative to the note's folder (percent-encoded, ``<...>``
  allowed), or from the vault root, or -- as Obsidian falls back -- by name.  URLs (``scheme:``) and
  ``#heading`` links are not files and are ignored.

Why no backtracking trap: every character class excludes the bracket that opens the next attempt, so each
match attempt stops at the next ``[`` or ``(`` and the scan is linear in the text
(tests/vault/test_links.py measures it).  Links inside code are not links, as Obsidian reads them: a fenced
block (`````` or ``~~~``, to its closing fence or the end of the note) and an inline code span (a run of
backticks to the next run of the same length on its line) are blanked first (:func:`outside_code`). A span
CommonMark would let cross a line break is not followed there: its links are counted, the safe direction.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

__all__ = ["Link", "LinkTargets", "canvas_links", "canvas_relocated", "links_in", "outside_code", "resolve", "resolves"]

_WIKI = re.compile(r"(!?)\[\[([^\[\]\n]+)\]\]")
_MARKDOWN = re.compile(r"(!?)\[[^\[\]\n]*\]\(\s*(<[^<>\[\]\n]+>|[^()\s<>\[\]]+)(?:\s+\"[^\"\[\]\n]*\")?\s*\)")
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")
_PERCENT = re.compile(r"(?:%[0-9A-Fa-f]{2})+")
_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")
_TICKS = re.compile(r"`+")


def outside_code(text: str) -> str:
    """``text`` with its code blanked: each fenced block's lines dropped, each inline code span replaced by a
    space.  Linear: one pass over the lines, and each line's backtick runs paired by a table of the next run
    of each length (no search restarts)."""
    if "`" not in text and "~~~" not in text:
        return text
    kept: list[str] = []
    fence = ""  # the open fence's characters ("" outside a block)
    for line in text.split("\n"):
        opening = _FENCE.match(line)
        if fence:
            closing = opening and opening.group(1)[0] == fence[0] and len(opening.group(1)) >= len(fence)
            if closing and not line[opening.end() :].strip():
                fence = ""
            continue
        if opening and not (opening.group(1)[0] == "`" and "`" in line[opening.end() :]):
            fence = opening.group(1)  # a backtick fence's info string holds no backtick (CommonMark)
            continue
        kept.append(_without_spans(line) if "`" in line else line)
    return "\n".join(kept)


def _without_spans(line: str) -> str:
    runs = [(m.start(), m.end()) for m in _TICKS.finditer(line)]
    following: dict[int, int] = {}  # run length -> index of the nearest such run to the right
    after: list[int] = [-1] * len(runs)
    for i in range(len(runs) - 1, -1, -1):
        length = runs[i][1] - runs[i][0]
        after[i] = following.get(length, -1)
        following[length] = i
    parts: list[str] = []
    done = i = 0
    while i < len(runs):
        close = after[i]
        if close < 0:
            i += 1
            continue
        parts.append(line[done : runs[i][0]])
        parts.append(" ")
        done = runs[close][1]
        i = close + 1
    parts.append(line[done:])
    return "".join(parts)


def _unquote(text: str) -> str:
    """``%20`` and other percent-escapes decoded as UTF-8 (what a Markdown link to ``My%20note.md`` means)."""
    return _PERCENT.sub(lambda m: bytes.fromhex(m.group(0).replace("%", "")).decode("utf-8", "replace"), text)


def _join(folder: str, target: str) -> str | None:
    """``target`` relative to ``folder``, with ``.`` and ``..`` segments resolved; None if it leaves the vault."""
    parts: list[str] = [p for p in folder.split("/") if p]
    for segment in target.split("/"):
        if segment in ("", "."):
            continue
        if segment == "..":
            if not parts:
                return None
            parts.pop()
        else:
            parts.append(segment)
    return "/".join(parts)


@dataclass(frozen=True)
class Link:
    """One link or embed: its target as written (without alias or heading), and whether it is a wikilink."""

    target: str
    embed: bool
    wiki: bool
    #: A path from the vault root and nothing else (a canvas's file node): Obsidian opens exactly that file,
    #: with no relative or by-name fallback.
    exact: bool = False

    def as_written(self) -> str:
        if self.wiki:
            return f"{'!' if self.embed else ''}[[{self.target}]]"
        return f"{'!' if self.embed else ''}[…]({self.target})"


def links_in(text: str) -> list[Link]:
    """Every link and embed that names a file, in order of appearance (duplicates kept once)."""
    found: dict[tuple[str, bool, bool], None] = {}
    text = outside_code(text)
    for match in _WIKI.finditer(text):
        # Inside a Markdown table the alias pipe is written escaped, ``[[Target\|alias]]``: the backslash
        # belongs to the table, not to the target's name.
        target = match.group(2).split("|", 1)[0].removesuffix("\\").split("#", 1)[0].strip()
        if target:
            found[(target, match.group(1) == "!", True)] = None
    for match in _MARKDOWN.finditer(text):
        raw = match.group(2)
        raw = raw[1:-1] if raw.startswith("<") else raw
        if _SCHEME.match(raw) or raw.startswith("#"):
            continue
        target = _unquote(raw.split("#", 1)[0]).strip()
        if target:
            found[(target, match.group(1) == "!", False)] = None
    return [Link(target, embed, wiki) for target, embed, wiki in found]


def canvas_links(canvas: object) -> list[Link]:
    """The files a parsed JSON Canvas shows (its ``"type": "file"`` nodes, paths from the vault root), in
    order, once each; anything that is not a canvas of that shape has none."""
    nodes = canvas.get("nodes") if isinstance(canvas, dict) else None
    found: dict[str, None] = {}
    for node in nodes if isinstance(nodes, list) else ():
        if isinstance(node, dict) and node.get("type") == "file" and isinstance(node.get("file"), str):
            target = node["file"].split("#", 1)[0].strip()
            if target:
                found["/" + target.lstrip("/")] = None
    return [Link(target, embed=True, wiki=False, exact=True) for target in found]


_CANVAS_FILE = re.compile(r'"file"(\s*:\s*)("(?:[^"\\]|\\.)*")')


def canvas_relocated(data: bytes, land: Callable[[str], str]) -> bytes | None:
    """A JSON Canvas whose file nodes name vault-root paths, with each path moved by ``land`` (an import's
    ``--into FOLDER``, or a folder landing in the vault's own spelling: the canvas's cards follow the files
    they show), or None when no path changes (the bytes then stay exactly as they were).

    Only the moved paths' own string literals change: every other byte (the app's formatting, key order,
    escapes) stays as written. Should that not give exactly the relocated canvas (a ``"file"`` key somewhere
    else with the same value), the canvas is written anew as Obsidian writes one (tab-indented JSON)."""
    try:
        text = data.decode("utf-8-sig")
        canvas = json.loads(text)
    except ValueError:
        return None  # not a canvas: decide_canvas refuses it with its own rule
    nodes = canvas.get("nodes") if isinstance(canvas, dict) else None
    moves: dict[str, str] = {}
    for node in nodes if isinstance(nodes, list) else ():
        if isinstance(node, dict) and node.get("type") == "file" and isinstance(node.get("file"), str):
            path, hash_, rest = node["file"].lstrip("/").partition("#")
            landed = land(path) if path else path
            if landed != path:
                moves[node["file"]] = node["file"] = landed + hash_ + rest
    if not moves:
        return None

    def moved(match: re.Match[str]) -> str:
        value = json.loads(match.group(2))
        if value not in moves:
            return match.group(0)
        return f'"file"{match.group(1)}{json.dumps(moves[value], ensure_ascii=False)}'

    edited = _CANVAS_FILE.sub(moved, text)
    if json.loads(edited) == canvas:
        return (data[:3] if data.startswith(b"\xef\xbb\xbf") else b"") + edited.encode("utf-8")
    return json.dumps(canvas, indent="\t", ensure_ascii=False).encode("utf-8")


class LinkTargets:
    """The paths of a vault, indexed so a link resolves in time independent of the vault's size."""

    def __init__(self, paths: Iterable[str]) -> None:
        self.full: set[str] = set()
        self.suffixes: set[str] = set()
        #: folded path or suffix -> the vault path it names (the shortest, then the first in order: Obsidian's
        #: "shortest path when possible")
        self.spelled: dict[str, str] = {}
        for path in sorted(paths, key=lambda p: (p.count("/"), p)):
            folded = path.casefold()
            self.full.add(folded)
            self.spelled.setdefault(folded, path)
            parts = folded.split("/")
            for i in range(len(parts)):
                suffix = "/".join(parts[i:])
                self.suffixes.add(suffix)
                self.spelled.setdefault(suffix, path)

    def has(self, candidate: str, *, anywhere: bool) -> bool:
        folded = candidate.casefold()
        return folded in self.full or (anywhere and folded in self.suffixes)

    def find(self, candidate: str, *, anywhere: bool) -> str | None:
        """The vault path ``candidate`` names (as :meth:`has` decides), spelled as the vault spells it."""
        return self.spelled.get(candidate.casefold()) if self.has(candidate, anywhere=anywhere) else None


def _candidates(target: str) -> list[str]:
    return [target] if target.casefold().endswith(".md") else [target, target + ".md"]


def resolves(link: Link, note_path: str, targets: LinkTargets) -> bool:
    """Does ``link``, written in the note at ``note_path``, point at a path in ``targets``?"""
    return resolve(link, note_path, targets) is not None


def resolve(link: Link, note_path: str, targets: LinkTargets) -> str | None:
    """The vault path ``link`` (written in the note at ``note_path``) points at, as Obsidian resolves it, or
    None when it points at nothing in ``targets``: a wikilink by path or by name anywhere; a Markdown link
    relative to the note, then from the root, then by name; a canvas's file node by its exact path only."""
    target = link.target.lstrip("/")
    if link.exact:
        return targets.find(target, anywhere=False)
    if link.wiki:
        return next((p for c in _candidates(target) if (p := targets.find(c, anywhere=True))), None)
    folder = note_path.rsplit("/", 1)[0] if "/" in note_path else ""
    relative = _join("" if link.target.startswith("/") else folder, link.target)
    tries = [t for t in (relative, _join("", target)) if t]
    for t in tries:
        for c in _candidates(t):
            if found := targets.find(c, anywhere=False):
                return found
    return next((p for c in _candidates(target.rsplit("/", 1)[-1]) if (p := targets.find(c, anywhere=True))), None)
