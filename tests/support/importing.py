"""An Obsidian vault on disk to import (notes, attachments, a canvas), and the importer run with its report's rules."""

from __future__ import annotations

import json
import struct
import zlib
from pathlib import Path

from notegate.services.importer import ImportReport, import_folder, importing_caller
from notegate.services.notes import NotesService
from notegate.services.runtime import Environment, Runtime

CP1252 = "Caf\u00e9 \u201cquoted\u201d \u2014 na\u00efve\n"
AWS_KEY = "AKIA" + "QWERTYUIOPASDFGH"  # built here so no credential-looking literal sits in the repository


def png_bytes(width: int = 2, height: int = 2) -> bytes:
    """A real PNG (signature, IHDR, one zlib IDAT, IEND, each chunk with its CRC)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    rows = b"".join(b"\x00" + b"\xff\x00\x00" * width for _ in range(height))
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


def pdf_bytes() -> bytes:
    """A real one-page PDF with a correct cross-reference table."""
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] >>",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for i, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % i + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


CANVAS = {
    "nodes": [
        {"id": "a", "type": "text", "text": "Plan", "x": 0, "y": 0, "width": 100, "height": 50},
        {"id": "b", "type": "file", "file": "Projects/Alpha.md", "x": 200, "y": 0, "width": 100, "height": 50},
    ],
    "edges": [{"id": "e", "fromNode": "a", "toNode": "b"}],
}


NOTES = {
    "Home.md": (
        "# Home\n\n![[diagram.png]]\n![[paper.pdf]]\n![[board.canvas]]\n"
        "See [[Projects/Alpha]], [[Alpha|the alpha]] and [the drawing](Drawings/Sketch.excalidraw.md).\n"
        "Also [[Ghost]] and ![[missing.png]].\n"
    ),
    "Projects/Alpha.md": "# Alpha\n\nBack to [[Home]].\n",
    "Drawings/Sketch.excalidraw.md": "---\nexcalidraw-plugin: parsed\n---\n# Sketch\n\n%%\n```json\n{}\n```\n%%\n",
}


def obsidian_vault(root: Path) -> Path:
    """A vault as Obsidian leaves it: notes, attachments, a canvas, its settings folder, and trouble."""
    src = root / "MyVault"
    files: dict[str, bytes] = {rel: text.encode() for rel, text in NOTES.items()}
    files |= {
        "attachments/diagram.png": png_bytes(),
        "attachments/paper.pdf": pdf_bytes(),
        "board.canvas": json.dumps(CANVAS, indent=2).encode(),
        "attachments/fake.png": b"<html><script>alert(1)</script></html>",  # HTML bytes named .png
        "Inbox/idea.md": b"# An idea\n",  # the vault's own inbox, not the policy's quarantine
        "Latin.md": CP1252.encode("cp1252"),
        "Keys.md": f"# Keys\n\naws = {AWS_KEY}\n".encode(),
        ".obsidian/app.json": b"{}",
        "notes.txt": b"plain text\n",
    }
    for rel, data in files.items():
        path = src / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return src


def run(rt: Runtime, env: Environment, src: Path, **kw) -> ImportReport:
    return import_folder(NotesService(rt), env, importing_caller("owner"), src, message="Import my vault", **kw)


def rules(report: ImportReport) -> dict[str, str]:
    """Refused source path -> the exact rule that refused it."""
    return {path: reason.split(":", 1)[0] for path, reason in report.refused}
