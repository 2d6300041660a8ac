"""The LiveSync gate's pure decisions (notegate.policy.livesync): the request line, the bodies, the token.

The gate's own tests (test_gate.py) send the same requests over HTTP to a real gate in front of a real
CouchDB-protocol server; here each rule is pinned on the decision itself, and the path normaliser gets its
hypothesis properties."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from notegate.errors import RULES
from notegate.policy.decision import Decision
from notegate.policy.livesync import (
    GateDevice,
    Route,
    decide_body,
    decide_route,
    decide_token_claims,
    decide_token_header,
    decode_segment,
    split_path,
)

DB = "notes"

#: (method, raw path, raw query, the rule that refuses it). Every route issue 31 lists, every spelling of a
#: slash or a dot, design documents by every door.
REFUSED = [
    ("GET", "/_all_dbs", "", "livesync-server-route"),
    ("GET", "/_users/org.couchdb.user:alice", "", "livesync-server-route"),
    ("PUT", "/_users", "", "livesync-server-route"),
    ("GET", "/_config", "", "livesync-server-route"),
    ("PUT", "/_node/_local/_config/chttpd/require_valid_user", "", "livesync-config-read-only"),
    ("DELETE", "/_node/_local/_config/admins/alice", "", "livesync-config-read-only"),
    ("GET", "/_node/_local/_config/admins", "", "livesync-config-read-only"),
    ("GET", "/_node/_local/_stats", "", "livesync-server-route"),
    ("GET", "/_session", "", "livesync-server-route"),
    ("POST", "/_session", "", "livesync-server-route"),
    ("GET", "/_utils/", "", "livesync-server-route"),
    ("POST", "/_cluster_setup", "", "livesync-server-route"),
    ("POST", "/_replicate", "", "livesync-server-route"),
    ("GET", "/_replicator/x", "", "livesync-server-route"),
    ("GET", "/_uuids", "", "livesync-server-route"),
    ("GET", "/_something_new", "", "livesync-server-route"),
    ("POST", "/", "", "livesync-server-route"),
    ("GET", "/other", "", "livesync-other-database"),
    ("GET", "/notes2/_changes", "", "livesync-other-database"),
    ("GET", "/Notes", "", "livesync-other-database"),
    ("PUT", "/notes", "", "livesync-database-admin"),
    ("DELETE", "/notes", "", "livesync-database-admin"),
    ("DELETE", "/notes/", "", "livesync-database-admin"),
    ("POST", "/notes", "", "livesync-route-not-replication"),
    ("GET", "/notes/_security", "", "livesync-security"),
    ("PUT", "/notes/_security", "", "livesync-security"),
    ("POST", "/notes/_purge", "", "livesync-maintenance"),
    ("POST", "/notes/_compact", "", "livesync-maintenance"),
    ("POST", "/notes/_view_cleanup", "", "livesync-maintenance"),
    ("PUT", "/notes/_design/chunks", "", "livesync-design-document"),
    ("GET", "/notes/_design/chunks", "", "livesync-design-document"),
    ("GET", "/notes/_design/chunks/_view/v", "", "livesync-design-document"),
    ("GET", "/notes/_design_docs", "", "livesync-design-document"),
    ("GET", "/notes/_changes", "filter=chunks/only", "livesync-design-document"),
    ("GET", "/notes/_changes", "filter=_view&view=chunks/v", "livesync-design-document"),
    ("GET", "/notes/_all_docs", "startkey=%22_design%2F%22", "livesync-design-document"),
    ("GET", "/notes/_all_docs", "key=%5Fdesign/x", "livesync-design-document"),
    ("GET", "/notes/_changes", "feed=continuous", "livesync-changes-feed"),
    ("GET", "/notes/_changes", "feed=eventsource", "livesync-changes-feed"),
    ("GET", "/notes/_find", "", "livesync-route-not-replication"),
    ("POST", "/notes/_index", "", "livesync-route-not-replication"),
    ("PUT", "/notes/_revs_limit", "", "livesync-route-not-replication"),
    ("GET", "/notes/_bulk_docs", "", "livesync-route-not-replication"),
    ("POST", "/notes/_changes/x", "", "livesync-route-not-replication"),
    ("GET", "/notes/_local", "", "livesync-route-not-replication"),
    ("GET", "/notes/_local/a/b", "", "livesync-route-not-replication"),
    ("POST", "/notes/doc", "", "livesync-route-not-replication"),
    ("GET", "/notes/doc/attachment.png", "", "livesync-attachment"),
    ("PUT", "/notes/doc/attachment.png", "", "livesync-attachment"),
    ("COPY", "/notes/doc", "", "livesync-method"),
    ("OPTIONS", "/notes", "", "livesync-method"),
    ("PATCH", "/notes/doc", "", "livesync-method"),
    ("MOVE", "/notes/doc", "", "livesync-method"),
    ("GET", "/notes/doc", "_method=DELETE", "livesync-method-override"),
    ("POST", "/notes/_bulk_docs", "x-http-method-override=DELETE", "livesync-method-override"),
    # slashes and dots, encoded once or twice, in every segment
    ("GET", "/notes%2F_design%2Fchunks", "", "livesync-encoded-slash"),
    ("GET", "/notes/_design%2Fchunks", "", "livesync-encoded-slash"),
    ("GET", "/notes/_design%2fchunks", "", "livesync-encoded-slash"),
    ("GET", "/notes/a%5Cb", "", "livesync-encoded-slash"),
    ("GET", "/notes/_design%252Fchunks", "", "livesync-double-encoding"),
    ("GET", "/notes/%252e%252e", "", "livesync-double-encoding"),
    ("GET", "/notes/%2e%2e/_users", "", "livesync-path-encoding"),
    ("GET", "/notes/%2E", "", "livesync-path-encoding"),
    ("GET", "/%6Eotes", "", "livesync-path-encoding"),
    ("GET", "/notes/%5Fdesign/x", "", "livesync-path-encoding"),
    ("GET", "/notes/%zz", "", "livesync-path-encoding"),
    ("GET", "/notes/%C0%AF", "", "livesync-path-encoding"),
    ("GET", "/notes/../_users", "", "livesync-path-traversal"),
    ("GET", "/notes/./x", "", "livesync-path-traversal"),
    ("GET", "/../_users", "", "livesync-path-traversal"),
    ("GET", "/notes//_design/x", "", "livesync-path-invalid"),
    ("GET", "/notes/_changes/", "", "livesync-path-invalid"),
    ("GET", "/notes/a\\b", "", "livesync-path-invalid"),
    ("GET", "/notes/a b", "", "livesync-path-invalid"),
    ("GET", "/notes/%00", "", "livesync-path-invalid"),
    ("GET", "notes", "", "livesync-path-invalid"),
    ("GET", "/notes/_changes", "a=%zz", "livesync-query-invalid"),
    ("GET", "/notes/_changes", "&".join(f"k{i}=1" for i in range(65)), "livesync-query-invalid"),
]

ALLOWED = [
    ("GET", "/", "", "server"),
    ("GET", "/_node/_local/_config", "", "config"),
    ("GET", "/notes", "", "database"),
    ("GET", "/notes/", "", "database"),
    ("HEAD", "/notes", "", "database"),
    ("GET", "/notes/_changes", "style=all_docs&since=0&limit=100&feed=longpoll&heartbeat=10000", "changes"),
    ("POST", "/notes/_changes", "filter=_doc_ids", "changes"),
    ("POST", "/notes/_revs_diff", "", "revs_diff"),
    ("POST", "/notes/_bulk_docs", "", "bulk_docs"),
    ("POST", "/notes/_bulk_get", "revs=true&latest=true", "bulk_get"),
    ("POST", "/notes/_all_docs", "include_docs=true", "all_docs"),
    ("GET", "/notes/_local/DVS1ASATj9vvsuEhtIOBJA%3D%3D", "", "local"),
    ("PUT", "/notes/_local/obsydian_livesync_milestone", "", "local"),
    ("GET", "/notes/obsydian_livesync_version", "", "document"),
    ("GET", "/notes/f%3Aa1b2", "revs=true&open_revs=%5B%221-a%22%5D", "document"),
    ("GET", "/notes/%E3%83%A1%E3%83%A2.md", "", "document"),
]


def test_every_rule_in_the_table_is_registered() -> None:
    assert {rule for *_rest, rule in REFUSED} <= set(RULES)


@pytest.mark.parametrize(("method", "path", "query", "rule"), REFUSED)
def test_refused_routes_name_their_rule(method: str, path: str, query: str, rule: str) -> None:
    verdict = decide_route(method, path, query, DB)
    assert not verdict.decision.allowed
    assert verdict.decision.rule == rule, verdict.decision.reason


@pytest.mark.parametrize(("method", "path", "query", "kind"), ALLOWED)
def test_replication_routes_pass(method: str, path: str, query: str, kind: str) -> None:
    verdict = decide_route(method, path, query, DB)
    assert verdict.decision.allowed, verdict.decision.reason
    assert verdict.route is not None and verdict.route.kind == kind


def test_maintenance_only_when_the_owner_allows_it() -> None:
    assert decide_route("POST", "/notes/_compact", "", DB, maintenance=True).decision.allowed
    assert decide_route("GET", "/notes/_compact", "", DB, maintenance=True).decision.rule == "livesync-maintenance"


# ------------------------------------------------------------------------------------------- bodies
BULK = Route("bulk_docs")


@pytest.mark.parametrize(
    ("route", "body", "rule"),
    [
        (
            BULK,
            {"docs": [{"_id": "a"}, {"_id": "_design/chunks", "views": {}}], "new_edits": False},
            "livesync-design-document",
        ),
        (BULK, {"docs": [{"_id": "_design%2Fx"}]}, "livesync-design-document"),
        (BULK, {"docs": [{"_id": "_local/x"}]}, "livesync-reserved-id"),
        (BULK, {"docs": [{"_id": "_users"}]}, "livesync-reserved-id"),
        (BULK, {"docs": [{"_id": "a", "_attachments": {"x": {"data": "AA=="}}}]}, "livesync-attachment"),
        (BULK, {"docs": "nope"}, "livesync-body-invalid"),
        (BULK, [], "livesync-body-invalid"),
        (BULK, {"docs": [{"_id": 5}]}, "livesync-body-invalid"),
        (Route("bulk_get"), {"docs": [{"id": "_design/chunks"}]}, "livesync-design-document"),
        (Route("all_docs"), {"keys": ["a", "_design/chunks"]}, "livesync-design-document"),
        (Route("revs_diff"), {"a": ["1-x"], "_design/chunks": ["1-y"]}, "livesync-design-document"),
        (Route("changes"), {"doc_ids": ["_design/chunks"]}, "livesync-design-document"),
        (Route("document", "a"), {"_id": "_design/x"}, "livesync-reserved-id"),
        (Route("document", "a"), {"_id": "a", "_attachments": {}}, "livesync-attachment"),
        (Route("local", "_local/x"), ["x"], "livesync-body-invalid"),
    ],
)
def test_bodies_name_no_design_document_or_attachment(route: Route, body: object, rule: str) -> None:
    verdict = decide_body(route, body)
    assert not verdict.allowed and verdict.rule == rule


def test_replication_bodies_pass() -> None:
    docs = {"docs": [{"_id": "f:abc", "_rev": "1-a", "_revisions": {"start": 1, "ids": ["a"]}}], "new_edits": False}
    assert decide_body(BULK, docs).allowed
    assert decide_body(Route("bulk_get"), {"docs": [{"id": "h:+chunk", "rev": "1-a"}]}).allowed
    assert decide_body(Route("revs_diff"), {"folder/note.md": ["2-b"]}).allowed
    assert decide_body(Route("all_docs"), None).allowed
    assert decide_body(Route("local", "_local/x"), {"_id": "_local/x", "last_seq": 3}).allowed


# ------------------------------------------------------------------------------------------- the token
PHONE = GateDevice(kid="phone-1", environment="personal", algorithm="ES256", revoked=False)
NOW = 1_800_000_000.0


@pytest.mark.parametrize(
    ("header", "device", "rule"),
    [
        ({"alg": "none", "kid": "phone-1"}, PHONE, "livesync-token-algorithm"),
        ({"alg": "HS256", "kid": "phone-1"}, PHONE, "livesync-token-algorithm"),
        ({"alg": "ES512", "kid": "phone-1"}, PHONE, "livesync-token-algorithm"),
        ({"kid": "phone-1"}, PHONE, "livesync-token-algorithm"),
        ({"alg": "ES256"}, None, "livesync-device-unknown"),
        ({"alg": "ES256", "kid": "ghost"}, None, "livesync-device-unknown"),
        ({"alg": "ES256", "kid": "phone-1", "jwk": {"kty": "EC"}}, PHONE, "livesync-token-key-in-header"),
        ({"alg": "ES256", "kid": "phone-1", "jku": "https://x"}, PHONE, "livesync-token-key-in-header"),
        ({"alg": "ES256", "kid": "phone-1", "crit": ["b64"]}, PHONE, "livesync-token-malformed"),
        (
            {"alg": "ES256", "kid": "phone-1"},
            GateDevice("phone-1", "personal", "ES256", True),
            "livesync-device-revoked",
        ),
        (
            {"alg": "ES256", "kid": "phone-1"},
            GateDevice("phone-1", "work", "ES256", False),
            "livesync-wrong-environment",
        ),
        ("not an object", PHONE, "livesync-token-malformed"),
    ],
)
def test_token_headers(header: object, device: GateDevice | None, rule: str) -> None:
    verdict = decide_token_header(header, device, "personal")
    assert not verdict.allowed and verdict.rule == rule


def _claims(**over: object) -> dict:
    claims = {"exp": NOW + 300, "iat": NOW, "sub": "phone-1", "_couchdb.roles": ["_admin"]}
    claims.update(over)
    return {k: v for k, v in claims.items() if v is not None}


@pytest.mark.parametrize(
    ("claims", "rule"),
    [
        (_claims(exp=None), "livesync-token-expiry"),
        (_claims(exp="soon"), "livesync-token-expiry"),
        (_claims(exp=True), "livesync-token-expiry"),
        (_claims(exp=NOW - 120), "livesync-token-expiry"),
        (_claims(exp=NOW + 86_400 * 365), "livesync-token-expiry"),
        (_claims(iat=NOW - 3600, exp=NOW + 600), "livesync-token-expiry"),
        (_claims(iat=None), "livesync-token-issued-at"),
        (_claims(iat=NOW + 600, exp=NOW + 900), "livesync-token-issued-at"),
        (_claims(nbf=NOW + 600), "livesync-token-issued-at"),
        (_claims(sub="laptop-2"), "livesync-token-subject"),
        (_claims(sub=None), "livesync-token-subject"),
        ([], "livesync-token-malformed"),
    ],
)
def test_token_claims(claims: object, rule: str) -> None:
    verdict = decide_token_claims(claims, PHONE, now=NOW, max_lifetime=900, skew=60)
    assert not verdict.allowed and verdict.rule == rule


def test_a_live_token_counts_whatever_roles_it_claims() -> None:
    assert decide_token_claims(_claims(), PHONE, now=NOW, max_lifetime=900, skew=60).allowed


# ------------------------------------------------------------------------------------------- the normaliser
_SEGMENT_CHARS = st.sampled_from(
    [
        *list("abcXYZ019-._~:@!$&'()*+,;=%/\\ "),
        "%2F",
        "%2f",
        "%5C",
        "%25",
        "%2E",
        "%2e",
        "%3D",
        "%E3%83%A1",
        "%zz",
        "%C0",
    ]
)


@given(st.lists(_SEGMENT_CHARS, max_size=12).map("".join))
def test_a_decoded_segment_never_holds_a_separator_or_an_escape(raw: str) -> None:
    """Whatever a segment is made of, what the gate routes on holds no /, no \\, no %, and is never . or ..:
    the server can never read it as another path, however many times it decodes it."""
    decoded = decode_segment(raw)
    if isinstance(decoded, Decision):
        assert not decoded.allowed and decoded.rule in RULES
        return
    assert "/" not in decoded and "\\" not in decoded and "%" not in decoded
    assert decoded not in (".", "..")


_PATHS = st.lists(
    st.lists(
        st.sampled_from(
            [
                "notes",
                "_design",
                "_local",
                "_users",
                "a",
                "..",
                ".",
                "%2F",
                "%2f",
                "%25",
                "%2E",
                "%5F",
                "%3D",
                "%E3%83%A1",
                "b.md",
                "_changes",
                "%",
            ]
        ),
        max_size=3,
    ).map("".join),
    min_size=1,
    max_size=4,
).map(lambda parts: "/" + "/".join(parts))


@given(_PATHS, st.sampled_from(["GET", "PUT", "POST", "DELETE"]))
def test_the_route_is_decided_on_one_reading_of_the_path(raw: str, method: str) -> None:
    """An allowed path reads one way only: its decoded segments, encoded again the canonical way, decide the
    same route; and no allowed path holds an encoded slash, backslash or percent anywhere."""
    from urllib.parse import quote

    verdict = decide_route(method, raw, "", DB)
    if not verdict.decision.allowed:
        return
    lowered = raw.lower()
    assert "%2f" not in lowered and "%5c" not in lowered and "%25" not in lowered
    segments = split_path(raw)
    assert not isinstance(segments, Decision)
    canonical = "/" + "/".join(quote(s, safe="_-.~:@!$&'()*+,;=") for s in segments)
    again = decide_route(method, canonical, "", DB)
    assert again.decision.allowed and again.route == verdict.route
    if verdict.route.kind not in ("server", "config"):
        assert segments[0] == DB


@given(st.text(max_size=40))
def test_any_text_path_is_decided_without_raising(raw: str) -> None:
    verdict = decide_route("GET", raw, "", DB)
    assert verdict.decision.rule in RULES or verdict.decision.allowed
