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

Markdown and the other text types LiveSync keeps as text are ``plain`` documents whose chunks hold text;
every other file (images, PDFs) is a ``newnote`` whose chunks each hold base64 of a run of its bytes (LiveSync
decodes each piece and joins the bytes). End-to-end encrypted documents are opened and written with a
:class:`~notegate.livesync.e2ee.Cipher` when the bridge holds the passphrase, and refused by name
(``livesync-document-unsupported``) without it; a note whose chunks have not all arrived yet is
``livesync-document-incomplete`` (replication delivers them apart).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

from notegate.errors import NotegateError

NOTE_PLAIN = "plain"
NOTE_BINARY = "newnote"
NOTE_LEGACY = "notes"
CHUNK = "leaf"
CHUNK_PREFIX = "h:"
ENCRYPTED_CHUNK_PREFIX = "h:+"
OBFUSCATED_PREFIX = "f:"
#: The mark of a metadata document whose facts are sealed (path obfuscation): ``path`` = this + ciphertext.
ENCRYPTED_META_PREFIX = "/\\:"
#: Eden (chunks carried inside the metadata document), encrypted whole under this key.
EDEN_HKDF_KEY = "h:++encrypted-hkdf"
#: LiveSync's own limit for one chunk of a Markdown note (MAX_DOC_SIZE): pieces are cut at line ends below it.
MAX_CHUNK_CHARS = 1000
#: Bytes of a binary file in one chunk (LiveSync's own splitter makes 256 KiB to 4 MiB pieces of a binary; any
#: split reads back the same, and this one keeps a chunk document well under CouchDB's request limits).
BINARY_CHUNK_BYTES = 256 * 1024
#: The file types LiveSync stores as text (its isPlainText): everything else is a binary ``newnote``.
PLAIN_SUFFIXES = (".md", ".txt", ".svg", ".html", ".csv", ".css", ".js", ".xml", ".canvas")


class DocumentError(NotegateError):
    """A LiveSync document the bridge cannot turn into a note (its rule says which way)."""


class Cipher(Protocol):
    """What this codec asks of the cipher (:class:`notegate.livesync.e2ee.Cipher`, which holds the passphrase and
    does the cryptography: this module stays pure)."""

    def chunk_id(self, piece: str) -> str: ...
    def obfuscated_id(self, path: str, *, case_insensitive: bool = True) -> str: ...
    def seal_meta(self, meta: dict) -> dict: ...
    def open_meta(self, meta: dict) -> dict: ...
    def seal_chunk(self, chunk: dict) -> dict: ...
    def open_chunk(self, chunk: dict) -> dict: ...


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
    binary: bytes | None = None  # a binary file's bytes (``text`` is then None)

    @property
    def deleted(self) -> bool:
        return self.text is None and self.binary is None

    @property
    def data(self) -> bytes | None:
        """The file's bytes as the vault holds them (a text note as UTF-8)."""
        return self.binary if self.binary is not None else None if self.text is None else self.text.encode("utf-8")


def doc_id_of(path: str, *, case_insensitive: bool = True, cipher: Cipher | None = None) -> str:
    """The document id LiveSync gives ``path`` (obfuscated with ``cipher``'s passphrase when one is given)."""
    if cipher is not None:
        return cipher.obfuscated_id(path, case_insensitive=case_insensitive)
    name = path.lower() if case_insensitive else path
    return "/" + name if name.startswith("_") else name


def is_note(doc: Mapping) -> bool:
    return doc.get("type") in (NOTE_PLAIN, NOTE_BINARY, NOTE_LEGACY) and isinstance(doc.get("path"), str)


def is_sealed(meta: Mapping) -> bool:
    """Does this metadata document keep its facts encrypted (path obfuscation)?"""
    path = meta.get("path")
    return isinstance(path, str) and path.startswith(ENCRYPTED_META_PREFIX)


def is_chunk(doc: Mapping) -> bool:
    return doc.get("type") == CHUNK and str(doc.get("_id", "")).startswith(CHUNK_PREFIX)


def read_note(meta: Mapping, chunks: Mapping[str, Mapping], cipher: Cipher | None = None) -> LiveSyncNote:
    """The note a metadata document describes, its content joined from ``chunks`` (id -> chunk document),
    opened with ``cipher`` when it is end-to-end encrypted (refused by name when the bridge has no cipher)."""
    doc_id = str(meta.get("_id", ""))
    if is_sealed(meta) or meta.get("e_") is True:
        if cipher is None:
            raise DocumentError("the note's metadata is end-to-end encrypted", rule="livesync-document-unsupported")
        meta = cipher.open_meta(dict(meta))
    elif cipher is not None and isinstance(meta.get("eden"), dict) and EDEN_HKDF_KEY in meta["eden"]:
        meta = cipher.open_meta(dict(meta))
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
        chunk = chunks.get(child) or (eden.get(child) if isinstance(eden, dict) else None)
        if chunk is None:
            if child.startswith(ENCRYPTED_CHUNK_PREFIX) and cipher is None:
                raise DocumentError("the note is end-to-end encrypted", rule="livesync-document-unsupported")
            raise DocumentError("a chunk of the note has not arrived yet", rule="livesync-document-incomplete")
        if chunk.get("e_") is True or child.startswith(ENCRYPTED_CHUNK_PREFIX):  # LiveSync marks one with e_ too
            if cipher is None:
                raise DocumentError("the note is end-to-end encrypted", rule="livesync-document-unsupported")
            chunk = cipher.open_chunk(dict(chunk))
        data = chunk.get("data")
        if not isinstance(data, str):
            raise DocumentError("a chunk without text", rule="livesync-document-unsupported")
        pieces.append(data)
    if kind == NOTE_BINARY:
        return LiveSyncNote(text=None, binary=_joined_base64(pieces), **common)
    return LiveSyncNote(text="".join(pieces), **common)


def _joined_base64(pieces: list[str]) -> bytes:
    """A binary file's bytes: each chunk is base64 of its own run of bytes (octagonal-wheels' decodeBinary)."""
    if pieces and pieces[0].startswith("%"):
        raise DocumentError("a binary file in LiveSync's retired encoding", rule="livesync-document-unsupported")
    try:
        return b"".join(base64.b64decode(p, validate=True) for p in pieces)
    except (binascii.Error, ValueError) as exc:
        raise DocumentError("a binary chunk that is not base64", rule="livesync-document-unsupported") from exc


def is_plain_path(path: str) -> bool:
    """Does LiveSync keep this file as text (its isPlainText)?"""
    return path.endswith(PLAIN_SUFFIXES)


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
    path: str,
    text: str,
    *,
    ctime: int,
    mtime: int,
    case_insensitive: bool = True,
    rev: str | None = None,
    cipher: Cipher | None = None,
    obfuscate: bool = False,
) -> tuple[dict, list[dict]]:
    """The metadata document and the chunk documents LiveSync reads for ``text`` at ``path`` (times in ms)."""
    return write_file(
        path,
        text.encode("utf-8"),
        ctime=ctime,
        mtime=mtime,
        case_insensitive=case_insensitive,
        rev=rev,
        cipher=cipher,
        obfuscate=obfuscate,
    )


def write_file(
    path: str,
    data: bytes,
    *,
    ctime: int,
    mtime: int,
    case_insensitive: bool = True,
    rev: str | None = None,
    cipher: Cipher | None = None,
    obfuscate: bool = False,
) -> tuple[dict, list[dict]]:
    """The documents LiveSync reads for the file ``data`` at ``path``: text chunks for the types LiveSync keeps
    as text (when the bytes are UTF-8), base64 chunks of a ``newnote`` otherwise; encrypted with ``cipher``
    (chunks always, the metadata's facts too when ``obfuscate``, LiveSync's path obfuscation)."""
    text: str | None = None
    if is_plain_path(path):
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            text = None
    if text is not None:
        pieces, kind = split_text(text), NOTE_PLAIN
    else:
        runs = [data[i : i + BINARY_CHUNK_BYTES] for i in range(0, len(data), BINARY_CHUNK_BYTES)]
        pieces, kind = [base64.b64encode(r).decode("ascii") for r in runs], NOTE_BINARY
    ids = [cipher.chunk_id(p) if cipher else chunk_id(p) for p in pieces]
    chunks: dict[str, dict] = {}
    for cid, piece in zip(ids, pieces, strict=True):
        if cid not in chunks:
            chunk = {"_id": cid, "type": CHUNK, "data": piece}
            chunks[cid] = cipher.seal_chunk(chunk) if cipher else chunk
    meta: dict = {
        "_id": doc_id_of(path, case_insensitive=case_insensitive, cipher=cipher if obfuscate else None),
        "path": path,
        "type": kind,
        "children": ids,
        "ctime": ctime,
        "mtime": mtime,
        "size": len(data),
        "eden": {},
    }
    if rev is not None:
        meta["_rev"] = rev
    if cipher is not None and obfuscate:
        meta = cipher.seal_meta(meta)
    return meta, list(chunks.values())


def deleted_note(
    path: str,
    *,
    mtime: int,
    rev: str,
    case_insensitive: bool = True,
    cipher: Cipher | None = None,
    obfuscate: bool = False,
    kind: str = NOTE_PLAIN,
) -> dict:
    """LiveSync's soft deletion of a note: the metadata kept, ``deleted`` set, no chunks."""
    meta = {
        "_id": doc_id_of(path, case_insensitive=case_insensitive, cipher=cipher if obfuscate else None),
        "_rev": rev,
        "path": path,
        "type": kind,
        "children": [],
        "ctime": mtime,
        "mtime": mtime,
        "size": 0,
        "eden": {},
        "deleted": True,
    }
    return cipher.seal_meta(meta) if cipher is not None and obfuscate else meta


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


#: The most of CouchDB's answer to a direct write the gate keeps to read the revisions it assigned (an answer
#: is ~100 bytes a document; a longer one is not read, and its notes wait, then are passed over, as unrecorded).
MAX_ANSWER_BYTES = 1 << 20


def assigned_revisions(body: object, answer: bytes) -> list[str]:
    """The revision keys CouchDB gave the note documents of a direct write: a ``_bulk_docs`` without
    ``new_edits: false``, or a ``PUT`` of one document (how LiveSync's own DirectFileManipulator writes, and its
    headless tools). The body carries no revision then, so they are read from CouchDB's answer."""
    if isinstance(body, dict) and "docs" in body:
        if body.get("new_edits", True) is False:
            return []  # written_revisions reads those from the body
        docs = body.get("docs") if isinstance(body.get("docs"), list) else []
        notes = {d["_id"] for d in docs if isinstance(d, dict) and is_note(d) and isinstance(d.get("_id"), str)}
    elif isinstance(body, dict) and is_note(body):
        notes = None  # one document: the answer names its id
    else:
        return []
    try:
        parsed = json.loads(answer) if len(answer) <= MAX_ANSWER_BYTES else None
    except ValueError:
        return []
    rows = parsed if isinstance(parsed, list) else [parsed] if isinstance(parsed, dict) else []
    out: list[str] = []
    for row in rows:
        if not isinstance(row, dict) or row.get("error") or not isinstance(row.get("rev"), str):
            continue
        if isinstance(row.get("id"), str) and (notes is None or row["id"] in notes):
            out.append(revision_key(row["id"], row["rev"]))
    return out
