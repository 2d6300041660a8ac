"""The instruction-file name search as it was before the stand-in alphabet (kept verbatim, tests only).

names.py now compiles its patterns over one stand-in character per fold class and translates the text
first, and folds its candidate characters in one pass; this copy compiles the same patterns over the real
character classes (seconds of ``re`` parsing) from the inverse fold computed one character at a time.
test_names_matcher.py checks that both give the same hits, so the rewrite changed speed and nothing else.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass

from notegate.safety.floor_chars import chars_class_body
from notegate.safety.names import _anchor_index, _AnchorGroup, _fold_char, _fold_table, _SkeletonPattern, fold_name


@functools.cache
def _fold_inverse() -> tuple[dict[str, frozenset[str]], frozenset[str]]:
    """The inverse of the fold as it was computed before, one character at a time."""
    table = _fold_table()
    candidates = {chr(c) for c in range(0x20, 0x7F)} | {chr(k) for k, v in table.items() if v is not None}
    for base in range(0, 0x20000, 256):
        chunk = "".join(map(chr, range(base, base + 256)))
        if chunk.casefold() != chunk or not unicodedata.is_normalized("NFKD", chunk):
            candidates.update(chunk)
    inverse: dict[str, set[str]] = {}
    for ch in candidates:
        folded = _fold_char(ch)
        if folded and folded.isascii():
            inverse.setdefault(folded, set()).add(ch)
    deleted = frozenset(chr(k) for k, v in table.items() if v is None)
    return {k: frozenset(v) for k, v in inverse.items()}, deleted


@dataclass(frozen=True)
class _NameMatcher:
    anchor: re.Pattern[str]
    groups: tuple[_AnchorGroup, ...]


@functools.lru_cache(maxsize=16)
def _name_matcher(names: tuple[str, ...]) -> _NameMatcher:
    """Compile the search for ``names`` (cached per distinct list).

    Each name is anchored on one index of its skeleton (the rarest character, usually the ``.``). The
    anchor regex finds a character folding to a token that covers that index and, in a lookahead, the
    rest of the name; its named group says which (token, rest) matched. The part before the anchor is then
    checked by an anchored match over the reversed text, so the whole search stays in C except at real
    candidates such as ``.md`` links.
    """
    inverse, deleted = _fold_inverse()
    gap = f"[{chars_class_body(deleted)}]*"
    classes = {t: f"[{chars_class_body(inverse[t])}]" for t in sorted(inverse, key=lambda t: (-len(t), t))}
    grouped: dict[tuple[str, str], list[tuple[int, str | None]]] = {}
    for index, name in enumerate(names):
        skel = fold_name(name)
        if not skel or not all(c in inverse for c in skel):
            raise ValueError(f"instruction-file name {name!a} does not fold to a usable ASCII skeleton")
        k = _anchor_index(skel)
        for t in classes:
            for j in range(max(0, k - len(t) + 1), k + 1):
                if skel.startswith(t, j):
                    before = gap + _SkeletonPattern(skel[:j], classes, gap).backward() if j else None
                    grouped.setdefault((t, skel[j + len(t) :]), []).append((index, before))
    groups: list[_AnchorGroup] = []
    alternatives: list[str] = []
    for n, ((token, after), members) in enumerate(grouped.items()):
        rest = _SkeletonPattern(after, classes, gap).forward() if after else ""
        befores = [b for _, b in members]
        backward_any = None if None in befores else re.compile("|".join(f"(?:{b})" for b in befores))
        compiled = tuple((i, re.compile(b) if b is not None else None) for i, b in members)
        also = tuple(
            m
            for m, (tok2, after2) in enumerate(grouped)
            if m > n and tok2 == token and (after.startswith(after2) or after2.startswith(after))
        )
        groups.append(_AnchorGroup(token, after, re.compile(gap + rest), backward_any, compiled, also))
        alternatives.append(f"(?<={classes[token]})(?={gap}(?P<g{n}>{rest}))")
    anchor_chars = "".join(chars_class_body(inverse[t]) for t, _ in grouped)
    # Cheap first filter: most anchor characters (sentence full stops) are not followed by a name's next
    # character at all, and fail here before any alternative is tried.
    afters = [after for _, after in grouped]
    precheck = ""
    if all(afters):
        following = {ch for after in afters for t in inverse if after.startswith(t) for ch in inverse[t]}
        precheck = f"(?={gap}[{chars_class_body(following)}])"
    return _NameMatcher(re.compile(f"[{anchor_chars}]{precheck}(?:{'|'.join(alternatives)})"), tuple(groups))


def name_hits(text: str, names: tuple[str, ...]) -> list[tuple[int, int]]:
    """``(start, name_index)`` for every run of ``text`` whose characters fold to a name's skeleton."""
    matcher = _name_matcher(names)
    size = len(text)
    reverse: str | None = None
    hits: set[tuple[int, int]] = set()
    for m in matcher.anchor.finditer(text):
        p = m.start()
        first = int(m.lastgroup[1:]) if m.lastgroup else 0
        group = matcher.groups[first]
        candidates = [group] + [g for g in (matcher.groups[i] for i in group.also) if g.forward.match(text, p + 1)]
        for g in candidates:
            if g.backward_any is not None:
                if reverse is None:
                    reverse = text[::-1]
                if not g.backward_any.match(reverse, size - p):
                    continue
            for index, backward in g.names:
                if backward is None:
                    hits.add((p, index))
                    continue
                assert reverse is not None
                back = backward.match(reverse, size - p)
                if back is not None:
                    hits.add((size - back.end(), index))
    return sorted(hits)
