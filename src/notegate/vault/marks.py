"""Words written with Latin-script marks the search index folds (``presenté``, ``naïve``, ``đường``), kept
findable as written (pure: string work only).

Why: the index's tokenizer removes the diacritics of Latin letters (``unicode61 remove_diacritics 2``), so that
``resume`` finds ``résumé`` and a word typed without its accents still finds its notes.  The price was the other
direction: a query that spells the marks found the folded word as well, ranked by bm25 alone, and the one note
holding ``presenté`` lost to the 46 holding ``presente`` (a real 1,875-note Spanish vault: bench/RESULTS.md,
nineteenth session).  Issue 33 asks for the exact form above any other form.  Other scripts are not folded by
the tokenizer (``мой`` and ``мои``, ``ά`` and ``α`` stay apart), so nothing is kept for them.

So each note's row carries, in a column of its own (``marks``, weight 0: it never scores), one token per
distinct word of the note that holds such a mark: the word in NFC, lower-cased, as UTF-8 in hex behind an
``x`` (``presenté`` -> ``x70726573656e74c3a9``), a token the tokenizer keeps whole and no folding can merge
with another.  A query word with marks gets the same token, and the search runs a tier of its own before
"all-words": the notes holding every word, those written with marks exactly so.

Linear in the text: a text without a Latin letter with marks is skipped by one scan in C (``_MAY_FOLD``); else
one pass of a word-run pattern, and the per-word work only for its distinct words outside ASCII (~0.15 ms a note of
Spanish prose: bench/RESULTS.md, nineteenth session).
"""

from __future__ import annotations

import re
import unicodedata

#: The combining marks (Unicode's five blocks of them): what a decomposed text writes a letter's marks with, and
#: what the tokenizer counts as part of a word (``query._WORD_CHARS`` takes them from here).
COMBINING_MARKS = "\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f"
#: A run of word characters; cut at '_' below, as the tokenizer cuts (``\w`` is C-fast; the tokenizer's own
#: pattern, ``query._WORD_CHARS``, is an alternation twice as slow over a whole note).
_RUN = re.compile(r"\w+")
#: The Latin letters with marks (Latin-1 Supplement and Extended-A/B, Latin Extended Additional) and the
#: combining marks a decomposed text writes them with: a word without any of these has nothing folded away.
_MAY_FOLD = re.compile(f"[\u00c0-\u024f\u1e00-\u1eff{COMBINING_MARKS}]")
#: A mark on a Latin letter once decomposed (NFD): what the tokenizer removes.
_FOLDED = re.compile(f"[A-Za-z][{COMBINING_MARKS}]")
#: Distinct marked words a row keeps at most (a note of 10,000 different accented words is a word list, not
#: prose; past this its extra words are still found, folded, as before).
MAX_MARKED_WORDS = 4096


def mark_token(word: str) -> str | None:
    """The ``marks`` token of ``word`` when the index would fold a mark of it away, else None."""
    if not _MAY_FOLD.search(word) or not _FOLDED.search(unicodedata.normalize("NFD", word)):
        return None  # no Latin letter with a mark (ASCII, Cyrillic, Greek, ß, ø, an unspaced script)
    return "x" + unicodedata.normalize("NFC", word).lower().encode("utf-8").hex()


def marks_of(text: str) -> str:
    """The ``marks`` column's value for a row: the tokens of its distinct marked words, sorted, one space
    apart ('' for a text without any).  The text in NFC first (one C pass when it already is), so a word written
    decomposed is one run; a mark with no composed form left on its own cuts the run (that word is then
    found folded only, as before)."""
    if text.isascii() or not _MAY_FOLD.search(text):
        return ""
    if not unicodedata.is_normalized("NFC", text):
        text = unicodedata.normalize("NFC", text)
    tokens: set[str] = set()
    for run in dict.fromkeys(_RUN.findall(text)):  # first seen first: the cut below is the same every time
        if run.isascii():
            continue
        for word in run.split("_") if "_" in run else (run,):
            token = mark_token(word)
            if token is not None:
                tokens.add(token)
        if len(tokens) >= MAX_MARKED_WORDS:
            break
    return " ".join(sorted(tokens)[:MAX_MARKED_WORDS])
