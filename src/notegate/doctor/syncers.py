"""Which file names betray a file syncer's scope: pure data and two pure functions.

Why the doctor looks: a file syncer (Dropbox, iCloud Drive, Syncthing, ...) copying a git repository
between machines tears it — half-written packs, conflicted copies of refs, an index from another device —
and no fetch or fsck on one machine can undo what it merged.  Git is the only sync (DESIGN.md §1), so no
repository notegate uses may sit inside or contain a syncer's folder.

Each marker is what the syncer itself creates, with where it is documented or observed.  Names that sit in
a folder (``.stfolder``) are compared case-folded: the file systems these syncers run on mostly resolve
names case-insensitively.  A syncer's own top folder (``Dropbox``, ``OneDrive - Contoso``) is compared by
its exact spelling, because the syncer creates it with that spelling and a user's ``dropbox-notes`` is not
one.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass
from enum import StrEnum


class Kind(StrEnum):
    FILE = "file"
    DIR = "dir"
    ANY = "any"


@dataclass(frozen=True)
class Marker:
    """A name the syncer writes into a folder it syncs (``needs`` = names one of which must be inside it)."""

    name: str
    kind: Kind
    needs: tuple[str, ...] = ()


@dataclass(frozen=True)
class Syncer:
    name: str
    source: str
    markers: tuple[Marker, ...] = ()
    #: regexes (full match, case-folded) over entry names, for markers with a variable part
    patterns: tuple[str, ...] = ()
    #: regexes (full match, exact case) over folder names: the syncer's own top folder, as an ancestor
    roots: tuple[str, ...] = ()


SYNCERS: tuple[Syncer, ...] = (
    Syncer(
        "Syncthing",
        "docs.syncthing.net: .stfolder marks every folder root, .stignore holds its ignore patterns, "
        ".stversions its file versions",
        markers=(Marker(".stfolder", Kind.ANY), Marker(".stignore", Kind.FILE), Marker(".stversions", Kind.DIR)),
    ),
    Syncer(
        "Dropbox",
        "the Dropbox client writes a .dropbox file and a .dropbox.cache folder at its folder's root, named "
        "Dropbox, 'Dropbox (Team)', or Dropbox-* under macOS's CloudStorage (~/.dropbox, a folder, is its "
        "settings, not its scope)",
        markers=(Marker(".dropbox", Kind.FILE), Marker(".dropbox.cache", Kind.DIR)),
        roots=(r"Dropbox", r"Dropbox \(.+\)", r"Dropbox-.+"),
    ),
    Syncer(
        "iCloud Drive",
        "macOS keeps iCloud Drive at ~/Library/Mobile Documents/com~apple~CloudDocs (Desktop and Documents "
        "too when synced)",
        roots=(r"Mobile Documents", r"com~apple~CloudDocs", r"iCloud Drive", r"iCloudDrive"),
    ),
    Syncer(
        "OneDrive",
        "the OneDrive client names its folder OneDrive, 'OneDrive - <organisation>' or OneDrive-* (macOS "
        "CloudStorage) and leaves a hidden .849C9593-D756-4E56-8D6E-42412F2A707B file at its root",
        markers=(Marker(".849C9593-D756-4E56-8D6E-42412F2A707B", Kind.ANY),),
        roots=(r"OneDrive", r"OneDrive - .+", r"OneDrive-.+"),
    ),
    Syncer(
        "Resilio Sync",
        "Resilio (BitTorrent) Sync keeps a .sync folder at every synced folder's root holding ID and IgnoreList",
        markers=(Marker(".sync", Kind.DIR, needs=("ID", "IgnoreList", "StreamsList", "Archive")),),
    ),
    Syncer(
        "Google Drive",
        "Google Drive for desktop stages transfers in .tmp.drivedownload and .tmp.driveupload; its folders are "
        "'My Drive' and 'Google Drive', GoogleDrive-<account> under macOS's CloudStorage",
        markers=(Marker(".tmp.drivedownload", Kind.DIR), Marker(".tmp.driveupload", Kind.DIR)),
        roots=(r"My Drive", r"Google Drive", r"GoogleDrive-.+"),
    ),
    Syncer(
        "Nextcloud / ownCloud",
        "the desktop clients keep their journal in .sync_<id>.db (._sync_<id>.db in older versions) and a "
        ".nextcloudsync.log or .owncloudsync.log at the synced folder's root",
        markers=(Marker(".nextcloudsync.log", Kind.FILE), Marker(".owncloudsync.log", Kind.FILE)),
        patterns=(r"\._?sync_[^/]*\.db(?:-wal|-shm)?",),
    ),
)

_MARKERS: dict[str, tuple[Syncer, Marker]] = {m.name.casefold(): (s, m) for s in SYNCERS for m in s.markers}
_PATTERNS = tuple((re.compile(p), s) for s in SYNCERS for p in s.patterns)
_ROOTS = tuple((re.compile(r), s) for s in SYNCERS for r in s.roots)
#: Longest name worth matching: no marker is longer, and a bounded name keeps every match cheap.
MAX_NAME = 255


def wants_children(name: str) -> bool:
    """Does deciding whether ``name`` is a marker need the names inside it (Resilio's ``.sync``)?"""
    found = _MARKERS.get(name.casefold())
    return found is not None and bool(found[1].needs)


def entry_marker(name: str, is_dir: bool, children: Collection[str] = ()) -> str | None:
    """The syncer a file or folder called ``name`` belongs to, or None.  ``children``: the names inside it,
    when :func:`wants_children` said they matter."""
    if len(name) > MAX_NAME:
        return None
    folded = name.casefold()
    found = _MARKERS.get(folded)
    if found is not None:
        syncer, marker = found
        if (marker.kind is Kind.FILE and is_dir) or (marker.kind is Kind.DIR and not is_dir):
            return None
        if marker.needs:
            inside = {c.casefold() for c in children}
            if not any(n.casefold() in inside for n in marker.needs):
                return None
        return syncer.name
    for pattern, syncer in _PATTERNS:
        if not is_dir and pattern.fullmatch(folded):
            return syncer.name
    return None


def root_marker(folder_name: str) -> str | None:
    """The syncer whose own top folder is called ``folder_name`` (seen among a repository's ancestors)."""
    if len(folder_name) > MAX_NAME:
        return None
    for pattern, syncer in _ROOTS:
        if pattern.fullmatch(folder_name):
            return syncer.name
    return None
