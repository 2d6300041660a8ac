"""The bridge's codec against LiveSync's own code: documents notegate writes into a real CouchDB-protocol server
(pouchdb-server) are read back by LiveSync's common library (DirectFileManipulator, vendored at a pinned commit in
tests/livesync/commonlib and run under Node) to the same bytes, and documents LiveSync's code writes are read by
notegate to the same bytes: in clear, end-to-end encrypted (LiveSync's default V2), and encrypted with path
obfuscation; non-ASCII text, a long note of many chunks, an empty note, and binary files (an image, a PDF)."""

from __future__ import annotations

import base64
import json
import subprocess
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from notegate.livesync import documents, e2ee
from support import free_port
from support.livesync import LONG, PDF, PNG, POUCHDB_SERVER, _wait, livesync_run, require_commonlib

PASSPHRASE = "correct horse battery staple"
FILES = {
    "Notes/Grüße aus Köln — 日本語.md": "# Grüße\n\nÄrger über Öl, 日本語のノート, 🌍🚀, e\u0301\r\n".encode(),
    "Notes/long.md": LONG.encode(),
    "Notes/empty.md": b"",
    "attachments/photo.png": PNG,
    "attachments/paper.pdf": PDF,
}
MODES = {"clear": (None, False), "e2ee": (PASSPHRASE, False), "e2ee-obfuscated": (PASSPHRASE, True)}


class Couch:
    def __init__(self, url: str) -> None:
        self.url = url

    def call(self, method: str, path: str, body: object = None) -> dict:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            f"{self.url}/{path}", data=data, method=method, headers={"Content-Type": "application/json"}
        )
        with urllib.request.urlopen(request, timeout=30) as answer:
            return json.loads(answer.read())

    def database(self, name: str) -> str:
        self.call("PUT", name)
        return name

    def cipher(self, db: str, passphrase: str | None) -> e2ee.Cipher | None:
        """The database's cipher, its sync parameters created first when nobody has (as the bridge does)."""
        if passphrase is None:
            return None
        try:
            params = self.call("GET", f"{db}/{e2ee.SYNC_PARAMETERS}")
        except urllib.error.HTTPError as exc:
            assert exc.code == 404
            params = e2ee.new_sync_parameters()
            self.call("PUT", f"{db}/{e2ee.SYNC_PARAMETERS}", params)
        return e2ee.Cipher(passphrase, e2ee.salt_of(params))


@pytest.fixture(scope="module")
def couch(tmp_path_factory) -> Iterator[Couch]:
    require_commonlib()
    root: Path = tmp_path_factory.mktemp("compat")
    port = free_port()
    log = root / "out.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [str(POUCHDB_SERVER), "--in-memory", "--port", str(port)], cwd=root, stdout=out, stderr=subprocess.STDOUT
        )
    try:
        _wait(port, proc, "pouchdb-server", log)
        yield Couch(f"http://127.0.0.1:{port}")
    finally:
        proc.kill()
        proc.wait(timeout=10)


def _spec(couch: Couch, db: str, mode: str, ops: list[dict]) -> dict:
    passphrase, obfuscate = MODES[mode]
    return {"url": couch.url, "database": db, "passphrase": passphrase, "obfuscate": obfuscate, "ops": ops}


@pytest.mark.parametrize("mode", MODES)
def test_the_bridge_and_livesyncs_code_read_each_others_files_to_the_same_bytes(couch: Couch, mode: str) -> None:
    """One database, one run of LiveSync's code: it reads back what the bridge wrote (``from-bridge/``), then
    writes its own (``from-livesync/``), which the bridge reads; encrypted, both use the salt the bridge put."""
    db = couch.database(f"both-ways-{mode}")
    passphrase, obfuscate = MODES[mode]
    cipher = couch.cipher(db, passphrase)
    docs: list[dict] = []
    for path, data in FILES.items():
        meta, chunks = documents.write_file(f"from-bridge/{path}", data, ctime=1_700_000_000_000,
                                            mtime=1_700_000_001_000, cipher=cipher, obfuscate=obfuscate)  # fmt: skip
        docs += [*chunks, meta]
    written = couch.call("POST", f"{db}/_bulk_docs", {"docs": docs})
    assert all(r.get("ok") for r in written), written
    if cipher is not None:  # nothing readable on the server: chunks sealed, and with obfuscation the paths too
        raw = json.dumps(couch.call("GET", f"{db}/_all_docs?include_docs=true"), ensure_ascii=False)
        assert "Ärger" not in raw and "line 00042" not in raw
        assert ("Notes/long.md" in raw) is not obfuscate
    ops = [{"op": "get", "path": f"from-bridge/{p}"} for p in FILES] + [
        {
            "op": "put",
            "path": f"from-livesync/{p}",
            "b64": base64.b64encode(d).decode(),
            "binary": not p.endswith(".md"),
        }
        for p, d in FILES.items()
    ]
    results = livesync_run(_spec(couch, db, mode, ops))
    for (path, data), result in zip(FILES.items(), results[: len(FILES)], strict=True):
        assert result["found"], (path, result)
        assert result["path"] == f"from-bridge/{path}"
        assert base64.b64decode(result["b64"]) == data, path
        assert result["type"] == ("plain" if path.endswith(".md") else "newnote")
    assert all(r["ok"] for r in results[len(FILES) :])
    by_id = {row["id"]: row["doc"] for row in couch.call("GET", f"{db}/_all_docs?include_docs=true")["rows"]}
    for path, data in FILES.items():
        meta = by_id[documents.doc_id_of(f"from-livesync/{path}", cipher=cipher if obfuscate else None)]
        note = documents.read_note(meta, by_id, cipher)
        assert note.path == f"from-livesync/{path}" and note.data == data, path
        if cipher is not None and data:  # without the passphrase, or with another, refused by name
            assert all(by_id[c]["_id"].startswith(e2ee.ENCRYPTED_CHUNK_PREFIX) for c in by_id[meta["_id"]]["children"])
            with pytest.raises(documents.DocumentError) as refused:
                documents.read_note(meta, by_id)
            assert refused.value.rule == "livesync-document-unsupported"
            with pytest.raises(documents.DocumentError) as refused:
                documents.read_note(meta, by_id, e2ee.Cipher("not the passphrase", cipher.salt))
            assert refused.value.rule == "livesync-passphrase-mismatch"


def test_a_deletion_the_bridge_writes_is_a_deletion_to_livesyncs_code(couch: Couch) -> None:
    db = couch.database("bridge-deletes")
    cipher = couch.cipher(db, PASSPHRASE)
    meta, chunks = documents.write_file(
        "Notes/gone.md", b"soon gone\n", ctime=1, mtime=2, cipher=cipher, obfuscate=True
    )
    rev = couch.call("POST", f"{db}/_bulk_docs", {"docs": [*chunks, meta]})[-1]["rev"]
    gone = documents.deleted_note("Notes/gone.md", mtime=3, rev=rev, cipher=cipher, obfuscate=True)
    couch.call("POST", f"{db}/_bulk_docs", {"docs": [gone]})
    assert livesync_run(_spec(couch, db, "e2ee-obfuscated", [{"op": "get", "path": "Notes/gone.md"}])) == [
        {"found": False}
    ]
