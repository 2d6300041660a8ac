"""Words written with marks the search index folds away (``presenté``, ``мой``, ``ά``), kept findable as
written (pure: string work only).

Why: the index's tokenizer removes diacritics (``unicode61 remove_diacritics 2``), so that ``resume`` finds
``résumé`` and a word typed without its accents still finds its notes.  The price was the other direction: a
query that spells the marks found the folded word as well, ranked by bm25 alone, and the one note holding
``presenté`` lost to the 46 holding ``presente`` (a real 1,875-note Spanish vault: bench/RESULTS.md, nineteenth
session); in Russian, ``мой`` (mine) and ``мои`` (my, plural) are one word to the index.  Issue 33 asks for the
exact form above any other form.

So each note's row carries, in a column of its own (``marks``, weight 0: it never scores), one token per
distinct word of the note that holds such a mark: the word in NFC, lower-cased, as UTF-8 in hex behind an
``x`` (``presenté`` -> ``x70726573656e74c3a9``), a token the tokenizer keeps whole and no folding can merge
with another.  A query word with marks gets the same token, and the search runs a tier of its own before
"all-words": the notes holding every word, those written with marks exactly so.

Linear in the text: ASCII texts are skipped at once (``str.isascii``, no scan); else one pass of the word
pattern, and the per-word work only for the distinct words outside ASCII.  Words of unspaced scripts (Han,
kana, Hangul) are left out: the index cuts those into characters (``query.segmented``).
"""

from __future__ import annotations

import re
import unicodedata

#: A word as the tokenizer cuts one (letters, digits, combining marks; ``query._WORD_CHARS``, kept in step).
_WORD = re.compile(r"(?:[^\W_]|[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f])+")
_UNSPACED = re.compile(
    "[\u3005-\u3007\u3040-\u309f\u30a0-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff"
    "\uac00-\ud7af\uf900-\ufaff\uff66-\uff9f\U00020000-\U0003134f]"
)
#: Distinct marked words a row keeps at most (a note of 10,000 different accented words is a word list, not
#: prose; past this its extra words are still found, folded, as before).
MAX_MARKED_WORDS = 4096


def mark_token(word: str) -> str | None:
    """The ``marks`` token of ``word`` when the index would fold a mark of it away, else None."""
    if word.isascii() or _UNSPACED.search(word):
        return None
    decomposed = unicodedata.normalize("NFD", word)
    if not any(unicodedata.combining(char) for char in decomposed):
        return None  # nothing to fold (Cyrillic without й/ё, Greek without accents, ß, ø): as written already
    return "x" + unicodedata.normalize("NFC", word).lower().encode("utf-8").hex()


def marks_of(text: str) -> str:
    """The ``marks`` column's value for a row: the tokens of its distinct marked words, sorted, one space
    apart ('' for a text without any)."""
    if text.isascii():
        return ""
    tokens: set[str] = set()
    seen: set[str] = set()
    for word in _WORD.findall(text):
        if word in seen or word.isascii():
            continue
        seen.add(word)
        token = mark_token(word)
        if token is not None:
            tokens.add(token)
            if len(tokens) >= MAX_MARKED_WORDS:
                break
    return " ".join(sorted(tokens))
