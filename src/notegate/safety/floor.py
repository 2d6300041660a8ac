"""The floor: checks in code that hold an inbox item whatever any model or reviewer says.

Theory of operation
-------------------
An inbox item is held when its text or its path contains a character that can hide or reorder what a reader
sees (invisible, control, bidi, tag, stray variation selector, private-use, unassigned, line/paragraph
separator, ANSI escape, bare CR, blank-rendering space, a flood of stacked marks), or when either names a
file that coding agents load as instructions (CLAUDE.md, AGENTS.md, ...). The floor only ever says
"hold"; it never edits text and never says "promote".

Three scans over the original text, so every position is an exact index into what the caller sent, then
one over the rendered views:

1. **Characters.** One regular expression, built at import from ``unicode_tables.CHARACTER_CLASSES``,
   finds runs of held BMP characters in C; its lookahead already lets the few legitimate contexts
   through (ZWJ inside an emoji sequence or after a virama, ZWNJ after a virama or between joining
   letters, VS15/VS16 directly after an emoji-variation base or inside a keycap), so Python only touches
   real findings. A second expression finds supplementary-plane characters outside the allowed ranges
   (listed emoji and CJK first, because ``re`` tries such ranges in order); the one allowance there, the
   tag run of an RGI subdivision flag, is cut off at the match. Only the first ``MAX_REASONS`` findings
   get Python attention; the rest are counted with ``findall``, so a flood costs C time (about 0.3 s for
   the worst megabyte found, against 50-70 MB/s on ordinary notes). "After NFKC normalisation" holds because no
   character outside the held set NFKC-decomposes into one inside it (tested exhaustively), so scanning
   the original finds everything scanning the NFKC form would, with true positions. Emoji context is
   judged before normalisation on purpose: NFKC rewrites some emoji bases (U+2122 TRADE MARK SIGN -> "TM").
2. **Names.** Each character folds to its skeleton (:func:`skeleton`: NFKD, UTS #39 prototype, case
   folding, prototype again; invisible characters, controls and combining diacritics fold to nothing). An
   item names an instruction file when a run of its characters folds to exactly the skeleton of the name.
   NFKD per character subsumes NFKC, and folding per character avoids normalising whole notes. The search
   stays in C: each name is anchored on its rarest skeleton character (the ``.`` of ``.md``), the anchor
   expression checks in a lookahead what follows and names the group that matched, and an anchored match
   over the reversed text checks what precedes; Python runs only at real candidates such as ``.md`` links.
3. **Floods.** One bounded regex finds runs of more than ``MAX_STACKED_MARKS`` combining marks.
4. **Rendered views.** When the original names no file, the name search runs again on what a Markdown/HTML
   reader and a shell make of the text (:mod:`notegate.safety.rendered`: tags, comments, entities, escapes,
   emphasis, links, quotes, backslashes, one line break). That reason has no position.

Decisions
---------
* No word boundaries: ``notCLAUDE.mdx`` and ``see CLAUDE.md's rules`` hold. Boundaries are themselves
  spoofable (a look-alike or mark next to the name defeats them), and a false hold costs the owner a glance
  while a miss puts an instruction-file name in front of an agent.
* Look-alikes: digits 0 and 1 fold to o and l, capital I and lowercase i fold to l (case-insensitive and
  I/l-confusable at once), m folds to rn, dotless i to i. Accented Latin letters fold to their base letter.
* All Bidi_Control characters hold, LRM and RLM included: Markdown notes do not need them, the bidi algorithm
  already lays out Arabic and Hebrew text, and they are the Trojan Source toolkit.
* Variation selectors hold except in the sequences real text uses: VS15/VS16 directly after an
  emoji-variation base; one VS17-VS256 directly after a unified ideograph (UTS #37 ideographic variation
  sequences, as CJK personal and place names need); VS1-VS3 directly after a base of
  StandardizedVariants.txt (CJK compatibility section, derived; mathematical section). At most one hidden
  selector per visible base. Mongolian, Myanmar, Phags-pa and Manichaean sequences still hold.
* Terminal rewriting: ESC and C1 introducers hold (ansi-escape), other C0/C1 controls and DEL hold, and CR
  holds unless LF follows (a bare CR returns the cursor, so the rest of the line overwrites what came before).
* Blank-rendering characters that are not Default_Ignorable hold (blank-char): General_Category Zs except
  SPACE, NO-BREAK SPACE, NARROW NO-BREAK SPACE and IDEOGRAPHIC SPACE, plus BRAILLE PATTERN BLANK and two
  other blank glyphs (see ``unicode_tables._BLANK``).
* More than ``MAX_STACKED_MARKS`` (8) combining marks in a row hold (combining-flood); the justification from
  the data is at that constant.
* Characters unassigned in the interpreter's Unicode (14.0.0 for Python 3.11) hold, so emoji newer than
  that (Unicode 15+) hold until the runtime is upgraded: fail closed.
* Text that conventionally uses invisible characters still holds when it does: ZWSP as a Thai/Khmer word
  break, Mongolian free variation selectors, Arabic/Hebrew LRM/RLM. The owner can keep such notes outside
  the inbox; the floor does not guess.
* TAB, LF and CRLF pass (CRLF files are ordinary). A byte-order mark holds
  even at the very start: the floor judges text, not encodings, and a writer that wants to accept BOM-led
  files strips the BOM before it asks.
* ZWNJ between letters of joining scripts is allowed by script block, a superset of the exact
  Joining_Type test of UAX #31 rule A1: at most one hidden bit per letter pair, visible text around it.

Invariants
----------
* Pure: imports only the standard library's ``re``, ``unicodedata``, ``dataclasses``, ``functools``,
  ``bisect``, ``heapq``, ``typing``, ``collections.abc`` and the tables; a test checks this with ``ast``.
* Total: every ``str`` (lone surrogates included) gets a verdict. Only caller errors raise: a non-``str``
  argument, or an instruction-file name whose skeleton is empty or not ASCII (a policy mistake that
  :func:`validate_instruction_files` reports at start-up).
* Deterministic: the verdict depends only on the arguments.
* Bounded and inert output: at most ``MAX_REASONS`` reasons, every rule that fired is among them, the rest
  are counted in ``omitted``; reason text is ASCII and never echoes the item's characters.
* Exceptions to "this class holds" are only the contextual allowances listed in scan 1 above.
* Scan 2 finds a name exactly when some run of characters has ``"".join(map(skeleton, run)) ==
  skeleton(name)`` (tested against that brute-force definition with hypothesis).
"""

from __future__ import annotations

import bisect
import functools
import heapq
import re
import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Literal, NamedTuple

from notegate.safety.rendered import rendered_views
from notegate.safety.unicode_tables import (
    ASCII_CONFUSABLES,
    CHARACTER_CLASSES,
    CONFUSABLE_PROTOTYPES,
    CONTROL_NAMES,
    MAX_STACKED_MARKS,
    RGI_SUBDIVISION_FLAGS,
)

__all__ = [
    "DEFAULT_INSTRUCTION_FILES",
    "MAX_REASONS",
    "RULES",
    "FloorVerdict",
    "HoldReason",
    "check_item",
    "check_text",
    "mentions_instruction_file",
    "skeleton",
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

MAX_REASONS = 20
"""At most this many reasons are listed per verdict; the rest are counted in ``FloorVerdict.omitted``."""

RULES: tuple[str, ...] = (
    "ansi-escape",
    "line-separator",
    "control-char",
    "bidi-control",
    "tag-char",
    "variation-selector",
    "private-use",
    "blank-char",
    "invisible-char",
    "unassigned",
    "instruction-file",
    "instruction-file-path",
    "combining-flood",
)
"""Every rule name a reason can carry."""

Where = Literal["text", "path"]


@dataclass(frozen=True)
class HoldReason:
    """Why an item is held: the rule, what was found, and where.

    ``position`` is a code-point index into the original text (or path, when ``where == "path"``);
    ``line`` and ``column`` are 1-based and given for text positions.
    """

    rule: str
    detail: str
    codepoint: str | None
    position: int | None
    line: int | None = None
    column: int | None = None
    where: Where = "text"

    def as_text(self) -> str:
        """One ASCII line, e.g. ``invisible-char: U+200B ZERO WIDTH SPACE at 12 (line 1, col 13)``."""
        parts = [f"{self.rule}:"]
        if self.codepoint is not None:
            parts.append(self.codepoint)
        parts.append(self.detail)
        if self.position is not None:
            if self.where == "path":
                parts.append(f"in path at {self.position}")
            elif self.line is not None:
                parts.append(f"at {self.position} (line {self.line}, col {self.column})")
            else:
                parts.append(f"at {self.position}")
        return " ".join(parts)


@dataclass(frozen=True)
class FloorVerdict:
    """The floor's answer for one item: held when there is any reason."""

    reasons: tuple[HoldReason, ...]
    omitted: int = 0

    @property
    def held(self) -> bool:
        """True when the item must stay in the inbox."""
        return bool(self.reasons)

    @property
    def verdict(self) -> Literal["pass", "hold"]:
        """The word the CLI and the review queue print."""
        return "hold" if self.reasons else "pass"

    def to_json(self) -> dict[str, object]:
        """``{"verdict": ..., "reasons": [...]}``; a last line says how many reasons were not listed."""
        lines = [r.as_text() for r in self.reasons]
        if self.omitted:
            lines.append(f"... and {self.omitted} more reasons not listed")
        return {"verdict": self.verdict, "reasons": lines}


# --------------------------------------------------------------------------------------------------------
# Tables -> ranges, rule lookup, regular expressions (built once at import)
# --------------------------------------------------------------------------------------------------------

Ranges = tuple[tuple[int, int], ...]


def _parse_ranges(spec: str) -> Ranges:
    """``"0041-005A 00AD"`` -> ``((0x41, 0x5A), (0xAD, 0xAD))``."""
    out = []
    for token in spec.split():
        first, _, last = token.partition("-")
        out.append((int(first, 16), int(last or first, 16)))
    return tuple(out)


_CLASS_SPECIAL = frozenset("\\]-[^&~|")


def _escape(cp: int) -> str:
    """A code point as written inside a regex class: the character itself unless it is class syntax.

    Literal characters keep the patterns short and fast to parse (escapes cost the ``re`` parser eight
    steps each, and the name patterns hold thousands of characters).
    """
    ch = chr(cp)
    return f"\\{ch}" if ch in _CLASS_SPECIAL else ch


def _class_body(ranges: Iterable[tuple[int, int]]) -> str:
    """Body of a regex character class (without brackets) for inclusive code-point ranges."""
    return "".join(_escape(lo) if lo == hi else f"{_escape(lo)}-{_escape(hi)}" for lo, hi in ranges)


def _chars_class_body(chars: Iterable[str]) -> str:
    """Class body for a set of characters, consecutive code points merged into runs."""
    runs: list[list[int]] = []
    for cp in sorted(map(ord, chars)):
        if runs and cp == runs[-1][1] + 1:
            runs[-1][1] = cp
        else:
            runs.append([cp, cp])
    return _class_body((lo, hi) for lo, hi in runs)


def _clip(ranges: Ranges, lo: int, hi: int) -> Ranges:
    return tuple((max(a, lo), min(b, hi)) for a, b in ranges if a <= hi and b >= lo)


_CLASS: dict[str, Ranges] = {row.key: _parse_ranges(row.ranges) for row in CHARACTER_CLASSES}
_HOLD_ROWS: tuple[tuple[str, tuple[int, ...], tuple[int, ...]], ...] = tuple(
    (row.rule, tuple(a for a, _ in _CLASS[row.key]), tuple(b for _, b in _CLASS[row.key]))
    for row in CHARACTER_CLASSES
    if row.rule is not None
)


@functools.lru_cache(maxsize=4096)
def _rule_of(cp: int) -> str | None:
    """The rule of the first table row containing ``cp``, or None when no row holds it."""
    for rule, starts, ends in _HOLD_ROWS:
        i = bisect.bisect_right(starts, cp) - 1
        if i >= 0 and cp <= ends[i]:
            return rule
    return None


def _held_ranges() -> Ranges:
    """Union of all rows that hold, merged."""
    spans = sorted(span for row in CHARACTER_CLASSES if row.rule is not None for span in _CLASS[row.key])
    merged: list[list[int]] = []
    for lo, hi in spans:
        if merged and lo <= merged[-1][1] + 1:
            merged[-1][1] = max(merged[-1][1], hi)
        else:
            merged.append([lo, hi])
    return tuple((lo, hi) for lo, hi in merged)


_HELD = _held_ranges()

_ZWNJ, _ZWJ, _VS15, _VS16, _KEYCAP = "\\u200c", "\\u200d", "\\ufe0e", "\\ufe0f", "\\u20e3"
_IVS = "\\U000e0100-\\U000e01ef"  # VS17-VS256
_BLACK_FLAG = "\U0001f3f4"
_CANCEL_TAG = "\U000e007f"


def _allowed_context() -> str:
    """Alternatives of the negative lookahead: contexts where a held BMP character is legitimate.

    The lookahead runs just after the candidate character, so each alternative starts with a lookbehind
    that ends in that character; anything else can never match and the character is reported.
    """
    ep = f"[{_class_body(_CLASS['extended-pictographic'])}]"
    mod = f"[{_class_body(_CLASS['emoji-modifier'])}]"
    vs_base = f"[{_class_body(_CLASS['emoji-variation-base'])}]"
    keycap = f"[{_class_body(_CLASS['keycap-base'])}]"
    virama = f"[{_class_body(_CLASS['virama'])}]"
    joining = f"[{_class_body(_CLASS['joining-script'])}]"
    vs = f"[{_VS15}{_VS16}]"
    return "|".join(
        (
            # Emoji ZWJ sequence (UTS #51, UAX #29 GB11): pictograph [modifier] [VS16] ZWJ pictograph.
            f"(?:(?<={ep}{_ZWJ})|(?<={ep}{_VS16}{_ZWJ})|(?<={ep}{mod}{_ZWJ})|(?<={ep}{mod}{_VS16}{_ZWJ}))(?={ep})",
            # UAX #31 2.3 rule B: ZWJ after a virama (Indic half forms, Sinhala, Malayalam chillu).
            f"(?<={virama}{_ZWJ})",
            # Bengali/Assamese RA + ZWJ + VIRAMA (ya-phala after ra): ZWJ before the virama.
            f"(?<=[\\u09b0\\u09f0]{_ZWJ})(?=\\u09cd)",
            # UAX #31 2.3 rule A2: ZWNJ after a virama.
            f"(?<={virama}{_ZWNJ})",
            # UAX #31 2.3 rule A1 (approximated by script): ZWNJ between letters of a joining script.
            f"(?<={joining}{_ZWNJ})(?={joining})",
            # Emoji / text presentation selector directly after a base that has such a variant.
            f"(?<={vs_base}{vs})",
            # Keycap: [#*0-9] VS15/VS16 U+20E3; on these ASCII bases only inside a keycap.
            f"(?<={keycap}{vs})(?={_KEYCAP})",
            # CR directly before LF (CRLF line ends); a bare CR returns the cursor and rewrites the line.
            "(?<=\\r)(?=\\n)",
            # Standardized variation sequences (StandardizedVariants.txt): VS1-VS3 on their listed bases.
            *(f"(?<=[{_class_body(_CLASS[f'vs{k}-base'])}]\\ufe0{k - 1})" for k in (1, 2, 3)),
        )
    )


def _astral_allowed_class() -> str:
    """Supplementary-plane code points that never hold, most frequent blocks first.

    Python's ``re`` tests supplementary ranges of a class one after another, so listing emoji and CJK
    Extension blocks first lets the common characters leave the lookbehind after a few comparisons.
    """
    allowed, cursor = [], 0x10000
    for lo, hi in _clip(_HELD, 0x10000, 0x10FFFF):
        if lo > cursor:
            allowed.append((cursor, lo - 1))
        cursor = hi + 1
    if cursor <= 0x10FFFF:
        allowed.append((cursor, 0x10FFFF))

    def priority(span: tuple[int, int]) -> tuple[int, int]:
        lo, hi = span
        if hi >= 0x1F300 and lo <= 0x1F6FF:  # Miscellaneous Symbols and Pictographs .. Transport
            return (0, lo)
        if hi >= 0x1F000 and lo <= 0x1FAFF:  # other emoji blocks, regional indicators
            return (1, lo)
        if lo >= 0x20000:  # CJK Unified Ideographs Extension B onwards
            return (2, lo)
        return (3, lo)

    return _class_body(sorted(allowed, key=priority))


# One held character: a BMP one outside its allowed contexts, or a supplementary one outside the allowed
# ranges. Matched as runs, so a flood of held characters costs C time, not one Python step each.
_CONTEXTUAL_BMP = frozenset("\r\u200c\u200d\ufe00\ufe01\ufe02\ufe0e\ufe0f")  # held unless _allowed_context() says so
_ALWAYS_HELD_BMP = f"(?<![{_chars_class_body(_CONTEXTUAL_BMP)}])"  # the character just matched
_HELD_BMP = f"[{_class_body(_clip(_HELD, 0, 0xFFFF))}](?:{_ALWAYS_HELD_BMP}|(?!{_allowed_context()}))"
# An ideographic variation sequence (UTS #37): one of VS17-VS256 directly after a unified ideograph. One
# selector per base, so at most one hidden byte per visible ideograph.
_IVS_ALLOWED = f"(?<![{_class_body(_CLASS['unified-ideograph'])}][{_IVS}])"
_HELD_ASTRAL = f"[\\U00010000-\\U0010ffff](?<![{_astral_allowed_class()}]){_IVS_ALLOWED}"
_IVS_FIRST, _IVS_LAST = 0xE0100, 0xE01EF
# A flood: more than MAX_STACKED_MARKS combining marks in a row. Marks another row already holds (variation
# selectors, Khmer inherent vowels) are left out, so a held character is reported once, under its own rule.
_STACKABLE = [cp for lo, hi in _CLASS["combining-mark"] for cp in range(lo, hi + 1) if _rule_of(cp) is None]
_STACKABLE_BMP = f"[{_chars_class_body(chr(cp) for cp in _STACKABLE if cp <= 0xFFFF)}]"
_STACKABLE_ASTRAL = f"[{_chars_class_body(chr(cp) for cp in _STACKABLE if cp > 0xFFFF)}]"
# A BMP-only class compiles to a bitmap (one lookup per character) and lets ``re`` skip ahead to candidates;
# a class with supplementary ranges is a list of ranges tried in turn, so it is used only on text that has
# supplementary characters at all, and only after a cheap "is this supplementary" test.
_FLOOD_RE = re.compile(f"{_STACKABLE_BMP}{{{MAX_STACKED_MARKS + 1},}}")
_FLOOD_CANDIDATE_RE = re.compile(f"[{_STACKABLE_BMP[1:-1]}\\U00010000-\\U0010ffff]{{{MAX_STACKED_MARKS + 1},}}")
_FLOOD_ANY_RE = re.compile(
    f"(?:{_STACKABLE_BMP}|(?=[\\U00010000-\\U0010ffff]){_STACKABLE_ASTRAL}){{{MAX_STACKED_MARKS + 1},}}"
)
# Spelled X(?:X)* rather than (?:X)+ so that the pattern starts with a character class, which lets ``re``
# skip ahead in C to the next candidate character instead of attempting a match at every position.
_BMP_RUN_RE = re.compile(f"{_HELD_BMP}(?:{_HELD_BMP})*")
_ASTRAL_RUN_RE = re.compile(f"{_HELD_ASTRAL}(?:{_HELD_ASTRAL})*")
_TAG_FIRST, _TAG_LAST = _CLASS["tag"][0]
_TAG_RUN_LENGTH = 6  # five tag letters + CANCEL TAG: the length of every RGI subdivision flag's tag run
_ALLOWED_TAG_RUNS = frozenset(
    "".join(chr(0xE0000 + ord(c)) for c in flag) + _CANCEL_TAG for flag in RGI_SUBDIVISION_FLAGS
)
_RGI_FLAG_RE = re.compile(f"{_BLACK_FLAG}(?:{'|'.join(sorted(_ALLOWED_TAG_RUNS))})")


# --------------------------------------------------------------------------------------------------------
# Character scan
# --------------------------------------------------------------------------------------------------------


class _Finding(NamedTuple):
    """A light record of one finding; turned into a HoldReason only if it is listed."""

    order: int  # 0 text characters, 1 text names, 2 path characters, 3 path names
    position: int
    rule: str
    codepoint: int | None
    note: str


class _Scan(NamedTuple):
    """One stream's findings: the first few in order, the first of every other rule, and how many in all."""

    first: list[_Finding]
    first_of_rule: dict[str, _Finding]
    total: int


def _held_runs(text: str) -> Iterator[tuple[int, str]]:
    """``(start, run)`` for every run of held characters, in position order.

    The tag run of an RGI subdivision flag (directly after U+1F3F4) is cut off the front of its run: the
    flag's base is not held, so an allowed tag run always starts a supplementary run.
    """

    def astral() -> Iterator[tuple[int, str]]:
        for m in _ASTRAL_RUN_RE.finditer(text):
            start, run = m.start(), m.group()
            if _is_rgi_flag_tags(text, start):
                start, run = start + _TAG_RUN_LENGTH, run[_TAG_RUN_LENGTH:]
            if run:
                yield start, run

    bmp = ((m.start(), m.group()) for m in _BMP_RUN_RE.finditer(text))
    if text.isascii():
        yield from bmp
    else:
        yield from heapq.merge(bmp, astral(), key=lambda r: r[0])


def _scan_chars(text: str, order: int, limit: int) -> _Scan:
    """Held characters of ``text``: details for the first ``limit`` and the first of each rule, a count.

    Past the first ``limit``, nothing runs per finding in Python: the rest is counted with ``findall`` and
    each rule not yet seen is located with one search, so a megabyte of NULs costs C time only.
    """
    first: list[_Finding] = []
    first_of_rule: dict[str, _Finding] = {}
    total = 0
    for start, run in _held_runs(text):
        total += len(run)
        listed = run[: limit - len(first)]
        for offset, ch in enumerate(listed):
            finding = _Finding(order, start + offset, _rule_of(ord(ch)) or "unassigned", ord(ch), "")
            first.append(finding)
            first_of_rule.setdefault(finding.rule, finding)
        if len(first) >= limit:
            unlisted_from, unlisted, resume = start + len(listed), run[len(listed) :], start + len(run)
            break
    else:
        return _Scan(first, first_of_rule, total)
    bmp_rest = _BMP_RUN_RE.findall(text, resume)
    astral_rest = [] if text.isascii() else _ASTRAL_RUN_RE.findall(text, resume)
    flags = len(_RGI_FLAG_RE.findall(text, resume)) if astral_rest else 0
    total += sum(map(len, bmp_rest)) + sum(map(len, astral_rest)) - _TAG_RUN_LENGTH * flags
    unseen: dict[str, int] = {}
    for ch in set(unlisted).union("".join(bmp_rest), "".join(astral_rest)):
        rule = _rule_of(ord(ch)) or "unassigned"
        if rule in first_of_rule:
            continue
        position = _first_held(text, ch, unlisted_from)
        if position is not None and position < unseen.get(rule, len(text)):
            unseen[rule] = position
    for rule, position in unseen.items():
        first_of_rule[rule] = _Finding(order, position, rule, ord(text[position]), "")
    return _Scan(first, first_of_rule, total)


def _scan_floods(text: str, order: int, limit: int) -> _Scan:
    """Runs of more than ``MAX_STACKED_MARKS`` combining marks; each run is one finding, at its first extra mark.

    ``[marks]{9,}`` is linear: a shorter run fails within nine steps of each start, and a long run is
    consumed by one match.
    """
    first: list[_Finding] = []
    total = 0
    if text.isascii():
        return _Scan(first, {}, 0)
    if max(text) <= "\uffff":
        matches: Iterable[re.Match[str]] = _FLOOD_RE.finditer(text)
    else:  # candidates in C with one bitmap class, then the exact pattern only inside them
        matches = (m for c in _FLOOD_CANDIDATE_RE.finditer(text) for m in _FLOOD_ANY_RE.finditer(text, *c.span()))
    for m in matches:
        total += 1
        if len(first) < limit:
            at = m.start() + MAX_STACKED_MARKS
            limit_text = f"(at most {MAX_STACKED_MARKS})"
            note = f"is mark {MAX_STACKED_MARKS + 1} of {len(m.group())} stacked on one base {limit_text}"
            first.append(_Finding(order, at, "combining-flood", ord(text[at]), note))
    return _Scan(first, {"combining-flood": first[0]} if first else {}, total)


def _first_held(text: str, ch: str, start: int) -> int | None:
    """Where ``ch`` first occurs as a held character at or after ``start`` (None if only in allowed contexts)."""
    cp = ord(ch)
    if ch in _CONTEXTUAL_BMP or _IVS_FIRST <= cp <= _IVS_LAST:
        held = _HELD_BMP if ch in _CONTEXTUAL_BMP else _HELD_ASTRAL
        m = re.compile(f"(?={re.escape(ch)}){held}").search(text, start)
        return m.start() if m else None
    if not _TAG_FIRST <= cp <= _TAG_LAST:
        return text.find(ch, start)  # everywhere else the character itself is held, whatever surrounds it
    position = text.find(ch, start)
    while position >= 0 and any(_is_rgi_flag_tags(text, position - k) for k in range(_TAG_RUN_LENGTH)):
        position = text.find(ch, position + 1)
    return position if position >= 0 else None


def _is_rgi_flag_tags(text: str, i: int) -> bool:
    """True when ``text[i:]`` starts the tag run of an RGI subdivision flag right after U+1F3F4."""
    return i > 0 and text[i - 1] == _BLACK_FLAG and text[i : i + _TAG_RUN_LENGTH] in _ALLOWED_TAG_RUNS


def _char_name(cp: int) -> str:
    """Unicode name, NameAliases control name, or a bracketed label; always ASCII."""
    name = unicodedata.name(chr(cp), None) or CONTROL_NAMES.get(cp)
    if name:
        return name
    category = unicodedata.category(chr(cp))
    if category == "Co":
        return "<private use>"
    if category == "Cs":
        return "<surrogate>"
    if 0xFDD0 <= cp <= 0xFDEF or (cp & 0xFFFE) == 0xFFFE:
        return "<noncharacter>"
    return "<unassigned>"


_ESCAPE_KINDS = {
    "[": "starts a CSI sequence: cursor movement, colour, erase",
    "]": "starts an OSC sequence: window title, hyperlink, clipboard",
    "P": "starts a DCS sequence",
    "\\": "string terminator",
}
"""ECMA-48 meaning of the character after ESC, for the hold reason."""

_CONTEXT_NOTES = {
    0x200D: "outside an emoji ZWJ sequence or a virama context",
    0x200C: "outside a virama or joining-letter context",
    0xFE0E: "not directly after an emoji-variation base",
    0xFE0F: "not directly after an emoji-variation base",
    0x0D: "not followed by LINE FEED (returns the cursor: what follows overwrites the line)",
    0xFE00: "not directly after a base listed in StandardizedVariants.txt",
    0xFE01: "not directly after a base listed in StandardizedVariants.txt",
    0xFE02: "not directly after a base listed in StandardizedVariants.txt",
}


def _detail(finding: _Finding, source: str) -> str:
    """Human-readable detail for a character finding, with a note on why a contextual one failed."""
    cp = finding.codepoint
    assert cp is not None
    name = _char_name(cp)
    if cp == 0x1B:
        following = source[finding.position + 1 : finding.position + 4]
        if following.startswith("]8;"):
            return f"{name} (starts an OSC 8 hyperlink)"
        return f"{name} ({_ESCAPE_KINDS.get(following[:1], 'starts an escape sequence')})"
    if finding.rule == "combining-flood":
        return f"{name} {finding.note}"
    if cp in _CONTEXT_NOTES:
        return f"{name} {_CONTEXT_NOTES[cp]}"
    if _IVS_FIRST <= cp <= _IVS_LAST:
        return f"{name} not directly after a CJK unified ideograph (one selector per base)"
    if finding.rule == "tag-char":
        return f"{name} outside an RGI subdivision flag"
    return name


# --------------------------------------------------------------------------------------------------------
# Name folding (TR39-style skeleton) and instruction-file search
# --------------------------------------------------------------------------------------------------------

_ASCII_FOLD = {ch: proto for proto, chars in ASCII_CONFUSABLES for ch in chars}


def _canonical(prototype: str) -> str:
    """A prototype as it appears in a skeleton: lower case, ASCII look-alikes merged."""
    return "".join(_ASCII_FOLD.get(c, c) for c in prototype.lower())


@functools.cache
def _fold_table() -> dict[int, str | None]:
    """``str.translate`` table: confusable -> canonical prototype; invisible, control, diacritic -> deleted."""
    table: dict[int, str | None] = {}
    for key in ("control", "format", "default-ignorable", "combining-diacritic", "combining-mark"):
        for lo, hi in _CLASS[key]:
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


def skeleton(text: str) -> str:
    """Fold ``text`` so that look-alike spellings of a name compare equal (UTS #39 skeleton, adapted).

    NFKD (fullwidth, mathematical, circled letters become plain; accents split off), then per character:
    confusable prototype, full case folding, prototype again; invisible characters, controls and combining
    diacritics are dropped; I/i/1/| fold to l, 0 to o, m to rn. Examples: ``skeleton("СLАUDЕ.md")`` (Cyrillic
    С, А, Е) and ``skeleton("ＣＬＡＵＤＥ.md")`` are both ``"claude.rnd"``.
    """
    return _fold_decomposed(unicodedata.normalize("NFKD", text))


def _fold_char(ch: str) -> str:
    """The skeleton of one character. The name search folds text character by character with this."""
    return _fold_decomposed(unicodedata.normalize("NFKD", ch))


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
    gap = f"[{_chars_class_body(deleted)}]*"
    classes = {t: f"[{_chars_class_body(inverse[t])}]" for t in sorted(inverse, key=lambda t: (-len(t), t))}
    grouped: dict[tuple[str, str], list[tuple[int, str | None]]] = {}
    for index, name in enumerate(names):
        skel = skeleton(name)
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
    anchor_chars = "".join(_chars_class_body(inverse[t]) for t, _ in grouped)
    # Cheap first filter: most anchor characters (sentence full stops) are not followed by a name's next
    # character at all, and fail here before any alternative is tried.
    afters = [after for _, after in grouped]
    precheck = ""
    if all(afters):
        following = {ch for after in afters for t in inverse if after.startswith(t) for ch in inverse[t]}
        precheck = f"(?={gap}[{_chars_class_body(following)}])"
    return _NameMatcher(re.compile(f"[{anchor_chars}]{precheck}(?:{'|'.join(alternatives)})"), tuple(groups))


def _normalise_names(instruction_files: Iterable[str]) -> tuple[str, ...]:
    if isinstance(instruction_files, str):
        raise TypeError("instruction_files must be an iterable of names, not a single str")
    names = tuple(dict.fromkeys(instruction_files))
    for name in names:
        if not isinstance(name, str):
            raise TypeError(f"instruction-file names must be str, got {type(name).__name__}")
    return names


def _name_hits(text: str, names: tuple[str, ...]) -> list[tuple[int, int]]:
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


def _scan_names(text: str, names: tuple[str, ...], order: int, limit: int) -> _Scan:
    """Instruction-file names in ``text``, positions indexing the original text."""
    if not names:
        return _Scan([], {}, 0)
    rule = "instruction-file" if order < 2 else "instruction-file-path"
    hits = _name_hits(text, names)
    first = [_Finding(order, start, rule, None, names[index]) for start, index in hits[:limit]]
    return _Scan(first, {rule: first[0]} if first else {}, len(hits))


# --------------------------------------------------------------------------------------------------------
# Verdicts
# --------------------------------------------------------------------------------------------------------


def _select(scans: Iterable[_Scan], limit: int) -> tuple[list[_Finding], int]:
    """The first ``limit`` findings, making room for the first finding of every rule; and the total count.

    Listing every rule that fired matters more than listing the 20th zero-width space: the owner reading
    the hold needs to see each kind of problem. Scans arrive in report order (text, then path).
    """
    kept: list[_Finding] = []
    extra: dict[str, _Finding] = {}
    total = 0
    for scan in scans:
        total += scan.total
        kept.extend(scan.first[: max(0, limit - len(kept))])
        for rule, finding in scan.first_of_rule.items():
            extra.setdefault(rule, finding)
    seen = {f.rule for f in kept}
    missing = [f for rule, f in extra.items() if rule not in seen]
    for f in missing:
        counts: dict[str, int] = {}
        for k in kept:
            counts[k.rule] = counts.get(k.rule, 0) + 1
        drop = max(i for i, k in enumerate(kept) if counts[k.rule] > 1)
        kept[drop] = f
    kept.sort(key=lambda f: (f.order, f.position))
    return kept, total


def _line_columns(text: str, positions: Iterable[int]) -> dict[int, tuple[int, int]]:
    """1-based (line, column) of each position, counting newlines once from left to right."""
    out: dict[int, tuple[int, int]] = {}
    line, line_start, scanned = 1, 0, 0
    for pos in sorted(set(positions)):
        newlines = text.count("\n", scanned, pos)
        if newlines:
            line += newlines
            line_start = text.rfind("\n", scanned, pos) + 1
        scanned = pos
        out[pos] = (line, pos - line_start + 1)
    return out


def _reasons(selected: list[_Finding], text: str, path: str | None) -> tuple[HoldReason, ...]:
    """Turn the selected findings into reasons, with line and column for positions in the text."""
    where_of: dict[int, Where] = {0: "text", 1: "text", 2: "path", 3: "path"}
    lines = _line_columns(text, (f.position for f in selected if where_of[f.order] == "text"))
    out: list[HoldReason] = []
    for f in selected:
        where = where_of[f.order]
        source = text if where == "text" else (path or "")
        if f.codepoint is None:
            name = f.note.encode("ascii", "backslashreplace").decode("ascii")
            detail, codepoint = (f"path names {name}" if where == "path" else f"names {name}"), None
        else:
            detail, codepoint = _detail(f, source), f"U+{f.codepoint:04X}"
        if where == "text":
            line, column = lines[f.position]
            out.append(HoldReason(f.rule, detail, codepoint, f.position, line, column))
        else:
            out.append(HoldReason(f.rule, detail, codepoint, f.position, where="path"))
    return tuple(out)


def _require_str(value: object, what: str) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{what} must be str, got {type(value).__name__}")
    return value


def check_text(text: str) -> tuple[HoldReason, ...]:
    """Held characters of ``text`` only (no name check), at most ``MAX_REASONS`` of them."""
    _require_str(text, "text")
    selected, _ = _select([_scan_chars(text, 0, MAX_REASONS), _scan_floods(text, 0, MAX_REASONS)], MAX_REASONS)
    return _reasons(selected, text, None)


def mentions_instruction_file(
    text: str, instruction_files: Iterable[str] = DEFAULT_INSTRUCTION_FILES
) -> tuple[HoldReason, ...]:
    """Places where ``text`` names an instruction file, in any look-alike spelling, at most ``MAX_REASONS``."""
    _require_str(text, "text")
    names = _normalise_names(instruction_files)
    selected, _ = _select([_scan_names(text, names, 1, MAX_REASONS)], MAX_REASONS)
    return _reasons(selected, text, None)


def validate_instruction_files(instruction_files: Iterable[str]) -> tuple[str, ...]:
    """Check a policy's instruction-file list once at start-up; raises ``ValueError``/``TypeError`` if unusable.

    Returns the de-duplicated names. A name is unusable when its skeleton is empty or not ASCII.
    """
    names = _normalise_names(instruction_files)
    if names:
        _name_matcher(names)
    return names


_RENDERED_NAME = HoldReason(
    rule="instruction-file",
    detail="names an instruction file once rendered or resolved (tags, comments, entities, escapes, emphasis, "
    "links, quotes, backslashes or a line break split the name)",
    codepoint=None,
    position=None,
)


def check_item(
    text: str, path: str | None = None, instruction_files: Iterable[str] = DEFAULT_INSTRUCTION_FILES
) -> FloorVerdict:
    """The floor's verdict on one inbox item: its body ``text`` and, when given, its vault ``path``."""
    _require_str(text, "text")
    if path is not None:
        _require_str(path, "path")
    names = _normalise_names(instruction_files)
    scans = [_scan_chars(text, 0, MAX_REASONS), _scan_floods(text, 0, MAX_REASONS)]
    scans.append(_scan_names(text, names, 1, MAX_REASONS))
    if path is not None:
        scans += [_scan_chars(path, 2, MAX_REASONS), _scan_floods(path, 2, MAX_REASONS)]
        scans.append(_scan_names(path, names, 3, MAX_REASONS))
    selected, total = _select(scans, MAX_REASONS)
    reasons = _reasons(selected, text, path)
    omitted = total - len(selected)
    if names and not any(r.rule.startswith("instruction-file") for r in reasons):
        reader, shell = rendered_views(text)
        views = reader if reader == shell else f"{reader}\n\n{shell}"
        if views != text and _name_hits(views, names):
            if len(reasons) >= MAX_REASONS:  # keep the cap: the rendered finding replaces the last listed one
                reasons, omitted = reasons[: MAX_REASONS - 1], omitted + len(reasons) - MAX_REASONS + 1
            reasons = (*reasons, _RENDERED_NAME)
    return FloorVerdict(reasons, omitted)
