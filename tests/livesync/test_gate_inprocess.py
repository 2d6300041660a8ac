"""The gate's own code in process, with a recording CouchDB stand-in: what CouchDB receives (never the device's
token), the bounds of a request (open requests per device, body time), the Setup URI read by LiveSync's own
library, and the enrolment commands' refusals. The HTTP tests against a real server are in test_gate.py."""

from __future__ import annotations

import json
import subprocess
import time
from urllib.parse import unquote

import anyio
import httpx2 as httpx
import pytest

from notegate.livesync import keys
from notegate.livesync.gate import Gate
from notegate.livesync.settings import LiveSyncConfig
from notegate.state import LiveSyncDevice
from support import notegate
from support.livesync import CLIENT, NPM, require_npm


class Couch:
    """A CouchDB stand-in that records what reaches it; ``hold`` makes it wait before answering."""

    def __init__(self) -> None:
        self.seen: list[httpx.Request] = []
        self.hold = 0.0

    async def __call__(self, request: httpx.Request) -> httpx.Response:
        self.seen.append(request)
        if self.hold:
            await anyio.sleep(self.hold)
        headers = {"set-cookie": "AuthSession=abc", "content-type": "application/json"}
        return httpx.Response(200, headers=headers, stream=httpx.ByteStream(b'{"ok": true}'))


def make_gate(couch: Couch, **settings) -> tuple[Gate, dict[str, LiveSyncDevice], dict[str, keys.KeyPair], list]:
    audit: list[dict] = []
    pairs = {name: keys.generate_key_pair("ES256") for name in ("phone", "laptop")}
    devices = {
        f"{name}-1": LiveSyncDevice(
            f"{name}-1", name, "personal", "owner", f"livesync:{name}-1", "ES256", pair.public_pem, 0.0, None, None
        )
        for name, pair in pairs.items()
    }
    config = LiveSyncConfig(couchdb_url="http://couch.invalid:5984", **settings)
    gate = Gate(
        config,
        environment="personal",
        lookup=devices.get,
        audit=lambda **row: audit.append(row),
        upstream_auth="Basic Z2F0ZTpwdw==",
        transport=httpx.MockTransport(couch),
    )
    return gate, devices, pairs, audit


def token(kid: str, pair: keys.KeyPair) -> str:
    from joserfc import jws
    from joserfc.jwk import ECKey

    now = int(time.time())
    claims = {"exp": now + 300, "iat": now, "sub": kid, "_couchdb.roles": ["_admin"]}
    key = ECKey.import_key(pair.private_pem)
    return jws.serialize_compact({"alg": "ES256", "kid": kid}, json.dumps(claims).encode(), key, algorithms=["ES256"])


@pytest.mark.anyio
async def test_couchdb_sees_the_gates_member_login_never_the_devices_token() -> None:
    couch = Couch()
    gate, _devices, pairs, audit = make_gate(couch)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(gate), base_url="http://gate") as client:
        answer = await client.post(
            "/notes/_bulk_docs",
            content=b'{"docs": [{"_id": "a.md"}], "new_edits": false}',
            headers={
                "Authorization": f"Bearer {token('phone-1', pairs['phone'])}",
                "Content-Type": "application/json",
                "Cookie": "AuthSession=stolen",
                "X-Auth-CouchDB-Roles": "_admin",
                "X-Auth-CouchDB-UserName": "admin",
                "X-Forwarded-For": "10.0.0.1",
            },
        )
    assert answer.status_code == 200
    assert "set-cookie" not in answer.headers  # CouchDB's session cookie never reaches the device
    (request,) = couch.seen
    assert request.headers["authorization"] == "Basic Z2F0ZTpwdw=="
    assert not any(name.lower().startswith(("cookie", "x-auth-couchdb", "x-forwarded")) for name in request.headers)
    assert str(request.url) == "http://couch.invalid:5984/notes/_bulk_docs"
    assert audit[-1]["tool"] == "livesync:bulk_docs" and audit[-1]["outcome"] == "ok" and audit[-1]["path"] is None


@pytest.mark.anyio
async def test_the_long_poll_is_clamped_and_its_heartbeat_dropped() -> None:
    couch = Couch()
    gate, _devices, pairs, _audit = make_gate(couch, feed_seconds=7)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(gate), base_url="http://gate") as client:
        await client.get(
            "/notes/_changes?feed=longpoll&heartbeat=10000&since=now&timeout=999999999",
            headers={"Authorization": f"Bearer {token('phone-1', pairs['phone'])}"},
        )
    query = dict(couch.seen[0].url.params)
    assert query["timeout"] == "7000" and "heartbeat" not in query and query["since"] == "now"


@pytest.mark.anyio
async def test_one_device_cannot_hold_more_than_its_open_requests() -> None:
    couch = Couch()
    couch.hold = 1.0
    gate, _devices, pairs, _audit = make_gate(couch, max_open_requests_per_device=2)
    phone = {"Authorization": f"Bearer {token('phone-1', pairs['phone'])}"}
    laptop = {"Authorization": f"Bearer {token('laptop-1', pairs['laptop'])}"}
    answers: list[httpx.Response] = []
    async with httpx.AsyncClient(transport=httpx.ASGITransport(gate), base_url="http://gate") as client:

        async def get(headers) -> None:
            answers.append(await client.get("/notes", headers=headers))

        async with anyio.create_task_group() as group:
            for _ in range(3):
                group.start_soon(get, phone)
            await anyio.sleep(0.3)
            group.start_soon(get, laptop)  # another device is not held back by the phone
    statuses = sorted(a.status_code for a in answers)
    assert statuses == [200, 200, 200, 429], statuses
    refused = next(a for a in answers if a.status_code == 429)
    assert refused.json()["rule"] == "too-many-open-requests"


@pytest.mark.anyio
async def test_a_body_that_does_not_arrive_in_time_is_refused() -> None:
    couch = Couch()
    gate, _devices, pairs, _audit = make_gate(couch, body_timeout_seconds=0.2)
    sent: list[dict] = []

    async def receive():
        await anyio.sleep(5)
        return {"type": "http.request", "body": b"{}", "more_body": False}

    async def send(message) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "method": "POST",
        "path": "/notes/_bulk_docs",
        "raw_path": b"/notes/_bulk_docs",
        "query_string": b"",
        "headers": [(b"authorization", f"Bearer {token('phone-1', pairs['phone'])}".encode())],
    }
    with anyio.fail_after(3):
        await gate(scope, receive, send)
    assert sent[0]["status"] == 408
    assert json.loads(sent[1]["body"])["rule"] == "request-body-timeout"
    assert not couch.seen


def test_the_setup_uri_opens_with_livesyncs_own_library() -> None:
    """The Setup URI `device add` prints is decrypted by octagonal-wheels (the library LiveSync decrypts
    Setup URIs with), at its pinned version, into the settings LiveSync reads."""
    require_npm()
    pair = keys.generate_key_pair("ES512")
    settings = keys.device_settings(
        uri="https://gate.example", database="notes", kid="phone-1", algorithm="ES512", private_pem=pair.private_pem
    )
    passphrase = keys.new_passphrase()
    uri = keys.setup_uri(settings, passphrase)
    assert json.loads(keys.decrypt_setting_string(unquote(uri.partition("=")[2]), passphrase)) == settings
    spec = json.dumps({"action": "decrypt-setup-uri", "uri": uri, "passphrase": passphrase})
    done = subprocess.run(["node", str(CLIENT), spec], capture_output=True, text=True, timeout=60, cwd=NPM)
    assert json.loads(done.stdout) == settings, done.stderr
    wrong = json.dumps({"action": "decrypt-setup-uri", "uri": uri, "passphrase": "not-it"})
    assert "error" in json.loads(
        subprocess.run(["node", str(CLIENT), wrong], capture_output=True, text=True, cwd=NPM).stdout
    )


def test_enrolment_refusals_name_their_rule(tmp_path) -> None:
    assert notegate("init", str(tmp_path / "vault")).returncode == 0
    config = tmp_path / "vault" / "notegate.toml"
    done = notegate("livesync", "device", "add", "phone", "--config", str(config))
    assert done.returncode == 1 and "Refused [livesync-not-configured]" in done.stderr
    with config.open("a", encoding="utf-8") as handle:
        handle.write('\n[livesync]\ndatabase = "notes"\n')
    done = notegate("livesync", "device", "add", "Phone!", "--config", str(config))
    assert "Refused [livesync-device-name-invalid]" in done.stderr
    done = notegate("livesync", "device", "add", "phone", "--person", "mallory", "--config", str(config))
    assert "Refused [livesync-person-not-member]" in done.stderr
    done = notegate("livesync", "device", "revoke", "phone", "--config", str(config))
    assert "Refused [livesync-device-not-found]" in done.stderr
    done = notegate("livesync", "device", "add", "phone", "--config", str(config))
    assert done.returncode == 0 and done.stdout.startswith("obsidian://setuplivesync?settings=%25%24")
    assert "BEGIN PRIVATE KEY" not in done.stdout + done.stderr  # only inside the encrypted URI
    listed = json.loads(notegate("livesync", "device", "list", "--json", "--config", str(config)).stdout)
    assert [(d["name"], d["algorithm"], d["revoked"]) for d in listed] == [("phone", "ES256", False)]
    assert (
        "Refused [livesync-device-exists]"
        in notegate("livesync", "device", "add", "phone", "--config", str(config)).stderr
    )


@pytest.mark.anyio
async def test_obsidians_origins_get_cors_and_others_do_not() -> None:
    """LiveSync uses the app's own fetch by default, so Obsidian (app://obsidian.md, capacitor://localhost)
    preflights every request: the gate answers for its origins only, and a preflight carries no token."""
    couch = Couch()
    gate, _devices, pairs, _audit = make_gate(couch)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(gate), base_url="http://gate") as client:
        pre = await client.options(
            "/notes/_bulk_docs",
            headers={"Origin": "app://obsidian.md", "Access-Control-Request-Method": "POST"},
        )
        assert pre.status_code == 204 and pre.headers["access-control-allow-origin"] == "app://obsidian.md"
        assert "authorization" in pre.headers["access-control-allow-headers"]
        evil = await client.options(
            "/notes/_bulk_docs", headers={"Origin": "https://evil.example", "Access-Control-Request-Method": "POST"}
        )
        assert evil.status_code == 405 and evil.json()["rule"] == "livesync-method"
        assert "access-control-allow-origin" not in evil.headers
        copy = await client.options(
            "/notes/x", headers={"Origin": "capacitor://localhost", "Access-Control-Request-Method": "COPY"}
        )
        assert copy.json()["rule"] == "livesync-method"
        got = await client.get(
            "/notes",
            headers={"Origin": "capacitor://localhost", "Authorization": f"Bearer {token('phone-1', pairs['phone'])}"},
        )
        assert got.headers["access-control-allow-origin"] == "capacitor://localhost"
        refused = await client.get("/notes", headers={"Origin": "capacitor://localhost"})
        assert refused.status_code == 401 and refused.headers["access-control-allow-origin"] == "capacitor://localhost"
    assert len(couch.seen) == 1  # only the authenticated GET reached CouchDB


def test_couchdb_config_names_a_member_never_an_admin(tmp_path) -> None:
    assert notegate("init", str(tmp_path / "vault")).returncode == 0
    config = tmp_path / "vault" / "notegate.toml"
    with config.open("a", encoding="utf-8") as handle:
        handle.write('\n[livesync]\ndatabase = "vaultdb"\ncouchdb_user = "gate"\nmax_body_bytes = 5000000\n')
    done = notegate("livesync", "couchdb-config", "--config", str(config))
    assert done.returncode == 0, done.stderr
    assert "require_valid_user = true" in done.stdout and "max_http_request_size = 5000000" in done.stdout
    assert '"members":{"names":["gate"],"roles":[]}' in done.stdout and "PUT /vaultdb/_security" in done.stdout
    assert '"admins":{"names":[],"roles":["_admin"]}' in done.stdout  # the gate's login is no admin


@pytest.mark.anyio
async def test_a_source_that_keeps_sending_refused_tokens_waits_before_any_lookup() -> None:
    couch = Couch()
    gate, devices, pairs, _audit = make_gate(couch, failed_logins_per_minute=3, trusted_proxies=("127.0.0.1",))
    looked_up: list[str] = []
    gate.lookup = lambda kid: looked_up.append(kid) or devices.get(kid)
    good = {"Authorization": f"Bearer {token('phone-1', pairs['phone'])}"}
    forged = {"Authorization": f"Bearer {token('phone-1', pairs['laptop'])}"}  # the laptop's key, the phone's kid
    transport = httpx.ASGITransport(gate, client=("127.0.0.1", 5000))  # behind the trusted proxy
    async with httpx.AsyncClient(transport=transport, base_url="http://gate") as client:
        attacker = {"X-Forwarded-For": "203.0.113.9"}
        rules = [(await client.get("/notes", headers={**forged, **attacker})).json()["rule"] for _ in range(5)]
        assert rules[:4] == ["livesync-token-signature"] * 4 and rules[4] == "rate-limited", rules
        lookups = len(looked_up)
        blocked = await client.get("/notes", headers={**good, **attacker})
        assert blocked.status_code == 429 and blocked.json()["rule"] == "rate-limited"
        assert len(looked_up) == lookups  # refused before any key was looked up or any signature checked
        other = await client.get("/notes", headers={**good, "X-Forwarded-For": "198.51.100.7"})
        assert other.status_code == 200  # the phone, from its own address, is not held back


@pytest.mark.anyio
async def test_a_device_gone_mid_stream_ends_the_request_and_is_still_audited() -> None:
    couch = Couch()
    gate, _devices, pairs, audit = make_gate(couch)
    sent: list[dict] = []

    async def receive():
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message) -> None:
        if message["type"] == "http.response.body":
            raise OSError("client disconnected")  # what uvicorn's ClientDisconnected is
        sent.append(message)

    scope = {
        "type": "http",
        "method": "GET",
        "path": "/notes/_changes",
        "raw_path": b"/notes/_changes",
        "query_string": b"feed=longpoll",
        "headers": [(b"authorization", f"Bearer {token('phone-1', pairs['phone'])}".encode())],
    }
    with anyio.fail_after(3):
        await gate(scope, receive, send)
    assert sent[0]["status"] == 200
    assert audit[-1]["tool"] == "livesync:changes"
    assert gate.open_total == 0 and not gate.open_per_device
