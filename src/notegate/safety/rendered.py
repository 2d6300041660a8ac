"""The rendered views of an item: what a reader, or a shell, makes of its text (pure, linear time).

Why: ``CLAUDE\\.md``, ``CLAUDE&#46;md``, ``CLAUDE<!-- -->.md``, ``**CLAUDE**.md``, ``CLAUDE<wbr>.md``,
``[CLAUDE](https://example.org).md``, ``"CLAU""DE.md"``, ``.cursor\\rules`` and ``CLAUDE.`` + line break +
``md`` all *show* (or resolve, in a shell or on Windows) as an instruction-file name, so the floor's name
check runs on these views too (found in two security reviews). Each view only ever deletes or folds
characters that cannot be part of a name, so a name in the original is still a name in the view; the floor
scans the original anyway.

Linear time is a requirement, not a nicety: the floor runs on every ``list_inbox``, ``promote_inbox`` and
review, and it holds the interpreter lock. A review found ``<!--.*?-->`` quadratic (``<!--`` x 128 KiB took
17.7 s). So comments are cut with ``str.find`` (each search starts where the last ended), and every regex
here either matches a bounded or possessive run that cannot backtrack, or a single character; the timing
tests in ``tests/safety/test_floor_linear.py`` check the ratio between input sizes.
"""

from __future__ import annotations

import html
import re

from notegate.safety.unicode_tables import DOT_LOOKALIKES

__all__ = ["rendered_view", "rendered_views"]

# An HTML tag as a browser (and CommonMark's raw-HTML rule) sees it: ``<name ...>`` or ``</name>``. The
# attribute part stops at the next ``<`` or ``>``, possessively, so a failed attempt never rescans.
_TAG = re.compile(r"</?[A-Za-z][A-Za-z0-9-]*+(?:[\s/][^<>]*+)?>")
# A Markdown backslash escape shows only the escaped character. Deleting the backslash (a constant
# replacement, done in C) rather than substituting a group keeps a megabyte of backslashes cheap.
_MD_ESCAPE = re.compile(r"\\(?=[!-/:-@\[-`{-~])")
#: Emphasis markers, deleted wherever they are (the view keeps no markup).  Deleted one character at a time
#: with ``str.replace`` (a substring search in C), not with the class regex ``[*_`~]+``: a regex that starts
#: with a class is tried at every position, eight times the cost on a note.
_EMPHASIS = "*_`~"
# A link's destination ``](url "title")`` or reference ``][ref]``: what a reader sees is the link text only.
# ``[^()]*+`` cannot contain the next ``](``, so each character is scanned by at most one attempt.
_LINK_TARGET = re.compile(r"\]\([^()]*+\)|\]\[[^\[\]]*+\]")
_BRACKETS_QUOTES = "[]\"'"
# One line break (CRLF or LF) and the next line's indentation, unless a blank line follows (a paragraph
# break is two). Possessive, so a long run of spaces is read once.
_ONE_LINE_BREAK = re.compile(r"\r?\n[ \t]*+(?!\r?\n)")
#: The same where the text has no CR (``\r?`` can only match nothing): it starts with the literal ``\n``, so
#: ``re`` skips from line break to line break instead of trying the pattern at every position.
_ONE_LINE_BREAK_LF = re.compile(r"\n[ \t]*+(?!\r?\n)")
# Dot look-alikes folded by one regex substitution: ``str.translate`` with a dict costs a Python lookup per
# character on non-ASCII text, ten times the substitution.
_DOT_LOOKALIKE = re.compile(f"[{DOT_LOOKALIKES}]")
#: Whether an ASCII text can hold a dot look-alike at all (the table has none today: ASCII texts skip the pass).
_ASCII_DOT_LOOKALIKE = any(c.isascii() for c in DOT_LOOKALIKES)


def _delete(text: str, chars: str) -> str:
    """``text`` without any of ``chars`` (each a single character)."""
    for c in chars:
        if c in text:
            text = text.replace(c, "")
    return text


def _strip_comments(text: str) -> str:
    """Drop ``<!-- ... -->`` spans in one left-to-right pass; an unclosed ``<!--`` keeps the rest as text.

    ``str.find`` from where the previous search ended keeps this linear whatever the input (the regex
    ``<!--.*?-->`` it replaces rescanned to the end for every unclosed opener).
    """
    if "<!--" not in text:
        return text
    out: list[str] = []
    i = 0
    while True:
        j = text.find("<!--", i)
        if j < 0:
            break
        k = text.find("-->", j + 4)
        if k < 0:
            break
        out.append(text[i:j])
        i = k + 3
    out.append(text[i:])
    return "".join(out)


def rendered_views(text: str) -> tuple[str, str]:
    """``(reader, shell)``: what a Markdown/HTML reader sees, and what a shell or Windows path resolves.

    Both drop HTML comments and tags, decode entities, drop emphasis markers, fold links to their text,
    drop brackets and quotes (``"CLAU""DE.md"``), join a name broken by one line break, and turn dot
    look-alikes into dots. The reader view then applies Markdown backslash escapes and reads any other
    backslash as a path separator (``.cursor\\rules``); the shell view drops every backslash (``C\\LAUDE``,
    line continuations).
    """
    view = _TAG.sub("", _strip_comments(text))
    if "&" in view:
        view = html.unescape(view)
    view = _delete(view, _EMPHASIS)
    view = _LINK_TARGET.sub("", view)
    view = _delete(view, _BRACKETS_QUOTES)
    view = (_ONE_LINE_BREAK if "\r" in view else _ONE_LINE_BREAK_LF).sub("", view)
    if _ASCII_DOT_LOOKALIKE or not view.isascii():
        view = _DOT_LOOKALIKE.sub(".", view)
    if "\\" not in view:
        return view, view
    return _MD_ESCAPE.sub("", view).replace("\\", "/"), view.replace("\\", "")


def rendered_view(text: str) -> str:
    """The reader view alone (see :func:`rendered_views`)."""
    return rendered_views(text)[0]
