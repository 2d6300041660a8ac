"""The text view every content gate reads, and the way back to positions in what the caller sent (pure).

Theory of operation
-------------------
The credential scanner and the content gates must not be fooled by presentation tricks, so their rules
never read the caller's text directly (that is why this is its own module). They read a *normalised view*
(:func:`normalise`) in which every character is NFKC-folded and every Default_Ignorable_Code_Point
(zero-width spaces, joiners, bidi controls, tag characters, variation selectors, the BOM ...) and combining
diacritic is removed:
``g<ZWSP>hp_…`` and ``ｇｈｐ＿…`` both read as ``ghp_…``. Derived views read the text as a renderer shows it
(:func:`rendered`) and joined across line breaks (:func:`joined`). Every view maps each of its positions
back to the original text, so a finding points at what the caller sent.

Invariants
1. Pure: no I/O and no mutable global state except a bounded memo of per-character folding.
2. Linear: one pass per view; every regex is bounded or runs over a class disjoint from what follows it.
3. The invisible set is ``unicode_tables.DEFAULT_IGNORABLE`` and ``COMBINING_DIACRITICS``; no copy here.
"""

from __future__ import annotations

import functools
import html
import re
import unicodedata
from bisect import bisect_right
from collections.abc import Callable, Iterable

from notegate.safety.unicode_tables import COMBINING_DIACRITICS, DEFAULT_IGNORABLE_RANGES, parse_ranges

__all__ = ["Edit", "NormalisedText", "derive", "fold_char", "joined", "normalise", "rendered"]

#: What renders as nothing (Default_Ignorable) or on top of its neighbour (combining diacritics, so
#: ``ghp_ab\u0301c…`` shows a token a reader can retype): removed from the view.
_INVISIBLE = re.compile(
    "["
    + "".join(f"{chr(lo)}-{chr(hi)}" for lo, hi in DEFAULT_IGNORABLE_RANGES + parse_ranges(COMBINING_DIACRITICS))
    + "]"
)
_NON_ASCII_RUN = re.compile(r"[^\x00-\x7f]+")


@functools.lru_cache(maxsize=8192)
def fold_char(ch: str) -> str:
    """NFKC of one character, default-ignorables and combining marks removed (may be "" or several)."""
    if _INVISIBLE.match(ch):
        return ""
    return _INVISIBLE.sub("", unicodedata.normalize("NFKC", ch))


class NormalisedText:
    """The view the rules read, and the way back to positions in what the caller sent.

    ``text`` is the folded view.  Folding is done per character, so the mapping is a list of
    breakpoints ``(view_pos, original_pos, fixed)``: after a linear breakpoint positions advance
    together; inside a *fixed* one (a character that folded to several) every view position maps
    to the same original character.  Pure ASCII text is its own view and has no breakpoints.
    """

    __slots__ = (
        "_cache",
        "_keys",
        "_lazy",
        "_line_starts",
        "_lower",
        "_parent",
        "_points",
        "original",
        "text",
    )

    def __init__(
        self,
        original: str,
        text: str,
        points: list[tuple[int, int, bool]],
        parent: NormalisedText | None = None,
        lazy: Callable[[], list[tuple[int, int, bool]]] | None = None,
    ) -> None:
        self.original = original
        self.text = text
        self._points = points
        #: A derived view (:func:`derive`) maps to its parent's positions, the parent to the original.
        self._parent = parent
        self._keys = [p[0] for p in points]
        #: Breakpoints computed on first use (:func:`joined`): most views are scanned and find nothing, and
        #: then the mapping back to the original is never needed.
        self._lazy = lazy
        self._lower: str | None = None
        self._line_starts: list[int] | None = None
        #: Per-view memo for rule checks (e.g. where PEM END lines are), so checks stay linear.
        self._cache: dict[str, object] = {}

    @property
    def lower(self) -> str:
        """ASCII projection of the view, lower-cased: every non-ASCII character becomes ``?``.

        Same length as ``text``, so positions found here are positions in ``text``.  Rules run
        on it use ASCII-only patterns; lower-casing ASCII is ~10x faster than ``re.IGNORECASE``
        and than ``str.lower`` on wide strings, and never changes the length (``İ`` would).
        """
        if self._lower is None:
            text = self.text if self.text.isascii() else self.text.encode("ascii", "replace").decode("ascii")
            self._lower = text.lower()
        return self._lower

    def remapped(self, text: str) -> NormalisedText:
        """Same positions, different characters: for a 1:1 re-mapping of the view (skeletons)."""
        if len(text) != len(self.text):
            raise ValueError("a remapped view must keep its length")
        self._resolve()
        twin = NormalisedText(self.original, text, self._points, self._parent)
        twin._line_starts = self._line_starts
        return twin

    def _resolve(self) -> None:
        """Compute lazily given breakpoints now (once)."""
        if self._lazy is not None:
            self._points = self._lazy()
            self._keys = [p[0] for p in self._points]
            self._lazy = None

    def _local(self, pos: int) -> int:
        if self._lazy is not None:
            self._resolve()
        if not self._keys:
            return pos
        i = bisect_right(self._keys, pos) - 1
        if i < 0:
            return pos
        view0, orig0, fixed = self._points[i]
        return orig0 if fixed else orig0 + (pos - view0)

    def _to_original(self, pos: int) -> int:
        local = self._local(pos)
        return local if self._parent is None else self._parent._to_original(local)

    def span(self, start: int, end: int) -> tuple[int, int]:
        """Map a half-open span of the view to the original text."""
        first = self._to_original(start)
        last = self._to_original(end - 1) + 1 if end > start else first
        return first, max(first, last)

    def line_col(self, offset: int) -> tuple[int, int]:
        """1-based line and column (in code points) of an offset in the original text."""
        if self._line_starts is None:
            self._line_starts = [0] + [m.end() for m in re.finditer("\n", self.original)]
        i = bisect_right(self._line_starts, offset) - 1
        return i + 1, offset - self._line_starts[i] + 1


def normalise(text: str) -> NormalisedText:
    """Fold ``text`` for scanning: NFKC per character, default-ignorables removed.

    Why per character and not ``normalize(text)``: a whole-string NFKC cannot tell us where each
    output character came from, and findings must point into the original.
    """
    if text.isascii() or (unicodedata.is_normalized("NFKC", text) and _INVISIBLE.search(text) is None):
        return NormalisedText(text, text, [])
    pieces: list[str] = []
    points: list[tuple[int, int, bool]] = []
    view = 0
    last = 0
    for run in _NON_ASCII_RUN.finditer(text):
        start, end = run.span()
        pieces.append(text[last:start])
        view += start - last
        chunk = run.group()
        if unicodedata.is_normalized("NFKC", chunk) and _INVISIBLE.search(chunk) is None:
            pieces.append(chunk)
            view += len(chunk)
        else:
            for offset, ch in enumerate(chunk, start):
                folded = fold_char(ch)
                if len(folded) == 1:
                    pieces.append(folded)
                    view += 1
                    continue
                if folded:
                    points.append((view, offset, True))
                    pieces.append(folded)
                    view += len(folded)
                points.append((view, offset + 1, False))
        last = end
    pieces.append(text[last:])
    return NormalisedText(text, "".join(pieces), points)


# --------------------------------------------------------------------------------------------
# Derived views: what a reader sees once Markdown is rendered, and text joined across line breaks
# --------------------------------------------------------------------------------------------

Edit = tuple[int, int, str]


def derive(view: NormalisedText, edits: Iterable[Edit]) -> NormalisedText:
    """A view of ``view`` with sorted, non-overlapping ``(start, end, replacement)`` edits applied.

    Positions of the result map back through ``view`` to the original text, so findings in a
    derived view still point at what the caller sent.  No edits: ``view`` itself.
    """
    pieces: list[str] = []
    points: list[tuple[int, int, bool]] = []
    out = 0
    last = 0
    for start, end, replacement in edits:
        pieces.append(view.text[last:start])
        out += start - last
        if replacement:
            points.append((out, start, True))
            pieces.append(replacement)
            out += len(replacement)
        points.append((out, end, False))
        last = end
    if not points:
        return view
    pieces.append(view.text[last:])
    return NormalisedText(view.original, "".join(pieces), points, view)


def _derived_points(edits: Iterable[Edit]) -> list[tuple[int, int, bool]]:
    """The breakpoints :func:`derive` gives for ``edits``, without building the text (a lazy view's mapping)."""
    points: list[tuple[int, int, bool]] = []
    out = 0
    last = 0
    for start, end, replacement in edits:
        out += start - last
        if replacement:
            points.append((out, start, True))
            out += len(replacement)
        points.append((out, end, False))
        last = end
    return points


_RENDER = re.compile(r"\\([!-/:-@\[-`{-~])|&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});|<!--")


def rendered(view: NormalisedText) -> NormalisedText:
    """The view as Markdown/HTML renders it: ``ghp\\_…``, ``ghp&#95;…`` and ``gh<!-- -->p_…`` read ``ghp_…``.

    Backslash escapes lose their backslash, character references are decoded (and folded like
    any other character), HTML comments disappear.  Linear: one regex pass, and a comment's end
    is found with ``str.find`` once; an unclosed ``<!--`` ends comment handling for the rest.
    """
    text = view.text
    if "\\" not in text and "&" not in text and "<!--" not in text:
        return view
    edits: list[Edit] = []
    pos = 0
    comments_close = True
    while (m := _RENDER.search(text, pos)) is not None:
        piece = m.group()
        pos = m.end()
        if piece == "<!--":
            close = text.find("-->", m.end()) if comments_close else -1
            if close < 0:
                comments_close = False
                continue
            pos = close + 3
            edits.append((m.start(), pos, ""))
        elif m.group(1) is not None:
            edits.append((m.start(), m.end(), m.group(1)))
        else:
            decoded = html.unescape(piece)
            if decoded != piece:
                edits.append((m.start(), m.end(), "".join(fold_char(c) for c in decoded)))
    return derive(view, edits)


#: A line break with what a renderer puts around it: indentation, quote markers, a list marker.
#: How provider tokens begin (the literal starts of the :data:`JOINABLE_KINDS` rules).
_TOKEN_HEAD = re.compile(
    r"sk-|gh[pousr]_|github_pat_|gl(?:pat|ptt|dt|rt)-|xox[abposre]-|[sr]k_(?:live|test)_|AIza|eyJ|npm_|pypi-|hf_"
    r"|SG\.|ng[ts]_|A(?:KIA|SIA|BIA|CCA)|hooks\.slack\.com"
)
_BREAK = re.compile(r"(?:\r?\n[ \t]*(?:>[ \t]*)*)+(?:(?:[-*+]|[0-9]{1,9}[.)])[ \t]+)?")


#: :data:`_BREAK` for text without ``\r``: the same matches (its ``\r?`` can only match nothing there), but it
#: starts with the literal ``\n``, so ``re`` skips ahead to each line break in C instead of trying the pattern
#: at every position (``_BREAK`` can start with ``\r`` or ``\n``, so it has no literal prefix): 5x cheaper.
_BREAK_LF = re.compile(r"\n[ \t]*(?:>[ \t]*)*(?:\n[ \t]*(?:>[ \t]*)*)*(?:(?:[-*+]|[0-9]{1,9}[.)])[ \t]+)?")


def _join_edits(text: str, breaks: re.Pattern[str]) -> list[Edit]:
    """The edits :func:`joined` applies: each break (with up to 64 trailing blanks before it) removed."""
    edits: list[Edit] = []
    floor = 0
    for m in breaks.finditer(text):
        start = m.start()
        stop = max(floor, start - 64)
        while start > stop and text[start - 1] in " \t":
            start -= 1
        # A line that starts a token keeps a boundary before it, or "Next step\nghp_…" would glue.
        edits.append((start, m.end(), " " if _TOKEN_HEAD.match(text, m.end()) else ""))
        floor = m.end()
    return edits


def joined(view: NormalisedText) -> NormalisedText:
    """The view with line breaks (and the indentation, quote and list markers after them) removed.

    A token split over two fields of a model answer comes back from a renderer as ``ghp_abc\\n-
    def…``; read joined, it is whole again.  Only provider-format rules read this view (their
    prefixes do not occur by accident), so joining unrelated lines costs no false positives.
    Trailing blanks before a break are dropped too, looking back at most 64 characters.

    Why two paths: this view is read on every write and usually finds nothing, so when no line ends
    in a blank (then no edit reaches back before its break and each edit is exactly one match) the
    text is built by one substitution in C and the breakpoints back to ``view`` are only computed
    if a finding needs them (the same edits as the general path, so the same positions).
    """
    text = view.text
    if "\n" not in text:
        return view
    breaks = _BREAK if "\r" in text else _BREAK_LF
    if breaks is _BREAK or " \n" in text or "\t\n" in text:
        return derive(view, _join_edits(text, breaks))
    head = _TOKEN_HEAD.match
    out = breaks.sub(lambda m: " " if head(text, m.end()) else "", text)

    def points() -> list[tuple[int, int, bool]]:
        return _derived_points(_join_edits(text, breaks))

    return NormalisedText(view.original, out, [], view, lazy=points)
