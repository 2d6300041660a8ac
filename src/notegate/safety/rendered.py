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
_EMPHASIS = re.compile(r"[*_`~]+")
# A link's destination ``](url "title")`` or reference ``][ref]``: what a reader sees is the link text only.
# ``[^()]*+`` cannot contain the next ``](``, so each character is scanned by at most one attempt.
_LINK_TARGET = re.compile(r"\]\([^()]*+\)|\]\[[^\[\]]*+\]")
_BRACKETS_QUOTES = re.compile(r"[\[\]\"']+")
# One line break (CRLF or LF) and the next line's indentation, unless a blank line follows (a paragraph
# break is two). Possessive, so a long run of spaces is read once.
_ONE_LINE_BREAK = re.compile(r"\r?\n[ \t]*+(?!\r?\n)")
# Dot look-alikes folded by one regex substitution: ``str.translate`` with a dict costs a Python lookup per
# character on non-ASCII text, ten times the substitution.
_DOT_LOOKALIKE = re.compile(f"[{DOT_LOOKALIKES}]")


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
    view = _EMPHASIS.sub("", view)
    view = _LINK_TARGET.sub("", view)
    view = _BRACKETS_QUOTES.sub("", view)
    view = _DOT_LOOKALIKE.sub(".", _ONE_LINE_BREAK.sub("", view))
    if "\\" not in view:
        return view, view
    return _MD_ESCAPE.sub("", view).replace("\\", "/"), view.replace("\\", "")


def rendered_view(text: str) -> str:
    """The reader view alone (see :func:`rendered_views`)."""
    return rendered_views(text)[0]
