"""A listing's paths in sorted order, carried from one tip to the next, and the walks that page through them.

Why: ``list_notes`` used to sort every path of the vault on every call (O(n log n): 6 ms for a page of one at
10,000 paths, 134 ms at 100,000). With the paths kept sorted, a page is one bisect to its first path and a
walk over what it returns, or skips as invisible to the caller.

Theory of operation.

* An :class:`Ordered` is two sorted lists: every path the listing serves (notes and attachments, before any
  policy filter) and every folder holding at least one of them. Neither is mutated once made: readers on
  other threads walk them while the next tip's version is made.
* The next tip's version is derived from an earlier one (:func:`advanced`): a copy of each list (C, ~1 ms at
  100,000 paths) and a bisect insert or delete per path a write touched, and per folder of it (a list
  insert is a memmove: ~70 µs a path at 100,000, folders included). Past :func:`derivable`'s bound a
  fresh sort (:func:`built`: 60 ms at 100,000 paths in the tree's order, 120 ms shuffled) is cheaper.
* Order is Python's code-point order (git's byte order of the UTF-8 paths).  Everything under a folder F
  sorts in ``[F + "/", F + "0")``: "0" is the code point right after "/", so one bisect to
  :func:`past_subtree` skips F's subtree. Only from inside it, though: F itself and its siblings
  ``F + "-x"``, ``F + ".x"`` sort *between* F and ``F + "/"`` (the walks below skip when they meet a path
  or folder nested in F, never from F itself).
* The walks take the caller's visibility as a predicate (``shown``): what may be seen is the policy's call,
  made by the service for each path the walk meets (:mod:`notegate.services.notes`).
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass

Shown = Callable[[str], bool]


@dataclass(frozen=True, slots=True)
class Ordered:
    paths: list[str]  # every servable path, sorted (never mutated once made)
    folders: list[str]  # every folder holding one of them, sorted (never mutated once made)


def built(paths: Iterable[str]) -> Ordered:
    """From scratch: sort the paths, collect their folders (each folder's ancestors are added with it)."""
    ordered = sorted(paths)
    folders: set[str] = set()
    last = ""
    for path in ordered:
        cut = path.rfind("/")
        if cut < 0:
            continue
        folder = path[:cut]
        if folder == last:  # sorted: a folder's direct paths come in runs
            continue
        last = folder
        while folder and folder not in folders:
            folders.add(folder)
            cut = folder.rfind("/")
            folder = folder[:cut] if cut >= 0 else ""
    return Ordered(ordered, sorted(folders))


def derivable(changed: int, size: int) -> bool:
    """Is deriving from an earlier version with ``changed`` touched paths cheaper than :func:`built`?  Each
    touched path costs memmoves of the lists and, until a reader asks, a place in the set each new version
    copies; so the bound is the listing maps' overlay bound, about 2*sqrt(n): 632 at 100,000 paths (44 ms
    against 60 ms for :func:`built`), 200 at 10,000 (3.4 ms against 6 ms)."""
    return changed <= max(64, 2 * math.isqrt(size))


def advanced(base: Ordered, touched: Collection[str], present: Shown) -> Ordered:
    """``base`` with each touched path inserted or deleted as ``present`` says it now is, and the folders
    of those paths kept or dropped by whether any path is still under them. ``base`` is not changed."""
    paths = base.paths.copy()
    for path in touched:
        i = bisect_left(paths, path)
        there = i < len(paths) and paths[i] == path
        if present(path):
            if not there:
                paths.insert(i, path)
        elif there:
            del paths[i]
    folders = base.folders.copy()
    for folder in {path[:cut] for path in touched for cut in _slashes(path)}:
        i = bisect_left(folders, folder)
        there = i < len(folders) and folders[i] == folder
        if first(paths, folder + "/", _always) is not None:
            if not there:
                folders.insert(i, folder)
        elif there:
            del folders[i]
    return Ordered(paths, folders)


def past_subtree(folder: str) -> str:
    """The least string after every path under ``folder`` (see the module docstring)."""
    return folder + "0"


def first(paths: list[str], prefix: str, shown: Shown) -> str | None:
    """The first path under ``prefix`` that ``shown`` accepts, or None: O(log n + paths it rejects)."""
    i = bisect_left(paths, prefix)
    while i < len(paths) and paths[i].startswith(prefix):
        if shown(paths[i]):
            return paths[i]
        i += 1
    return None


def page(paths: list[str], prefix: str, after: str | None, count: int, shown: Shown, *, direct: bool) -> list[str]:
    """Up to ``count`` paths under ``prefix``, after ``after`` (if given), that ``shown`` accepts, in order;
    ``direct``: only those not in a subfolder (each subfolder met is skipped with one bisect)."""
    i = bisect_left(paths, prefix)
    if after:
        i = max(i, bisect_right(paths, after))
    cut = len(prefix)
    out: list[str] = []
    while len(out) < count and i < len(paths):
        path = paths[i]
        if not path.startswith(prefix):
            break
        if direct:
            slash = path.find("/", cut)
            if slash >= 0:
                i = bisect_left(paths, past_subtree(path[:slash]), i + 1)
                continue
        if shown(path):
            out.append(path)
        i += 1
    return out


def subfolders(ordered: Ordered, prefix: str, shown: Shown) -> list[str]:
    """The folders directly under ``prefix`` holding a path ``shown`` accepts, in order: O(subfolders *
    log n + the paths rejected before each one's first accepted path)."""
    folders = ordered.folders
    i = bisect_left(folders, prefix)
    cut = len(prefix)
    out: list[str] = []
    while i < len(folders):
        folder = folders[i]
        if not folder.startswith(prefix):
            break
        slash = folder.find("/", cut)
        if slash >= 0:  # nested in a direct subfolder already met: skip the rest of that one's subtree
            i = bisect_left(folders, past_subtree(folder[:slash]), i + 1)
            continue
        if first(ordered.paths, folder + "/", shown) is not None:
            out.append(folder)
        i += 1
    return out


def _slashes(path: str) -> Iterable[int]:
    cut = path.find("/")
    while cut >= 0:
        yield cut
        cut = path.find("/", cut + 1)


def _always(_path: str) -> bool:
    return True
