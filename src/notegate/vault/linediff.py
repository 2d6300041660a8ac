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
