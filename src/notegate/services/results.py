"""What the notes service answers: plain frozen values, one per kind of answer (pure).

Why its own module: a door shows these (and describes each field) in its own words
(notegate.doors.mcp.results); services, jobs and hooks read the attributes directly.  Nothing here does I/O,
so the layering test holds it pure.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal


@dataclass(frozen=True, kw_only=True)
class NoteEntry:
    path: str
    revision: str
    quarantined: bool = False  # an inbox item: unreviewed text from a restricted session
    kind: Literal["note", "attachment"] = "note"
    size: int | None = None  # attachments: bytes
    media_type: str | None = None  # attachments: the policy's media type for its extension


@dataclass(frozen=True, kw_only=True)
class AttachmentRead:
    path: str
    revision: str
    media_type: str
    size: int
    data: bytes  # the file's bytes, checked against the policy at this read (type, size, first bytes)


@dataclass(frozen=True, kw_only=True)
class ListResult:
    folder: str
    notes: list[NoteEntry]
    folders: list[str] = field(default_factory=list)  # immediate subfolders (non-recursive listing)
    next_cursor: str | None = None


@dataclass(frozen=True, kw_only=True)
class ChangeInfo:
    commit: str
    date: str
    author: str
    login: str
    client: str | None = None
    connector: str | None = None
    session: str | None = None
    tier: str | None = None
    reviewed_by: str | None = None
    authors: str | None = None
    summary: str
    #: Set for a commit the server did not make (no provenance record): git's committer, marked unverified.
    #: Then author says "pushed by …", login is "pushed", and tier and the rest are None.
    pushed_by: str | None = None


@dataclass(frozen=True, kw_only=True)
class NoteRead:
    path: str
    text: str
    revision: str
    last_change: ChangeInfo | None
    quarantined: bool = False


@dataclass(frozen=True, kw_only=True)
class SearchHit:
    path: str
    snippet: str
    score: float
    quarantined: bool = False
    matched: str = "all-words"  # the tier that found it: phrase, all-words or any-word
    part: str = "body"  # where it matched: title, alias, heading, tag or body (vault/notefields.py PARTS)


@dataclass(frozen=True, kw_only=True)
class SearchResult:
    query: str
    hits: list[SearchHit]
    matched: str | None = None  # the loosest tier any hit needed (None: no hit)
    fallback: str | None = None  # said when no note held every word and the hits hold only some
    more: bool = False  # more notes matched than the limit let through


@dataclass(frozen=True, kw_only=True)
class WriteResult:
    status: Literal["preview", "committed"]
    message: str
    path: str
    base_revision: str
    diff: str
    new_path: str | None = None
    new_revision: str | None = None
    commit: str | None = None


@dataclass(frozen=True, kw_only=True)
class RevisionDiff:
    change: ChangeInfo
    revision: str  # the note's blob after this change ("absent": the change deleted it)
    diff: str  # against the version before it


@dataclass(frozen=True, kw_only=True)
class DeletedNote:
    path: str
    deleted_by: ChangeInfo  # the change that deleted it


@dataclass(frozen=True, kw_only=True)
class HistoryResult:
    path: str
    changes: list[ChangeInfo]
