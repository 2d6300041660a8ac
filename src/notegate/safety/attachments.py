"""Attachments: what a non-Markdown file must look like to enter a vault (pure).

Why its own module: an attachment is judged by three facts only -- its extension, the first bytes of its
content and its size -- and the signatures that tie a media type to its first bytes are one table, written
down once with their sources.  The policy file maps extensions to media types (``attachment_types``);
only media types listed in :data:`SIGNATURES` can be named there, so every accepted attachment is checked.

Decisions
---------
* SVG is not here: an SVG is XML that may carry ``<script>`` and event handlers, which a browser or an
  Obsidian preview runs, and there is no first-bytes check that tells a harmless one apart.  So it cannot
  be allowed at all (the README says so).
* ``.canvas`` (Obsidian's JSON canvas) has no magic number: its check is that the first byte after an
  optional UTF-8 byte order mark and whitespace is ``{``.
* ``.excalidraw.md`` ends in ``.md``: it is a note, not an attachment.
* Only the first :data:`HEAD_BYTES` bytes are looked at; the size is compared before anything is read.
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["DEFAULT_ATTACHMENT_TYPES", "HEAD_BYTES", "SIGNATURES", "extension_of", "media_type_of", "signature_matches"]

#: How many leading bytes a signature may look at (WebP and WAV need 12).
HEAD_BYTES = 16


def _png(head: bytes) -> bool:  # PNG spec (ISO/IEC 15948) 5.2: the 8-byte signature
    return head.startswith(b"\x89PNG\r\n\x1a\n")


def _jpeg(head: bytes) -> bool:  # ISO/IEC 10918-1 B.2.1: SOI marker FFD8, then another marker FF..
    return head.startswith(b"\xff\xd8\xff")


def _gif(head: bytes) -> bool:  # GIF89a spec 17: header "GIF87a" or "GIF89a"
    return head[:6] in (b"GIF87a", b"GIF89a")


def _webp(head: bytes) -> bool:  # RIFF container (RFC 9649 2.5): "RIFF" size "WEBP"
    return head[:4] == b"RIFF" and head[8:12] == b"WEBP"


def _pdf(head: bytes) -> bool:  # ISO 32000-1 7.5.2: the file begins with "%PDF-"
    return head.startswith(b"%PDF-")


def _mp3(head: bytes) -> bool:  # ID3v2 tag ("ID3", id3.org v2.4 3.1) or an MPEG audio frame sync (11 bits set)
    return head.startswith(b"ID3") or (len(head) >= 2 and head[0] == 0xFF and head[1] & 0xE0 == 0xE0)


def _mp4_audio(head: bytes) -> bool:  # ISO/IEC 14496-12 4.3: the first box is "ftyp" (bytes 4..8)
    return head[4:8] == b"ftyp"


def _ogg(head: bytes) -> bool:  # RFC 3533 6: every page starts with the capture pattern "OggS"
    return head.startswith(b"OggS")


def _wav(head: bytes) -> bool:  # RIFF WAVE (Microsoft/IBM Multimedia Programming Interface 1991): "RIFF" size "WAVE"
    return head[:4] == b"RIFF" and head[8:12] == b"WAVE"


def _json_object(head: bytes) -> bool:  # JSON Canvas 1.0 (jsoncanvas.org): one JSON object
    return head.removeprefix(b"\xef\xbb\xbf").lstrip(b" \t\r\n")[:1] == b"{"


#: Media type -> the check of its first bytes.  The only media types ``attachment_types`` may name.
SIGNATURES: dict[str, Callable[[bytes], bool]] = {
    "image/png": _png,
    "image/jpeg": _jpeg,
    "image/gif": _gif,
    "image/webp": _webp,
    "application/pdf": _pdf,
    "audio/mpeg": _mp3,
    "audio/mp4": _mp4_audio,
    "audio/ogg": _ogg,
    "audio/wav": _wav,
    "application/json": _json_object,
}

#: The default ``attachment_types`` of the policy file: extension (lowercase, no dot) -> media type.
DEFAULT_ATTACHMENT_TYPES: dict[str, str] = {
    "png": "image/png",
    "jpg": "image/jpeg",
    "jpeg": "image/jpeg",
    "gif": "image/gif",
    "webp": "image/webp",
    "pdf": "application/pdf",
    "mp3": "audio/mpeg",
    "m4a": "audio/mp4",
    "ogg": "audio/ogg",
    "wav": "audio/wav",
    "canvas": "application/json",
}


def extension_of(name: str) -> str:
    """The extension of a file name, lowercased, without the dot (``""`` when it has none).

    Case-insensitive on purpose: cameras write ``IMG_0001.JPG``; the first bytes decide what it is anyway.
    """
    stem, dot, ext = name.rpartition(".")
    return ext.casefold() if dot and stem else ""


def media_type_of(types: tuple[tuple[str, str], ...], name: str) -> str:
    """The media type the policy's ``attachment_types`` gives the file name ``name`` ("" when none, or when
    it names a media type this module has no check for)."""
    media_type = dict(types).get(extension_of(name), "")
    return media_type if media_type in SIGNATURES else ""


def signature_matches(media_type: str, head: bytes) -> bool:
    """Do the first bytes ``head`` (at least :data:`HEAD_BYTES` of them when the file is that long) match?"""
    check = SIGNATURES.get(media_type)
    return check is not None and check(head[:HEAD_BYTES])
