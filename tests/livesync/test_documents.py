"""LiveSync's document format (notegate.livesync.documents): metadata and chunk documents to a note and back."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from notegate.livesync.documents import (
    MAX_CHUNK_CHARS,
    DocumentError,
    deleted_note,
    doc_id_of,
    read_note,
    split_text,
    write_file,
    write_note,
)


@given(st.text(max_size=5000))
def test_a_written_note_reads_back_the_same(text: str) -> None:
    meta, chunks = write_note("Daily/Note.md", text, ctime=1, mtime=2)
    note = read_note(meta, {c["_id"]: c for c in chunks})
    assert note.text == text and note.path == "Daily/Note.md" and not note.deleted
    assert all(len(c["data"]) <= MAX_CHUNK_CHARS for c in chunks)
    assert meta["size"] == len(text.encode("utf-8"))


@given(st.text(alphabet=st.characters(), max_size=3000), st.integers(min_value=1, max_value=50))
def test_split_text_keeps_every_character_in_order(text: str, size: int) -> None:
    pieces = split_text(text, size)
    assert "".join(pieces) == text and all(0 < len(p) <= size for p in pieces)


def test_equal_lines_share_chunks_and_an_edit_changes_few() -> None:
    lines = "".join(f"line {i:04d} " + "x" * 80 + "\n" for i in range(100))
    _meta, before = write_note("a.md", lines, ctime=0, mtime=0)
    _meta, after = write_note("a.md", lines.replace("line 0050", "LINE 0050"), ctime=0, mtime=0)
    assert len({c["_id"] for c in after} - {c["_id"] for c in before}) == 1


def test_ids_follow_livesyncs_path2id() -> None:
    assert doc_id_of("Projects/Plan.md") == "projects/plan.md"
    assert doc_id_of("Projects/Plan.md", case_insensitive=False) == "Projects/Plan.md"
    assert doc_id_of("_drafts/x.md") == "/_drafts/x.md"  # CouchDB reserves ids starting with _


def test_deleted_encrypted_missing_and_binary_notes() -> None:
    assert read_note(deleted_note("a.md", mtime=5, rev="2-x"), {}).deleted
    meta, _chunks = write_note("a.md", "hello", ctime=0, mtime=0)
    with pytest.raises(DocumentError) as missing:
        read_note(meta, {})
    assert missing.value.rule == "livesync-document-incomplete"
    encrypted = {**meta, "children": ["h:+abc"]}
    with pytest.raises(DocumentError) as sealed:
        read_note(encrypted, {"h:+abc": {"_id": "h:+abc", "type": "leaf", "data": "%=..."}})
    assert sealed.value.rule == "livesync-document-unsupported"
    with pytest.raises(DocumentError) as marked:
        read_note(meta, {c["_id"]: {**c, "e_": True} for c in _chunks})
    assert marked.value.rule == "livesync-document-unsupported"
    image = bytes(range(256)) * 2000  # a binary file: base64 chunks of a newnote, read back byte for byte
    meta, chunks = write_file("pictures/a.png", image, ctime=0, mtime=0)
    assert meta["type"] == "newnote" and len(chunks) > 1
    assert read_note(meta, {c["_id"]: c for c in chunks}).data == image
    legacy = {"_id": "old.md", "path": "old.md", "type": "notes", "data": ["a", "b"], "ctime": 0, "mtime": 0}
    assert read_note(legacy, {}).text == "ab"


def test_written_revisions_are_the_note_documents_of_a_replicated_batch() -> None:
    from notegate.livesync.documents import revision_key, written_revisions

    meta, chunks = write_note("a.md", "x", ctime=0, mtime=0)
    batch = {"docs": [{**meta, "_rev": "1-a"}, *({**c, "_rev": "1-b"} for c in chunks)], "new_edits": False}
    assert written_revisions(batch) == [revision_key(meta["_id"], "1-a")]
    assert written_revisions({**batch, "new_edits": True}) == []  # CouchDB picks the revision: not known here
    assert written_revisions({"docs": "x", "new_edits": False}) == []
    assert "a.md" not in revision_key("a.md", "1-a")


def test_assigned_revisions_are_read_from_couchdbs_answer_to_a_direct_write() -> None:
    from notegate.livesync.documents import assigned_revisions, revision_key

    meta, chunks = write_note("a.md", "x", ctime=0, mtime=0)
    answer = [{"ok": True, "id": c["_id"], "rev": "1-c"} for c in chunks] + [{"ok": True, "id": "a.md", "rev": "1-a"}]
    assert assigned_revisions({"docs": [*chunks, meta]}, json.dumps(answer).encode()) == [revision_key("a.md", "1-a")]
    refused = [{"id": "a.md", "error": "conflict", "reason": "Document update conflict."}]
    assert assigned_revisions({"docs": [meta]}, json.dumps(refused).encode()) == []
    one = json.dumps({"ok": True, "id": "a.md", "rev": "2-b"}).encode()
    assert assigned_revisions(meta, one) == [revision_key("a.md", "2-b")]  # PUT /db/a.md
    assert assigned_revisions({"docs": [meta], "new_edits": False}, one) == []  # replication: from the body
    assert assigned_revisions({"_id": "x", "type": "leaf", "data": "d"}, one) == []  # a chunk is no note
    assert assigned_revisions(meta, b"not json") == []
