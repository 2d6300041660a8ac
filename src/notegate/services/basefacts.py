"""What a Bases view knows about each file the caller can see: path, size, last change, properties, tags and
links (the facts :mod:`notegate.vault.bases` filters and shows).

Why here and not in the door: the facts come from git (every visible note's text at the tip, its last commit
from the search index) and the visibility rules, which are the notes service's.  The file list is
:meth:`NotesService.visible_paths` (one audited ``list_notes``), so a private note is never a row of a
restricted caller's view, and only paths the caller may read are read.  One set of facts serves every view
until the tip moves (:class:`BaseFacts` keeps the last one per environment and visibility).

Bounds: at most :data:`MAX_BASE_FILES` files are considered (the rest are counted), front matter over
:data:`MAX_FRONT_MATTER_BYTES` or outside what the bounded YAML loader reads is shown without properties.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, replace
from datetime import UTC, datetime

from notegate.policy import Caller, sees_private
from notegate.vault.bases import BaseError, load_yaml
from notegate.vault.basexpr import FileFacts, from_yaml
from notegate.vault.frontmatter import front_matter_end
from notegate.vault.links import LinkTargets, links_in, outside_code, resolve

__all__ = ["MAX_BASE_FILES", "MAX_FRONT_MATTER_BYTES", "BaseFacts", "VaultFacts", "note_facts"]

#: Files one view considers at most (a vault larger than this shows the first ones in path order, and says so).
MAX_BASE_FILES = 50_000
#: Front matter read for properties at most; a larger block shows the note without properties.
MAX_FRONT_MATTER_BYTES = 32 << 10
#: An inline ``#tag`` as Obsidian reads one: after a space or a line's start, letters, digits, ``_ - /``.
_INLINE_TAG = re.compile(r"(?<![^\s(])#([\w/-]{1,200})")


@dataclass(frozen=True)
class VaultFacts:
    files: tuple[FileFacts, ...]
    by_path: dict[str, FileFacts]
    targets: LinkTargets
    skipped: int  # files past MAX_BASE_FILES


def _tags(properties: dict[str, object], plain_body: str) -> tuple[str, ...]:
    found: list[str] = []
    raw = properties.get("tags", properties.get("tag"))
    for tag in raw if isinstance(raw, list) else [raw] if isinstance(raw, str) else []:
        if isinstance(tag, str):
            found.extend(t.lstrip("#") for t in tag.replace(",", " ").split() if t.strip("#"))
    found.extend(m.group(1) for m in _INLINE_TAG.finditer(plain_body) if not m.group(1).replace("/", "").isdigit())
    return tuple(dict.fromkeys(found))


def note_facts(path: str, data: bytes, targets: LinkTargets, mtime: datetime | None) -> FileFacts:
    """One note's facts from its bytes (pure: used for every note, and for a note that embeds a base)."""
    text = data.decode("utf-8", "replace").replace("\r\n", "\n")
    properties: dict[str, object] = {}
    end = front_matter_end(text) if text.startswith("---") else 0
    body = text[end:] if end else text
    if end and end <= MAX_FRONT_MATTER_BYTES:
        block = text[:end].split("\n", 1)[1].rsplit("---", 1)[0]
        try:
            loaded = load_yaml(block, MAX_FRONT_MATTER_BYTES)
        except BaseError:
            loaded = None
        if isinstance(loaded, dict):
            properties = {str(k): from_yaml(v) for k, v in loaded.items()}
    plain_body = outside_code(body)  # once: the tags' scan and the links' (whose own pass is then quick)
    links, embeds = [], []
    for link in links_in(text[:end] + plain_body):
        where = resolve(link, path, targets) or link.target
        (embeds if link.embed else links).append(where)
    return FileFacts(
        path=path,
        size=len(data),
        mtime=mtime,
        properties=properties,
        tags=_tags(properties, plain_body),
        links=tuple(dict.fromkeys(links)),
        embeds=tuple(dict.fromkeys(embeds)),
    )


class BaseFacts:
    """The facts of every file a caller sees at the tip, kept until the tip moves (one entry per environment
    and visibility: the console's owner is one caller)."""

    def __init__(self, notes) -> None:  # a NotesService
        self.notes = notes
        self._lock = threading.Lock()
        self._cached: dict[tuple, VaultFacts] = {}
        self._times: dict[str, datetime] = {}
        #: (path, blob) -> the note's facts at the last build, reused while the vault's paths stay the same
        #: (a link's resolution depends on them): a commit re-reads only the notes it changed.
        self._notes: dict[tuple[str, str], FileFacts] = {}
        self._paths: frozenset[str] = frozenset()

    def facts(self, caller: Caller) -> VaultFacts:
        commit, paths = self.notes.visible_paths(caller)
        key = (caller.environment, commit, sees_private(caller))
        with self._lock:
            if key in self._cached:
                return self._cached[key]
        env = self.notes.env(caller, None)
        listing = env.store.listing()
        targets = LinkTargets(paths)
        chosen = sorted(paths)[:MAX_BASE_FILES]
        same_paths = frozenset(chosen)
        known = self._notes if same_paths == self._paths else {}
        fresh: dict[tuple[str, str], FileFacts] = {}
        files = []
        for path in chosen:
            blob = listing.notes.get(path)
            if blob is None:
                attachment = listing.attachments.get(path)
                size = env.store.blob_size(attachment) if attachment else 0
                files.append(FileFacts(path=path, size=size))
                continue
            facts = known.get((path, blob))
            if facts is None:
                facts = note_facts(path, env.store.read_unverified_blob_fast(blob), targets, None)
            fresh[(path, blob)] = facts
            files.append(replace(facts, mtime=self._mtime(env, path)))
        self._notes, self._paths = fresh, same_paths
        found = VaultFacts(tuple(files), {f.path: f for f in files}, targets, len(paths) - len(chosen))
        with self._lock:
            self._cached = {k: v for k, v in self._cached.items() if k[0] != key[0] or k[2] != key[2]}
            self._cached[key] = found
        return found

    def _mtime(self, env, path: str) -> datetime | None:
        """The time of the note's last commit, as the search index knows it (None until it does)."""
        commit = env.index.last_commit(path)
        if commit is None:
            return None
        found = self._times.get(commit)  # read once: another thread may clear the map between two reads
        if found is None:
            if len(self._times) > 100_000:
                self._times.clear()
            when = env.store.commit_info(commit).commit_time
            found = self._times[commit] = datetime.fromtimestamp(when, UTC).replace(tzinfo=None)
        return found
