"""The unified diff of a pure append, without :mod:`difflib`'s matcher: the same lines, at a fraction of the cost.

Why: every confirmed write answers with the diff of its change, and most writes of a memory add lines at the end
of a note (an append, a log entry, a session's next pass).  ``difflib.unified_diff`` then indexes every line of
the new text and searches the old one against it: under 32 concurrent writers it was ~7 % of the server's CPU.
When the old lines are a prefix of the new ones, ``difflib.SequenceMatcher`` always finds that prefix as its one
match (each step of its search keeps, among the longest blocks, the earliest in both texts, and for a prefix
that is the block on the diagonal; lines it treats as junk or popular only split the block into adjacent pieces
it merges again), so its opcodes are known without the search: ``equal`` over the old text, then ``insert``.
This module writes the diff from those opcodes as ``difflib.unified_diff`` does (three lines of context, its
hunk header, its range format); ``tests/services/test_linediff.py`` holds it equal to difflib by hypothesis.
Anything else (a line changed or removed) is not a pure append: the caller asks difflib as before.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence

CONTEXT = 3  # difflib.unified_diff's default ``n``


def _range(start: int, stop: int) -> str:
    """difflib's ``_format_range_unified``: 1-based start, a length unless it is 1, ``start-1,0`` when empty."""
    beginning, length = start + 1, stop - start
    if length == 1:
        return f"{beginning}"
    if not length:
        beginning -= 1
    return f"{beginning},{length}"


def appended_diff(old: Sequence[str], new: Sequence[str], fromfile: str, tofile: str) -> list[str] | None:
    """``list(difflib.unified_diff(old, new, fromfile, tofile))`` when ``old`` is a prefix of ``new`` (lines as
    ``splitlines(keepends=True)`` gives them); None otherwise (the caller runs difflib)."""
    size = len(old)
    if len(new) < size or new[:size] != old:
        return None
    if len(new) == size:
        return []  # no change: difflib yields nothing
    context = max(0, size - CONTEXT)  # the unchanged lines shown before the insert
    return [
        f"--- {fromfile}\n",
        f"+++ {tofile}\n",
        f"@@ -{_range(context, size)} +{_range(context, len(new))} @@\n",
        *(" " + line for line in old[context:]),
        *("+" + line for line in new[size:]),
    ]


#: The longest diff a write is answered with (a whole note rewritten answers with its head and a mark).
MAX_DIFF_CHARS = 60_000


def unified_diff(old: str, new: str, path: str, old_label: str, new_label: str) -> str:
    """The diff a write is answered with: ``old`` to ``new`` of ``path``, each side labelled, at most
    :data:`MAX_DIFF_CHARS` (a pure append written without difflib's matcher)."""
    before, after = old.splitlines(keepends=True), new.splitlines(keepends=True)
    fromfile, tofile = f"a/{path} ({old_label})", f"b/{path} ({new_label})"
    lines = appended_diff(before, after, fromfile, tofile)  # an append: the same lines, without the matcher
    if lines is None:
        lines = difflib.unified_diff(before, after, fromfile=fromfile, tofile=tofile)
    text = "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)
    if len(text) > MAX_DIFF_CHARS:
        text = text[:MAX_DIFF_CHARS] + "\n… diff truncated …\n"
    return text
