"""The ``[livesync]`` table of notegate.toml: where CouchDB is, which database is the notes, and the gate's
bounds. One row per setting with its default and why (the same :class:`~notegate.settings.Setting` table as
``[server]``); :func:`livesync_from_table` checks it at load like every other table.

The gate's CouchDB login is a plain *member* of the notes database (``couchdb_user``); its password is never
in this file: the gate reads it from the environment variable ``NOTEGATE_COUCHDB_PASSWORD`` or the file named
by ``couchdb_password_file`` (docs/how-to/livesync.md says why a member and not proxy authentication).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from notegate.network import LOCALHOST, LOOPBACK_V4
from notegate.settings import (
    CREDITED_PEER_SECONDS,
    NEW_CONNECTIONS_BURST,
    NEW_CONNECTIONS_PER_PEER_PER_SECOND,
    STRANGER_CONNECTIONS_PER_SECOND,
    Setting,
    check_table,
    must_be_port,
    must_be_positive,
)


def _database(value: str) -> str | None:
    ok = value[:1].isascii() and value[:1].islower() and all(c.islower() or c.isdigit() or c in "_$()+-" for c in value)
    return None if ok and len(value) <= 238 else "must be a CouchDB database name (lowercase, starting with a letter)"


#: The gate's default port: beside the server's 8765 and the tools process's 8767 on one host, never one of them.
GATE_PORT = 8768
#: Peers the gate's listener remembers at once (the failed-login table's bound too).
MAX_REMEMBERED_PEERS = 4096

LIVESYNC_SETTINGS: tuple[Setting, ...] = (
    Setting("environment", str, "", "The environment whose notes the database holds (default: default_environment)."),
    Setting(
        "database", str, "notes", "The one CouchDB database the gate serves (LiveSync's Database name).", _database
    ),
    Setting(
        "couchdb_url", str, f"http://{LOOPBACK_V4}:5984", "CouchDB as the gate reaches it (loopback or a private net)."
    ),
    Setting(
        "couchdb_user",
        str,
        "",
        "The gate's own CouchDB login: a member of the notes database, never an admin (empty: no credentials,"
        " only for a test server).",
    ),
    Setting("couchdb_password_file", str, "", "File holding that login's password (else $NOTEGATE_COUCHDB_PASSWORD)."),
    Setting("host", str, LOOPBACK_V4, "Address the gate listens on; put a TLS proxy in front for phones.", None),
    Setting("port", int, GATE_PORT, "The gate's own port.", must_be_port),
    Setting("public_url", str, "", "The gate's address as devices reach it (what the Setup URI names)."),
    Setting(
        "max_token_seconds",
        int,
        900,
        "Longest life a device token may claim (exp - iat, and exp ahead of now). LiveSync signs 5-minute"
        " tokens by default; a copied token dies within this.",
        must_be_positive,
    ),
    Setting(
        "clock_skew_seconds",
        int,
        60,
        "How far a device's clock may be off when iat and exp are judged.",
        must_be_positive,
    ),
    Setting(
        "max_body_bytes",
        int,
        16 * 1024 * 1024,
        "Largest request body: a _bulk_docs batch of LiveSync's default size fits with room to spare.",
        must_be_positive,
    ),
    Setting("body_timeout_seconds", float, 30.0, "Time a device has to send a whole request body.", must_be_positive),
    Setting(
        "upstream_seconds",
        float,
        60.0,
        "Time CouchDB has to answer one request (a _changes long poll gets feed_seconds more).",
        must_be_positive,
    ),
    Setting(
        "feed_seconds",
        int,
        60,
        "Longest a _changes long poll is held open (the device's timeout is clamped to it; it polls again).",
        must_be_positive,
    ),
    Setting("max_open_requests_per_device", int, 8, "Requests one device may hold open at once.", must_be_positive),
    Setting("max_open_requests", int, 64, "Requests the whole gate holds open at once.", must_be_positive),
    Setting(
        "max_connections",
        int,
        128,
        "Connections the gate serves at once (more are refused before HTTP).",
        must_be_positive,
    ),
    Setting("header_timeout_seconds", float, 10.0, "Time a connection has to send a request head.", must_be_positive),
    Setting(
        "idle_connection_seconds", int, 5, "An idle keep-alive connection is closed after this long.", must_be_positive
    ),
    # Why: the gate had the listener's slots and head deadline but not its admission at accept, so a stranger
    # reconnecting at full speed cost it a transport, a protocol object and a parser per connection, as it
    # once cost the MCP server (issue 27). The same listener now admits both; a device is a caller once a
    # request with its key completed from its address.
    Setting(
        "new_connections_per_peer_per_second",
        (int, float),
        NEW_CONNECTIONS_PER_PEER_PER_SECOND,
        "New connections one TCP peer (an IPv6 /64) may open per second, after a burst of new_connections_burst;"
        " past it a connection is refused at accept and the peer's next ones go unanswered until the burst has"
        " refilled. An address a device's request completed from lately is exempt. Behind a TLS proxy every"
        " connection comes from the proxy: raise it there (a device's request credits the proxy too).",
        must_be_positive,
    ),
    Setting(
        "new_connections_burst",
        int,
        NEW_CONNECTIONS_BURST,
        "New connections one TCP peer may open at once before new_connections_per_peer_per_second applies.",
        must_be_positive,
    ),
    Setting(
        "stranger_connections_per_second",
        (int, float),
        STRANGER_CONNECTIONS_PER_SECOND,
        "New connections all peers not known as devices may open per second together, after a burst of"
        " new_connections_burst; past it a stranger's connection is refused at accept. Devices are exempt.",
        must_be_positive,
    ),
    Setting(
        "credited_peer_seconds",
        (int, float),
        CREDITED_PEER_SECONDS,
        "How long an address a device's request completed from is remembered as a device's: its new connections"
        " are not rate-limited and never give way to a stranger's.",
        must_be_positive,
    ),
    Setting(
        "failed_logins_per_minute",
        int,
        30,
        "Refused tokens one source may send a minute (then it waits, refused before any key is looked up):"
        " a stranger cannot make the gate verify signatures without end.",
        must_be_positive,
    ),
    Setting(
        "trusted_proxies",
        list,
        [],
        "Addresses of the TLS proxies in front of the gate, whose X-Forwarded-For names the source.",
    ),
    Setting(
        "cors_origins",
        list,
        ["app://obsidian.md", "capacitor://localhost", f"http://{LOCALHOST}"],
        "Origins whose pages may read the gate's answers: Obsidian desktop and mobile (LiveSync uses the app's"
        " fetch unless Use Request API is on).",
    ),
    Setting(
        "bridge_batch",
        int,
        200,
        "Changes the bridge reads in one long poll: one commit per device per batch, so the deletion limit sees a"
        " mass deletion whole.",
        must_be_positive,
    ),
    Setting(
        "bridge_wait_seconds",
        float,
        30.0,
        "How long the bridge waits for a note whose writer or chunks are not known yet before passing it over (the"
        " gate records a revision's writer right after CouchDB takes it, so the bridge can see the change first).",
        must_be_positive,
    ),
    Setting(
        "bridge_settle_seconds",
        float,
        5.0,
        "How long a deletion waits before the bridge judges it, so the rest of a mass deletion pushed in several"
        " requests arrives and the deletion limit counts it whole (LiveSync pushes one within seconds).",
        must_be_positive,
    ),
    Setting(
        "passphrase_file",
        str,
        "",
        "File holding LiveSync's end-to-end encryption passphrase, for the bridge (else"
        " $NOTEGATE_LIVESYNC_PASSPHRASE; neither: encrypted notes are refused by name). Keep it out of the vault.",
    ),
    Setting(
        "path_obfuscation",
        bool,
        False,
        "The devices obfuscate paths (LiveSync's Path Obfuscation): the bridge writes sealed ids and paths too."
        " Needs the passphrase.",
    ),
    Setting(
        "allow_maintenance",
        bool,
        False,
        "Forward _purge and _compact from devices (LiveSync's maintenance). Off: the owner runs them as admin.",
    ),
)


@dataclass(frozen=True)
class LiveSyncConfig:
    """The checked ``[livesync]`` table (every field has the row above's default)."""

    environment: str = ""
    database: str = "notes"
    couchdb_url: str = f"http://{LOOPBACK_V4}:5984"
    couchdb_user: str = ""
    couchdb_password_file: str = ""
    host: str = LOOPBACK_V4
    port: int = GATE_PORT
    public_url: str = ""
    max_token_seconds: int = 900
    clock_skew_seconds: int = 60
    max_body_bytes: int = 16 * 1024 * 1024
    body_timeout_seconds: float = 30.0
    upstream_seconds: float = 60.0
    feed_seconds: int = 60
    max_open_requests_per_device: int = 8
    max_open_requests: int = 64
    max_connections: int = 128
    header_timeout_seconds: float = 10.0
    idle_connection_seconds: int = 5
    new_connections_per_peer_per_second: float = 50
    new_connections_burst: int = 200
    stranger_connections_per_second: float = 100
    credited_peer_seconds: float = 3600
    allow_maintenance: bool = False
    bridge_batch: int = 200
    bridge_wait_seconds: float = 30.0
    bridge_settle_seconds: float = 5.0
    passphrase_file: str = ""
    path_obfuscation: bool = False
    cors_origins: tuple[str, ...] = ("app://obsidian.md", "capacitor://localhost", f"http://{LOCALHOST}")
    failed_logins_per_minute: int = 30
    trusted_proxies: tuple[str, ...] = ()

    @property
    def max_connections_per_peer(self) -> int:
        """One peer may hold every slot: the gate stands behind a TLS proxy, whose connections all come from one
        address (a stranger's new connections are bounded by the budgets above, its waiting ones give way)."""
        return self.max_connections

    @property
    def rate_limit_sources(self) -> int:
        """Peers the listener remembers at once (budgets, devices' addresses), the least recent forgotten."""
        return MAX_REMEMBERED_PEERS


def livesync_from_table(table: Any) -> LiveSyncConfig:
    """The ``[livesync]`` table checked against :data:`LIVESYNC_SETTINGS` (ConfigError names a wrong key)."""
    values = check_table("livesync", table or {}, LIVESYNC_SETTINGS)
    values["cors_origins"] = tuple(str(o) for o in values["cors_origins"])
    values["trusted_proxies"] = tuple(str(p) for p in values["trusted_proxies"])
    return LiveSyncConfig(**values)
