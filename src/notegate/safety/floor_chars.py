"""The floor's character rules: which characters hold an item, and where the few allowed contexts are (pure).

Why its own module: the character rules are the floor's largest part and change with Unicode; the verdict
(:mod:`notegate.safety.floor`) only combines their findings with the name search's.

Theory of operation
-------------------
Two scans over the original text, so every position is an exact index into what the caller sent:

1. **Characters.** One regular expression, built on first use from ``unicode_tables.CHARACTER_CLASSES``,
   finds runs of held BMP characters in C; its lookahead already lets the few legitimate contexts
   through (ZWJ inside an emoji sequence or after a virama, ZWNJ after a virama or between joining
   letters, VS15/VS16 directly after an emoji-variation base or inside a keycap), so Python only touches
   real findings. A second expression finds supplementary-plane characters outside the allowed ranges
   (listed emoji and CJK first, because ``re`` tries such ranges in order); the one allowance there, the
   tag run of an RGI subdivision flag, is cut off at the match. Only the first ``limit`` findings
   get Python attention; the rest are counted with ``findall``, so a flood costs C time (about 0.3 s for
   the worst megabyte found, against 50-70 MB/s on ordinary notes). "After NFKC normalisation" holds because no
   character outside the held set NFKC-decomposes into one inside it (tested exhaustively), so scanning
   the original finds everything scanning the NFKC form would, with true positions. Emoji context is
   judged before normalisation on purpose: NFKC rewrites some emoji bases (U+2122 TRADE MARK SIGN -> "TM").
2. **Floods.** One bounded regex finds runs of more than ``MAX_STACKED_MARKS`` combining marks.

Decisions
---------
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
* Characters unassigned in the interpreter's Unicode (``unicode_tables.UNICODE_VERSION``) hold, so emoji
  newer than that hold until the runtime is upgraded: fail closed.
* Where a script's own spelling needs an invisible character, the data says where, and only there does it
  pass: ZWNJ/ZWJ after a virama and ZWNJ between joining letters (UAX #31 2.3), ZWJ inside an emoji
  sequence, ZWSP between two letters of a script written without spaces (Thai, Lao, Khmer, Myanmar,
  Tibetan, the Tai scripts: UAX #14 5.1). Isolated, doubled, at a name's edge or between letters of
  other scripts (Latin among them), each still holds. Mongolian free variation selectors and Arabic/Hebrew
  LRM/RLM still hold: the owner can keep such notes outside the inbox; the floor does not guess.
* The same contexts decide file names (:func:`contextual_allowed`, read by ``vault.paths``): one table for
  the note text and the path a note is stored under.
* TAB, LF and CRLF pass (CRLF files are ordinary). A byte-order mark holds, even at the very start, unless
  the caller says the text is a whole file (``check_item(..., encoding_mark=True)``): then exactly one
  U+FEFF at offset 0 is the file's encoding mark (Windows editors write it) and is not scanned; a second
  one, or one anywhere else, still holds. The scan starts after it (``scan_chars(start=1)``), so every
  position is still an index into the original text.
* ZWNJ between letters of joining scripts is allowed by script block, a superset of the exact
  Joining_Type test of UAX #31 rule A1: at most one hidden bit per letter pair, visible text around it.
* Exceptions to "this class holds" are only the contextual allowances listed in scan 1 above.

Invariants
----------
* Pure: the standard library's ``re``, ``unicodedata``, ``functools``, ``bisect``, ``heapq``, ``typing``,
  ``collections.abc`` and the tables only. Total: every ``str`` (lone surrogates included) gets findings.
* Detail text is ASCII and never echoes the item's characters.
"""

from __future__ import annotations

import bisect
import functools
import heapq
import re
import unicodedata
from collections.abc import Iterable, Iterator
from typing import NamedTuple

from notegate.safety.unicode_tables import (
    CHARACTER_CLASSES,
    CONTROL_NAMES,
    MAX_STACKED_MARKS,
    RGI_SUBDIVISION_FLAGS,
    parse_ranges,
)

__all__ = [
    "CLASS_RANGES",
    "CONTEXTUAL_NAME_CHARS",
    "Finding",
    "Scan",
    "chars_class_body",
    "contextual_allowed",
    "describe_char",
    "scan_chars",
    "scan_floods",
]

# --------------------------------------------------------------------------------------------------------
# Tables -> ranges and rule lookup (at import); regular expressions (built once, on first use)
# --------------------------------------------------------------------------------------------------------

Ranges = tuple[tuple[int, int], ...]


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


def chars_class_body(chars: Iterable[str]) -> str:
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


CLASS_RANGES: dict[str, Ranges] = {row.key: parse_ranges(row.ranges) for row in CHARACTER_CLASSES}
_HOLD_ROWS: tuple[tuple[str, tuple[int, ...], tuple[int, ...]], ...] = tuple(
    (row.rule, tuple(a for a, _ in CLASS_RANGES[row.key]), tuple(b for _, b in CLASS_RANGES[row.key]))
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
    spans = sorted(span for row in CHARACTER_CLASSES if row.rule is not None for span in CLASS_RANGES[row.key])
    merged: list[list[int]] = []
    for lo, hi in spans:
        if merged and lo <= merged[-1][1] + 1:
            merged[-1][1] = max(merged[-1][1], hi)
        else:
            merged.append([lo, hi])
    return tuple((lo, hi) for lo, hi in merged)


_HELD = _held_ranges()

_ZWSP, _ZWNJ, _ZWJ, _VS15, _VS16, _KEYCAP = "\\u200b", "\\u200c", "\\u200d", "\\ufe0e", "\\ufe0f", "\\u20e3"
_IVS = "\\U000e0100-\\U000e01ef"  # VS17-VS256
_BLACK_FLAG = "\U0001f3f4"
_CANCEL_TAG = "\U000e007f"


def _allowed_context() -> str:
    """Alternatives of the negative lookahead: contexts where a held BMP character is legitimate.

    The lookahead runs just after the candidate character, so each alternative starts with a lookbehind
    that ends in that character; anything else can never match and the character is reported.
    """
    ep = f"[{_class_body(CLASS_RANGES['extended-pictographic'])}]"
    mod = f"[{_class_body(CLASS_RANGES['emoji-modifier'])}]"
    vs_base = f"[{_class_body(CLASS_RANGES['emoji-variation-base'])}]"
    keycap = f"[{_class_body(CLASS_RANGES['keycap-base'])}]"
    virama = f"[{_class_body(CLASS_RANGES['virama'])}]"
    joining = f"[{_class_body(CLASS_RANGES['joining-script'])}]"
    word_break = f"[{_class_body(CLASS_RANGES['word-break-script'])}]"
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
            # UAX #14 5.1: ZWSP as the word break of a script written without spaces (Thai, Khmer, ...).
            f"(?<={word_break}{_ZWSP})(?={word_break})",
            # Emoji / text presentation selector directly after a base that has such a variant.
            f"(?<={vs_base}{vs})",
            # Keycap: [#*0-9] VS15/VS16 U+20E3; on these ASCII bases only inside a keycap.
            f"(?<={keycap}{vs})(?={_KEYCAP})",
            # CR directly before LF (CRLF line ends); a bare CR returns the cursor and rewrites the line.
            "(?<=\\r)(?=\\n)",
            # Standardized variation sequences (StandardizedVariants.txt): VS1-VS3 on their listed bases.
            *(f"(?<=[{_class_body(CLASS_RANGES[f'vs{k}-base'])}]\\ufe0{k - 1})" for k in (1, 2, 3)),
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


#: Held unless _allowed_context() says so.
_CONTEXTUAL_BMP = frozenset("\r\u200b\u200c\u200d\ufe00\ufe01\ufe02\ufe0e\ufe0f")
_IVS_FIRST, _IVS_LAST = 0xE0100, 0xE01EF
_TAG_FIRST, _TAG_LAST = CLASS_RANGES["tag"][0]
_TAG_RUN_LENGTH = 6  # five tag letters + CANCEL TAG: the length of every RGI subdivision flag's tag run
_ALLOWED_TAG_RUNS = frozenset(
    "".join(chr(0xE0000 + ord(c)) for c in flag) + _CANCEL_TAG for flag in RGI_SUBDIVISION_FLAGS
)


class _Patterns(NamedTuple):
    held_bmp: str  # one held BMP character (source, also used by :func:`_first_held`)
    held_astral: str  # one held supplementary character (source)
    flood: re.Pattern[str]
    flood_candidate: re.Pattern[str]
    flood_any: re.Pattern[str]
    bmp_run: re.Pattern[str]
    astral_run: re.Pattern[str]
    rgi_flag: re.Pattern[str]


@functools.cache
def _patterns() -> _Patterns:
    """The scans' regular expressions, built on first use and kept for the life of the process.

    Built lazily because compiling them costs about 0.1 s of CPU, and every fresh interpreter that imports
    the floor (each git hook, each CLI start, the server before its first read) paid it at import, even for
    pushes that touch no path the floor checks. The sources are exactly those once built at import.
    """
    # One held character: a BMP one outside its allowed contexts, or a supplementary one outside the allowed
    # ranges. Matched as runs, so a flood of held characters costs C time, not one Python step each.
    always_held_bmp = f"(?<![{chars_class_body(_CONTEXTUAL_BMP)}])"  # the character just matched
    held_bmp = f"[{_class_body(_clip(_HELD, 0, 0xFFFF))}](?:{always_held_bmp}|(?!{_allowed_context()}))"
    # An ideographic variation sequence (UTS #37): one of VS17-VS256 directly after a unified ideograph. One
    # selector per base, so at most one hidden byte per visible ideograph.
    ivs_allowed = f"(?<![{_class_body(CLASS_RANGES['unified-ideograph'])}][{_IVS}])"
    held_astral = f"[\\U00010000-\\U0010ffff](?<![{_astral_allowed_class()}]){ivs_allowed}"
    # A flood: more than MAX_STACKED_MARKS combining marks in a row. Marks another row already holds
    # (variation selectors, Khmer inherent vowels) are left out, so a held character is reported once, under
    # its own rule.
    stackable = [cp for lo, hi in CLASS_RANGES["combining-mark"] for cp in range(lo, hi + 1) if _rule_of(cp) is None]
    stackable_bmp = f"[{chars_class_body(chr(cp) for cp in stackable if cp <= 0xFFFF)}]"
    stackable_astral = f"[{chars_class_body(chr(cp) for cp in stackable if cp > 0xFFFF)}]"
    # A BMP-only class compiles to a bitmap (one lookup per character) and lets ``re`` skip ahead to
    # candidates; a class with supplementary ranges is a list of ranges tried in turn, so it is used only on
    # text that has supplementary characters at all, and only after a cheap "is this supplementary" test.
    flood = re.compile(f"{stackable_bmp}{{{MAX_STACKED_MARKS + 1},}}")
    flood_candidate = re.compile(f"[{stackable_bmp[1:-1]}\\U00010000-\\U0010ffff]{{{MAX_STACKED_MARKS + 1},}}")
    flood_any = re.compile(
        f"(?:{stackable_bmp}|(?=[\\U00010000-\\U0010ffff]){stackable_astral}){{{MAX_STACKED_MARKS + 1},}}"
    )
    # Spelled X(?:X)* rather than (?:X)+ so that the pattern starts with a character class, which lets
    # ``re`` skip ahead in C to the next candidate character instead of attempting a match at every position.
    bmp_run = re.compile(f"{held_bmp}(?:{held_bmp})*")
    astral_run = re.compile(f"{held_astral}(?:{held_astral})*")
    rgi_flag = re.compile(f"{_BLACK_FLAG}(?:{'|'.join(sorted(_ALLOWED_TAG_RUNS))})")
    return _Patterns(held_bmp, held_astral, flood, flood_candidate, flood_any, bmp_run, astral_run, rgi_flag)


# --------------------------------------------------------------------------------------------------------
# Character scan
# --------------------------------------------------------------------------------------------------------


class Finding(NamedTuple):
    """A light record of one finding; turned into a HoldReason only if it is listed."""

    order: int  # 0 text characters, 1 text names, 2 path characters, 3 path names
    position: int
    rule: str
    codepoint: int | None
    note: str


class Scan(NamedTuple):
    """One stream's findings: the first few in order, the first of every other rule, and how many in all."""

    first: list[Finding]
    first_of_rule: dict[str, Finding]
    total: int


def _held_runs(text: str, begin: int = 0) -> Iterator[tuple[int, str]]:
    """``(start, run)`` for every run of held characters at or after ``begin``, in position order.

    The tag run of an RGI subdivision flag (directly after U+1F3F4) is cut off the front of its run: the
    flag's base is not held, so an allowed tag run always starts a supplementary run.
    """

    patterns = _patterns()

    def astral() -> Iterator[tuple[int, str]]:
        for m in patterns.astral_run.finditer(text, begin):
            start, run = m.start(), m.group()
            if _is_rgi_flag_tags(text, start):
                start, run = start + _TAG_RUN_LENGTH, run[_TAG_RUN_LENGTH:]
            if run:
                yield start, run

    bmp = ((m.start(), m.group()) for m in patterns.bmp_run.finditer(text, begin))
    if text.isascii():
        yield from bmp
    else:
        yield from heapq.merge(bmp, astral(), key=lambda r: r[0])


def scan_chars(text: str, order: int, limit: int, start: int = 0) -> Scan:
    """Held characters of ``text`` from ``start`` on: details for the first ``limit`` and the first of each
    rule, a count.  Positions index the whole text, and the allowed contexts still see what lies before
    ``start`` (``re`` lookbehind reads past a search's ``pos``).

    Past the first ``limit``, nothing runs per finding in Python: the rest is counted with ``findall`` and
    each rule not yet seen is located with one search, so a megabyte of NULs costs C time only.
    """
    first: list[Finding] = []
    first_of_rule: dict[str, Finding] = {}
    total = 0
    for at, run in _held_runs(text, start):
        total += len(run)
        listed = run[: limit - len(first)]
        for offset, ch in enumerate(listed):
            finding = Finding(order, at + offset, _rule_of(ord(ch)) or "unassigned", ord(ch), "")
            first.append(finding)
            first_of_rule.setdefault(finding.rule, finding)
        if len(first) >= limit:
            unlisted_from, unlisted, resume = at + len(listed), run[len(listed) :], at + len(run)
            break
    else:
        return Scan(first, first_of_rule, total)
    patterns = _patterns()
    bmp_rest = patterns.bmp_run.findall(text, resume)
    astral_rest = [] if text.isascii() else patterns.astral_run.findall(text, resume)
    flags = len(patterns.rgi_flag.findall(text, resume)) if astral_rest else 0
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
        first_of_rule[rule] = Finding(order, position, rule, ord(text[position]), "")
    return Scan(first, first_of_rule, total)


def scan_floods(text: str, order: int, limit: int) -> Scan:
    """Runs of more than ``MAX_STACKED_MARKS`` combining marks; each run is one finding, at its first extra mark.

    ``[marks]{9,}`` is linear: a shorter run fails within nine steps of each start, and a long run is
    consumed by one match.
    """
    first: list[Finding] = []
    total = 0
    if text.isascii():
        return Scan(first, {}, 0)
    patterns = _patterns()
    if max(text) <= "\uffff":
        matches: Iterable[re.Match[str]] = patterns.flood.finditer(text)
    else:  # candidates in C with one bitmap class, then the exact pattern only inside them
        candidates = patterns.flood_candidate.finditer(text)
        matches = (m for c in candidates for m in patterns.flood_any.finditer(text, *c.span()))
    for m in matches:
        total += 1
        if len(first) < limit:
            at = m.start() + MAX_STACKED_MARKS
            limit_text = f"(at most {MAX_STACKED_MARKS})"
            note = f"is mark {MAX_STACKED_MARKS + 1} of {len(m.group())} stacked on one base {limit_text}"
            first.append(Finding(order, at, "combining-flood", ord(text[at]), note))
    return Scan(first, {"combining-flood": first[0]} if first else {}, total)


#: The invisible characters a name may hold in the contexts :func:`contextual_allowed` accepts: the joiners,
#: ZWSP and the BMP variation selectors (CR is a control, refused in names whatever follows it).
CONTEXTUAL_NAME_CHARS = _CONTEXTUAL_BMP - {"\r"}


@functools.cache
def _held_contextual() -> re.Pattern[str]:
    return re.compile(_patterns().held_bmp)


def contextual_allowed(text: str, position: int) -> bool:
    """Whether the character at ``text[position]``, one of :data:`CONTEXTUAL_NAME_CHARS`, stands in a context
    the floor lets through (a word break, a joiner between letters, an emoji sequence ...).

    The file-name rule asks this, so a name and a note's text follow one table. Constant time per call: the
    contexts look at most a few characters on either side."""
    if text[position] not in CONTEXTUAL_NAME_CHARS:
        return False
    return _held_contextual().match(text, position) is None


def _first_held(text: str, ch: str, start: int) -> int | None:
    """Where ``ch`` first occurs as a held character at or after ``start`` (None if only in allowed contexts)."""
    cp = ord(ch)
    if ch in _CONTEXTUAL_BMP or _IVS_FIRST <= cp <= _IVS_LAST:
        held = _patterns().held_bmp if ch in _CONTEXTUAL_BMP else _patterns().held_astral
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


def describe_char(finding: Finding, source: str) -> str:
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
