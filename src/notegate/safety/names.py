"""Instruction-file names: folding look-alike spellings together, and finding a name in text (pure).

Why its own module: the floor holds an item that names a file coding agents load as instructions
(CLAUDE.md, AGENTS.md, ...) in any spelling a reader would take for it, and the policy compares names the
same way; the folding and the search are one idea, separate from the floor's character rules and verdict.

Theory of operation
-------------------
Each character folds to its name fold (:func:`fold_name`: NFKD, UTS #39 prototype, case folding, prototype
again; invisible characters, controls and combining diacritics fold to nothing). Text names an instruction
file when a run of its characters folds to exactly the fold of the name. NFKD per character subsumes NFKC,
and folding per character avoids normalising whole notes. The search stays in C: each name is anchored on its
rarest folded character (the ``.`` of ``.md``), the anchor expression checks in a lookahead what follows and
names the group that matched, and an anchored match over the reversed text checks what precedes; Python runs
only at real candidates such as ``.md`` links.

Decisions
---------
* No word boundaries: ``notCLAUDE.mdx`` and ``see CLAUDE.md's rules`` match. Boundaries are themselves
  spoofable (a look-alike or mark next to the name defeats them), and a false hold costs the owner a glance
  while a miss puts an instruction-file name in front of an agent.
* Look-alikes: digits 0 and 1 fold to o and l, capital I and lowercase i fold to l (case-insensitive and
  I/l-confusable at once), m folds to rn, dotless i to i. Accented Latin letters fold to their base letter.

Invariants
----------
* Pure: the standard library's ``re``, ``unicodedata``, ``dataclasses``, ``functools``, ``collections.abc``
  and the tables only.
* :func:`name_hits` finds a name exactly when some run of characters has ``"".join(map(fold_name, run)) ==
  fold_name(name)`` (tested against that brute-force definition with hypothesis).
* Only caller errors raise: a non-``str`` name, or a name whose fold is empty or not ASCII (a policy mistake
  that :func:`validate_instruction_files` reports at start-up).
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

from notegate.safety.floor_chars import CLASS_RANGES, chars_class_body
from notegate.safety.unicode_tables import ASCII_CONFUSABLES, CONFUSABLE_PROTOTYPES

__all__ = [
    "DEFAULT_INSTRUCTION_FILES",
    "fold_name",
    "name_hits",
    "normalise_names",
    "validate_instruction_files",
]

DEFAULT_INSTRUCTION_FILES: tuple[str, ...] = (
    "CLAUDE.md",
    "CLAUDE.local.md",
    "AGENTS.md",
    "AGENT.md",
    "GEMINI.md",
    ".cursorrules",
    ".cursor/rules",
    ".windsurfrules",
    ".clinerules",
    "copilot-instructions.md",
    "AGENTS.override.md",
    "CONVENTIONS.md",
    "QWEN.md",
    "WARP.md",
    "CRUSH.md",
    ".goosehints",
    ".roorules",
    ".junie/guidelines.md",
    ".kiro/steering",
    ".github/instructions",
)
"""Files coding agents load as instructions. The policy file passes its own list; this is the default."""


_ASCII_FOLD = {ch: proto for proto, chars in ASCII_CONFUSABLES for ch in chars}


def _canonical(prototype: str) -> str:
    """A prototype as it appears in a skeleton: lower case, ASCII look-alikes merged."""
    return "".join(_ASCII_FOLD.get(c, c) for c in prototype.lower())


@functools.cache
def _fold_table() -> dict[int, str | None]:
    """``str.translate`` table: confusable -> canonical prototype; invisible, control, diacritic -> deleted."""
    table: dict[int, str | None] = {}
    for key in ("control", "format", "default-ignorable", "combining-diacritic", "combining-mark"):
        for lo, hi in CLASS_RANGES[key]:
            table.update(dict.fromkeys(range(lo, hi + 1)))
    for proto, chars in CONFUSABLE_PROTOTYPES:
        for ch in chars:
            table[ord(ch)] = _canonical(proto)
    for ch in "ABCDEFGHIJKLMNOPQRSTUVWXYZ":
        table[ord(ch)] = _canonical(ch)
    for ch, proto in _ASCII_FOLD.items():
        table[ord(ch)] = proto
    return table


def _fold_decomposed(text: str) -> str:
    table = _fold_table()
    return text.translate(table).casefold().translate(table)


def fold_name(text: str) -> str:
    """Fold ``text`` so that look-alike spellings of a name compare equal (UTS #39 skeleton, adapted).

    NFKD (fullwidth, mathematical, circled letters become plain; accents split off), then per character:
    confusable prototype, full case folding, prototype again; invisible characters, controls and combining
    diacritics are dropped; I/i/1/| fold to l, 0 to o, m to rn. Examples: ``fold_name("СLАUDЕ.md")`` (Cyrillic
    С, А, Е) and ``fold_name("ＣＬＡＵＤＥ.md")`` are both ``"claude.rnd"``.
    """
    return _fold_decomposed(unicodedata.normalize("NFKD", text))


def _fold_char(ch: str) -> str:
    """The skeleton of one character. The name search folds text character by character with this."""
    return _fold_decomposed(unicodedata.normalize("NFKD", ch))


_SEPARATOR = "\ue000"
"""A starter (so NFKD never reorders marks across it) that NFKD, case folding and the fold table leave alone."""


def _fold_each(chars: list[str]) -> list[str]:
    """``[_fold_char(c) for c in chars]`` in one pass over the joined text (none of them may be the separator).

    Each step is per character (NFKD only decomposes and reorders marks between starters, case folding and
    the table map one character at a time) and none produces the separator, so splitting on it gives each
    character's fold; tens of thousands of folds cost one call instead of tens of thousands.
    """
    return _fold_decomposed(unicodedata.normalize("NFKD", _SEPARATOR.join(chars))).split(_SEPARATOR)


_HANGUL_FIRST, _HANGUL_LAST = 0xAC00, 0xD7A3
"""Hangul syllables (UAX #15 / Unicode 3.12: each is L V [T] conjoining jamo under NFKD)."""


@functools.cache
def _fold_inverse() -> tuple[dict[str, frozenset[str]], frozenset[str]]:
    """Every ASCII fold string -> the characters folding to it; and the characters folding to nothing.

    A character can fold to something other than itself only if it is ASCII, in the fold table, changes
    under case folding, or has a decomposition. Above U+1FFFF no character does either in a way that
    yields ASCII (tested), and 256-character chunks that neither case folding nor NFKD changes are skipped
    wholesale, so this takes a few tens of milliseconds, once.
    """
    table = _fold_table()
    candidates = {chr(c) for c in range(0x20, 0x7F)} | {chr(k) for k, v in table.items() if v is not None}
    # Every Hangul syllable decomposes to a leading jamo first; while no leading jamo is in the table, that
    # jamo survives the fold unchanged (not ASCII), so no syllable can fold to ASCII and the block's 11,172
    # syllables (a third of all candidates, and of the time) are left out.
    skip_hangul = all(cp not in table and chr(cp).casefold() == chr(cp) for cp in range(0x1100, 0x1113))
    for base in range(0, 0x20000, 256):
        chunk = "".join(map(chr, range(base, base + 256)))
        if chunk.casefold() != chunk or not unicodedata.is_normalized("NFKD", chunk):
            candidates.update(chunk)
    if skip_hangul:
        candidates.difference_update(map(chr, range(_HANGUL_FIRST, _HANGUL_LAST + 1)))
    inverse: dict[str, set[str]] = {}
    ordered = sorted(candidates - {_SEPARATOR})
    for ch, folded in (*zip(ordered, _fold_each(ordered), strict=True), (_SEPARATOR, _fold_char(_SEPARATOR))):
        if folded and folded.isascii():
            inverse.setdefault(folded, set()).add(ch)
    deleted = frozenset(chr(k) for k, v in table.items() if v is None)
    return {k: frozenset(v) for k, v in inverse.items()}, deleted


_ANCHOR_PREFERENCE = "./-_9876543210qzjxkvbpygfwucdhsrntae"
"""Rarest first: a name is anchored on its character that ordinary prose contains least often."""


def _anchor_index(skel: str) -> int:
    def rank(i: int) -> tuple[int, int]:
        found = _ANCHOR_PREFERENCE.find(skel[i])
        return (found if found >= 0 else len(_ANCHOR_PREFERENCE), i)

    return min(range(len(skel)), key=rank)


class _SkeletonPattern:
    """Regex sources matching runs of text characters whose folds concatenate to ``skel``.

    A character folds to a token of one or more skeleton characters ("m" -> "rn", "ﬁ" -> "fl"), so the
    pattern alternates over the tokens that fit at each index, with characters that fold to nothing
    allowed in between. To keep patterns small, ``skel`` is cut wherever no token can straddle, and only
    the pieces between cuts are expanded into alternatives.
    """

    def __init__(self, skel: str, classes: dict[str, str], gap: str) -> None:
        self.skel, self.classes, self.gap = skel, classes, gap
        self.starts: dict[int, list[str]] = {}
        self.ends: dict[int, list[str]] = {}
        straddled: set[int] = set()
        for t in classes:
            j = skel.find(t)
            while j >= 0:
                self.starts.setdefault(j, []).append(t)
                self.ends.setdefault(j + len(t), []).append(t)
                straddled.update(range(j + 1, j + len(t)))
                j = skel.find(t, j + 1)
        self.cuts = [c for c in range(len(skel) + 1) if c not in straddled]

    def _pieces(self) -> list[tuple[int, int]]:
        return list(zip(self.cuts, self.cuts[1:], strict=False))

    def forward(self) -> str:
        """Matches ``skel`` left to right."""
        return self.gap.join(self._piece_forward(a, b) for a, b in self._pieces())

    def backward(self) -> str:
        """Matches ``skel`` right to left, for use on the reversed text."""
        return self.gap.join(self._piece_backward(a, b) for a, b in reversed(self._pieces()))

    def _piece_forward(self, a: int, b: int) -> str:
        @functools.cache
        def at(i: int) -> str:
            alts = [
                self.classes[t] + (self.gap + at(i + len(t)) if i + len(t) < b else "")
                for t in self.starts.get(i, ())
                if i + len(t) <= b
            ]
            return alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"

        return at(a)

    def _piece_backward(self, a: int, b: int) -> str:
        @functools.cache
        def at(i: int) -> str:
            alts = [
                self.classes[t] + (self.gap + at(i - len(t)) if i - len(t) > a else "")
                for t in self.ends.get(i, ())
                if i - len(t) >= a
            ]
            return alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"

        return at(b)


@dataclass(frozen=True)
class _AnchorGroup:
    """Names sharing an anchor token and the same text after it; one regex group of the anchor search."""

    token: str
    after: str  # skeleton that must follow the anchor character
    forward: re.Pattern[str]  # re-checks ``after`` when another group matched first at the same place
    backward_any: re.Pattern[str] | None  # any of the names' prefixes (reversed); None if one is empty
    names: tuple[tuple[int, re.Pattern[str] | None], ...]  # (name index, its reversed-prefix pattern)
    also: tuple[int, ...] = ()  # later groups that can match at the same place (same token, prefix-related)


@dataclass(frozen=True)
class _NameMatcher:
    prefilter: re.Pattern[str]  # over the text itself: no match means no hit
    table: dict[int, str]  # str.translate table: each character -> its fold class's stand-in
    anchor: re.Pattern[str]  # this and the groups' patterns are over the translated text
    groups: tuple[_AnchorGroup, ...]
    #: ``prefilter`` with only its ASCII anchor characters, for ASCII text (None: no ASCII anchor, no hit there).
    #: Why: the full class of anchors (``.`` and its look-alikes) gives ``re`` no literal to skip ahead with, so
    #: it was tried at every character; ``.`` alone is a literal found in C.  An ASCII text can only hold the
    #: ASCII anchors, so both patterns match at the same places there.
    prefilter_ascii: re.Pattern[str] | None = None


_STAND_IN_BASE = 0xE000
"""Stand-ins are taken from the Private Use Area, skipping any code point that is itself in a fold class."""


def _stand_ins(inverse: dict[str, frozenset[str]], deleted: frozenset[str]) -> tuple[dict[str, str], str, str]:
    """One stand-in character per fold token, one for the characters folding to nothing, and a neutral one."""
    members = deleted.union(*inverse.values())
    free = (chr(cp) for cp in range(_STAND_IN_BASE, 0xF900) if chr(cp) not in members)
    tokens = {t: next(free) for t in sorted(inverse, key=lambda t: (-len(t), t))}
    return tokens, next(free), next(free)


@functools.lru_cache(maxsize=16)
def _name_matcher(names: tuple[str, ...]) -> _NameMatcher:
    """Compile the search for ``names`` (cached per distinct list).

    Each name is anchored on one index of its skeleton (the rarest character, usually the ``.``). The
    anchor regex finds a character folding to a token that covers that index and, in a lookahead, the
    rest of the name; its named group says which (token, rest) matched. The part before the anchor is then
    checked by an anchored match over the reversed text, so the whole search stays in C except at real
    candidates such as ``.md`` links.

    The patterns never look at a character except through its fold class (the characters folding to one
    token, or to nothing), so they are compiled over an alphabet of one stand-in character per class and
    run on the text translated to it, one character for one (positions are unchanged; characters in no
    class, stand-ins included, become a neutral character no class holds). Written over the classes
    themselves the same patterns took seconds of ``re`` parsing; the result is the same (tested against a
    copy of that version). A prefilter over the untranslated text skips the translation when no anchor
    can match.
    """
    inverse, deleted = _fold_inverse()
    stand_in, nothing, neutral = _stand_ins(inverse, deleted)
    table = {ord(ch): stand_in[t] for t, chars in inverse.items() for ch in chars}
    table.update(dict.fromkeys(map(ord, deleted), nothing))
    table.update(dict.fromkeys((ord(s) for s in (*stand_in.values(), nothing)), neutral))
    gap = f"{re.escape(nothing)}*"
    classes = {t: re.escape(s) for t, s in stand_in.items()}
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
    anchors = {t for t, _ in grouped}
    anchor_chars = chars_class_body(stand_in[t] for t in anchors)
    anchor_real = chars_class_body(ch for t in anchors for ch in inverse[t])
    # Cheap first filter: most anchor characters (sentence full stops) are not followed by a name's next
    # character at all, and fail here before any alternative is tried.
    afters = [after for _, after in grouped]
    precheck = prefilter = ""
    ascii_anchors = [ch for t in anchors for ch in inverse[t] if ch.isascii()]
    ascii_prefilter = f"[{chars_class_body(ascii_anchors)}]" if ascii_anchors else None
    if all(afters):
        following = {t for after in afters for t in inverse if after.startswith(t)}
        precheck = f"(?={gap}[{chars_class_body(stand_in[t] for t in following)}])"
        real = chars_class_body(ch for t in following for ch in inverse[t])
        prefilter = f"(?=[{chars_class_body(deleted)}]*[{real}])"
        # The same look-ahead for ASCII text: only the classes' ASCII members can match there, and testing
        # a space against the whole class of deleted characters is most of the filter's cost.
        ascii_real = [ch for t in following for ch in inverse[t] if ch.isascii()]
        ascii_deleted = [ch for ch in deleted if ch.isascii()]
        skip = f"[{chars_class_body(ascii_deleted)}]*" if ascii_deleted else ""
        if ascii_prefilter is not None:
            ascii_prefilter = f"{ascii_prefilter}(?={skip}[{chars_class_body(ascii_real)}])" if ascii_real else None
    return _NameMatcher(
        re.compile(f"[{anchor_real}]{prefilter}"),
        table,
        re.compile(f"[{anchor_chars}]{precheck}(?:{'|'.join(alternatives)})"),
        tuple(groups),
        re.compile(ascii_prefilter) if ascii_prefilter is not None else None,
    )


def name_hits(text: str, names: tuple[str, ...]) -> list[tuple[int, int]]:
    """``(start, name_index)`` for every run of ``text`` whose characters fold to a name's skeleton."""
    matcher = _name_matcher(names)
    prefilter = matcher.prefilter_ascii if text.isascii() else matcher.prefilter
    if prefilter is None or prefilter.search(text) is None:
        return []
    text = text.translate(matcher.table)
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


def normalise_names(instruction_files: Iterable[str]) -> tuple[str, ...]:
    """The names as a de-duplicated tuple; raises ``TypeError`` for a str or a non-str name."""
    if isinstance(instruction_files, str):
        raise TypeError("instruction_files must be an iterable of names, not a single str")
    names = tuple(dict.fromkeys(instruction_files))
    for name in names:
        if not isinstance(name, str):
            raise TypeError(f"instruction-file names must be str, got {type(name).__name__}")
    return names


def validate_instruction_files(instruction_files: Iterable[str]) -> tuple[str, ...]:
    """Check a policy's instruction-file list once at start-up; raises ``ValueError``/``TypeError`` if unusable.

    Returns the de-duplicated names. A name is unusable when its fold is empty or not ASCII.  Checked
    without compiling the matcher (regex compilation every CLI start would pay for nothing);
    :func:`name_hits` compiles it on first use, and the check here is the same one the compiler makes.
    """
    names = normalise_names(instruction_files)
    for name in names:
        if not _usable_skeleton(fold_name(name)):
            raise ValueError(f"instruction-file name {name!a} does not fold to a usable ASCII skeleton")
    return names


def _usable_skeleton(skel: str) -> bool:
    """``skel and all(c in _fold_inverse()[0] for c in skel)``, mostly without building the inverse.

    The inverse costs about 0.1 s of CPU and every process that loads a policy (each hook, push and CLI
    start) used to pay it here. A printable ASCII character that folds to itself is in the inverse by its
    construction (every such character is a candidate, and a non-empty ASCII fold is kept), so skeletons made
    only of those (every default name's) are usable at once; anything else is looked up in the real inverse.
    """
    if not skel:
        return False
    if all(" " <= c <= "~" and _fold_char(c) == c for c in skel):
        return True
    inverse, _deleted = _fold_inverse()
    return all(c in inverse for c in skel)


def warm(names: tuple[str, ...]) -> None:
    """Compile the matcher for ``names`` now (a server does it at start, so no first write pays for it)."""
    if names:
        _name_matcher(names)
