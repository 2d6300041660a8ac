"""LiveSync's document format, read and written (pure: dictionaries in, dictionaries out): the bridge's codec.

What LiveSync stores for one note (its common library, ``src/common/models/db.type.ts`` and ``db.const.ts``;
read there, not copied):

* a **metadata document** ``{_id, path, type: "plain", children: [chunk ids], ctime, mtime, size, eden: {}}``
  (``type: "newnote"`` for binary files, ``"notes"`` for the legacy inline form with ``data``), soft-deleted by
  ``deleted: true`` (or by CouchDB's ``_deleted``);
* **chunk documents** ``{_id: "h:…", type: "leaf", data}``: the note's text is its chunks' ``data`` joined in
  ``children`` order; ids are content hashes, so equal pieces are shared between notes and revisions;
* the id of a path (``path2id``): the path itself, lower-cased when the vault is case-insensitive (LiveSync's
  default), ``/`` prepended when it starts with ``_`` (CouchDB reserves ``_`` ids); ``f:`` + a hash when path
  obfuscation is on (the bridge then reads ``path`` from the document, never from the id).

This first cut reads and writes plain (Markdown) notes in clear. Binary notes and end-to-end encrypted chunks
are refused by name (``livesync-document-unsupported``) until the bridge holds the passphrase; a note whose
chunks have not all arrived yet is ``livesync-document-incomplete`` (replication delivers them apart).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass

from notegate.errors import NotegateError

NOTE_PLAIN = "plain"
NOTE_BINARY = "newnote"
NOTE_LEGACY = "notes"
CHUNK = "leaf"
CHUNK_PREFIX = "h:"
ENCRYPTED_CHUNK_PREFIX = "h:+"
OBFUSCATED_PREFIX = "f:"
#: LiveSync's own limit for one chunk of a Markdown note (MAX_DOC_SIZE): pieces are cut at line ends below it.
MAX_CHUNK_CHARS = 1000


class DocumentError(NotegateError):
    """A LiveSync document the bridge cannot turn into a note (its rule says which way)."""


@dataclass(frozen=True)
class LiveSyncNote:
    """One note as LiveSync holds it: its path (from the document, never guessed from the id), its text
    (None when deleted), times in milliseconds, and the revision and conflicts CouchDB reported."""

    doc_id: str
    path: str
    text: str | None
    ctime: int
    mtime: int
    rev: str | None = None
    conflicts: tuple[str, ...] = ()

    @property
    def deleted(self) -> bool:
        return self.text is None


def doc_id_of(path: str, *, case_insensitive: bool = True) -> str:
    """The document id LiveSync gives ``path`` without path obfuscation."""
    name = path.lower() if case_insensitive else path
    return "/" + name if name.startswith("_") else name


def is_note(doc: Mapping) -> bool:
    return doc.get("type") in (NOTE_PLAIN, NOTE_BINARY, NOTE_LEGACY) and isinstance(doc.get("path"), str)


def is_chunk(doc: Mapping) -> bool:
    return doc.get("type") == CHUNK and str(doc.get("_id", "")).startswith(CHUNK_PREFIX)


def read_note(meta: Mapping, chunks: Mapping[str, Mapping]) -> LiveSyncNote:
    """The note a metadata document describes, its text joined from ``chunks`` (id -> chunk document)."""
    doc_id = str(meta.get("_id", ""))
    if meta.get("e_") is True:
        raise DocumentError("the note's metadata is end-to-end encrypted", rule="livesync-document-unsupported")
    path = meta.get("path")
    if not is_note(meta) or not isinstance(path, str):
        raise DocumentError("the document is not a LiveSync note", rule="livesync-document-unsupported")
    kind = meta["type"]
    common = {
        "doc_id": doc_id,
        "path": path,
        "ctime": int(meta.get("ctime") or 0),
        "mtime": int(meta.get("mtime") or 0),
        "rev": meta.get("_rev"),
        "conflicts": tuple(meta.get("_conflicts") or ()),
    }
    if meta.get("deleted") or meta.get("_deleted"):
        return LiveSyncNote(text=None, **common)
    if kind == NOTE_BINARY:
        raise DocumentError("binary files are not bridged yet", rule="livesync-document-unsupported")
    if kind == NOTE_LEGACY:
        data = meta.get("data")
        text = "".join(data) if isinstance(data, list) else data
        if not isinstance(text, str):
            raise DocumentError("a legacy note without text", rule="livesync-document-unsupported")
        return LiveSyncNote(text=text, **common)
    children = meta.get("children")
    if not isinstance(children, list) or not all(isinstance(c, str) for c in children):
        raise DocumentError("a note without its list of chunks", rule="livesync-document-unsupported")
    pieces: list[str] = []
    eden = meta.get("eden") or {}
    for child in children:
        if child.startswith(ENCRYPTED_CHUNK_PREFIX):
            raise DocumentError("the note is end-to-end encrypted", rule="livesync-document-unsupported")
        chunk = chunks.get(child) or (eden.get(child) if isinstance(eden, dict) else None)
        if chunk is None:
            raise DocumentError("a chunk of the note has not arrived yet", rule="livesync-document-incomplete")
        data = chunk.get("data")
        if not isinstance(data, str):
            raise DocumentError("a chunk without text", rule="livesync-document-unsupported")
        if chunk.get("e_") is True:  # LiveSync marks an encrypted document with e_ (src/pouchdb/encryption.ts)
            raise DocumentError("the note is end-to-end encrypted", rule="livesync-document-unsupported")
        pieces.append(data)
    return LiveSyncNote(text="".join(pieces), **common)


def split_text(text: str, max_chars: int = MAX_CHUNK_CHARS) -> list[str]:
    """Pieces of at most ``max_chars`` characters, cut after a line end where one is in reach (so an edit
    to one line changes one or two chunks, and equal lines share chunks), never inside a surrogate pair."""
    pieces: list[str] = []
    start = 0
    while start < len(text):
        end = min(start + max_chars, len(text))
        if end < len(text):
            cut = text.rfind("\n", start, end)
            if cut >= start:
                end = cut + 1
        pieces.append(text[start:end])
        start = end
    return pieces


def chunk_id(piece: str) -> str:
    """A chunk's id: ``h:`` and a content hash (32 hex digits of SHA-256: a length none of LiveSync's own hash
    choices produces, so a notegate chunk never collides with one of theirs)."""
    return CHUNK_PREFIX + hashlib.sha256(piece.encode("utf-8")).hexdigest()[:32]


def write_note(
    path: str, text: str, *, ctime: int, mtime: int, case_insensitive: bool = True, rev: str | None = None
) -> tuple[dict, list[dict]]:
    """The metadata document and the chunk documents LiveSync reads for ``text`` at ``path`` (times in ms)."""
    pieces = split_text(text)
    chunks: dict[str, dict] = {}
    for piece in pieces:
        chunks.setdefault(chunk_id(piece), {"_id": chunk_id(piece), "type": CHUNK, "data": piece})
    meta: dict = {
        "_id": doc_id_of(path, case_insensitive=case_insensitive),
        "path": path,
        "type": NOTE_PLAIN,
        "children": [chunk_id(p) for p in pieces],
        "ctime": ctime,
        "mtime": mtime,
        "size": len(text.encode("utf-8")),
        "eden": {},
    }
    if rev is not None:
        meta["_rev"] = rev
    return meta, list(chunks.values())


def deleted_note(path: str, *, mtime: int, rev: str, case_insensitive: bool = True) -> dict:
    """LiveSync's soft deletion of a note: the metadata kept, ``deleted`` set, no chunks."""
    return {
        "_id": doc_id_of(path, case_insensitive=case_insensitive),
        "_rev": rev,
        "path": path,
        "type": NOTE_PLAIN,
        "children": [],
        "ctime": mtime,
        "mtime": mtime,
        "size": 0,
        "eden": {},
        "deleted": True,
    }


def revision_key(doc_id: str, rev: str) -> str:
    """The key the gate records a written revision under: a hash, so the state database holds no note path."""
    return hashlib.sha256(f"{doc_id}\0{rev}".encode()).hexdigest()[:40]


def written_revisions(body: object) -> list[str]:
    """The revision keys of the note documents a ``_bulk_docs`` body writes with their revisions given
    (replication's ``new_edits: false``, how LiveSync pushes); chunks and control documents are not notes."""
    if not isinstance(body, dict) or body.get("new_edits", True) is not False:
        return []
    docs = body.get("docs")
    out: list[str] = []
    for doc in docs if isinstance(docs, list) else []:
        if (
            isinstance(doc, dict)
            and is_note(doc)
            and isinstance(doc.get("_id"), str)
            and isinstance(doc.get("_rev"), str)
        ):
            out.append(revision_key(doc["_id"], doc["_rev"]))
    return out
