"""The LiveSync gate's decisions (pure): which CouchDB requests a device may make, and whether its token counts.

Obsidian's Self-hosted LiveSync replicates through PouchDB's CouchDB protocol, and in its "Use JWT" mode it signs
``{exp, iat, sub, "_couchdb.roles": ["_admin"]}`` on the device: the admin role is hard-coded, so a token copied
off a phone would own the whole CouchDB server if it reached it. The gate (``notegate.livesync.gate``) therefore
decides here, before anything is forwarded:

* :func:`decide_route` -- the request line: the method, every path segment decoded exactly once under strict
  rules (an encoded ``/``, ``\\`` or ``%``, an encoded character that never needs encoding such as ``%2E``, a
  ``.``/``..`` segment: each refused by name), then the route, matched against the one allow-list of what
  replication needs on the one notes database. The last branch refuses.
* :func:`decide_body` -- what a JSON body names: no design document, no reserved id, no inline attachment,
  inside ``_bulk_docs``, ``_bulk_get``, ``_all_docs`` keys, ``_revs_diff`` and ``_changes`` ``doc_ids``.
* :func:`decide_token_header` / :func:`decide_token_claims` -- the device's token: the key is chosen by the
  gate from the ``kid`` (never by the token: ``jwk``/``jku``/``x5u``/``x5c`` are refused), the algorithm is the
  one pinned for that device (``none``, HS* and any other are refused), ``exp`` required and short, ``iat``
  required and not in the future, ``sub`` the device itself, the device of the gate's environment.

Why segment decoding is strict rather than lenient: CouchDB decodes a path segment once, proxies in front of it
may decode again, and ``/notes/_design%2Fx`` or ``/notes%2F..%2F_users`` mean different things to each. A gate
that refuses every form that could be read two ways never has to guess which reading the server will pick.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from notegate.policy.decision import Decision, allow, deny

#: Algorithms a device may be enrolled with. ES256/ES512 only: the gate keeps the public key and nothing
#: that can sign. HS256/HS512 (which LiveSync also offers) would need the shared secret stored readable by
#: the gate, so anyone who reads the gate's state could sign as every device: not offered (docs/how-to/livesync.md).
DEVICE_ALGORITHMS = ("ES256", "ES512")

#: Methods replication uses. COPY, OPTIONS, PATCH and every other verb are refused by name.
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "DELETE"})

#: Headers and query keys that ask a server to treat a request as another method.
METHOD_OVERRIDES = ("x-http-method-override", "x-http-method", "x-method-override")

#: RFC 3986 unreserved characters: they never need encoding, so an escape of one (``%2E``, ``%5F``) is a
#: second spelling of the same path and is refused.
_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
_ESCAPE = re.compile(r"%([0-9A-Fa-f]{2})")

#: Server-level names (the first segment) that are never a notes database: refused by name, whatever the
#: token claims.
SERVER_ROUTES = frozenset(
    {
        "_all_dbs",
        "_dbs_info",
        "_users",
        "_replicator",
        "_global_changes",
        "_config",
        "_node",
        "_session",
        "_utils",
        "_cluster_setup",
        "_replicate",
        "_active_tasks",
        "_scheduler",
        "_membership",
        "_uuids",
        "_up",
        "_reshard",
        "_search_analyze",
        "_db_updates",
        "_stats",
        "_system",
        "_restart",
    }
)

#: Database sub-routes a device may use, and the methods each takes: what PouchDB's replication needs.
REPLICATION_ROUTES: dict[str, frozenset[str]] = {
    "_changes": frozenset({"GET", "POST"}),
    "_revs_diff": frozenset({"POST"}),
    "_bulk_docs": frozenset({"POST"}),
    "_bulk_get": frozenset({"POST"}),
    "_all_docs": frozenset({"GET", "HEAD", "POST"}),
    "_ensure_full_commit": frozenset({"POST"}),
}
#: Maintenance routes: forwarded only when the owner turned ``allow_maintenance`` on for the gate.
MAINTENANCE_ROUTES = frozenset({"_purge", "_compact", "_view_cleanup"})
#: ``_changes`` filters that run no stored code (a named filter ``ddoc/name`` or ``_view`` runs a design
#: document).
CHANGES_FILTERS = frozenset({"_doc_ids", "_selector"})
#: ``_changes`` feeds a device may open: one answer, or one long poll (both bounded by the gate's clock).
CHANGES_FEEDS = frozenset({"normal", "longpoll"})


@dataclass(frozen=True)
class Route:
    """Where an allowed request goes: its ``kind`` (what the audit row names and which body check applies)
    and the document id it names (None for collection routes)."""

    kind: str
    doc_id: str | None = None


@dataclass(frozen=True)
class RouteDecision:
    decision: Decision
    route: Route | None = None


def decode_segment(raw: str) -> str | Decision:
    """One raw path segment decoded exactly once, or the refusal: an escape of ``/``, ``\\`` or ``%``
    (double encoding), of an unreserved character, a malformed escape, bytes that are not UTF-8, control
    characters, ``.`` and ``..``."""
    if "%" in raw and _ESCAPE.sub("", raw).count("%"):
        return deny("livesync-path-encoding", "a % in the path is not followed by two hexadecimal digits")
    octets = bytearray()
    i = 0
    while i < len(raw):
        ch = raw[i]
        if ch == "%":
            value = int(raw[i + 1 : i + 3], 16)
            char = chr(value)
            if char in "/\\":
                return deny("livesync-encoded-slash", "a path segment holds an encoded slash or backslash")
            if char == "%":
                return deny("livesync-double-encoding", "a path segment holds an encoded % (double encoding)")
            if char in _UNRESERVED:
                return deny("livesync-path-encoding", f"a path segment encodes '{char}', which never needs encoding")
            octets.append(value)
            i += 3
            continue
        if ord(ch) < 0x21 or ord(ch) > 0x7E or ch in "\\/":
            return deny("livesync-path-invalid", "the path holds a space, a control character or a backslash")
        octets.extend(ch.encode("ascii"))
        i += 1
    try:
        text = octets.decode("utf-8")
    except UnicodeDecodeError:
        return deny("livesync-path-encoding", "a path segment does not decode to UTF-8")
    if any(ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0 for c in text):
        return deny("livesync-path-invalid", "a path segment decodes to a control character")
    if text in (".", ".."):
        return deny("livesync-path-traversal", "the path has a . or .. segment")
    return text


def split_path(raw_path: str) -> list[str] | Decision:
    """The decoded segments of a raw request path (``/`` gives ``[]``; one trailing slash is allowed only
    after the database, as PouchDB sends ``GET /db/``), or the refusal."""
    if not raw_path.startswith("/"):
        return deny("livesync-path-invalid", "the request path does not start with /")
    body = raw_path[1:]
    if body == "":
        return []
    parts = body.split("/")
    if parts[-1] == "" and len(parts) == 2:
        parts = parts[:1]  # /db/ is the database itself
    out: list[str] = []
    for part in parts:
        if part == "":
            return deny("livesync-path-invalid", "the path has an empty segment (// or a trailing /)")
        decoded = decode_segment(part)
        if isinstance(decoded, Decision):
            return decoded
        out.append(decoded)
    return out


def query_pairs(raw_query: str, *, limit: int = 64) -> list[tuple[str, str]] | None:
    """A query string's ``key=value`` pairs, ``+`` and ``%XX`` decoded once as a form (what CouchDB reads);
    None when it is malformed (a bad escape, bytes that are not UTF-8) or has more than ``limit`` fields."""
    if not raw_query:
        return []
    fields = raw_query.split("&")
    if len(fields) > limit:
        return None
    out: list[tuple[str, str]] = []
    for field in fields:
        if not field:
            continue
        key, _, value = field.partition("=")
        decoded = []
        for part in (key, value):
            part = part.replace("+", " ")
            if _ESCAPE.sub("", part).count("%"):
                return None
            try:
                text = re.sub(
                    rb"%([0-9A-Fa-f]{2})", lambda m: bytes([int(m.group(1), 16)]), part.encode("latin-1")
                ).decode("utf-8")
            except (UnicodeDecodeError, UnicodeEncodeError):
                return None
            decoded.append(text)
        out.append((decoded[0], decoded[1]))
    return out


def _query_decision(raw_query: str) -> Decision | None:
    """The query string's refusals: a method override, a design document named in any value, a malformed
    string. None when it may pass."""
    pairs = query_pairs(raw_query)
    if pairs is None:
        return deny("livesync-query-invalid", "the query string is malformed or has too many fields")
    for key, value in pairs:
        if key.lower() in ("_method", "method", *METHOD_OVERRIDES):
            return deny("livesync-method-override", f"the query asks for another method ({key})")
        if "_design" in value or "_design" in key:
            return deny("livesync-design-document", "the query names a design document")
    return None


def _query_value(raw_query: str, name: str) -> str | None:
    for key, value in query_pairs(raw_query) or []:
        if key == name:
            return value
    return None


def decide_route(
    method: str, raw_path: str, raw_query: str, database: str, *, maintenance: bool = False
) -> RouteDecision:
    """May a device send this request line? ``raw_path`` is the path exactly as it came (never decoded by
    anyone before), ``database`` the one notes database the gate serves."""
    if method not in METHODS:
        return RouteDecision(deny("livesync-method", f"{method[:16]} is not a method replication uses"))
    segments = split_path(raw_path)
    if isinstance(segments, Decision):
        return RouteDecision(segments)
    query = _query_decision(raw_query)
    if query is not None:
        return RouteDecision(query)
    if not segments:
        if method in ("GET", "HEAD"):
            return RouteDecision(allow("livesync-route", "server information"), Route("server"))
        return RouteDecision(deny("livesync-server-route", "only GET / is served at the root"))
    first = segments[0]
    if first == "_node":
        if segments[1:] == ["_local", "_config"] or (len(segments) >= 3 and segments[2] == "_config"):
            if method in ("GET", "HEAD") and len(segments) == 3:
                return RouteDecision(allow("livesync-route", "the setup wizard's configuration check"), Route("config"))
            return RouteDecision(
                deny("livesync-config-read-only", "the server's configuration is read-only through the gate")
            )
        return RouteDecision(deny("livesync-server-route", "/_node is the server's, not a device's"))
    if first.startswith("_"):
        if first in SERVER_ROUTES:
            return RouteDecision(deny("livesync-server-route", f"{first} is a server route, not the notes database"))
        return RouteDecision(deny("livesync-server-route", "server routes and system databases are not served"))
    if first != database:
        return RouteDecision(deny("livesync-other-database", "the gate serves one notes database only"))
    rest = segments[1:]
    if not rest:
        if method in ("GET", "HEAD"):
            return RouteDecision(allow("livesync-route", "database information"), Route("database"))
        if method in ("PUT", "DELETE"):
            return RouteDecision(
                deny("livesync-database-admin", "creating or deleting the notes database is the owner's")
            )
        return RouteDecision(deny("livesync-route-not-replication", "POST to the database is not replication"))
    name = rest[0]
    if name == "_design" or name.startswith("_design"):
        return RouteDecision(deny("livesync-design-document", "design documents are the owner's, not a device's"))
    if name == "_security":
        return RouteDecision(deny("livesync-security", "the database's members and admins are the owner's"))
    if name in MAINTENANCE_ROUTES:
        if maintenance and method == "POST" and len(rest) == 1:
            return RouteDecision(allow("livesync-route", "maintenance the owner allowed"), Route("maintenance"))
        return RouteDecision(deny("livesync-maintenance", f"{name} is maintenance; the owner has not allowed it"))
    if name in REPLICATION_ROUTES:
        if len(rest) != 1 or method not in REPLICATION_ROUTES[name]:
            return RouteDecision(
                deny("livesync-route-not-replication", f"{method} {name} is not how replication uses it")
            )
        if name == "_changes":
            feed = _query_value(raw_query, "feed")
            if feed is not None and feed not in CHANGES_FEEDS:
                return RouteDecision(deny("livesync-changes-feed", "only the normal and longpoll feeds are served"))
            changes_filter = _query_value(raw_query, "filter")
            if changes_filter is not None and changes_filter not in CHANGES_FILTERS:
                return RouteDecision(
                    deny(
                        "livesync-design-document",
                        "a _changes filter other than _doc_ids or _selector runs a design document",
                    )
                )
        return RouteDecision(allow("livesync-route", name), Route(name.lstrip("_")))
    if name == "_local":
        if len(rest) == 2 and method in ("GET", "HEAD", "PUT", "DELETE"):
            return RouteDecision(allow("livesync-route", "a checkpoint"), Route("local", "_local/" + rest[1]))
        return RouteDecision(
            deny("livesync-route-not-replication", "a _local document is read or written one at a time")
        )
    if name.startswith("_"):
        return RouteDecision(deny("livesync-route-not-replication", f"{name[:32]} is not a route replication uses"))
    if len(rest) > 1:
        return RouteDecision(deny("livesync-attachment", "attachments are not served; LiveSync stores files as chunks"))
    if method in ("GET", "HEAD", "PUT", "DELETE"):
        return RouteDecision(allow("livesync-route", "one document"), Route("document", name))
    return RouteDecision(deny("livesync-route-not-replication", f"{method} on a document is not replication"))


def decide_doc_id(doc_id: object) -> Decision:
    """May a device name this id inside a body? Never a design document or another reserved (``_``) id."""
    if not isinstance(doc_id, str):
        return deny("livesync-body-invalid", "a document id is not a string")
    if doc_id.startswith("_design"):
        return deny("livesync-design-document", "the body names a design document")
    if doc_id.startswith("_"):
        return deny("livesync-reserved-id", "the body names a reserved (_-prefixed) document id")
    return allow("livesync-body", "")


def _check_doc(doc: object, *, id_key: str) -> Decision:
    if not isinstance(doc, dict):
        return deny("livesync-body-invalid", "a document in the body is not a JSON object")
    if id_key in doc:
        verdict = decide_doc_id(doc[id_key])
        if not verdict.allowed:
            return verdict
    if "_attachments" in doc:
        return deny("livesync-attachment", "the body carries an attachment; LiveSync stores files as chunks")
    return allow("livesync-body", "")


def _check_list(items: object, check) -> Decision:
    if not isinstance(items, list):
        return deny("livesync-body-invalid", "the body's list is not a JSON array")
    for item in items:
        verdict = check(item)
        if not verdict.allowed:
            return verdict
    return allow("livesync-body", "")


def decide_body(route: Route, body: object) -> Decision:
    """May this parsed JSON body go to this route? Every id it names is checked; bodies of routes that take
    none pass (the gate refuses to forward a body to a GET)."""
    kind = route.kind
    if kind in ("bulk_docs", "bulk_get"):
        if not isinstance(body, dict) or "docs" not in body:
            return deny("livesync-body-invalid", f"_{kind} takes an object with a docs list")
        return _check_list(body["docs"], lambda d: _check_doc(d, id_key="_id" if kind == "bulk_docs" else "id"))
    if kind == "revs_diff":
        if not isinstance(body, dict):
            return deny("livesync-body-invalid", "_revs_diff takes an object of ids")
        return _check_list(list(body), decide_doc_id)
    if kind in ("all_docs", "changes"):
        if body is None:
            return allow("livesync-body", "")
        if not isinstance(body, dict):
            return deny("livesync-body-invalid", "the body is not a JSON object")
        key = "keys" if kind == "all_docs" else "doc_ids"
        return _check_list(body.get(key, []), decide_doc_id)
    if kind in ("document", "local"):
        if not isinstance(body, dict):
            return deny("livesync-body-invalid", "a document is a JSON object")
        if "_id" in body and body["_id"] != route.doc_id:
            return deny("livesync-reserved-id", "the body's _id is not the document the path names")
        return _check_doc(body, id_key="__none__")
    return allow("livesync-body", "")


def decide_cors(origin: str | None, allowed: tuple[str, ...], method: str | None = None) -> Decision:
    """May a page from ``origin`` read the gate's answers (and, for a preflight, send ``method``)? LiveSync
    calls the server with the app's own fetch unless "Use Request API" is on, so Obsidian's origins
    (``app://obsidian.md`` on desktop, ``capacitor://localhost`` on mobile) need CORS like CouchDB gives them.
    The answer carries no credential: a page still needs a device's token to get anything."""
    if origin is None or origin not in allowed:
        return deny("livesync-method", "a preflight from an origin the gate does not serve")
    if method is not None and method not in METHODS:
        return deny("livesync-method", f"{method[:16]} is not a method replication uses")
    return allow("livesync-cors", "")


# ------------------------------------------------------------------------------------------------ the token
@dataclass(frozen=True)
class GateDevice:
    """What the gate knows of a device when it judges a token: never its private key (nobody keeps one)."""

    kid: str
    environment: str
    algorithm: str
    revoked: bool


#: Header parameters that would let a token name its own key: refused, the key is the gate's choice.
KEY_IN_HEADER = ("jwk", "jku", "x5u", "x5c", "x5t", "x5t#S256")


def decide_token_header(header: object, device: GateDevice | None, environment: str) -> Decision:
    """May this token's header be verified with ``device``'s key? ``device`` is what the gate found under
    the header's ``kid`` (None: nothing)."""
    if not isinstance(header, dict):
        return deny("livesync-token-malformed", "the token's header is not a JSON object")
    for name in KEY_IN_HEADER:
        if name in header:
            return deny("livesync-token-key-in-header", f"the token names its own key ({name})")
    if "crit" in header:
        return deny("livesync-token-malformed", "the token asks for critical extensions")
    kid = header.get("kid")
    if not isinstance(kid, str) or not kid:
        return deny("livesync-device-unknown", "the token names no device (kid)")
    if device is None:
        return deny("livesync-device-unknown", "no device is enrolled under the token's kid")
    if device.revoked:
        return deny("livesync-device-revoked", "this device was revoked")
    if device.environment != environment:
        return deny("livesync-wrong-environment", "the device belongs to another environment than this gate's")
    if header.get("alg") != device.algorithm:
        return deny("livesync-token-algorithm", f"the token is not signed with the device's pinned {device.algorithm}")
    return allow("livesync-token", "")


def decide_token_claims(
    claims: object, device: GateDevice, *, now: float, max_lifetime: float, skew: float
) -> Decision:
    """Do the verified claims make a live token of this device? ``exp`` required, in the future and at most
    ``max_lifetime`` ahead (and ``exp - iat`` no longer); ``iat`` required and not ahead of ``now`` by more than
    ``skew``; ``nbf`` (if any) passed; ``sub`` the device's kid."""
    if not isinstance(claims, dict):
        return deny("livesync-token-malformed", "the token's payload is not a JSON object")

    def number(name: str) -> float | None:
        value = claims.get(name)
        return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None

    exp, iat, nbf = number("exp"), number("iat"), number("nbf")
    if exp is None:
        return deny("livesync-token-expiry", "the token has no exp")
    if exp <= now - skew:
        return deny("livesync-token-expiry", "the token has expired")
    if exp > now + max_lifetime + skew:
        return deny("livesync-token-expiry", f"the token's exp is more than {int(max_lifetime)} s ahead")
    if iat is None:
        return deny("livesync-token-issued-at", "the token has no iat")
    if iat > now + skew:
        return deny("livesync-token-issued-at", "the token's iat is in the future")
    if exp - iat > max_lifetime + skew:
        return deny("livesync-token-expiry", f"the token lives longer than {int(max_lifetime)} s")
    if nbf is not None and nbf > now + skew:
        return deny("livesync-token-issued-at", "the token is not valid yet (nbf)")
    if claims.get("sub") != device.kid:
        return deny("livesync-token-subject", "the token's sub is not the device it was signed for")
    return allow("livesync-token", "")
