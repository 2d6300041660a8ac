"""`notegate import` keeps what Obsidian keeps: every file type of Obsidian's "Accepted file formats" (Bases,
SVG, video, audio, AVIF, BMP, WebP, PDF), each checked against its first bytes; `--into FOLDER` moves a
canvas's file nodes with the files they show, and its links are checked as Obsidian opens them (exact vault
paths); a wikilink's escaped table pipe is no missing link; the summary counts skipped files by type and puts
refusals first."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from notegate.cli import import_summary
from notegate.policy import decide_attachment
from notegate.safety.attachments import DEFAULT_ATTACHMENT_TYPES, SIGNATURES, signature_matches
from notegate.services.importer import ImportReport, import_folder, importing_caller
from notegate.services.notes import NotesService
from notegate.services.runtime import Environment, Runtime
from notegate.vault.links import Link, LinkTargets, canvas_relocated, links_in, resolve

#: One real first-bytes sample per Obsidian type (the format's own signature, then filler).
SAMPLES: dict[str, bytes] = {
    "base": b"filters:\n  and:\n    - file.hasTag('book')\nviews:\n  - type: table\n",
    "svg": b'<svg xmlns="http://www.w3.org/2000/svg" width="1" height="1"/>',
    "avif": b"\x00\x00\x00\x1cftypavif\x00\x00\x00\x00avifmif1",
    "bmp": b"BM" + b"\x00" * 30,
    "flac": b"fLaC\x00\x00\x00\x22" + b"\x00" * 20,
    "webm": b"\x1a\x45\xdf\xa3\x9f\x42\x86\x81\x01" + b"\x00" * 20,
    "mkv": b"\x1a\x45\xdf\xa3\xa3\x42\x86\x81\x01" + b"\x00" * 20,
    "mov": b"\x00\x00\x00\x14ftypqt  \x00\x00\x00\x00qt  ",
    "mp4": b"\x00\x00\x00\x18ftypisom\x00\x00\x02\x00isomiso2",
    "3gp": b"\x00\x00\x00\x14ftyp3gp4\x00\x00\x00\x003gp4",
    "ogv": b"OggS\x00\x02" + b"\x00" * 20,
    "webp": b"RIFF\x24\x00\x00\x00WEBPVP8 " + b"\x00" * 16,
    "pdf": b"%PDF-1.7\n%%EOF\n",
}


@pytest.fixture
def env(rt: Runtime) -> Environment:
    return rt.environment(None)


def put(src: Path, rel: str, data: bytes) -> None:
    path = src / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def run(rt: Runtime, env: Environment, src: Path, **kw) -> ImportReport:
    return import_folder(NotesService(rt), env, importing_caller("owner"), src, message="Import", **kw)


def test_every_type_obsidian_accepts_is_a_default_attachment_type_with_a_check() -> None:
    obsidian = {"base", "canvas", "avif", "bmp", "gif", "jpeg", "jpg", "png", "svg", "webp"}
    obsidian |= {"flac", "m4a", "mp3", "ogg", "wav", "webm", "3gp", "mkv", "mov", "mp4", "ogv", "pdf"}
    assert set(DEFAULT_ATTACHMENT_TYPES) == obsidian
    assert set(DEFAULT_ATTACHMENT_TYPES.values()) <= set(SIGNATURES)


def test_obsidians_file_types_import_byte_for_byte(rt: Runtime, env: Environment, tmp_path: Path) -> None:
    src = tmp_path / "v"
    for ext, data in SAMPLES.items():
        put(src, f"files/sample.{ext}", data)
    put(src, "files/index.md", "".join(f"![[sample.{ext}]]\n" for ext in SAMPLES).encode())
    report = run(rt, env, src)
    assert report.refused == [] and report.skipped == []
    assert sorted(report.attachments) == sorted(f"files/sample.{ext}" for ext in SAMPLES)
    assert report.missing_links == []
    for ext, data in SAMPLES.items():
        assert env.store.read(f"files/sample.{ext}")[0] == data


@pytest.mark.parametrize(
    ("name", "data"),
    [
        ("fake.base", b"MZ\x90\x00\x03\x00\x00\x00\x04\x00"),  # an executable renamed
        ("fake.svg", b"\x89PNG\r\n\x1a\n"),
        ("fake.mp4", b"<html><script>x()</script>"),
        ("fake.webm", b"RIFF\x00\x00\x00\x00WAVE"),
        ("fake.flac", b"ID3\x04\x00"),
    ],
)
def test_a_file_that_is_not_what_its_name_says_is_refused_by_exact_rule(
    rt: Runtime, env: Environment, tmp_path: Path, name: str, data: bytes
) -> None:
    src = tmp_path / "v"
    put(src, f"files/{name}", data)
    report = run(rt, env, src, dry_run=True)
    assert [(path, why.split(":")[0]) for path, why in report.refused] == [
        (f"files/{name}", "attachment-type-mismatch")
    ]


@given(st.binary(max_size=40))
def test_a_bases_file_check_accepts_exactly_utf8_text_without_controls(head: bytes) -> None:
    try:
        text = head.removeprefix(b"\xef\xbb\xbf").decode("utf-8")
    except UnicodeDecodeError:
        return  # a cut character is allowed at the head's end only; covered by the example below
    clean = not any((c < " " and c not in "\t\r\n") or c == "\x7f" for c in text)
    assert signature_matches("application/x-obsidian-base", head) is clean


def test_a_bases_file_cut_inside_a_character_at_the_heads_end_is_still_text() -> None:
    head = "views: café".encode()[:16]
    assert signature_matches("application/x-obsidian-base", head + "é".encode()[:1])


def test_an_svg_named_like_an_instruction_file_is_still_refused(rt: Runtime, env: Environment, tmp_path: Path) -> None:
    assert decide_attachment(rt.policy, "x.svg", SAMPLES["svg"], len(SAMPLES["svg"])).allowed
    src = tmp_path / "v"
    put(src, "notes/CLAUDE.md/icon.svg", SAMPLES["svg"])  # a folder an agent would read as its CLAUDE.md
    put(src, "notes/Ｃlaude.md/icon.svg", SAMPLES["svg"])  # the same, spelled with a look-alike
    report = run(rt, env, src, dry_run=True)
    refused = {path: why.split(":")[0] for path, why in report.refused}
    assert refused == {
        "notes/CLAUDE.md/icon.svg": "instruction-file-name",
        "notes/Ｃlaude.md/icon.svg": "instruction-file-name",
    }


def test_into_moves_a_canvases_file_nodes_with_the_files(rt: Runtime, env: Environment, tmp_path: Path) -> None:
    src = tmp_path / "v"
    put(src, "here.md", b"# Here\n")
    put(src, "img/pic.svg", SAMPLES["svg"])
    nodes = [
        {"id": "a", "type": "file", "file": "here.md", "x": 0, "y": 0, "width": 1, "height": 1},
        {"id": "b", "type": "file", "file": "img/pic.svg#sub", "x": 0, "y": 0, "width": 1, "height": 1},
        {"id": "c", "type": "text", "text": "« a card »", "x": 0, "y": 0, "width": 1, "height": 1},
    ]
    put(src, "Boards/plan.canvas", json.dumps({"nodes": nodes, "edges": []}).encode())
    report = run(rt, env, src, into="Imported")
    assert report.refused == [] and report.missing_links == []
    canvas = json.loads(env.store.read("Imported/Boards/plan.canvas")[0])
    assert [n.get("file") for n in canvas["nodes"]] == ["Imported/here.md", "Imported/img/pic.svg#sub", None]
    assert canvas["nodes"][2]["text"] == "« a card »"


def test_a_canvas_link_resolves_only_by_its_exact_vault_path() -> None:
    """Obsidian opens a canvas's file node by its path from the vault root: no by-name fallback, so a file
    that moved under another folder is a missing card (the import used to call it resolved)."""
    targets = LinkTargets(["Imported/here.md"])
    assert resolve(Link("/here.md", embed=True, wiki=False, exact=True), "Boards/plan.canvas", targets) is None
    assert resolve(Link("/Imported/here.md", embed=True, wiki=False, exact=True), "x.canvas", targets) == (
        "Imported/here.md"
    )


def test_an_unmoved_canvas_keeps_its_bytes() -> None:
    data = b'{"nodes":[{"id":"a","type":"file","file":"here.md"}],"edges":[]}'
    assert canvas_relocated(data, lambda p: p) is None


def test_a_wikilinks_escaped_table_pipe_is_not_part_of_its_target() -> None:
    text = "| a | b |\n| - | - |\n| [[Internal links\\|links]] | [[Embed files#Embed a note\\|embeds]] |\n"
    assert [link.target for link in links_in(text)] == ["Internal links", "Embed files"]


def test_the_summary_puts_refusals_first_and_counts_skips_by_type() -> None:
    report = ImportReport(
        added=["a.md"],
        skipped=[(f"x{i}.txt", ".txt files: not a type the policy allows (attachment_types)") for i in range(500)]
        + [(".obsidian/", "hidden folder")],
        refused=[("AGENTS.md", "instruction-file-name: ...")],
        dry_run=True,
    )
    text = import_summary(report)
    lines = text.splitlines()
    assert lines[0] == "refused  AGENTS.md: instruction-file-name: ..."
    assert "skipped  500 × .txt files: not a type the policy allows (attachment_types)" in lines
    assert "skipped  1 × hidden folder" in lines
    assert "x1.txt" not in text
    listed = import_summary(report, list_skipped=True)
    assert "skipped  x499.txt: .txt files: not a type the policy allows (attachment_types)" in listed


def test_a_relocated_canvas_keeps_every_other_byte() -> None:
    data = (
        b'{\n  "nodes":[ {"id":"f","type":"file","file":"Notes/x.md"} ,'
        b'{"id":"t","type":"text","text":"\\"file\\": \\"Notes/x.md\\""}],\n  "edges":[]}'
    )
    moved = canvas_relocated(data, lambda p: "In/" + p)
    assert moved == data.replace(b'"file":"Notes/x.md"', b'"file":"In/Notes/x.md"')
