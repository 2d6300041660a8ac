"""The listing of main the store keeps in memory (:class:`Listing`): note and attachment paths with their blobs,
their case-insensitive spellings and their sorted order, copied on write so a read never waits for a writer.

Also :class:`_Range`, what one group commit changed (how the listing and the index follow main without a tree
diff; :mod:`notegate.vault.commit` makes it from a pushed chain), and which tree paths the server serves at all.
Pure (issue 29 §4): nothing here reads git, a file or a clock (tests/test_layering.py checks).
"""

from __future__ import annotations

import math
from collections.abc import ItemsView, Iterator, Mapping, ValuesView
from dataclasses import dataclass, field
from typing import TypeVar

from notegate.vault import ordered
from notegate.vault.paths import AttachmentPath, NotePath, PathRejected, caseless_key, is_hidden_tree_path

V = TypeVar("V")


@dataclass(frozen=True)
class _Range:
    """What a group commit changed between two tips, known without a tree diff: the chain built each tree
    from its parent's, so its changes are exactly the paths it wrote whose blob differs.

    ``changes``: path -> blob at ``new`` (or ABSENT), the paths whose blob differs from ``old``'s (the net of
    the chain: a path changed and changed back is not in it), in the order the chain wrote them.
    ``last``: path -> the newest commit of the range that changed it (what a first-parent walk finds).
    Why: the index and the listing follow main after every write; three tree diffs of a wide vault (the
    listing's, the index's and its history walk's) cost more than the commit itself."""

    changes: tuple[tuple[str, str], ...]
    last: Mapping[str, str]


_KEEP = object()  # not in the overlay: the base's answer holds
_GONE = object()  # in the overlay as removed


class _CowMap(Mapping[str, V]):
    """A mapping that versions of the listing share: a base dict no published version ever writes to, and a
    small overlay of what changed since (``_GONE`` for a removed key).

    Why: the listing is one version per tip, and a write moves the tip by a few paths; copying a 100,000-note
    dict per version cost 9.6 ms a commit.  :meth:`derived` starts the next version from the same base with a
    copy of the overlay (O(changes since the last compaction)); when the overlay passes :func:`_overlay_bound`
    (about 2*sqrt(n)) it is folded into a fresh base instead, so a change costs O(sqrt(n)) amortised and a
    lookup at most two dict probes.  A version is written only before it is published (the builder owns it);
    after that readers iterate it while newer versions are built, and nothing they hold changes under them.
    A map that owns its base (a fresh build, or just compacted) writes to the base directly."""

    __slots__ = ("_base", "_len", "_over", "_owned")

    def __init__(self, base: dict[str, V] | None = None) -> None:
        self._base: dict[str, V] = {} if base is None else base
        self._over: dict[str, object] = {}
        self._len = len(self._base)
        self._owned = True

    # ------------------------------------------------------------- reading
    def __getitem__(self, key: str) -> V:
        if self._over:
            value = self._over.get(key, _KEEP)
            if value is _GONE:
                raise KeyError(key)
            if value is not _KEEP:
                return value  # type: ignore[return-value]
        return self._base[key]

    def get(self, key: str, default=None):  # type: ignore[override]
        if self._over:
            value = self._over.get(key, _KEEP)
            if value is not _KEEP:
                return default if value is _GONE else value
        return self._base.get(key, default)

    def __contains__(self, key: object) -> bool:
        if self._over:
            value = self._over.get(key, _KEEP)  # type: ignore[call-overload]
            if value is not _KEEP:
                return value is not _GONE
        return key in self._base

    def __len__(self) -> int:
        return self._len

    def __iter__(self) -> Iterator[str]:
        over, base = self._over, self._base
        if not over:
            yield from base
            return
        for key in base:
            if over.get(key, _KEEP) is not _GONE:
                yield key
        for key, value in over.items():
            if value is not _GONE and key not in base:
                yield key

    def items(self):  # type: ignore[override]
        return _CowItems(self)

    def values(self):  # type: ignore[override]
        return _CowValues(self)

    def _pairs(self) -> Iterator[tuple[str, V]]:
        over, base = self._over, self._base
        if not over:
            yield from base.items()
            return
        for key, value in base.items():
            changed = over.get(key, _KEEP)
            if changed is _KEEP:
                yield key, value
            elif changed is not _GONE:
                yield key, changed  # type: ignore[misc]
        for key, value in over.items():
            if value is not _GONE and key not in base:
                yield key, value  # type: ignore[misc]

    # --------------------------------------- writing (only before publishing)
    def __setitem__(self, key: str, value: V) -> None:
        if self._owned:
            if key not in self._base:
                self._len += 1
            self._base[key] = value
            return
        if key not in self:
            self._len += 1
        self._over[key] = value

    def __delitem__(self, key: str) -> None:
        if key not in self:
            raise KeyError(key)
        self._len -= 1
        if self._owned:
            del self._base[key]
        elif key in self._base:
            self._over[key] = _GONE
        else:
            del self._over[key]

    def pop(self, key: str, default=None):
        value = self.get(key, _KEEP)
        if value is _KEEP:
            return default
        del self[key]
        return value

    def setdefault(self, key: str, default: V) -> V:
        value = self.get(key, _KEEP)
        if value is _KEEP:
            self[key] = default
            return default
        return value  # type: ignore[return-value]

    def derived(self) -> _CowMap[V]:
        """The next version: shares this one's base; this one is never written again."""
        self._owned = False
        if len(self._over) > _overlay_bound(len(self._base)):
            return _CowMap(self._folded())
        fresh: _CowMap[V] = _CowMap.__new__(_CowMap)
        fresh._base = self._base
        fresh._over = dict(self._over)
        fresh._len = self._len
        fresh._owned = False
        return fresh

    def _folded(self) -> dict[str, V]:
        """The base with the overlay applied, as a new dict (same order as :meth:`_pairs`: a changed key keeps
        its place, a new one comes after the base). Why not ``dict(self._pairs())``: the base is copied in C
        and only the overlay is walked in Python (a fold at 100,000 notes: ~10x less CPU)."""
        base = self._base.copy()
        for key, value in self._over.items():
            if value is _GONE:
                base.pop(key, None)
            else:
                base[key] = value  # type: ignore[assignment]
        return base


def _overlay_bound(n: int) -> int:
    """Changed keys a version carries over its base before a compaction copies the base (O(n)): about
    2*sqrt(n), so both the overlay copy per version and the compaction spread over the versions between
    two compactions are O(sqrt(n)) a change."""
    return max(64, 2 * math.isqrt(n))


class _CowItems(ItemsView):
    def __iter__(self):
        return self._mapping._pairs()  # type: ignore[attr-defined]


class _CowValues(ValuesView):
    def __iter__(self):
        return (value for _key, value in self._mapping._pairs())  # type: ignore[attr-defined]


@dataclass
class Listing:
    """Every servable note at one commit: path -> blob id, plus a case-folded index for collisions.

    Each map is a :class:`_CowMap`: :meth:`copy` (the next tip's version) shares the previous version's maps
    and costs O(changed paths), and a published listing is never written again (readers may iterate it
    while the next one is built). Its paths in sorted order (:meth:`order`) are made on the first ask."""

    commit: str | None
    notes: _CowMap[str] = field(default_factory=_CowMap)
    case_index: _CowMap[str] = field(default_factory=_CowMap)
    folders: _CowMap[int] = field(default_factory=_CowMap)  # folder -> how many notes under it
    folder_case: _CowMap[str] = field(default_factory=_CowMap)  # caseless key -> the folder's spelling
    attachments: _CowMap[str] = field(default_factory=_CowMap)  # servable non-Markdown files: path -> blob id
    # The sorted paths once made (:meth:`order`); until then an earlier version's and the paths touched since.
    _ordered: ordered.Ordered | None = field(default=None, repr=False, compare=False)
    _since: tuple[ordered.Ordered, set[str]] | None = field(default=None, repr=False, compare=False)

    def order(self) -> ordered.Ordered:
        """Every path this version serves (notes and attachments) and every folder holding one, sorted: what
        list_notes pages through.  Made on the first ask, so a write never pays for it: from the version it
        was carried from when few paths changed since (:func:`ordered.advanced`: ~1 ms for a write's few
        at 100,000 paths), else sorted afresh (:func:`ordered.built`: ~60 ms).  Readers on several threads
        may both make it; each makes its own lists and publishes them whole with one assignment, so no
        reader ever sees a half-made one. ``_ordered`` is set before ``_since`` is cleared, which
        :meth:`copy` relies on (it reads them the other way round)."""
        made = self._ordered
        if made is not None:
            return made
        since = self._since
        if since is not None and ordered.derivable(len(since[1]), len(since[0].paths)):
            made = ordered.advanced(since[0], since[1], self._serves)
        else:
            made = ordered.built([*self.notes, *self.attachments])
        self._ordered = made
        self._since = None  # the earlier version's lists are not kept alive
        return made

    def _serves(self, path: str) -> bool:
        return path in self.notes or path in self.attachments

    def _touch(self, path: str) -> None:
        if self._since is not None:
            self._since[1].add(path)

    def add_attachment(self, path: str, blob: str) -> None:
        """A non-Markdown file (the policy decides which of them are attachments it serves)."""
        self._touch(path)
        self.attachments[path] = blob
        self.case_index.setdefault(_caseless(path), path)

    def add(self, path: str, blob: str) -> None:
        self._touch(path)
        if path not in self.notes:
            for folder in _folders_of(path):
                count = self.folders.get(folder, 0)
                self.folders[folder] = count + 1
                if count == 0:
                    self.folder_case.setdefault(_caseless(folder), folder)
        self.notes[path] = blob
        self.case_index[_caseless(path)] = path

    def remove(self, path: str) -> None:
        self._touch(path)
        if self.attachments.pop(path, None) is not None:
            if self.case_index.get(_caseless(path)) == path:
                del self.case_index[_caseless(path)]
            return
        if self.notes.pop(path, None) is None:
            return
        key = _caseless(path)
        if self.case_index.get(key) == path:
            del self.case_index[key]
        for folder in _folders_of(path):
            count = self.folders.get(folder, 0) - 1
            if count > 0:
                self.folders[folder] = count
                continue
            self.folders.pop(folder, None)
            if self.folder_case.get(_caseless(folder)) == folder:
                del self.folder_case[_caseless(folder)]

    def copy(self, commit: str) -> Listing:
        """The next version, sharing this one's maps (this one is not written again), and what the next one
        makes its sorted paths from: this one's, if made (nothing touched since); else the ones this one
        would have made its own from, with the paths touched since (a set copy, under
        :func:`ordered.derivable`'s bound; past it, nothing: the next one sorts afresh)."""
        since = self._since  # before _ordered: see order()
        made = self._ordered
        carried: tuple[ordered.Ordered, set[str]] | None = None
        if made is not None:
            carried = (made, set())
        elif since is not None and ordered.derivable(len(since[1]), len(since[0].paths)):
            carried = (since[0], set(since[1]))
        return Listing(
            commit=commit,
            notes=self.notes.derived(),
            case_index=self.case_index.derived(),
            folders=self.folders.derived(),
            folder_case=self.folder_case.derived(),
            attachments=self.attachments.derived(),
            _since=carried,
        )

    def collision(self, path: str) -> str | None:
        """An existing note or folder that differs from ``path`` (or one of its folders) only by case."""
        existing = self.case_index.get(_caseless(path))
        if existing is not None and existing != path:
            return existing
        for folder in _folders_of(path):
            spelled = self.folder_case.get(_caseless(folder))
            if spelled is not None and spelled != folder:
                return spelled + "/"
        return None


def _caseless(text: str) -> str:
    """:func:`caseless_key`, but ``text`` itself when it is its own key (37 % of the paths of a generated
    100,000-note vault): the case index then holds one str for such a path, not two equal ones (~3.5 MB)."""
    key = caseless_key(text)
    return text if key == text else key


def _folders_of(path: str) -> list[str]:
    parts = path.split("/")[:-1]
    return ["/".join(parts[: i + 1]) for i in range(len(parts))]


def servable(path: str) -> bool:
    """A tree entry we serve as a note: a visible, well-formed Markdown path."""
    if is_hidden_tree_path(path) or not path.endswith(".md"):
        return False
    try:
        parsed = NotePath.parse(path)
    except PathRejected:
        return False
    # A path git holds in another normal form (NFD from some clones) is not served: every check (privacy
    # globs, reads, case collisions) works on the NFC spelling, so serving the raw one could slip past them.
    return parsed.value == path


def servable_file(path: str) -> bool:
    """A tree entry we may serve as an attachment: a visible, well-formed path that is not a note (whether
    its type is allowed is the policy's call, at every read)."""
    if is_hidden_tree_path(path) or path.endswith(".md"):
        return False
    try:
        return AttachmentPath.parse(path).value == path
    except PathRejected:
        return False
