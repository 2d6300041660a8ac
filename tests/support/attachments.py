"""Attachment bytes for the MCP tests: a small valid PNG carrying a text, and base64 as the tools take it."""

from __future__ import annotations

import base64
import struct
import zlib


def png(text: str = "") -> bytes:
    """A real 1x1 PNG; ``text`` goes into a tEXt chunk (words inside the file's bytes)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 0, 0, 0, 0)
    extra = chunk(b"tEXt", b"Comment\x00" + text.encode()) if text else b""
    body = chunk(b"IHDR", header) + extra + chunk(b"IDAT", zlib.compress(b"\x00\x00")) + chunk(b"IEND", b"")
    return b"\x89PNG\r\n\x1a\n" + body


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")
