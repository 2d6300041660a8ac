"""Word forms: the Snowball stem of a word in the language of the note it stands in (pure string work).

Why: the index matches tokens exactly, so *financially contribute* never found *Financial contributions*
(issue 33).  A note's words are stemmed in its language into two extra FTS columns of lower weight
(``vault/query.py`` FIELDS); a query word is stemmed the same way and looked for as itself or as a stem, so a
word form finds the note and the exact form still scores higher.

Theory of operation:

- A stem column holds only the stems that differ from their word (``contributions`` -> ``contribut``), each
  once per note.  A stem equal to its word (``run``, ``the``: most words) is already in the exact columns,
  and a query looks for its stems in every column, so ``runs`` finds a note holding ``run``: storing it twice
  would only double the work.  Why each once: the stem columns say that a form is present; the exact columns
  count.  This keeps a build's extra work to one C call per distinct word (PyStemmer, ~0.6 us) and the stem
  columns a fraction of the body's size.
- A note's language (:func:`language_of`): its front matter ``lang`` (or ``language``), else a language code
  as its first folder (``es/Guía.md``, ``pt-br/…``: how multilingual vaults are laid out), else its script
  (Cyrillic, Greek, Arabic…), else a vote of a few common words over its first lines, else English.
- A query has no language of its own: each word is stemmed in every language the index holds notes in (the
  store remembers them); a one-language vault pays one stem per word.
- Unspaced scripts (CJK) and words holding a digit are never stemmed: they are found by their exact form,
  as before.

The stems are part of what a contentless row is deleted with, so the stemmer's version is part of the index
format (``vault/index.py`` INDEX_FORMAT): a new PyStemmer rebuilds the index rather than misdelete rows.
"""

from __future__ import annotations

import functools
import re

import Stemmer

#: ISO 639-1 code (as a folder or a ``lang`` property names it) -> Snowball algorithm.  Source: the Snowball
#: project's list of stemmers, as PyStemmer 3.1 ships them (``Stemmer.algorithms()``).  A code not listed here
#: (Japanese, Chinese, Korean, Thai, Vietnamese, Ukrainian…) means a language without a stemmer: exact forms.
LANGUAGES = {
    "ar": "arabic",
    "hy": "armenian",
    "eu": "basque",
    "ca": "catalan",
    "cs": "czech",
    "da": "danish",
    "nl": "dutch",
    "en": "english",
    "eo": "esperanto",
    "et": "estonian",
    "fi": "finnish",
    "fr": "french",
    "de": "german",
    "el": "greek",
    "hi": "hindi",
    "hu": "hungarian",
    "id": "indonesian",
    "ga": "irish",
    "it": "italian",
    "lt": "lithuanian",
    "ne": "nepali",
    "no": "norwegian",
    "nb": "norwegian",
    "nn": "norwegian",
    "fa": "persian",
    "pl": "polish",
    "pt": "portuguese",
    "ro": "romanian",
    "ru": "russian",
    "sr": "serbian",
    "es": "spanish",
    "sv": "swedish",
    "ta": "tamil",
    "tr": "turkish",
    "yi": "yiddish",
}
#: The language of a note nothing else names.
DEFAULT_LANGUAGE = "english"
STEMMER_VERSION = Stemmer.version()
#: A language code as a folder or a property writes it: ``es``, ``pt-br``, ``zh_TW`` (two letters first, so
#: folders such as ``doc`` or ``app`` are never taken for languages).
_CODE = re.compile(r"([a-z]{2})(?:[-_][a-z0-9]{2,8})?")
_WORD = re.compile(r"(?:[^\W_]|[\u0300-\u036f])+")
#: Never stemmed: a digit, or a character of a script written without spaces (searched by character).
_UNSTEMMED = re.compile(
    r"[\d\u3005-\u3007\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]"
)
#: The cheap detector's first step: a script that names its language (the first such letter decides).
#: Cyrillic is taken for Russian, the Arabic script for Arabic: the most common language of each.
_SCRIPTS = (
    (re.compile(r"[\u0400-\u04ff]"), "russian"),
    (re.compile(r"[\u0370-\u03ff]"), "greek"),
    (re.compile(r"[\u0600-\u06ff]"), "arabic"),
    (re.compile(r"[\u0530-\u058f]"), "armenian"),
    (re.compile(r"[\u0900-\u097f]"), "hindi"),
    (re.compile(r"[\u0b80-\u0bff]"), "tamil"),
    (re.compile(r"[\u0590-\u05ff\u0e00-\u0e7f\u3040-\u30ff\u4e00-\u9fff\uac00-\ud7af]"), ""),  # no stemmer
)
#: Its second step, for Latin script: the language with the most of its common words in the first lines (each
#: counted once), when it has two at least and more than any other (else the default).
#: A few words each that are frequent in one language and rare in the others (Wikipedia frequency lists).
_COMMON_WORDS = {
    "english": "the and of to is in that for with this you are it be",
    "spanish": "el los las del que para por una con es se",
    "french": "le les des est pour dans une que et avec sur pas",
    "german": "der die das und ist nicht mit ein eine zu auf sie",
    "italian": "il di che non una gli della sono con",
    "portuguese": "o os do da que para não uma com em são",
    "dutch": "het een van en dat niet op met zijn voor",
    "swedish": "och att det som är för med inte på en",
}
_COMMON_SETS = {language: frozenset(words.split()) for language, words in _COMMON_WORDS.items()}
_ALGORITHMS = frozenset(LANGUAGES.values())
DETECT_CHARS = 1000  # how much of a note the detector reads: bounded, whatever the note's size


def language_of(path: str, declared: str = "", text: str = "") -> str | None:
    """The Snowball algorithm of a note (see the module's docstring); None: a language without a stemmer."""
    if declared.strip().lower() in _ALGORITHMS:  # a language's name: `lang: spanish`
        return declared.strip().lower()
    for code in (declared, path.split("/", 1)[0] if "/" in path else ""):
        match = _CODE.fullmatch(code.strip().lower())
        if match:
            return LANGUAGES.get(match.group(1))
    return detect(text)


def detect(text: str) -> str | None:
    """The cheap detector: a script that names a language, else a vote of common words, else English.
    Reads :data:`DETECT_CHARS` characters at most: one regex pass and a set intersection per language."""
    head = text[:DETECT_CHARS]
    if not head.isascii():
        for pattern, language in _SCRIPTS:
            if pattern.search(head):
                return language or None
    present = set(head.lower().split())  # a word with punctuation on it does not vote: enough for a vote
    votes = sorted(((len(present & words), language) for language, words in _COMMON_SETS.items()), reverse=True)
    # A clear winner only: two of its words at least, more than any other language's (else the default).
    (best, language), (second, _other) = votes[0], votes[1]
    return language if best >= 2 and best > second else DEFAULT_LANGUAGE


_SPACELESS = "\u3005-\u3007\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
#: A word that is stemmed: a run of letters, not of a script written without spaces (digits, ``_`` and
#: combining marks end it).  Why one pattern: it leaves no word to filter afterwards (a filter per word was a
#: third of the stemming's cost on a multilingual vault).
_LETTERS = re.compile(f"[^\\W\\d_{_SPACELESS}]+")
#: Stems already made, per algorithm (word -> stem): a vault's vocabulary is small next to its words (Obsidian's
#: help: ~730,000 distinct words per note in its openings, most of them shared), so a build stems each about
#: once.  Replaced by an empty one at :data:`STEM_CACHE_WORDS` (bounded; a reader holding the old one is safe).
_CACHE: dict[str, dict[str, str]] = {}
STEM_CACHE_WORDS = 200_000


def stem_forms(text: str, algorithm: str | None) -> str:
    """What a stem column holds for ``text``: the stems of its distinct words (:data:`_LETTERS`, lower case)
    that are no word of ``text``, sorted, space-separated.  A stem that is a word of the text is found there
    by the exact columns.

    Why this shape: C does most of the work (one ``findall``, set operations, ``stemWords`` for the words not
    yet stemmed, a sort).  Sorted: a contentless row is deleted with exactly the values it was inserted with,
    so the value must not depend on a set's order."""
    if algorithm is None:
        return ""
    words = set(_LETTERS.findall(text.lower()))
    cache = _CACHE.get(algorithm)
    if cache is None or len(cache) > STEM_CACHE_WORDS:
        cache = _CACHE[algorithm] = {}
    missing = [w for w in words if w not in cache]
    if missing:
        cache.update(zip(missing, Stemmer.Stemmer(algorithm).stemWords(missing), strict=True))
    stems = {cache[w] for w in words}
    return " ".join(sorted(stems.difference(words)))


def stem_key(word: str) -> str | None:
    """The word as :func:`stem_forms` reads it in a note (lower case, one run of :data:`_LETTERS`), or None
    when a note's copy of it would not be stemmed whole."""
    low = word.lower()
    match = _LETTERS.fullmatch(low)
    return low if match else None


def stems_of(word: str, algorithms: tuple[str, ...]) -> tuple[str, ...]:
    """The distinct stems of one query word across ``algorithms`` that differ from it (lower case), in their
    order; () for a word that is never stemmed."""
    low = stem_key(word)
    if low is None:
        return ()
    return tuple(dict.fromkeys(s for s in (_stem(low, a) for a in algorithms) if s != low))


@functools.lru_cache(maxsize=8192)
def _stem(word: str, algorithm: str) -> str:
    """One query word's stem, remembered (a query stems each word in every language of the vault).  A new
    stemmer each time: PyStemmer's objects are not to be shared between threads, and one costs ~1 us."""
    return Stemmer.Stemmer(algorithm).stemWord(word)
