"""No file syncer's scope over a repository: walk each repository and its ancestors for syncer markers.

What counts as a marker is decided in :mod:`notegate.doctor.syncers` (pure data); this module only lists
folders.  Inside a repository every entry is looked at (a syncer's folder nested in it touches it too); of
each ancestor, its own name and the names directly in it (a Syncthing folder root above the vault holds
``.stfolder``).  Symlinks are not followed.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from notegate.doctor.result import CheckResult, fail, ok, warn
from notegate.doctor.syncers import entry_marker, root_marker, wants_children

CHECK = "syncer.scope"
#: Entries looked at inside one repository at most; past it the check says it looked at part only.
MAX_ENTRIES = 200_000


def _names(directory: Path) -> list[str]:
    try:
        with os.scandir(directory) as entries:
            return [e.name for e in entries]
    except OSError:
        return []


def _entry_hits(directory: Path, entry: os.DirEntry[str]) -> str | None:
    is_dir = entry.is_dir(follow_symlinks=False)
    children = _names(directory / entry.name) if is_dir and wants_children(entry.name) else ()
    return entry_marker(entry.name, is_dir, children)


def _walk(root: Path, budget: list[int]) -> Iterator[tuple[Path, str]]:
    """(path, syncer) for every marker at or under ``root``; ``budget[0]`` counts entries left."""
    stack = [root]
    while stack:
        directory = stack.pop()
        try:
            with os.scandir(directory) as entries:
                listed = list(entries)
        except OSError:
            continue
        for entry in listed:
            budget[0] -= 1
            if budget[0] < 0:
                return
            syncer = _entry_hits(directory, entry)
            if syncer is not None:
                yield directory / entry.name, syncer
            if entry.is_dir(follow_symlinks=False):
                stack.append(directory / entry.name)


def _ancestors(root: Path) -> Iterator[tuple[Path, str]]:
    """(path, syncer) for each ancestor (the repository's own folder included) named like a syncer's top
    folder or holding one of its markers."""
    for folder in (root, *root.parents):
        syncer = root_marker(folder.name) if folder.name else None
        if syncer is not None:
            yield folder, syncer
        if folder == root:
            continue  # its entries are walked in full
        try:
            with os.scandir(folder) as entries:
                for entry in entries:
                    syncer = _entry_hits(folder, entry)
                    if syncer is not None:
                        yield folder / entry.name, syncer
        except OSError:
            continue


def check_scope(label: str, repository: Path, *, max_entries: int = MAX_ENTRIES) -> CheckResult:
    """One repository: ``ok`` when no syncer reaches it, ``fail`` naming the syncer and the marker found."""
    root = repository.resolve()
    if not root.exists():
        return warn(CHECK, f"{root} does not exist", "Nothing to check until it is created.", subject=label)
    budget = [max_entries]
    hits = [*_ancestors(root), *_walk(root, budget)]
    if hits:
        path, syncer = hits[0]
        more = f" (and {len(hits) - 1} more marker(s))" if len(hits) > 1 else ""
        return fail(
            CHECK,
            f"{root} is within {syncer}'s scope: found {path}{more}",
            f"Move the repository out of the {syncer} folder (or exclude it from {syncer}) and let git be the "
            "only sync: clone it on each machine and use `notegate sync` or push/pull.",
            subject=label,
        )
    if budget[0] < 0:
        return warn(
            CHECK,
            f"no syncer marker in the first {max_entries} entries of {root} and its ancestors; the rest was not read",
            "Check the remaining folders by hand, or run the doctor on a smaller vault.",
            subject=label,
        )
    return ok(CHECK, f"no file syncer's marker in or above {root}", subject=label)
