"""Path globs of the policy file, matched the way a case-insensitive clone would see paths.

Pure string work: ``**`` spans segments, ``*`` and ``?`` stay inside one segment; both sides are NFC and
case-folded, so a decomposed or upper-case spelling of a private path is just as private.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable


@functools.lru_cache(maxsize=1024)  # the policy's few globs, asked once per path: build each pattern once
def _glob_regex(glob: str) -> re.Pattern[str]:
    """``**`` spans segments, ``*`` and ``?`` stay inside one segment; matched case-insensitively."""
    out = []
    i = 0
    while i < len(glob):
        if glob.startswith("**/", i):
            out.append(r"(?:[^/]+/)*")
            i += 3
        elif glob.startswith("**", i):
            out.append(r".*")
            i += 2
        elif glob[i] == "*":
            out.append(r"[^/]*")
            i += 1
        elif glob[i] == "?":
            out.append(r"[^/]")
            i += 1
        else:
            out.append(re.escape(glob[i].casefold()))
            i += 1
    return re.compile("".join(out) + r"\Z", re.DOTALL)


def glob_match(glob: str, path: str) -> bool:
    """NFC and case-folded first: a decomposed or upper-case spelling of a private path is just as private."""
    return (
        _glob_regex(unicodedata.normalize("NFC", glob)).match(unicodedata.normalize("NFC", path).casefold()) is not None
    )


def any_match(globs: Iterable[str], path: str) -> bool:
    return any(glob_match(g, path) for g in globs)


def folder_could_hold(globs: Iterable[str], folder: str) -> bool:
    """True when some note inside ``folder`` could match one of ``globs`` (used to hide whole folders)."""
    probe = f"{folder}/x.md" if folder else "x.md"
    return any_match(globs, probe)
