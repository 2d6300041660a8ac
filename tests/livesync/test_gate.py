"""The LiveSync gate over HTTP: a real gate process in front of a real CouchDB-protocol server (pouchdb-server),
devices enrolled with `notegate livesync device add`, PouchDB replicating through it as LiveSync does.

Each refusal asserts the exact rule the gate names; the routes are the ones issue 31 lists. At the end, the
listener's admission at accept, with devices as its known callers."""

from __future__ import annotations

import json
import socket
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator

import pytest

from support import raw_read
from support.listener import DEADLINE, read_all
from support.livesync import DB, Lab, hs256_token, unsigned_token


def couch_doc(lab: Lab, doc_id: str) -> dict | None:
    """Read a document straight from CouchDB (as its admin would), not through the gate."""
    from urllib.parse import quote

    try:
        with urllib.request.urlopen(f"{lab.couch}/{DB}/{quote(doc_id, safe='')}", timeout=10) as answer:
            return json.loads(answer.read())
    except urllib.error.HTTPError:
        return None


def test_a_device_replicates_both_ways_and_a_second_device_sees_it(lab: Lab) -> None:
    phone, laptop = lab.devices["phone"], lab.devices["laptop"]
    pushed = lab.device_run(
        phone, {"action": "replicate", "put": [{"_id": "daily/2026-12-07.md", "data": "from the phone"}]}
    )
    assert pushed["push"]["ok"] and pushed["push"]["docs_written"] == 1, pushed
    assert couch_doc(lab, "daily/2026-12-07.md")["data"] == "from the phone"
    # the second device (ES512) pulls it, and pushes its own edit back
    pulled = lab.device_run(laptop, {"action": "replicate", "put": [{"_id": "laptop.md", "data": "from the laptop"}]})
    assert pulled["docs"]["daily/2026-12-07.md"]["data"] == "from the phone", pulled
    again = lab.device_run(phone, {"action": "replicate", "direction": "pull"})
    assert again["docs"]["laptop.md"]["data"] == "from the laptop"


def test_a_conflict_is_kept_not_lost(lab: Lab) -> None:
    phone, laptop = lab.devices["phone"], lab.devices["laptop"]
    lab.device_run(phone, {"action": "replicate", "put": [{"_id": "shared.md", "data": "v1"}]})
    lab.device_run(laptop, {"action": "replicate", "direction": "pull"})
    lab.device_run(phone, {"action": "replicate", "direction": "push", "put": [{"_id": "shared.md", "data": "phone"}]})
    lab.device_run(
        laptop, {"action": "replicate", "direction": "push", "put": [{"_id": "shared.md", "data": "laptop"}]}
    )
    both = lab.device_run(phone, {"action": "replicate", "direction": "pull"})
    winner = both["docs"]["shared.md"]
    assert winner["data"] in ("phone", "laptop") and len(winner["conflicts"]) == 1, winner


def test_a_live_pull_streams_changes_through_the_long_poll(lab: Lab) -> None:
    """PouchDB's live replication holds `_changes?feed=longpoll` open through the gate (clamped to the gate's
    feed_seconds, 5 s here) and sees an edit made by another device while it waits."""
    import threading

    phone, laptop = lab.devices["phone"], lab.devices["laptop"]
    result: dict = {}
    thread = threading.Thread(
        target=lambda: result.update(
            lab.device_run(laptop, {"action": "live-pull", "expect": "live.md", "wait_ms": 30000})
        )
    )
    thread.start()
    time.sleep(3)
    lab.device_run(phone, {"action": "replicate", "direction": "push", "put": [{"_id": "live.md", "data": "now"}]})
    thread.join(60)
    assert result.get("seen") is True, result


REFUSED_OVER_HTTP = [
    ("GET", "/_all_dbs", "livesync-server-route"),
    ("GET", "/_users/_all_docs", "livesync-server-route"),
    ("PUT", "/_node/_local/_config/chttpd/require_valid_user", "livesync-config-read-only"),
    ("GET", "/_session", "livesync-server-route"),
    ("POST", "/_replicate", "livesync-server-route"),
    ("GET", "/_utils/", "livesync-server-route"),
    ("POST", "/_cluster_setup", "livesync-server-route"),
    ("GET", "/other", "livesync-other-database"),
    ("PUT", "/other", "livesync-other-database"),
    ("DELETE", f"/{DB}", "livesync-database-admin"),
    ("PUT", f"/{DB}", "livesync-database-admin"),
    ("PUT", f"/{DB}/_security", "livesync-security"),
    ("GET", f"/{DB}/_security", "livesync-security"),
    ("POST", f"/{DB}/_purge", "livesync-maintenance"),
    ("POST", f"/{DB}/_compact", "livesync-maintenance"),
    ("PUT", f"/{DB}/_design/chunks", "livesync-design-document"),
    ("GET", f"/{DB}/_design/chunks/_view/all", "livesync-design-document"),
    ("COPY", f"/{DB}/note", "livesync-method"),
    ("GET", f"/{DB}/_design%2Fchunks", "livesync-encoded-slash"),
    ("GET", f"/{DB}%2F_design%2Fchunks", "livesync-encoded-slash"),
    ("GET", f"/{DB}/_design%252Fchunks", "livesync-double-encoding"),
    ("GET", f"/{DB}/%2e%2e/_users", "livesync-path-encoding"),
    ("GET", f"/{DB}/../_users", "livesync-path-traversal"),
    ("GET", f"/{DB}//_design/x", "livesync-path-invalid"),
    ("GET", f"/{DB}/note/photo.png", "livesync-attachment"),
    ("GET", f"/{DB}/_changes?feed=continuous", "livesync-changes-feed"),
    ("GET", f"/{DB}/_changes?filter=chunks/all", "livesync-design-document"),
    ("GET", f"/{DB}/note?_method=DELETE", "livesync-method-override"),
]


@pytest.mark.parametrize(("method", "path", "rule"), REFUSED_OVER_HTTP)
def test_a_stolen_admin_token_reaches_only_the_notes_database(lab: Lab, method: str, path: str, rule: str) -> None:
    """The phone's own token, as LiveSync signs it (``_couchdb.roles: ["_admin"]``), is refused everywhere
    but replication on the notes database, each time by its rule."""
    token = lab.devices["phone"].token()
    answer = lab.request(method, path, token=token, body=b"{}" if method in ("PUT", "POST") else None)
    assert isinstance(answer.body, dict) and answer.body.get("rule") == rule, answer
    assert answer.status in (400, 403, 405), answer
    assert f"Refused [{rule}]" in answer.body["reason"]


def test_the_same_token_does_replicate_on_the_notes_database(lab: Lab) -> None:
    token = lab.devices["phone"].token()
    assert lab.request("GET", f"/{DB}", token=token).status == 200
    assert lab.request("GET", f"/{DB}/_changes?since=0&limit=1", token=token).status == 200


@pytest.mark.parametrize(
    ("body", "rule"),
    [
        (
            {"docs": [{"_id": "ok.md"}, {"_id": "_design/chunks", "views": {"v": {"map": "function(d){}"}}}]},
            "livesync-design-document",
        ),
        (
            {"docs": [{"_id": "x", "_attachments": {"a.txt": {"content_type": "text/plain", "data": "aGk="}}}]},
            "livesync-attachment",
        ),
        ({"docs": [{"_id": "_local/sneaky"}]}, "livesync-reserved-id"),
    ],
)
def test_a_design_document_hidden_in_a_bulk_write_is_refused_whole(lab: Lab, body: dict, rule: str) -> None:
    token = lab.devices["phone"].token()
    answer = lab.request("POST", f"/{DB}/_bulk_docs", token=token, body=json.dumps(body).encode())
    assert answer.status == 403 and answer.body["rule"] == rule, answer
    assert couch_doc(lab, "ok.md") is None and couch_doc(lab, "_design/chunks") is None


def test_bulk_get_of_a_design_document_and_repeated_keys_are_refused(lab: Lab) -> None:
    token = lab.devices["phone"].token()
    answer = lab.request(
        "POST", f"/{DB}/_bulk_get", token=token, body=json.dumps({"docs": [{"id": "_design/chunks"}]}).encode()
    )
    assert answer.body["rule"] == "livesync-design-document"
    twice = b'{"docs": [{"_id": "a.md", "_id": "_design/x"}]}'
    answer = lab.request("POST", f"/{DB}/_bulk_docs", token=token, body=twice)
    assert answer.status == 400 and answer.body["rule"] == "livesync-body-not-json"
    answer = lab.request(
        "POST", f"/{DB}/_bulk_docs", token=token, body=b"{}", headers={"Content-Type": "multipart/related"}
    )
    assert answer.body["rule"] == "livesync-body-not-json"


def test_method_override_headers_and_oversized_bodies_are_refused(lab: Lab) -> None:
    token = lab.devices["phone"].token()
    answer = lab.request(
        "POST", f"/{DB}/_bulk_docs", token=token, body=b'{"docs": []}', headers={"X-HTTP-Method-Override": "DELETE"}
    )
    assert answer.body["rule"] == "livesync-method-override"
    big = json.dumps({"docs": [{"_id": "big.md", "data": "x" * 1_100_000}]}).encode()
    answer = lab.request("POST", f"/{DB}/_bulk_docs", token=token, body=big)
    assert answer.status == 413 and answer.body["rule"] == "livesync-body-too-large"


def test_the_wizard_reads_a_config_and_cannot_write_it(lab: Lab) -> None:
    token = lab.devices["phone"].token()
    answer = lab.request("GET", "/_node/_local/_config", token=token)
    assert answer.status == 200 and answer.body["chttpd"]["require_valid_user"] == "true"
    assert answer.body["admins"] == {}
    put = lab.request("PUT", "/_node/_local/_config/admins/mallory", token=token, body=b'"secret"')
    assert put.body["rule"] == "livesync-config-read-only"


# ------------------------------------------------------------------------------------------- tokens
def test_no_token_and_basic_auth_are_refused(lab: Lab) -> None:
    assert lab.request("GET", f"/{DB}").body["rule"] == "livesync-unauthenticated"
    answer = lab.request("GET", f"/{DB}", headers={"Authorization": "Basic YWRtaW46YWRtaW4="})
    assert answer.status == 401 and answer.body["rule"] == "livesync-basic-auth"


def test_forged_tokens_are_refused_each_by_its_rule(lab: Lab) -> None:
    phone, laptop = lab.devices["phone"], lab.devices["laptop"]
    now = int(time.time())
    claims = {"exp": now + 300, "iat": now, "sub": phone.kid, "_couchdb.roles": ["_admin"]}
    public_pem = _public_pem(phone)
    watch = lab.devices.get("watch") or lab.enrol("watch", "ES256")  # a third device, same algorithm as phone
    cases = {
        # another device's key under this device's kid and algorithm
        "livesync-token-signature": _signed_with(watch, {"alg": "ES256", "kid": phone.kid}, claims),
        "livesync-token-algorithm": unsigned_token({"alg": "none", "kid": phone.kid}, claims),
    }
    for rule, token in cases.items():
        answer = lab.request("GET", f"/{DB}", token=token)
        assert answer.status == 401 and answer.body["rule"] == rule, (rule, answer)
    # HS/ES confusion: HMAC keyed with the device's public key, announced as HS256
    confused = hs256_token(public_pem.encode(), {"alg": "HS256", "kid": phone.kid}, claims)
    assert lab.request("GET", f"/{DB}", token=confused).body["rule"] == "livesync-token-algorithm"
    # another device's algorithm on this device: ES512 is laptop's, phone is pinned to ES256
    assert lab.request("GET", f"/{DB}", token=laptop.token(header={"kid": phone.kid})).body["rule"] == (
        "livesync-token-algorithm"
    )
    assert lab.request("GET", f"/{DB}", token=phone.token(exp=None)).body["rule"] == "livesync-token-expiry"
    assert lab.request("GET", f"/{DB}", token=phone.token(exp=now + 30 * 86400)).body["rule"] == "livesync-token-expiry"
    assert (
        lab.request("GET", f"/{DB}", token=phone.token(exp=now - 600, iat=now - 900)).body["rule"]
        == "livesync-token-expiry"
    )
    assert (
        lab.request("GET", f"/{DB}", token=phone.token(iat=now + 600, exp=now + 900)).body["rule"]
        == "livesync-token-issued-at"
    )
    assert lab.request("GET", f"/{DB}", token=phone.token(sub=laptop.kid)).body["rule"] == "livesync-token-subject"
    assert (
        lab.request("GET", f"/{DB}", token=phone.token(header={"kid": "nobody-00000000"})).body["rule"]
        == "livesync-device-unknown"
    )
    jwk = {"kty": "EC", "crv": "P-256", "x": "AA", "y": "AA"}
    assert (
        lab.request("GET", f"/{DB}", token=phone.token(header={"jwk": jwk})).body["rule"]
        == "livesync-token-key-in-header"
    )


def _public_pem(device) -> str:
    from cryptography.hazmat.primitives import serialization

    key = serialization.load_pem_private_key(device.private_pem.encode(), None)
    return (
        key.public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )


def _signed_with(device, header: dict, claims: dict) -> str:
    """A token signed with ``device``'s private key, whatever device its header names."""
    from joserfc import jws
    from joserfc.jwk import ECKey

    key = ECKey.import_key(device.private_pem)
    return jws.serialize_compact({"typ": "JWT", **header}, json.dumps(claims).encode(), key, algorithms=[header["alg"]])


def test_a_revoked_device_is_refused_at_once(lab: Lab) -> None:
    from support import notegate

    tablet = lab.enrol("tablet")
    token = tablet.token()
    assert lab.request("GET", f"/{DB}", token=token).status == 200
    done = notegate("livesync", "device", "revoke", "tablet", "--config", str(lab.config))
    assert done.returncode == 0, done.stderr
    answer = lab.request("GET", f"/{DB}", token=token)  # the same, still unexpired token
    assert answer.status == 401 and answer.body["rule"] == "livesync-device-revoked"


def test_every_request_of_a_device_is_audited_without_ids(lab: Lab) -> None:
    from notegate.livesync.documents import write_note
    from support import notegate

    phone = lab.devices["phone"]
    lab.request("GET", f"/{DB}/_design/chunks", token=phone.token())
    # a write of its own (the module's other tests may run on another xdist worker, with another lab)
    meta, chunks = write_note("Audit/Probe.md", "audited, never by its path\n", ctime=1, mtime=2)
    lab.device_run(phone, {"action": "replicate", "direction": "push", "put": [meta, *chunks]})
    done = notegate("audit", "--config", str(lab.config), "--connector", f"livesync:{phone.kid}", "--json")
    rows = json.loads(done.stdout)
    assert any(r["outcome"] == "livesync-design-document" for r in rows)
    assert any(r["tool"] == "livesync:bulk_docs" and r["outcome"] == "ok" for r in rows)
    assert all(r["path"] is None and r["login"] == "owner" for r in rows)


def test_the_gate_records_which_device_wrote_each_note_revision(lab: Lab) -> None:
    """LiveSync's documents name no author, so the gate records, per written revision of a note document,
    the device that pushed it (keyed by a hash: no path in the state database). The bridge authors commits
    from it; a revision another device replicates back keeps its first writer."""
    from notegate.config import load_config
    from notegate.livesync.documents import revision_key, write_note
    from notegate.state import StateDB

    phone, laptop = lab.devices["phone"], lab.devices["laptop"]
    meta, chunks = write_note("Inbox/Idea.md", "an idea from the phone\n", ctime=1, mtime=2)
    lab.device_run(phone, {"action": "replicate", "direction": "push", "put": [meta, *chunks]})
    lab.device_run(laptop, {"action": "replicate"})  # pulls it and pushes everything it has back
    rev = couch_doc(lab, meta["_id"])["_rev"]
    config = load_config(lab.config)
    db = StateDB.for_config(config)
    try:
        assert db.livesync_revision_author(config.default_environment, revision_key(meta["_id"], rev)) == phone.kid
        assert db.livesync_revision_author(config.default_environment, revision_key(chunks[0]["_id"], "1-x")) is None
    finally:
        db.close()


# --- admission at accept (doors/admission.py, the listener `notegate serve` has) --------------------------------
# A stranger reconnecting over its budget is refused at accept() and then dropped in the kernel; an address a
# device's request completed from is a caller's, never held to the strangers' budgets, and its waiting connection
# never gives way to a stranger's. Before, the gate had the listener's slots and head deadline but no admission at
# accept and no known devices: a stranger's newcomer closed a device's waiting connection. Real sockets, each peer
# its own 127.0.0.x address; the gate restarts with each test's numbers and again after it.

RATE, BURST = 0.2, 10  # a stranger's 11th quick connection is over its budget; its SYNs drop for 50 s
LINUX = sys.platform.startswith("linux")


@pytest.fixture
def gate(lab: Lab) -> Iterator[Callable[..., None]]:
    """Restart the gate with these [livesync] keys; afterwards as the module's other tests expect it."""
    yield lab.restart_gate
    lab.restart_gate()


def connect(lab: Lab, source: str) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", lab.gate_port), timeout=DEADLINE, source_address=(source, 0))
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


def request(lab: Lab, token: str | None, *, close: bool) -> bytes:
    """``GET /notes`` as a device asks it (with its token) or a stranger does (none)."""
    auth = f"Authorization: Bearer {token}\r\n" if token else ""
    tail = "Connection: close\r\n" if close else ""
    return f"GET /{DB} HTTP/1.1\r\nHost: 127.0.0.1:{lab.gate_port}\r\n{auth}{tail}\r\n".encode()


def answers(lab: Lab, source: str, token: str | None, most: int) -> list[bytes]:
    """``GET /notes`` from ``source``, each on a new connection, until one is answered otherwise than the
    first (at most ``most``)."""
    out: list[bytes] = []
    while len(out) < most and (not out or out[-1][:12] == out[0][:12]):
        with connect(lab, source) as sock:
            sock.sendall(request(lab, token, close=True))
            out.append(read_all(sock))
    return out


def test_a_stranger_reconnecting_over_its_budget_is_refused_at_accept_then_dropped(lab: Lab, gate) -> None:
    # the strangers' shared budget out of the way: this is one peer's own (as tests/doors/test_listener_admission.py)
    gate(new_connections_per_peer_per_second=RATE, new_connections_burst=BURST, stranger_connections_per_second=100_000)
    seen = answers(lab, "127.0.0.2", None, BURST + 20)  # the budget refills one in 5 s meanwhile
    assert all(a.startswith(b"HTTP/1.1 401 ") for a in seen[:BURST]), [a[:40] for a in seen]
    assert b'"rule": "livesync-unauthenticated"' in seen[0]  # the gate's own answer: these reached it
    refusal = seen[-1]
    assert refusal.startswith(b"HTTP/1.1 429 "), refusal
    assert b"Refused [too-many-new-connections]: this address opens new connections faster than 0.2 a" in refusal
    if LINUX:
        assert b"its next connections go unanswered for 50 s" in refusal
        dropped = socket.socket()
        dropped.settimeout(0.5)
        dropped.bind(("127.0.0.2", 0))
        with pytest.raises(TimeoutError):  # the SYN is dropped in the kernel: no answer, no refusal to read
            dropped.connect(("127.0.0.1", lab.gate_port))
        dropped.close()
    assert answers(lab, "127.0.0.3", None, 1)[0].startswith(b"HTTP/1.1 401 ")  # another stranger still gets in


def test_a_device_is_never_held_to_the_strangers_budgets(lab: Lab, gate) -> None:
    """Strangers spend their shared budget and are refused at accept; the phone's address, known since its
    request completed, is not held to it nor to its own rate.  A refused token credits nothing."""
    gate(
        new_connections_per_peer_per_second=RATE,
        new_connections_burst=BURST,
        stranger_connections_per_second=RATE,
    )
    token = lab.devices["phone"].token()
    assert answers(lab, "127.0.0.4", token, 1)[0].startswith(b"HTTP/1.1 200 ")  # a device's address now
    forged = lab.devices["phone"].token()[:-8] + "AAAAAAAA"
    assert answers(lab, "127.0.0.5", forged, 1)[0].startswith(b"HTTP/1.1 401 ")
    refused = b""
    for n in range(3 * BURST):  # each address well under its own budget: the shared one runs out
        found = answers(lab, f"127.0.0.{40 + n % 10}", None, 1)[0]
        if not found.startswith(b"HTTP/1.1 401 "):
            refused = found
            break
    assert refused.startswith(b"HTTP/1.1 429 "), refused
    assert b"Refused [too-many-new-connections]: addresses not known as callers open new connections" in refused
    assert answers(lab, "127.0.0.5", forged, 1)[0].startswith(b"HTTP/1.1 429 ")  # its bad token made it no device
    served = answers(lab, "127.0.0.4", token, BURST + 10)
    assert len(served) == BURST + 10 and all(a.startswith(b"HTTP/1.1 200 ") for a in served)


def test_a_strangers_newcomer_never_displaces_a_devices_waiting_connection(lab: Lab, gate) -> None:
    """The gate is full: the phone's connection that has not sent its head yet, and strangers' kept-alive ones.
    A stranger's newcomer is refused 503 instead of closing the phone's connection (before, the phone was a
    stranger to the listener, and its connection, the longest waiting, was the one closed)."""
    gate(max_connections=4, header_timeout_seconds=60.0, idle_connection_seconds=60)
    token = lab.devices["phone"].token()
    assert answers(lab, "127.0.0.6", token, 1)[0].startswith(b"HTTP/1.1 200 ")
    time.sleep(0.3)  # the gate sees that connection's close
    phone = connect(lab, "127.0.0.6")  # sends nothing yet
    strangers = [connect(lab, "127.0.0.7") for _ in range(3)]
    try:
        for sock in strangers:  # completed a request: not waiting, never displaced either
            sock.sendall(request(lab, None, close=False))
            assert raw_read(sock).status == 401
        newcomer = connect(lab, "127.0.0.8")
        answer = read_all(newcomer, seconds=DEADLINE)
        newcomer.close()
        assert answer.startswith(b"HTTP/1.1 503 "), answer
        assert b"Refused [too-many-connections]" in answer
        phone.sendall(request(lab, token, close=False))
        assert raw_read(phone).status == 200
    finally:
        phone.close()
        for sock in strangers:
            sock.close()
