"""The LiveSync tests' lab: a CouchDB-protocol server (pouchdb-server from tests/livesync/npm), the gate in front
of it, devices and their tokens; and LiveSync's own code (its common library, vendored in tests/livesync/commonlib
at a pinned commit) run under Node."""

from __future__ import annotations

import base64
import hashlib
import hmac
import http.client
import json
import os
import re
import shutil
import subprocess
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pygit2
import pytest
from joserfc import jws
from joserfc.jwk import ECKey

from notegate.config import load_config
from notegate.livesync import documents
from notegate.state import StateDB
from support import _listening, free_port, mcp_http, mint, notegate, start_cli

if TYPE_CHECKING:
    from support.zygote import Forked

NPM = Path(__file__).resolve().parents[1] / "livesync" / "npm"
POUCHDB_SERVER = NPM / "node_modules" / ".bin" / "pouchdb-server"
CLIENT = NPM / "client.mjs"
#: LiveSync's own code (its common library, vendored in tests/livesync/commonlib at a pinned commit) and the driver
#: that runs it; the bundle is built by `make livesync-npm` (npm run build-commonlib).
LIVESYNC = NPM / "livesync.mjs"
COMMONLIB = NPM / "node_modules" / ".commonlib" / "commonlib.mjs"
DB = "notes"


def require_npm() -> None:
    missing = [] if shutil.which("node") else ["node"]
    if not POUCHDB_SERVER.exists() or not (NPM / "node_modules" / "pouchdb").exists():
        missing.append("pouchdb-server and pouchdb (make livesync-npm)")
    if missing:
        if os.environ.get("NOTEGATE_REQUIRE_LIVESYNC") == "1":
            pytest.fail(f"missing for the LiveSync tests: {', '.join(missing)} (NOTEGATE_REQUIRE_LIVESYNC=1)")
        pytest.skip(f"missing for the LiveSync tests: {', '.join(missing)}")


def _wait(port: int, proc: subprocess.Popen | Forked, what: str, log: Path, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not _listening(port):
        if proc.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"{what} did not start: {log.read_text(errors='replace')[-2000:]}")
        time.sleep(0.02)


def require_commonlib() -> None:
    require_npm()
    if not COMMONLIB.exists():
        reason = "LiveSync's common library is not built (make livesync-npm)"
        if os.environ.get("NOTEGATE_REQUIRE_LIVESYNC") == "1":
            pytest.fail(f"{reason} (NOTEGATE_REQUIRE_LIVESYNC=1)")
        pytest.skip(reason)


def livesync_run(spec: dict, *, timeout: float = 120.0) -> list[dict]:
    """Run LiveSync's own DirectFileManipulator (livesync.mjs) over ``spec``'s operations; their results."""
    done = subprocess.run(
        ["node", str(LIVESYNC)], input=json.dumps(spec), capture_output=True, text=True, timeout=timeout, cwd=NPM
    )
    lines = done.stdout.strip().splitlines()
    assert lines, done.stderr[-2000:]
    out = json.loads(lines[-1])
    assert "error" not in out, (out, done.stderr[-2000:])
    return out["results"]


@dataclass
class Device:
    name: str
    kid: str
    algorithm: str
    private_pem: str
    setup_uri: str
    passphrase: str

    def token(self, *, header: dict | None = None, **claims: object) -> str:
        """A token as LiveSync signs it (the admin role included), with ``claims`` overriding its payload
        (None drops a claim) and ``header`` its header."""
        now = int(time.time())
        payload = {"exp": now + 300, "iat": now, "sub": self.kid, "_couchdb.roles": ["_admin"]}
        payload.update(claims)
        payload = {k: v for k, v in payload.items() if v is not None}
        head = {"alg": self.algorithm, "typ": "JWT", "kid": self.kid, **(header or {})}
        key = ECKey.import_key(self.private_pem)
        return jws.serialize_compact(head, json.dumps(payload).encode(), key, algorithms=[head["alg"]])


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def unsigned_token(header: dict, payload: dict, signature: bytes = b"") -> str:
    return f"{b64url(json.dumps(header).encode())}.{b64url(json.dumps(payload).encode())}.{b64url(signature)}"


def hs256_token(secret: bytes, header: dict, payload: dict) -> str:
    signing_input = f"{b64url(json.dumps(header).encode())}.{b64url(json.dumps(payload).encode())}"
    signature = hmac.new(secret, signing_input.encode(), hashlib.sha256).digest()
    return f"{signing_input}.{b64url(signature)}"


@dataclass
class Answer:
    status: int
    body: dict | list | str


class Lab:
    """The vault's config, CouchDB (pouchdb-server), the gate, and the devices enrolled."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.couch_port = free_port()
        self.gate_port = free_port()
        self.config = root / "vault" / "notegate.toml"
        self.devices: dict[str, Device] = {}
        self.procs: list[subprocess.Popen | Forked] = []
        self.livesync_table: str | None = None  # as start() wrote it (restart_gate starts from it)

    @property
    def couch(self) -> str:
        return f"http://127.0.0.1:{self.couch_port}"

    @property
    def gate(self) -> str:
        return f"http://127.0.0.1:{self.gate_port}"

    def start(self) -> Lab:
        done = notegate("init", str(self.root / "vault"))
        assert done.returncode == 0, done.stderr
        with self.config.open("a", encoding="utf-8") as handle:
            handle.write(
                f'\n[livesync]\ndatabase = "{DB}"\ncouchdb_url = "{self.couch}"\nport = {self.gate_port}\n'
                "feed_seconds = 5\nmax_body_bytes = 1000000\n"
            )
        couch_dir = self.root / "couch"
        couch_dir.mkdir()
        log = couch_dir / "out.log"
        with log.open("wb") as out:  # pouchdb-server writes config.json and log.txt in its working folder
            proc = subprocess.Popen(
                [str(POUCHDB_SERVER), "--in-memory", "--port", str(self.couch_port)],
                cwd=couch_dir,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        self.procs.append(proc)
        _wait(self.couch_port, proc, "pouchdb-server", log)
        request = urllib.request.Request(f"{self.couch}/{DB}", method="PUT")  # the owner creates it, once
        with urllib.request.urlopen(request, timeout=10) as answer:
            assert answer.status in (201, 202)
        for name, algorithm in (("phone", "ES256"), ("laptop", "ES512")):
            self.enrol(name, algorithm)
        self.start_gate()
        return self

    def start_gate(self) -> subprocess.Popen | Forked:
        gate_log = self.root / "gate.log"
        proc = start_cli(["livesync", "gate", "--config", str(self.config)], gate_log)
        self.procs.append(proc)
        self.gate_proc = proc
        _wait(self.gate_port, proc, "the gate", gate_log)
        return proc

    def restart_gate(self, **livesync: object) -> None:
        """Stop the gate, give it :meth:`start`'s ``[livesync]`` table with these keys set (a previous restart's
        keys are gone), start it again."""
        self.gate_proc.kill()
        self.gate_proc.wait(timeout=10)
        self.procs.remove(self.gate_proc)
        head, _, table = self.config.read_text().partition("\n[livesync]\n")
        table, after, rest = table.partition("\n[")  # a table someone added after it stays as it was
        if self.livesync_table is None:
            self.livesync_table = table
        table = self.livesync_table
        for key, value in livesync.items():
            line = f"{key} = {value}"
            table, found = re.subn(rf"(?m)^{key} = .*$", line, table)
            if not found:
                table = table.rstrip("\n") + "\n" + line + "\n"
        self.config.write_text(head + "\n[livesync]\n" + table + after + rest)
        self.start_gate()

    def enrol(self, name: str, algorithm: str = "ES256") -> Device:
        done = notegate(
            "livesync", "device", "add", name, "--algorithm", algorithm, "--json", "--config", str(self.config)
        )
        assert done.returncode == 0, done.stderr
        out = json.loads(done.stdout)
        device = Device(name, out["kid"], algorithm, out["settings"]["jwtKey"], out["setup_uri"], out["passphrase"])
        self.devices[name] = device
        return device

    def stop(self) -> None:
        for proc in self.procs:
            proc.kill()
            proc.wait(timeout=10)

    def request(
        self,
        method: str,
        path: str,
        *,
        token: str | None = None,
        body: bytes | None = None,
        headers: dict[str, str] | None = None,
        base: str | None = None,
    ) -> Answer:
        """One request with the path sent exactly as written (http.client never normalises it)."""
        port = int((base or self.gate).rsplit(":", 1)[1])
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        sent = dict(headers or {})
        if token is not None:
            sent["Authorization"] = f"Bearer {token}"
        if body is not None:
            sent.setdefault("Content-Type", "application/json")
        try:
            conn.request(method, path, body=body, headers=sent)
            answer = conn.getresponse()
            raw = answer.read()
        finally:
            conn.close()
        try:
            parsed = json.loads(raw)
        except ValueError:
            parsed = raw.decode("utf-8", "replace")
        return Answer(answer.status, parsed)

    def device_run(self, device: Device, spec: dict, *, timeout: float = 90.0) -> dict:
        """Run the PouchDB device (client.mjs) once; its JSON answer."""
        full = {
            "gate": f"{self.gate}/{DB}",
            "kid": device.kid,
            "alg": device.algorithm,
            "key": device.private_pem,
            "dir": str(self.root / "devices" / device.name),
            **spec,
        }
        (self.root / "devices").mkdir(exist_ok=True)
        done = subprocess.run(
            ["node", str(CLIENT), json.dumps(full)], capture_output=True, text=True, timeout=timeout, cwd=NPM
        )
        assert done.stdout, done.stderr[-2000:]
        return json.loads(done.stdout.strip().splitlines()[-1])


#: Files both sides must carry to the same bytes (tests/livesync/test_compat.py, test_bridge_e2ee.py).
PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 1200  # ~300 KiB: more than one binary chunk
PDF = b"%PDF-1.7\n" + os.urandom(20_000) + b"\n%%EOF\n"
LONG = "".join(f"- line {i:05d}: Grüße, 日本語, emoji 🌍 and some words to fill the line\n" for i in range(2000))


WITHIN = 60.0  # the bound: a phone edit is in the origin within a minute
POLL = ("--poll-seconds", "1")


class Bridged:
    def __init__(self, lab: Lab, server) -> None:
        self.lab, self.server = lab, server
        self.token = mint(lab.config, name="mcp", tier="trusted")
        self.bridge: subprocess.Popen | Forked | None = None

    def start_bridge(self) -> None:
        argv = ["livesync", "bridge", "--config", str(self.lab.config), *POLL]
        self.bridge = start_cli(argv, self.lab.root / "bridge.log")
        self.lab.procs.append(self.bridge)

    def stop_bridge(self) -> None:
        assert self.bridge is not None
        self.bridge.kill()
        self.bridge.wait(timeout=10)

    def push(self, device: str, path: str, text: str, **extra: object) -> dict:
        meta, chunks = documents.write_note(path, text, ctime=1, mtime=int(time.time() * 1000))
        meta.update(extra)
        out = self.lab.device_run(self.lab.devices[device], {"action": "replicate", "put": [*chunks, meta]})
        assert "error" not in out, out
        return out

    def push_many(self, device: str, texts: dict[str, str]) -> dict:
        """Several notes in one replication (one device run, as a phone that synced a batch at once)."""
        docs: list[dict] = []
        for path, text in texts.items():
            meta, chunks = documents.write_note(path, text, ctime=1, mtime=int(time.time() * 1000))
            docs += [*chunks, meta]
        out = self.lab.device_run(self.lab.devices[device], {"action": "replicate", "put": docs})
        assert "error" not in out, out
        return out

    def origin_text(self, path: str) -> tuple[str, str] | None:
        """The note's text at the origin's main and the tip's message (None: not there)."""
        origin = load_config(self.lab.config).environment(None).origin_url
        repo = pygit2.Repository(origin)
        try:
            commit = repo.references["refs/heads/main"].peel(pygit2.Commit)
        except KeyError:
            return None
        try:
            blob = commit.tree[path]
        except KeyError:
            return None
        return blob.data.decode("utf-8"), commit.message

    def wait_origin(self, path: str, text: str, timeout: float = WITHIN) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = self.origin_text(path)
            if found and found[0] == text:
                return found[1]
            time.sleep(0.25)
        raise AssertionError(f"{path} not in the origin within {timeout} s: {self.bridge_log()}")

    def bridge_log(self) -> str:
        return (self.lab.root / "bridge.log").read_text(errors="replace")[-3000:]

    def tasks(self) -> list[str]:
        db = StateDB.for_config(load_config(self.lab.config))
        try:
            return [str(row["text"]) for row in db.tasks(load_config(self.lab.config).default_environment)]
        finally:
            db.close()

    def couch_doc(self, doc_id: str) -> dict:
        url = f"{self.lab.couch}/{DB}/{urllib.request.quote(doc_id, safe='')}?conflicts=true"
        with urllib.request.urlopen(url, timeout=10) as answer:
            return json.loads(answer.read())

    async def mcp(self, tool: str, arguments: dict):
        async with mcp_http(self.server.url, self.token, start_session=True) as client:
            return await client.call_tool(tool, arguments)
