"""The LiveSync gate over HTTP: a real gate process in front of a real CouchDB-protocol server (pouchdb-server),
devices enrolled with `notegate livesync device add`, PouchDB replicating through it as LiveSync does.

Each refusal asserts the exact rule the gate names; the routes are the ones issue 31 lists."""

from __future__ import annotations

import json
import time
import urllib.request

import pytest

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
