"""The bridge with LiveSync's end-to-end encryption and path obfuscation on, against LiveSync's own code: files
LiveSync's common library writes through the gate with the phone's JWT (encrypted, obfuscated) are committed by the
bridge with the same bytes, as the phone; notes and attachments written over MCP reach the database sealed and
LiveSync's code reads them back to the same bytes. The passphrase is given to the bridge process only, through
$NOTEGATE_LIVESYNC_PASSPHRASE."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import time
import urllib.request
from collections.abc import Iterator

import pygit2
import pytest

from notegate.config import load_config
from support import running, start_cli
from support.livesync import DB, LONG, PDF, PNG, POLL, WITHIN, Bridged, Lab, livesync_run, require_commonlib

PASSPHRASE = "a passphrase only the devices and the bridge know"
FROM_PHONE = {
    "notes/Grüße vom Handy — 日本語.md": "# Unterwegs\n\nÄrger über Öl, 日本語のノート, 🌍\n".encode(),
    "notes/long from the phone.md": LONG.encode(),
    "notes/empty from the phone.md": b"",
    "attachments/phone photo.png": PNG,
    "attachments/scan.pdf": PDF,
}


class Sealed(Bridged):
    def start_bridge(self) -> None:
        argv = ["livesync", "bridge", "--config", str(self.lab.config), *POLL]
        env = {**os.environ, "NOTEGATE_LIVESYNC_PASSPHRASE": PASSPHRASE}
        self.bridge = start_cli(argv, self.lab.root / "bridge.log", env)
        self.lab.procs.append(self.bridge)
        self.wait_for_sync_parameters()

    def wait_for_sync_parameters(self) -> None:
        """Until the bridge's first pass has made the database's sync parameters (its PBKDF2 salt).  A device
        and the bridge that both find none create them at once and one is told 409: the bridge then reads
        the device's, but LiveSync's own code gives that sync up ("Failed to store initial synchronisation
        parameters") and tries again only at its next sync, which these tests do not wait for."""
        url = f"{self.lab.couch}/{DB}/_local/obsidian_livesync_sync_parameters"
        deadline = time.monotonic() + WITHIN
        while True:
            try:
                with urllib.request.urlopen(url, timeout=10) as answer:
                    if json.loads(answer.read()).get("pbkdf2salt"):
                        return
            except OSError:
                pass
            assert time.monotonic() < deadline and self.bridge.poll() is None, self.bridge_log()
            time.sleep(0.1)

    def origin_bytes(self, path: str) -> bytes | None:
        repo = pygit2.Repository(load_config(self.lab.config).environment(None).origin_url)
        try:
            return repo.references["refs/heads/main"].peel(pygit2.Commit).tree[path].data
        except KeyError:
            return None

    def livesync(self, ops: list[dict], *, device: str | None = None) -> list[dict]:
        """LiveSync's own code, through the gate as ``device`` (its JWT), or straight at CouchDB."""
        spec: dict = {"database": DB, "passphrase": PASSPHRASE, "obfuscate": True, "ops": ops}
        if device is None:
            spec["url"] = self.lab.couch
        else:
            d = self.lab.devices[device]
            spec.update(url=self.lab.gate, jwt={"kid": d.kid, "alg": d.algorithm, "key": d.private_pem})
        return livesync_run(spec)

    def raw_database(self) -> str:
        with urllib.request.urlopen(f"{self.lab.couch}/{DB}/_all_docs?include_docs=true", timeout=30) as answer:
            return json.dumps(json.loads(answer.read()), ensure_ascii=False)


@pytest.fixture(scope="module")
def sealed(tmp_path_factory) -> Iterator[Sealed]:
    require_commonlib()
    lab = Lab(tmp_path_factory.mktemp("sealed")).start()
    with lab.config.open("a", encoding="utf-8") as handle:  # the [livesync] table is the file's last
        handle.write("path_obfuscation = true\n")
    try:
        with running(lab.config) as server:
            bridge = Sealed(lab, server)
            bridge.start_bridge()
            yield bridge
    finally:
        lab.stop()


def test_files_livesync_writes_encrypted_through_the_gate_are_committed_with_the_same_bytes(sealed: Sealed) -> None:
    ops = [
        {"op": "put", "path": p, "b64": base64.b64encode(d).decode(), "binary": not p.endswith(".md")}
        for p, d in FROM_PHONE.items()
    ]
    assert all(r["ok"] for r in sealed.livesync(ops, device="phone"))
    raw = sealed.raw_database()
    assert "Unterwegs" not in raw and "Grüße vom Handy" not in raw and "line 00042" not in raw  # sealed on the server
    deadline = time.monotonic() + WITHIN
    pending = dict(FROM_PHONE)
    while pending and time.monotonic() < deadline:
        pending = {p: d for p, d in pending.items() if sealed.origin_bytes(p) != d}
        time.sleep(0.25)
    assert not pending, (list(pending), sealed.bridge_log())
    message = sealed.origin_text("notes/long from the phone.md")[1]
    assert f"Notegate-Connector: livesync:{sealed.lab.devices['phone'].kid}" in message


def test_notes_and_attachments_written_over_mcp_reach_livesync_sealed_with_the_same_bytes(sealed: Sealed) -> None:
    text = "# Von einer Sitzung\n\nüber MCP geschrieben, 日本語, 🌍\n" + LONG[:30_000]
    image = PNG[:100_000]
    for tool, arguments in (
        ("write_note", {"path": "notes/from a session.md", "content": text}),
        ("write_attachment", {"path": "attachments/chart.png", "content_base64": base64.b64encode(image).decode()}),
    ):
        wrote = asyncio.run(sealed.mcp(tool, {**arguments, "base_revision": "absent", "confirmed": True}))
        assert not wrote.is_error, wrote
    deadline = time.monotonic() + WITHIN
    got: list[dict] = []
    while time.monotonic() < deadline:
        got = sealed.livesync(
            [{"op": "get", "path": "notes/from a session.md"}, {"op": "get", "path": "attachments/chart.png"}]
        )
        if all(g["found"] for g in got):
            break
        time.sleep(1)
    assert all(g["found"] for g in got), (got, sealed.bridge_log())
    assert base64.b64decode(got[0]["b64"]) == text.encode() and got[0]["type"] == "plain"
    assert base64.b64decode(got[1]["b64"]) == image and got[1]["type"] == "newnote"
    raw = sealed.raw_database()
    assert "Von einer Sitzung" not in raw and "from a session" not in raw and "chart.png" not in raw


@pytest.mark.parametrize(
    ("path", "data", "rule"),
    [
        ("attachments/not really.png", PDF, "attachment-type-mismatch"),  # the bytes are a PDF's
        ("attachments/tool.exe", b"MZ\x90\x00" + bytes(64), "file-type-refused"),  # not in attachment_types
    ],
    ids=["type-mismatch", "type-refused"],
)
def test_a_devices_file_the_policy_refuses_never_reaches_the_repository_and_is_named_in_a_task(
    sealed: Sealed, path: str, data: bytes, rule: str
) -> None:
    op = {"op": "put", "path": path, "b64": base64.b64encode(data).decode(), "binary": True}
    marker = {"op": "put", "path": f"notes/after {rule}.md", "b64": base64.b64encode(b"after\n").decode()}
    assert all(r["ok"] for r in sealed.livesync([op, marker], device="phone"))
    deadline = time.monotonic() + WITHIN
    while time.monotonic() < deadline and sealed.origin_bytes(f"notes/after {rule}.md") != b"after\n":
        time.sleep(0.25)
    assert sealed.origin_bytes(f"notes/after {rule}.md") == b"after\n", sealed.bridge_log()
    assert sealed.origin_bytes(path) is None
    named = [t for t in sealed.tasks() if path in t]
    assert named and f"[{rule}]" in named[0], sealed.tasks()
