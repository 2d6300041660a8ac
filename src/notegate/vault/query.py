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

import functools
import re
import unicodedata
from dataclasses import dataclass, replace

from notegate.vault.canvas import canvas_text, is_canvas
from notegate.vault.frontmatter import front_matter_end
from notegate.vault.marks import COMBINING_MARKS, mark_token, marks_of
from notegate.vault.notefields import NoteFields, note_fields
from notegate.vault.wordforms import language_of, stem_forms, stem_key, stems_of

# ------------------------------------------------------------ the query: terms, phrases, tiers
# How a free-text query becomes FTS5 expressions (theory of operation).
#
# The caller's text is never handed to FTS5 as syntax: it is cut into *terms* (a word, ``word*`` for a prefix,
# or a ``"quoted phrase"``), and every word is re-quoted by us, so nothing the caller writes can become an
# operator, a column filter (``title:x``), ``NEAR``, ``^`` or a parenthesis.  The only syntax in an expression
# is ours: quoted strings, ``*`` after a string, `` + `` (phrase), ``AND``, ``OR``.  The tiers are searched in
# order, each ranked by bm25 and deduplicated against the tiers before it, until the limit is filled:
#   phrase      every term, in order, standing together ("a" + "b"): the notes about exactly that;
#   all-words   every term somewhere in the note ("a" AND "b");
#   word-forms  every term, as written or as another form of it (("a" OR "a1") AND "b"), when a word has other
#               forms the index holds (vault/wordforms.py): below every exact match, so a rare word or an
#               exact title never loses to a note holding only other forms of it;
#   any-word    some of the terms, or their forms ("a" OR "b"): only when no note holds them all; a fallback.
# A query of one term has one tier (a quoted phrase is "phrase", a word "all-words"), and a word "word-forms".
# A query that writes a word with marks the index folds (``presenté``: vault/marks.py) runs each of its first
# two tiers twice, first with those words required as written (``phrase+marks``, ``all-words+marks``): the
# exact form above the folded ones.  Its hits are shown as the tier they refine.
MATCH_TIERS = ("phrase", "all-words", "word-forms", "any-word")
MARKED_TIERS = {"phrase+marks": "phrase", "all-words+marks": "all-words"}


def shown_tier(tier: str) -> str:
    """The tier a hit is reported in (:data:`MATCH_TIERS`): a marked tier is the tier it refines."""
    return MARKED_TIERS.get(tier, tier)


#: At most this many terms are read from a query; the rest is ignored.  Why: each tier's cost is one
#: posting-list walk per term, so a query costs O(terms) lookups; 32 is more than any real search needs
#: (the service also cuts the text at 500 characters) and keeps the worst query to a few dozen lookups.
MAX_QUERY_TERMS = 32
# A word as FTS5's unicode61 tokenizer sees one: letters, digits and combining marks ('_' and punctuation
# separate). A "quoted phrase" (an unclosed quote runs to the end of the text) or a word, with an optional '*'.
_WORD_CHARS = rf"(?:[^\W_]|[{COMBINING_MARKS}])+"
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
_UNSPACED_RUN = re.compile(f"[{_UNSPACED}]+")


def _spaced(run: re.Match[str]) -> str:
    return " " + "  ".join(run.group()) + " "  # as a space on each side of each character


def segmented(text: str) -> str:
    """``text`` with a space between and around the characters of an unspaced script (what FTS5 indexes, and
    what a query word is cut by).  Linear: one scan, one call per run (a template per character was ~2x the
    cost on a multilingual vault); an ASCII text is returned as it is."""
    if text.isascii():
        return text
    return _UNSPACED_RUN.sub(_spaced, text)


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
    #: a lone word's stems in the languages of the indexed notes, those that differ from it (vault/wordforms.py)
    forms: tuple[str, ...] = ()
    #: a lone word that is stemmed: a forms column may hold it as the stem of another form (``run`` of ``runs``)
    stemmed: bool = False
    #: the ``marks`` tokens of its words written with marks the index folds (vault/marks.py), prefix word aside
    marks: tuple[str, ...] = ()

    def exact(self) -> str:
        return '"' + " ".join(self.words) + '"' + ("*" if self.prefix else "")

    def fts(self) -> str:
        """The word as written, or one of its stems (in any column: a stem column holds a note's other forms
        of it, an exact column the stem as a word of its own)."""
        if not self.forms:
            return self.exact()
        return "(" + " OR ".join([self.exact(), *(f'"{form}"' for form in self.forms)]) + ")"

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
        exact = [t.exact() for t in self.terms]
        loose = [t.fts() for t in self.terms]
        forms = [("word-forms", " AND ".join(loose))] if any(t.forms or t.stemmed for t in self.terms) else []
        marks = " AND ".join(f'"{mark}"' for t in self.terms for mark in t.marks)
        if len(exact) == 1:
            one = exact[0] if self.terms[0].phrase else exact_only(exact[0])
            tier = "phrase" if self.terms[0].phrase else "all-words"
            marked = [(f"{tier}+marks", f"{one} AND {marks}")] if marks else []
            return [*marked, (tier, one), *forms]
        # The phrase tier is the exact words together: no phrase of stems.  Why: each word's stems in every
        # language of the vault made a phrase walk (positions) each, tripling the statement's time on a
        # 30-language vault for no gain in recall; a note holding other forms is found by word-forms.
        # No column filter here: a filter makes FTS5 read every position list by column (a common and a rare
        # word: 2-2.6x the time), and the forms columns hold sorted stems, where a phrase is a coincidence.
        phrase = " + ".join(exact)
        all_words = exact_only(" AND ".join(exact))
        tiers = [("phrase", phrase), ("all-words", all_words)]
        if marks:
            tiers = [
                ("phrase+marks", f"{phrase} AND {marks}"),
                tiers[0],
                ("all-words+marks", f"{all_words} AND {marks}"),
                tiers[1],
            ]
        return [*tiers, *forms, ("any-word", " OR ".join(loose))]

    def probes(self) -> list[str]:
        """Each form as an FTS5 expression: what the store checks the index for (a first match each)."""
        return list(dict.fromkeys(f'"{form}"' for term in self.terms for form in term.forms))

    def stemmed_words(self) -> list[str]:
        """The stemmed words, as a forms column would hold them (what the store's stems table is asked)."""
        return list(dict.fromkeys(term.words[0].lower() for term in self.terms if term.stemmed))

    def keeping(self, known: set[str], held: set[str]) -> Query:
        """The query with only the ``known`` forms (a first match each) and the ``held`` stemmed words (a forms
        column holds them).  Why: a form no note holds would add a posting-list lookup to every statement, and
        the word-forms tier runs only when a form or a stemmed word is held."""
        return Query(
            tuple(
                replace(
                    t,
                    forms=tuple(f for f in t.forms if f'"{f}"' in known),
                    stemmed=t.stemmed and t.words[0].lower() in held,
                )
                for t in self.terms
            )
        )

    def words(self) -> list[str]:
        """Every word, prefix words marked with a trailing '*' (for snippets)."""
        return [w for term in self.terms for w in term.marked()]

    def forms(self) -> list[str]:
        """The words, then each stem as a prefix (``contribut*``): what a snippet marks and a hit's part is
        found by."""
        return [*self.words(), *dict.fromkeys(f"{form}*" for term in self.terms for form in term.forms)]


def parse_query(text: str, languages: tuple[str, ...] = ()) -> Query | None:
    """Free text as terms (see above); None when it holds no word.  Linear in the text, at most
    :data:`MAX_QUERY_TERMS` terms (a quoted phrase counts each of its words).  A lone word that is no prefix
    also matches its stems in ``languages`` (Snowball algorithms: those of the indexed notes); a quoted
    phrase is searched as written."""
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
        lone = match.group(3) is not None and len(words) == 1 and not prefix
        stemmed = lone and bool(languages) and words[0] == written[0] and stem_key(words[0]) is not None
        forms = stems_of(words[0], languages) if stemmed else ()
        plain_words = written[:-1] if prefix else written  # a prefix word may end anywhere: no exact form of it
        marks = tuple(dict.fromkeys(m for m in map(mark_token, plain_words) if m is not None))
        terms.append(Term(words, prefix, written if words != written else (), forms, stemmed, marks))
    return Query(tuple(terms)) if terms else None


def exact_only(expr: str) -> str:
    """``expr`` in the exact columns only: a forms column holds stems, and a stem that is a word (``run`` of
    ``runs``) must not make another form an exact match."""
    return f"{EXACT_COLUMNS} : ({expr})"


def fts_query(text: str, *, any_term: bool = False) -> str | None:
    """The all-words (or, with ``any_term``, the any-word) FTS5 expression of ``text``."""
    query = parse_query(text)
    if query is None:
        return None
    parts = [t.fts() for t in query.terms]
    return (" OR " if any_term else " AND ").join(parts)


# ------------------------------------------------------------ the row: its text, its title, its fields
#: The fields a note is searched by, one FTS5 column each, in the table's order, with its BM25 weight.  Why these
#: weights: a note whose name, alias or heading holds the query is the one a person searching for it meant, and
#: must outrank a long note that merely mentions the words (bench/bench_known_item.py).  The ``*_forms``
#: columns hold the other word forms (vault/wordforms.py) of the parts that name a note: its title and aliases,
#: its headings; only the word-forms tier looks for them, below every exact match.  Why not the body's forms:
#: stemming every word of every note tripled a first build's CPU (Obsidian's help, 25 MB: 2.6 -> 7.3 s), and
#: even a note's first 2,000 characters cost a third more build for no gain in known-item recall (0.917
#: without, 0.916 with: bench/RESULTS.md).  A body's word is still found by its exact form, and by a query's
#: stem that is a word of its own (``runs`` finds ``run``).
#: :func:`field_values` makes a row's values in this order; the store makes its tables and statements from
#: these names.  Changing a field changes what rows hold, so it goes with a new ``INDEX_FORMAT``
#: (vault/index.py): indexes are then rebuilt from git.
FIELDS: tuple[tuple[str, float], ...] = (
    ("path", 4.0),
    ("title", 8.0),
    ("aliases", 8.0),
    ("headings", 4.0),
    ("tags", 3.0),
    ("body", 1.0),
    ("name_forms", 4.0),  # the stems of the title's and the aliases' words
    ("heading_forms", 2.0),  # the stems of the headings' words
    ("marks", 0.0),  # its words written with marks the tokenizer folds, as written (vault/marks.py); never scored
)
#: The FTS5 column filter of the exact fields (the words as the note writes them: not the forms, not the marks).
EXACT_COLUMNS = "{" + " ".join(n for n, _w in FIELDS if not n.endswith("_forms") and n != "marks") + "}"
#: FTS5's tokenizer for every field.  :data:`_WORD_CHARS` and :func:`segmented` cut a query's words as it
#: cuts a note's, so a change to it changes them too, and the ``INDEX_FORMAT``.
TOKENIZER = "unicode61 remove_diacritics 2"


def title_of(path: str, text: str) -> str:
    return note_fields(path, text).title


def indexed_text(path: str, data: bytes) -> str:
    """The text a file is searched by: a canvas's card texts, a note's bytes as UTF-8 (undecodable bytes
    replaced).  Its snippets are cut from the same text, read back from git by blob id."""
    return canvas_text(data) if is_canvas(path) else data.decode("utf-8", errors="replace")


def field_values(path: str, text: str) -> tuple[str, ...]:
    """The values of a row's :data:`FIELDS`: made by this one function at insert and at delete, since a
    contentless table removes a row only given exactly the values it was inserted with (``INDEX_FORMAT``)."""
    return note_row(path, text)[0]


def note_row(path: str, text: str) -> tuple[tuple[str, ...], NoteFields, str | None]:
    """What the store inserts for a note, from one reading of it: its :data:`FIELDS` values, its parts (for
    its names, ``vault/names.py``) and the Snowball algorithm its forms were stemmed with (None: not
    stemmed).  Linear in the text: a few regex passes; the stemming reads the names and headings only."""
    fields = note_fields(path, text)
    language = language_of(path, fields.lang, text)
    names = path.replace("/", " ").replace("-", " ").replace("_", " ")
    aliases = "\n".join(fields.aliases)
    exact = (names, fields.title, aliases, fields.headings, fields.tags, text)
    forms = (stem_forms(f"{fields.title}\n{aliases}", language), stem_forms(fields.headings, language))
    marks = marks_of(f"{names}\n{text}")
    return (*(segmented(value) for value in exact), *forms, marks), fields, language


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
    return _hit_pattern_of(tuple(terms))


@functools.lru_cache(maxsize=256)
def _hit_pattern_of(terms: tuple[str, ...]) -> re.Pattern[str]:
    """Why cached: a search asks for the same pattern once per hit (20 a search), and building its text is
    most of the cost (``re``'s own cache only saves the compile)."""
    return re.compile("(?:" + "|".join(_start(t) + _word_pattern(t) for t in terms) + ")", re.IGNORECASE)


@functools.lru_cache(maxsize=256)
def _lowered_pattern(terms: tuple[str, ...]) -> re.Pattern[str]:
    """:func:`_first_word`'s pattern of the lowered terms (cached as :func:`_hit_pattern_of` is)."""
    return re.compile("|".join(_word_pattern(t.lower()) for t in terms))


def hit_pattern(terms: list[str]) -> re.Pattern[str]:
    """The pattern of a search's words and forms in a note: what a hit's part is found by (notefields)."""
    return _hit_pattern(terms)


def _first_word(body: str, terms: list[str], hits: re.Pattern[str] | None = None) -> re.Match[str] | None:
    """The first place one of ``terms`` starts a word, as ``\b(?:t1|t2…)`` with IGNORECASE finds it.  Why not
    that pattern: as for :func:`_find_phrase`, a leading ``\b`` and IGNORECASE defeat the engine's literal
    scan (~0.1 ms a 3 KB note, for each of a search's 20 snippets); lowered, the scan is a fraction of it.
    A term is word characters only, so no word starts inside a match that does not start one, and skipping
    past such a match (``finditer``) misses nothing.  Falls back to the one pattern when lowering changes the
    length (positions would not map back), a term does not start with a word character, or one starts with
    a character of an unspaced script (found anywhere, not at a word's start) (``hits``: that pattern, when
    the caller has it already).

    A long ASCII note is lowered and scanned in its first :data:`FIRST_CHUNK` characters first.  Why: most
    hits are found near the top, and lowering a 150 KB note to find a word in its first line was most of its
    snippet's cost.  A match there that ends before the chunk's end is the whole text's first: a term's
    match never crosses a non-word character, so every attempt that started earlier and ran into the chunk's
    end lies in one word with it, and such a match does not start a word."""
    key = tuple(terms)
    if not _lowerable(key):
        return (hits or _hit_pattern(terms)).search(body)
    pattern = _lowered_pattern(key)
    if len(body) > FIRST_CHUNK and body.isascii():  # ASCII: lowering keeps every position
        chunk = body[:FIRST_CHUNK].lower()
        match = _first_start(pattern, chunk, terms)
        if match is not None and match.end() < len(chunk):
            return match
    low = body.lower()
    if len(low) != len(body):
        return (hits or _hit_pattern(terms)).search(body)
    return _first_start(pattern, low, terms)


#: How much of a long ASCII note :func:`_first_word` scans before the whole of it.
FIRST_CHUNK = 4096


@functools.lru_cache(maxsize=256)
def _lowerable(terms: tuple[str, ...]) -> bool:
    """Every term starts with a word character and none with one of an unspaced script: :func:`_first_word`
    may look for them lowered.  Why cached: asked for each of a search's hits, of the same terms each time."""
    return all(t[:1] and _WORD_START.match(t) and not _starts_unspaced(t) for t in terms)


def _first_start(pattern: re.Pattern[str], low: str, terms: list[str]) -> re.Match[str] | None:
    """The first match of ``pattern`` (the lowered ``terms``) in ``low`` that starts a word.

    Several terms (a query of two words, a word and its forms): each term's first place is looked for with
    ``str.find``, and ``pattern`` is tried only there.  Why: ``re`` scans for an alternation by trying it at
    every position (no literal prefix to skip to), ~3x the time of a ``find`` per term over a long note (20
    notes of 20-150 KB holding two rare words: 7.2 -> 2.5 ms).  The same match: the earliest place where a
    term starts a word and ``pattern`` matches is where ``finditer`` finds its first word-starting match,
    and ``pattern.match`` there picks the same alternative.  One term: ``re`` scans for its literal itself."""
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


_WORD_START = re.compile(r"\w")


def _any_of(*marks: str) -> re.Pattern[str]:
    """One pattern finding any of ``marks`` (a literal scan at C speed)."""
    return re.compile("|".join(re.escape(m) for m in marks))


#: Markdown's marks, dropped from a snippet's window so it reads as plain text (the hits are then the only
#: ``**`` in it): a link or embed as its label, headings', quotes' and lists' leading marks, emphasis, code
#: ticks, highlights and HTML tags (runs of white space: :func:`_one_space`).  Each pass's third value: a pattern of
#: strings one of which every match of its pattern holds, so a window holding none of them is left as it is
#: without running the pattern (most windows hold no link, no list mark): the same text, for one literal scan
#: instead of a regex pass that tries every position.
_MARKUP = (
    (re.compile(r"!?\[\[(?:[^\[\]|]*\|)?([^\[\]]*)\]\]"), r"\1", _any_of("[[")),
    (re.compile(r"!?\[([^\[\]]*)\]\([^()\s]*\)"), r"\1", _any_of("](")),
    (
        re.compile(r"^[ \t]*(?:#{1,6}[ \t]+|>[ \t]?(?:\[![^\]]*\][+-]?[ \t]*)?|[-*+][ \t]+(?:\[.\][ \t]+)?)", re.M),
        "",
        _any_of("#", ">", "-", "*", "+"),
    ),
    (
        re.compile(r"\*\*|__|==|~~|`+|\[\[|\]\]|<[^<>\n]{1,200}>"),
        "",
        _any_of("**", "__", "==", "~~", "`", "[[", "]]", "<"),
    ),
)


def plain(text: str) -> str:
    """``text`` as plain text (:data:`_MARKUP`): a few regex passes over a snippet's window only, then runs of
    white space as one space (:func:`_one_space`)."""
    for pattern, repl, triggers in _MARKUP:
        if triggers.search(text) is not None:
            text = pattern.sub(repl, text)
    return _one_space(text)


def _one_space(text: str) -> str:
    """``re.sub(r"\\s+", " ", text)``, by ``str.split``.  Why: the regex tries every position of the window
    (~5 us of a hit's ~25 us snippet); ``split`` cuts at exactly the characters ``\\s`` matches (both are
    ``str.isspace``: checked over every code point in tests/vault/test_describe_same.py), and the runs at
    either end, which ``split`` drops, are put back as one space each."""
    words = text.split()
    if not words:
        return " " if text else ""
    joined = " ".join(words)
    if text[0].isspace():
        joined = " " + joined
    return joined + " " if text[-1].isspace() else joined


def _bold(match: re.Match[str]) -> str:
    """A hit in **bold**.  Why a function and not a replacement template (group 0 between the marks): on
    Python 3.11 a template is expanded by Python code for every match (~1.5x slower over a search's windows)."""
    return f"**{match.group(0)}**"


def _marked(text: str, terms: list[str], hits: re.Pattern[str]) -> str:
    """``hits.sub(_bold, text)``: each hit in **bold**.  An ASCII window and ASCII terms that
    :func:`_first_word` may look for lowered are marked by the lowered pattern over the lowered window, each
    match kept when it starts a word.  Why: ``hits`` starts with ``\\b`` and ignores case, so ``re`` tries
    it at every position of the window (~4 us of a hit's snippet); the lowered pattern is scanned for.  The
    same matches: in ASCII, ignoring case is lowering (the case-blind pairs that lowering misses, ``ſ`` and
    ``s``, ``K`` and ``k``, each hold a character outside ASCII); a match that does not start a word is word
    characters only, so no match of ``hits`` starts inside it, and at a word's start both patterns pick
    their first alternative that matches there."""
    key = tuple(terms)
    if not (text.isascii() and _ascii_lowerable(key)):
        return hits.sub(_bold, text)
    low = text.lower()
    pieces: list[str] = []
    last = 0
    for match in _lowered_pattern(key).finditer(low):
        at = match.start()
        if at and _WORD_START.match(low, at - 1):
            continue
        pieces += (text[last:at], "**", text[at : match.end()], "**")
        last = match.end()
    if not pieces:
        return text
    pieces.append(text[last:])
    return "".join(pieces)


@functools.lru_cache(maxsize=256)
def _ascii_lowerable(terms: tuple[str, ...]) -> bool:
    """The terms are ASCII and :func:`_lowerable` (:func:`_marked` may mark them lowered)."""
    return all(t.isascii() for t in terms) and _lowerable(terms)


def make_snippet(
    body: str, terms: list[str], *, phrase: tuple[Term, ...] | None = None, skip: int | None = None
) -> str:
    """A short window of plain text around the first hit (of the whole ``phrase``, when one is given and
    found), hits in **bold**: in the body after the front matter, else in the front matter (an alias, a tag).

    Why not FTS5's ``snippet()``: it is super-linear in the number of hits, and a word present in every note
    makes the top-ranked (longest) notes cost hundreds of milliseconds each. This is one regex pass.
    ``skip``: where the front matter ends (``front_matter_end(body)``), when the caller has it.
    """
    skip = front_matter_end(body) if skip is None else skip
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
    window = _marked(plain(body[start:end]), terms, pattern)
    return ("…" if start > offset else "") + window.strip() + ("…" if end < len(body) else "")
