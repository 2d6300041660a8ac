"""A search hit's snippet as a person reads it on the console: plain text, the query's words marked (pure).

The search service cuts snippets for models: Markdown as written, with the hits wrapped in ``**``. On a page
that reads as noise (``**plan** [[Roadmap|the roadmap]]``), so the console shows the text a reader sees --
wikilinks and links as their shown text, emphasis and code marks dropped -- and marks the query's words with
``<mark>``.  Everything else is escaped; the result is the only markup.  Linear: a fixed set of one-pass
substitutions and one alternation of at most :data:`MAX_WORDS` escaped words.
"""

from __future__ import annotations

import re

from markupsafe import Markup, escape

__all__ = ["MAX_WORDS", "plain_snippet"]

MAX_WORDS = 20
_WIKI = re.compile(r"!?\[\[([^\[\]|\n]*)(?:\|([^\[\]\n]*))?\]\]")
_LINK = re.compile(r"!?\[([^\[\]\n]*)\]\([^()\n]*\)")
_MARKS = re.compile(r"\*\*|__|==|`+|%%")
_HEADING = re.compile(r"(?m)^#{1,6}[ \t]+")
_WORD = re.compile(r"\w+")
_MARKED = Markup("<mark>{}</mark>")  # format() escapes what it is given


def _shown(snippet: str) -> str:
    text = _WIKI.sub(lambda m: (m.group(2) or m.group(1)).strip(), snippet)
    text = _LINK.sub(lambda m: m.group(1), text)
    text = _HEADING.sub("", text)
    return _MARKS.sub("", text)


def plain_snippet(snippet: str, query: str) -> Markup:
    """``snippet`` as plain text with each word of ``query`` marked (case-insensitive), safe to put in a page."""
    text = _shown(snippet)
    words = sorted({w.casefold() for w in _WORD.findall(query) if len(w) > 1}, key=len, reverse=True)[:MAX_WORDS]
    if not words:
        return escape(text)
    pattern = re.compile("|".join(re.escape(w) for w in words), re.IGNORECASE)
    out: list[Markup] = []
    done = 0
    for match in pattern.finditer(text):
        out.append(escape(text[done : match.start()]))
        out.append(_MARKED.format(match.group(0)))
        done = match.end()
    out.append(escape(text[done:]))
    return Markup("").join(out)
