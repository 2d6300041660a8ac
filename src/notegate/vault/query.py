"""The query language of search, as string work only (pure: no SQLite, no git, no I/O).

Three jobs, each a section below, shared by the store that writes rows and runs searches
(``vault/index.py``, the FTS5 index):

- the query: free text cut into terms and phrases, and the FTS5 expression of each match tier;
- the row: what a file is searched by (its text, its title), the columns an FTS row holds and their
  ranking weights;
- the snippet: a short window around the first hit, hits in bold.

Why apart from the store: this is the code that reads what a caller types, so it is the code to test
hardest, and the layering test can hold it to the pure rules (tests/test_layering.py).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from notegate.vault.canvas import canvas_text, is_canvas

# ------------------------------------------------------------ the query: terms, phrases, tiers
# How a free-text query becomes FTS5 expressions (theory of operation).
#
# The caller's text is never handed to FTS5 as syntax: it is cut into *terms* (a word, ``word*`` for a prefix,
# or a ``"quoted phrase"``), and every word is re-quoted by us, so nothing the caller writes can become an
# operator, a column filter (``title:x``), ``NEAR``, ``^`` or a parenthesis.  The only syntax in an expression
# is ours: quoted strings, ``*`` after a string, `` + `` (phrase), ``AND``, ``OR``.  Three tiers are searched in
# order, each ranked by bm25 and deduplicated against the tiers before it, until the limit is filled:
#   phrase     every term, in order, standing together ("a" + "b"): the notes about exactly that;
#   all-words  every term somewhere in the note ("a" AND "b");
#   any-word   some of the terms ("a" OR "b"): only when no note holds them all; reported as a fallback.
# A query of one term has one tier (a quoted phrase is "phrase", a word "all-words").
MATCH_TIERS = ("phrase", "all-words", "any-word")
#: At most this many terms are read from a query; the rest is ignored.  Why: each tier's cost is one
#: posting-list walk per term, so a query costs O(terms) lookups; 32 is more than any real search needs
#: (the service also cuts the text at 500 characters) and keeps the worst query to a few dozen lookups.
MAX_QUERY_TERMS = 32
# A word as FTS5's unicode61 tokenizer sees one: letters, digits and combining marks ('_' and punctuation
# separate). A "quoted phrase" (an unclosed quote runs to the end of the text) or a word, with an optional '*'.
_WORD_CHARS = r"(?:[^\W_]|[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f])+"
_WORD_RE = re.compile(_WORD_CHARS)
_TERM_RE = re.compile(rf'"([^"]*)"?(\*?)|({_WORD_CHARS})(\*?)')
#: Scripts written without spaces between words: Han (Chinese characters, Japanese kanji), kana, Hangul. FTS5's
#: unicode61 tokenizer takes a run of them as one word, so ``東京`` would never find ``東京タワーに行きました``.
#: Each such character is indexed as a word of its own (:func:`segmented`), and a query word holding them
#: becomes the phrase of its characters: adjacent tokens, found wherever they stand together.  Why not the
#: trigram tokenizer: it cannot find a word under three characters (most Chinese and Japanese words are two)
#: and would triple the index of every other script.
_UNSPACED = (
    "\u3005-\u3007\u3040-\u309f\u30a0-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff"
    "\uac00-\ud7af\uf900-\ufaff\uff66-\uff9f\U00020000-\U0003134f"
)
_UNSPACED_CHAR = re.compile(f"[{_UNSPACED}]")


def segmented(text: str) -> str:
    """``text`` with a space on each side of every character of an unspaced script (what FTS5 indexes, and
    what a query word is cut by).  Linear: one scan; an ASCII text is returned as it is."""
    if text.isascii():
        return text
    return _UNSPACED_CHAR.sub(r" \g<0> ", text)


def _tokens(word: str) -> tuple[str, ...]:
    """A query word as the index's words: itself, or the parts :func:`segmented` cuts it into."""
    return tuple(segmented(word).split()) if _UNSPACED_CHAR.search(word) else (word,)


@dataclass(frozen=True)
class Term:
    """One word (``prefix``: ``word*``) or one quoted phrase (``prefix`` applies to its last word)."""

    words: tuple[str, ...]
    prefix: bool = False
    #: the words as the caller wrote them, when the index's words differ (a word of an unspaced script is the
    #: phrase of its characters): what snippets look for and mark
    written: tuple[str, ...] = ()

    def fts(self) -> str:
        return '"' + " ".join(self.words) + '"' + ("*" if self.prefix else "")

    def marked(self) -> tuple[str, ...]:
        """The words as written, the prefix one marked with a trailing '*' (for snippets)."""
        words = self.written or self.words
        return (*words[:-1], words[-1] + ("*" if self.prefix else ""))

    @property
    def phrase(self) -> bool:
        """Several written words (a quoted phrase), not one word the index holds as several."""
        return len(self.written or self.words) > 1


@dataclass(frozen=True)
class Query:
    terms: tuple[Term, ...]

    def tiers(self) -> list[tuple[str, str]]:
        """(tier, FTS5 expression) in the order they are searched."""
        parts = [t.fts() for t in self.terms]
        if len(parts) == 1:
            return [("phrase" if self.terms[0].phrase else "all-words", parts[0])]
        return [("phrase", " + ".join(parts)), ("all-words", " AND ".join(parts)), ("any-word", " OR ".join(parts))]

    def words(self) -> list[str]:
        """Every word, prefix words marked with a trailing '*' (for snippets)."""
        return [w for term in self.terms for w in term.marked()]


def parse_query(text: str) -> Query | None:
    """Free text as terms (see above); None when it holds no word.  Linear in the text, at most
    :data:`MAX_QUERY_TERMS` terms (a quoted phrase counts each of its words)."""
    text = unicodedata.normalize("NFC", text)
    terms: list[Term] = []
    budget = MAX_QUERY_TERMS
    for match in _TERM_RE.finditer(text):
        if budget <= 0:
            break
        if match.group(3) is not None:
            written: tuple[str, ...] = (match.group(3),)
            prefix = bool(match.group(4))
        else:
            written = tuple(_WORD_RE.findall(match.group(1)))
            prefix = bool(match.group(2))
            if not written:
                continue
        tokens = tuple(token for word in written for token in _tokens(word))
        words = tokens[:budget]
        if len(words) < len(tokens):  # cut by the budget: the words as written are cut too
            written = ()
            prefix = False
        budget -= len(words)
        terms.append(Term(words, prefix, written if words != written else ()))
    return Query(tuple(terms)) if terms else None


def fts_query(text: str, *, any_term: bool = False) -> str | None:
    """The all-words (or, with ``any_term``, the any-word) FTS5 expression of ``text``."""
    query = parse_query(text)
    if query is None:
        return None
    parts = [t.fts() for t in query.terms]
    return (" OR " if any_term else " AND ").join(parts)


# ------------------------------------------------------------ the row: its text, its title, its fields
#: The fields a note is searched by, one FTS5 column each, in the table's order, with its BM25 weight: a hit in
#: a note's name or title outranks one in its body.  :func:`field_values` makes a row's values in this order;
#: the store makes its tables and statements from these names.  Why here: which fields a note has, what each
#: holds and how much each weighs is string work, the store only keeps them.  Changing a field changes what
#: rows hold, so it goes with a new ``INDEX_FORMAT`` (vault/index.py): indexes are then rebuilt from git.
FIELDS: tuple[tuple[str, float], ...] = (("path", 4.0), ("title", 8.0), ("body", 1.0))
#: FTS5's tokenizer for every field.  :data:`_WORD_CHARS` and :func:`segmented` cut a query's words as it
#: cuts a note's, so a change to it (stemming, say) changes them too, and the ``INDEX_FORMAT``.
TOKENIZER = "unicode61 remove_diacritics 2"
_H1 = re.compile(r"^# +(.+?)\s*$", re.MULTILINE)


def title_of(path: str, text: str) -> str:
    stem = path.rsplit("/", 1)[-1].removesuffix(".md")
    match = _H1.search(text[:4000])
    return f"{stem} {match.group(1)}" if match else stem


def indexed_text(path: str, data: bytes) -> str:
    """The text a file is searched by: a canvas's card texts, a note's bytes as UTF-8 (undecodable bytes
    replaced).  Its snippets are cut from the same text, read back from git by blob id."""
    return canvas_text(data) if is_canvas(path) else data.decode("utf-8", errors="replace")


def field_values(path: str, text: str) -> tuple[str, str, str]:
    """The values of a row's :data:`FIELDS` (path, title, body): made by this one function at insert and at
    delete, since a contentless table removes a row only given exactly the values it was inserted with
    (``INDEX_FORMAT``)."""
    names = path.replace("/", " ").replace("-", " ").replace("_", " ")
    return segmented(names), segmented(title_of(path, text)), segmented(text)


# ------------------------------------------------------------ snippets
SNIPPET_RADIUS = 90


def _word_pattern(word: str) -> str:
    """A word of a query in a note's text: it ends at a word's end, unless it is a prefix (``word*``) or ends
    with a character of an unspaced script, where the next word follows without a break."""
    bare = word.rstrip("*")
    if word.endswith("*"):
        return re.escape(bare) + r"\w*"
    return re.escape(bare) + ("" if _UNSPACED_CHAR.match(bare[-1:]) else r"\b")


def _starts_unspaced(word: str) -> bool:
    return _UNSPACED_CHAR.match(word[:1]) is not None


def _start(word: str) -> str:
    """What must stand before a word: a word's start, except before a character of an unspaced script."""
    return "" if _starts_unspaced(word) else r"\b"


def _joined(words: list[str], *, lowered: bool) -> str:
    """The words of a phrase, each next to the one before: separated by non-word characters, or by nothing
    where either side is a character of an unspaced script (``東京 タワー`` stands in ``東京タワー``)."""
    parts = [_word_pattern(w.lower() if lowered else w) for w in words]
    pattern = parts[0]
    for before, word, part in zip(words, words[1:], parts[1:], strict=False):
        unspaced = _UNSPACED_CHAR.match(before.rstrip("*")[-1:]) or _starts_unspaced(word)
        pattern += (r"[\W_]*" if unspaced else r"[\W_]+") + part
    return pattern


def _find_phrase(body: str, words: list[str]) -> re.Match[str] | None:
    """The first place the words stand together.  Why not one IGNORECASE pattern with a leading ``\\b``:
    either defeats the regex engine's literal scan, ~13 ms on a 150 KB note instead of ~1 ms lowered."""
    low = body.lower()
    if len(low) != len(body):  # a character whose lower case is longer: positions would not map back
        return re.search(_start(words[0]) + _joined(words, lowered=False), body, re.IGNORECASE)
    pattern = re.compile(_joined(words, lowered=True))
    anywhere = _starts_unspaced(words[0])
    for match in pattern.finditer(low):
        if anywhere or match.start() == 0 or not low[match.start() - 1].isalnum():
            return match
    return None


def _hit_pattern(terms: list[str]) -> re.Pattern[str]:
    """The one pattern of a hit: one of ``terms`` starting a word (or anywhere, for a word of an unspaced
    script), any case (the bold marks; the oracle of :func:`_first_word`)."""
    return re.compile("(?:" + "|".join(_start(t) + _word_pattern(t) for t in terms) + ")", re.IGNORECASE)


def _first_word(body: str, terms: list[str], hits: re.Pattern[str] | None = None) -> re.Match[str] | None:
    """The first place one of ``terms`` starts a word, as ``\b(?:t1|t2…)`` with IGNORECASE finds it.  Why not
    that pattern: as for :func:`_find_phrase`, a leading ``\b`` and IGNORECASE defeat the engine's literal
    scan (~0.1 ms a 3 KB note, for each of a search's 20 snippets); lowered, the scan is a fraction of it.
    A term is word characters only, so no word starts inside a match that does not start one, and skipping
    past such a match (``finditer``) misses nothing.  Falls back to the one pattern when lowering changes the
    length (positions would not map back), a term does not start with a word character, or one starts with
    a character of an unspaced script (found anywhere, not at a word's start) (``hits``: that pattern, when
    the caller has it already)."""
    low = body.lower()
    if len(low) != len(body) or not all(t[:1] and _WORD_START.match(t) and not _starts_unspaced(t) for t in terms):
        return (hits or _hit_pattern(terms)).search(body)
    pattern = re.compile("|".join(_word_pattern(t.lower()) for t in terms))
    for match in pattern.finditer(low):
        if match.start() == 0 or not _WORD_START.match(low, match.start() - 1):
            return match
    return None


_WORD_START = re.compile(r"\w")


def make_snippet(body: str, terms: list[str], *, phrase: tuple[Term, ...] | None = None) -> str:
    """A short window around the first hit (of the whole ``phrase``, when one is given and found), hits in
    **bold**.

    Why not FTS5's ``snippet()``: it is super-linear in the number of hits, and a word present in every note
    makes the top-ranked (longest) notes cost hundreds of milliseconds each. This is one regex pass.
    """
    if not terms:
        return body[: 2 * SNIPPET_RADIUS]
    pattern = _hit_pattern(terms)
    first = _find_phrase(body, [w for term in phrase for w in term.marked()]) if phrase else None
    first = first or _first_word(body, terms, pattern)
    if first is None:
        return body[: 2 * SNIPPET_RADIUS].strip()
    start = max(0, first.start() - SNIPPET_RADIUS)
    end = min(len(body), first.end() + SNIPPET_RADIUS)
    window = pattern.sub(lambda m: f"**{m.group(0)}**", body[start:end])
    return ("…" if start else "") + window.strip() + ("…" if end < len(body) else "")
