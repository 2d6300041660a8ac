"""Attachments: what a non-Markdown file must look like to enter a vault (pure).

Why its own module: an attachment is judged by three facts only -- its extension, the first bytes of its
content and its size -- and the signatures that tie a media type to its first bytes are one table, written
down once with their sources.  The policy file maps extensions to media types (``attachment_types``);
only media types listed in :data:`SIGNATURES` can be named there, so every accepted attachment is checked.

Decisions
---------
* The default list is Obsidian's own ("Accepted file formats" in its help vault): every type Obsidian opens
  or embeds, so a vault comes in whole.  Each has a check of its first bytes.
* SVG is kept like any attachment (Obsidian's help pages use thousands of them as icons), although an SVG is
  XML that may carry ``<script>`` and event handlers: what runs a script is a reader showing it as a
  document.  The console shows an SVG only through ``<img>`` (which runs no script) and serves its bytes
  with a sandboxing, script-free CSP and ``nosniff`` (``doors/web``); its check is that it is text that
  starts with ``<`` (after a byte order mark and whitespace).
* ``.base`` (Obsidian Bases) is YAML: its check is that the head is UTF-8 text with no control characters
  but tab and line ends (a binary or an executable renamed ``.base`` is refused).
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


def _avif(head: bytes) -> bool:  # AV1 Image File Format 1.1 section 9: an ISO BMFF "ftyp" box, brand avif/avis
    return head[4:8] == b"ftyp" and head[8:12] in (b"avif", b"avis")


def _bmp(head: bytes) -> bool:  # Windows BITMAPFILEHEADER: bfType "BM"
    return head.startswith(b"BM")


def _flac(head: bytes) -> bool:  # RFC 9639 section 6: the stream marker "fLaC"
    return head.startswith(b"fLaC")


def _ebml(head: bytes) -> bool:  # RFC 8794 (EBML) section 8: the EBML header element id 1A 45 DF A3 (WebM, Matroska)
    return head.startswith(b"\x1a\x45\xdf\xa3")


#: ISO/IEC 14496-12 box types a QuickTime or MP4 file may start with (older .mov files lack "ftyp").
_BMFF_FIRST_BOXES = (b"ftyp", b"moov", b"mdat", b"wide", b"free", b"skip", b"pnot")


def _bmff_video(head: bytes) -> bool:  # ISO/IEC 14496-12 4.2: a box's type is bytes 4..8 (MP4, MOV, 3GP)
    return head[4:8] in _BMFF_FIRST_BOXES


def _svg(head: bytes) -> bool:  # SVG 1.1 / XML 1.0: a document whose first markup is "<" (prolog, comment or <svg>)
    return head.removeprefix(b"\xef\xbb\xbf").lstrip(b" \t\r\n")[:1] == b"<"


def _yaml_text(head: bytes) -> bool:  # YAML 1.2 section 5.2: UTF-8 text; a Bases file is YAML
    text = head.removeprefix(b"\xef\xbb\xbf")
    try:
        decoded = text.decode("utf-8")
    except UnicodeDecodeError as exc:  # a character cut by the head's end is still text
        if exc.start < len(text) - 3:
            return False
        decoded = text[: exc.start].decode("utf-8")
    return not any((ch < " " and ch not in "\t\r\n") or ch == "\x7f" for ch in decoded)


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
    "image/avif": _avif,
    "image/bmp": _bmp,
    "image/svg+xml": _svg,
    "audio/flac": _flac,
    "audio/3gpp": _bmff_video,
    "video/webm": _ebml,
    "video/x-matroska": _ebml,
    "video/mp4": _bmff_video,
    "video/quicktime": _bmff_video,
    "video/ogg": _ogg,
    "application/x-obsidian-base": _yaml_text,
}

#: The default ``attachment_types`` of the policy file: extension (lowercase, no dot) -> media type. Obsidian's
#: "Accepted file formats" (help vault, Files and folders): Bases, JSON Canvas, images, audio, video, PDF.
#: ``.webm`` is audio or video to Obsidian; both are one EBML check.
DEFAULT_ATTACHMENT_TYPES: dict[str, str] = {
    "base": "application/x-obsidian-base",
    "canvas": "application/json",
    "avif": "image/avif",
    "bmp": "image/bmp",
    "gif": "image/gif",
    "jpeg": "image/jpeg",
    "jpg": "image/jpeg",
    "png": "image/png",
    "svg": "image/svg+xml",
    "webp": "image/webp",
    "flac": "audio/flac",
    "m4a": "audio/mp4",
    "mp3": "audio/mpeg",
    "ogg": "audio/ogg",
    "wav": "audio/wav",
    "3gp": "audio/3gpp",
    "webm": "video/webm",
    "mkv": "video/x-matroska",
    "mov": "video/quicktime",
    "mp4": "video/mp4",
    "ogv": "video/ogg",
    "pdf": "application/pdf",
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
