"""The hit description of ``vault/query.py`` and ``vault/notefields.py`` as it was before issue 33's
describe-cost work: the reference the faster code is held to (tests/vault/test_describe_same.py).

Why a copy and not the old commit: the new code must give exactly these strings for every note and query, and
a property test needs both at hand.  Only the functions the work changed are copied (``plain``, ``_first_word``,
``_first_start``, ``make_snippet``, ``part_of``); the pure helpers it left alone are imported.
"""

from __future__ import annotations

import re

from notegate.vault.frontmatter import front_matter_end
from notegate.vault.notefields import _a_heading_holds, _tag_list, _title, properties
from notegate.vault.query import (
    _MARKUP,
    _WORD_START,
    SNIPPET_RADIUS,
    Term,
    _bold,
    _find_phrase,
    _hit_pattern,
    _lowered_pattern,
    _starts_unspaced,
)

FIRST_CHUNK = 4096


def plain(text: str) -> str:
    for pattern, repl, triggers in _MARKUP:
        if triggers is None or triggers.search(text) is not None:
            text = pattern.sub(repl, text)
    return re.sub(r"\s+", " ", text)  # the table's last pass before _one_space replaced it


def _first_start(pattern: re.Pattern[str], low: str, terms: list[str]) -> re.Match[str] | None:
    if len(terms) == 1:
        for match in pattern.finditer(low):
            if match.start() == 0 or not _WORD_START.match(low, match.start() - 1):
                return match
        return None
    best = -1
    for term in terms:
        bare = term.lower().rstrip("*")
        at = low.find(bare)
        while at >= 0 and (best < 0 or at < best):
            if (at == 0 or not _WORD_START.match(low, at - 1)) and pattern.match(low, at) is not None:
                best = at
                break
            at = low.find(bare, at + 1)
    return pattern.match(low, best) if best >= 0 else None


def _first_word(body: str, terms: list[str], hits: re.Pattern[str] | None = None) -> re.Match[str] | None:
    if not all(t[:1] and _WORD_START.match(t) and not _starts_unspaced(t) for t in terms):
        return (hits or _hit_pattern(terms)).search(body)
    pattern = _lowered_pattern(tuple(terms))
    if len(body) > FIRST_CHUNK and body.isascii():
        chunk = body[:FIRST_CHUNK].lower()
        match = _first_start(pattern, chunk, terms)
        if match is not None and match.end() < len(chunk):
            return match
    low = body.lower()
    if len(low) != len(body):
        return (hits or _hit_pattern(terms)).search(body)
    return _first_start(pattern, low, terms)


def make_snippet(body: str, terms: list[str], *, phrase: tuple[Term, ...] | None = None) -> str:
    skip = front_matter_end(body)
    if not terms:
        return plain(body[skip : skip + 2 * SNIPPET_RADIUS]).strip()
    pattern = _hit_pattern(terms)
    words = [w for term in phrase for w in term.marked()] if phrase else None
    first, offset = None, 0
    for offset in (skip, 0) if skip else (0,):
        text = body[offset:] if offset else body
        first = (_find_phrase(text, words) if words else None) or _first_word(text, terms, pattern)
        if first is not None:
            break
    if first is None:
        return plain(body[skip : skip + 2 * SNIPPET_RADIUS]).strip()
    start = max(offset, offset + first.start() - SNIPPET_RADIUS)
    end = min(len(body), offset + first.end() + SNIPPET_RADIUS)
    window = pattern.sub(_bold, plain(body[start:end]))
    return ("…" if start > offset else "") + window.strip() + ("…" if end < len(body) else "")


def part_of(path: str, text: str, hits: re.Pattern[str] | None) -> str:
    if hits is None:
        return "body"
    name, heading = _title(path, text)
    if hits.search(f"{name} {heading}" if heading else name) is not None:
        return "title"
    end = front_matter_end(text)
    keys = text[:end].lower() if end and hits.search(text, 0, end) is not None else ""
    props = properties(text, end) if "alias" in keys else {}
    aliases = "\n".join(props.get("aliases", ()))
    if aliases and hits.search(aliases) is not None:
        return "alias"
    body = text[end:]
    if "#" in body and _a_heading_holds(body, hits):
        return "heading"
    if not props and "tag" in keys:
        props = properties(text, end)
    if any(hits.search(tag) is not None for tag in _tag_list(props, body)):
        return "tag"
    return "body"
