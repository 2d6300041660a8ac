"""Deployment config and the policy file: one TOML file, every key known, checked at start.

Why a table of settings: an unknown key or a wrong type must stop start-up with a hint naming the key,
never be ignored (a misspelt ``privte = [...]`` silently exposing private notes is the failure this
prevents).  The same loader is used by every enforcer (server, CLI, hooks, doctor), so there is one rule
source.
"""

from __future__ import annotations

import base64
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from notegate.errors import ConfigError
from notegate.livesync.settings import LiveSyncConfig, livesync_from_table
from notegate.models.config import ModelsConfig, models_from_table
from notegate.network import DEFAULT_HOST, DEFAULT_PORT
from notegate.oidcconfig import OidcProvider, oidc_from_table
from notegate.policy import Policy, decide_member_use, policy_from_table
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
from notegate.tools.settings import TOOLS_SETTINGS, ToolsConfig

#: ``[server] search_meaning = "auto"``: on where it is installed (the default; notegate.vault.meaning_model).
MEANING_AUTO = "auto"


def _meaning_setting(value: bool | str) -> str | None:
    """``true`` needs numpy (the ``meaning`` extra) and the model's files (its install step): say so at start,
    not at the first search.  ``"auto"`` needs neither: the server says once, at start, when it is off."""
    if value is False or value == MEANING_AUTO:
        return None
    if value is not True:
        return f'must be true, false or "{MEANING_AUTO}"'
    from notegate.vault.meaning_installed import install_hint, missing_parts  # looks only: no numpy

    parts = missing_parts()
    return f"needs the 'meaning' extra and its model ({install_hint(parts)})" if parts else None


SERVER_SETTINGS: tuple[Setting, ...] = (
    Setting("host", str, DEFAULT_HOST, f"Address to listen on. Keep {DEFAULT_HOST} unless a TLS proxy is in front."),
    Setting("port", int, DEFAULT_PORT, "TCP port for HTTP (MCP at /mcp).", must_be_port),
    Setting("public_url", str, "", "Public base URL when behind a proxy (e.g. https://notes.example.org)."),
    Setting("default_environment", str, "personal", "Environment used when a caller names none."),
    Setting(
        "state_dir", str, "state", "Where the server keeps its clones, index and database (relative to this file)."
    ),
    Setting("allowed_hosts", list, [], "Extra Host header values accepted (DNS-rebinding protection)."),
    Setting(
        "max_open_requests_per_credential", int, 32, "Requests one credential may hold open at once.", must_be_positive
    ),
    Setting("max_open_requests", int, 64, "Requests the whole door holds open at once.", must_be_positive),
    Setting(
        "body_timeout_seconds",
        (int, float),
        30,
        "A request body must arrive within this many seconds.",
        must_be_positive,
    ),
    Setting(
        "idle_connection_seconds", int, 5, "An idle keep-alive connection is closed after this long.", must_be_positive
    ),
    Setting(
        "max_connections", int, 256, "Connections served at once (more are refused before HTTP).", must_be_positive
    ),
    # Why: a connection that sends half a request head and then nothing held its slot for as long as it
    # liked, so a few hundred of them answered every real caller 503.  The head must arrive in time, and
    # one TCP peer holds only a share of the slots (behind a proxy every peer is the proxy: raise it there);
    # the share stays above max_open_requests_per_credential, so one machine can use all of its token's.
    Setting(
        "header_timeout_seconds",
        (int, float),
        10,
        "A request head (request line and headers) must arrive within this many seconds of the connection "
        "(or of the previous response on a kept-alive one), else the connection is closed.",
        must_be_positive,
    ),
    Setting(
        "max_connections_per_peer",
        int,
        64,
        "Connections one TCP peer address (an IPv6 /64) may hold open; more are closed before HTTP. Behind a "
        "proxy every connection comes from the proxy: set it to max_connections there.",
        must_be_positive,
    ),
    # Why: a peer refused at its cap that reconnects at once, at full speed, cost the server a transport, a
    # protocol object, an h11 parser and a task per connection, and the caller's p50 rose ninefold.  A peer
    # over this budget is refused at accept() (doors/admission.py), before any of them, and on Linux the
    # kernel then drops its SYNs until the budget has refilled (new_connections_burst / this rate seconds);
    # a peer that completed a request with a valid credential lately (credited_peer_seconds) is exempt.
    Setting(
        "new_connections_per_peer_per_second",
        (int, float),
        NEW_CONNECTIONS_PER_PEER_PER_SECOND,
        "New connections one TCP peer (an IPv6 /64) may open per second, after a burst of new_connections_burst; "
        "past it a connection is refused at accept and the peer's next ones go unanswered until the burst has "
        "refilled. Peers that sent a valid credential lately are exempt. Behind a proxy every connection comes "
        "from the proxy: raise it there.",
        must_be_positive,
    ),
    Setting(
        "new_connections_burst",
        int,
        NEW_CONNECTIONS_BURST,
        "New connections one TCP peer may open at once before new_connections_per_peer_per_second applies.",
        must_be_positive,
    ),
    # Why: twenty addresses, each under its own budget, still added up to more admitted connections than a
    # starved event loop could serve beside its callers; the strangers share one budget on top of their own.
    Setting(
        "stranger_connections_per_second",
        (int, float),
        STRANGER_CONNECTIONS_PER_SECOND,
        "New connections all peers not known as callers may open per second together, after a burst of "
        "new_connections_burst; past it a stranger's connection is refused at accept. Callers are exempt.",
        must_be_positive,
    ),
    Setting(
        "credited_peer_seconds",
        (int, float),
        CREDITED_PEER_SECONDS,
        "How long a peer that completed a request with a valid credential is remembered as a caller: its new "
        "connections are not rate-limited and never give way to a stranger's.",
        must_be_positive,
    ),
    Setting(
        "cimd_ca_file",
        str,
        "",
        "CA bundle for fetching OAuth client metadata documents ('' = the system's; a file for tests).",
    ),
    Setting(
        "cimd_private_hosts",
        list,
        [],
        "Hosts whose client metadata documents may be fetched from a private or loopback address.",
    ),
    # -- what an anonymous caller may cost (docs/explanation/security-model.md, "What an anonymous caller can cost")
    Setting(
        "cimd_fetch_workers",
        int,
        4,
        "Client metadata documents fetched at once, in their own pool; more are refused 429 [cimd-busy].",
        must_be_positive,
    ),
    Setting(
        "cimd_fetch_seconds",
        (int, float),
        5,
        "A client metadata document must arrive within this long (resolve, connect, TLS and read together).",
        must_be_positive,
    ),
    Setting(
        "anonymous_requests_per_minute",
        int,
        60,
        "Requests to /authorize, /token, /revoke and the consent POST per source address per minute (burst: "
        "the same number).",
        must_be_positive,
    ),
    Setting(
        "registrations_per_hour",
        int,
        10,
        "Dynamic client registrations (POST /register) per source address per hour (burst: the same number).",
        must_be_positive,
    ),
    Setting(
        "rate_limit_sources",
        int,
        4096,
        "Source addresses the rate limiter remembers at once (per table); a new one past it is refused 429.",
        must_be_positive,
    ),
    Setting(
        "trusted_proxies",
        list,
        [],
        "Addresses of proxies in front of the server whose X-Forwarded-For is believed (else it is ignored).",
    ),
    Setting(
        "oauth_max_pending_consents",
        int,
        500,
        "Unanswered OAuth consent requests kept at most; past it the oldest is dropped.",
        must_be_positive,
    ),
    Setting(
        "oauth_max_pending_per_client",
        int,
        20,
        "Unanswered OAuth consent requests kept per client at most; past it that client's oldest is dropped.",
        must_be_positive,
    ),
    Setting(
        "durability",
        bool,
        True,
        "Flush a write's objects, the origin's ref and its state rows to disk before acknowledging it "
        "(one flush per group commit). Off only to measure what it costs.",
    ),
    Setting(
        "base_rows",
        int,
        500,
        "Rows one Bases view shows in the console at most (a .base page's views and a base embedded in a "
        "note); the rest are counted, not drawn, so a base over a large vault stays one small page.",
        must_be_positive,
    ),
    # Why off by default (measured, bench/RESULTS.md): in session 15, on, at 10,000 notes, a confirmed write's p50
    # in process went 11.8 -> 17.8 ms, 32 writers 227 -> 119 commits/s and peak RSS 191 -> 264 MB.  In session 19,
    # after the catch-up's fixes and the memory bounds: search p50 within 10 ms and peak RSS 187 MB (met), but 32
    # lean writers 158-176 commits/s against 180-199 off, below issue 15's 200: each written note is read again
    # and, when its start changed, embedded in the server's process (~0.4 ms a write in process, the tokenizer in
    # Python, holding the GIL the writers need).  "auto" is the value to choose once the embedding runs outside
    # the server's GIL.
    Setting(
        "search_meaning",
        (bool, str),
        False,
        "Also search by meaning: a small embedding model (the 'meaning' extra: numpy and WordLlama's table, ~90 MiB) "
        "fused by rank with the keyword search; vectors computed in the background after each write. "
        f'"{MEANING_AUTO}": on where it is installed (make installs it), else off, said once in the log and in '
        "/healthz; true: start refuses without it; false (the default for now: it slows writes, see "
        "docs/how-to/search-meaning.md): off.",
        _meaning_setting,
    ),
)


def _state_url(value: str) -> str | None:
    if value == "" or value.startswith(("postgresql://", "postgres://")):
        return None
    return "must be '' (SQLite in state_dir) or a postgresql:// URL"


# Where the state database lives: SQLite in state_dir by default; one PostgreSQL database that several
# replicas share. The URL may carry a password: it is never logged or printed.
STATE_SETTINGS: tuple[Setting, ...] = (
    Setting(
        "url",
        str,
        "",
        "The state database: '' = SQLite in state_dir; postgresql://… = one PostgreSQL that replicas share.",
        _state_url,
    ),
)


def server_default(name: str) -> Any:
    """The default of one [server] key, from its row."""
    return next(setting.default for setting in SERVER_SETTINGS if setting.name == name)


ENVIRONMENT_SETTINGS: tuple[Setting, ...] = (
    Setting("origin", str, "origin.git", "The git remote that is the truth: a URL, or a path relative to this file."),
    Setting("owner", str, "owner", "Login of the environment's owner."),
    Setting("members", list, [], "Other logins that may use this environment."),
    Setting(
        "owner_pushers",
        list,
        [],
        "Forge user names that push as the owner (the pre-receive hook; [] = the owner's login). On a remote "
        "forge, list notegate's own push account too.",
    ),
)


PUBLIC_KEY_PREFIX = "ed25519:"
_PUBLIC_KEY = re.compile(r"ed25519:[A-Za-z0-9_-]{43}\Z")
_DEVICE_NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,62}\Z")


def is_device_name(name: str) -> bool:
    """A device name is a lowercase slug (it becomes a key file's name and the device header's ``kid``)."""
    return isinstance(name, str) and _DEVICE_NAME.match(name) is not None


def parse_public_key(text: str) -> bytes:
    """The 32 raw bytes of an ``ed25519:<base64url>`` public key line; ValueError for anything else
    (non-canonical encodings too, so one key has exactly one spelling and duplicates are caught)."""
    if not isinstance(text, str) or not _PUBLIC_KEY.match(text):
        raise ValueError("expected ed25519: followed by 43 base64url characters")
    encoded = text[len(PUBLIC_KEY_PREFIX) :]
    raw = base64.urlsafe_b64decode(encoded + "=")
    if len(raw) != 32 or base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii") != encoded:
        raise ValueError("not a canonical 32-byte Ed25519 public key")
    return raw


def _device_public_key(value: str) -> str | None:
    try:
        parse_public_key(value)
    except ValueError:
        return "is not an Ed25519 public key line (ed25519: and 43 base64url characters)"
    return None


def _non_empty(value: str) -> str | None:
    return None if value.strip() else "must name a person (the owner's or a member's login)"


# A device's public key lives here, in the deployment config, never in the vault: no session can enrol a
# key of its own. Deleting a [devices.NAME] table revokes that device at the next load.
DEVICE_SETTINGS: tuple[Setting, ...] = (
    Setting(
        "public_key",
        str,
        "",
        "The device's Ed25519 public key, as `notegate device keygen NAME` prints it (ed25519:...).",
        _device_public_key,
    ),
    Setting("person", str, "", "Whose machine this is: the login of an environment's owner or member.", _non_empty),
)


@dataclass(frozen=True)
class DeviceConfig:
    """One trusted device: its name (the JWS kid), its public key line and its person."""

    name: str
    public_key: str
    person: str


@dataclass(frozen=True)
class EnvironmentConfig:
    name: str
    origin_url: str
    owner: str
    members: tuple[str, ...]
    owner_pushers: tuple[str, ...] = ()  # the ENVIRONMENT_SETTINGS row holds the default

    @property
    def is_local_origin(self) -> bool:
        return "://" not in self.origin_url and not self.origin_url.startswith("git@")


@dataclass(frozen=True)
class Config:
    path: Path
    host: str
    port: int
    public_url: str
    default_environment: str
    state_dir: Path
    allowed_hosts: tuple[str, ...]
    environments: dict[str, EnvironmentConfig]
    max_open_requests_per_credential: int  # the [server] rows above hold every default
    max_open_requests: int
    body_timeout_seconds: float
    idle_connection_seconds: int
    max_connections: int
    policy: Policy = field(repr=False)
    header_timeout_seconds: float = server_default("header_timeout_seconds")
    max_connections_per_peer: int = server_default("max_connections_per_peer")
    new_connections_per_peer_per_second: float = server_default("new_connections_per_peer_per_second")
    new_connections_burst: int = server_default("new_connections_burst")
    stranger_connections_per_second: float = server_default("stranger_connections_per_second")
    credited_peer_seconds: float = server_default("credited_peer_seconds")
    cimd_ca_file: str = ""  # the [server] rows above hold the defaults; resolved against the file's folder
    cimd_private_hosts: tuple[str, ...] = ()
    cimd_fetch_workers: int = server_default("cimd_fetch_workers")  # the rows' defaults, for tests' Configs
    cimd_fetch_seconds: float = server_default("cimd_fetch_seconds")
    anonymous_requests_per_minute: int = server_default("anonymous_requests_per_minute")
    registrations_per_hour: int = server_default("registrations_per_hour")
    rate_limit_sources: int = server_default("rate_limit_sources")
    trusted_proxies: tuple[str, ...] = ()
    oauth_max_pending_consents: int = server_default("oauth_max_pending_consents")
    oauth_max_pending_per_client: int = server_default("oauth_max_pending_per_client")
    models: ModelsConfig = field(default_factory=ModelsConfig, repr=False)
    devices: Mapping[str, DeviceConfig] = field(default_factory=lambda: MappingProxyType({}))
    state_url: str = field(default="", repr=False)  # the [state] url row holds the default; may hold a password
    durability: bool = True  # the [server] row holds the default (notegate.vault.durable says what it flushes)
    livesync: LiveSyncConfig | None = None  # the [livesync] table (notegate.livesync.settings); None: no gate
    base_rows: int = server_default("base_rows")
    tools: ToolsConfig = field(default_factory=ToolsConfig)  # [tools]: rows in notegate.tools.settings
    #: OpenID Connect providers people may log in with ([oidc.NAME]; notegate.oidcconfig)
    oidc: Mapping[str, OidcProvider] = field(default_factory=lambda: MappingProxyType({}), repr=False)
    search_meaning: bool | str = MEANING_AUTO  # the [server] row holds the default (notegate.vault.meaning_model)

    def may_use(self, login: str, name: str) -> bool:
        """Is ``login`` the owner or a member of environment ``name`` *in this file*? The file only seeds
        membership: the state database decides (notegate.auth.members.Membership.may_use), so doors ask that."""
        env = self.environment(name)
        return decide_member_use(env.owner, env.members, login).allowed

    def environment(self, name: str | None) -> EnvironmentConfig:
        from notegate.errors import UnknownEnvironment

        key = name or self.default_environment
        env = self.environments.get(key)
        if env is None:
            raise UnknownEnvironment(
                f"there is no environment named '{key}'",
                remedy="Omit the environment to use the default (see [environments.*] in notegate.toml).",
            )
        return env


def load_config(path: str | Path) -> Config:
    """Read and validate the whole file; any problem raises ConfigError naming the key."""
    path = Path(path).resolve()
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise ConfigError(
            "the config file does not exist", remedy="Create one with `notegate init DIR`, or pass --config."
        ) from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"the config file is not valid TOML: {exc}") from exc
    for key in raw:
        if key not in ("server", "environments", "policy", "models", "devices", "state", "livesync", "tools", "oidc"):
            raise ConfigError(
                f"unknown section or key '{key}' at the top level",
                remedy="The file has nine parts: [server], [state], [environments.NAME], [policy], [models],"
                " [devices.NAME], [livesync], [tools] and [oidc.NAME].",
            )
    server = check_table("server", raw.get("server", {}), SERVER_SETTINGS)
    state = check_table("state", raw.get("state", {}), STATE_SETTINGS)
    base = path.parent
    environments: dict[str, EnvironmentConfig] = {}
    for name, table in raw.get("environments", {}).items():
        if not isinstance(table, dict):
            raise ConfigError(f"[environments.{name}] must be a table")
        if not name.replace("-", "").replace("_", "").isalnum() or not name.isascii():
            raise ConfigError(f"environment name '{name}' must be ASCII letters, digits, - or _")
        values = check_table(f"environments.{name}", table, ENVIRONMENT_SETTINGS)
        origin = values["origin"]
        if "://" not in origin and not origin.startswith("git@"):
            origin = str((base / origin).resolve())
        environments[name] = EnvironmentConfig(
            name=name,
            origin_url=origin,
            owner=values["owner"],
            members=tuple(values["members"]),
            owner_pushers=tuple(str(p) for p in values["owner_pushers"]),
        )
    if not environments:
        raise ConfigError("no environment is configured", remedy="Add an [environments.personal] table.")
    if server["default_environment"] not in environments:
        raise ConfigError(
            f"default_environment '{server['default_environment']}' is not configured",
            remedy=f"Configured: {', '.join(sorted(environments))}.",
        )
    devices = _devices(raw.get("devices", {}), environments)
    policy = policy_from_table(raw.get("policy", {}))
    models = models_from_table(raw.get("models", {}))
    return Config(
        path=path,
        host=server["host"],
        port=server["port"],
        public_url=server["public_url"],
        default_environment=server["default_environment"],
        state_dir=(base / server["state_dir"]).resolve(),
        allowed_hosts=tuple(server["allowed_hosts"]),
        max_open_requests_per_credential=server["max_open_requests_per_credential"],
        max_open_requests=server["max_open_requests"],
        body_timeout_seconds=server["body_timeout_seconds"],
        idle_connection_seconds=server["idle_connection_seconds"],
        max_connections=server["max_connections"],
        header_timeout_seconds=server["header_timeout_seconds"],
        max_connections_per_peer=server["max_connections_per_peer"],
        new_connections_per_peer_per_second=server["new_connections_per_peer_per_second"],
        new_connections_burst=server["new_connections_burst"],
        stranger_connections_per_second=server["stranger_connections_per_second"],
        credited_peer_seconds=server["credited_peer_seconds"],
        cimd_ca_file=str((base / server["cimd_ca_file"]).resolve()) if server["cimd_ca_file"] else "",
        cimd_private_hosts=tuple(server["cimd_private_hosts"]),
        cimd_fetch_workers=server["cimd_fetch_workers"],
        cimd_fetch_seconds=server["cimd_fetch_seconds"],
        anonymous_requests_per_minute=server["anonymous_requests_per_minute"],
        registrations_per_hour=server["registrations_per_hour"],
        rate_limit_sources=server["rate_limit_sources"],
        trusted_proxies=tuple(str(p) for p in server["trusted_proxies"]),
        oauth_max_pending_consents=server["oauth_max_pending_consents"],
        oauth_max_pending_per_client=server["oauth_max_pending_per_client"],
        environments=environments,
        policy=policy,
        models=models,
        devices=devices,
        state_url=state["url"],
        durability=server["durability"],
        livesync=livesync_from_table(raw["livesync"]) if "livesync" in raw else None,
        base_rows=server["base_rows"],
        tools=ToolsConfig.from_table(check_table("tools", raw.get("tools", {}), TOOLS_SETTINGS), base),
        oidc=oidc_from_table(raw.get("oidc", {}), base, environments),
        search_meaning=server["search_meaning"],
    )


def _devices(raw: Any, environments: dict[str, EnvironmentConfig]) -> Mapping[str, DeviceConfig]:
    """The [devices.NAME] tables: every key known, every person a configured login, one device per key."""
    if not isinstance(raw, dict):
        raise ConfigError("[devices] must hold one [devices.NAME] table per device")
    people = {env.owner for env in environments.values()} | {m for env in environments.values() for m in env.members}
    devices: dict[str, DeviceConfig] = {}
    owners_of_key: dict[str, str] = {}
    for name, table in raw.items():
        if not isinstance(table, dict):
            raise ConfigError(f"[devices.{name}] must be a table")
        if not is_device_name(name):
            raise ConfigError(
                f"device name '{name}' must be lowercase ASCII letters, digits, - or _ (at most 63)",
                remedy="Use the name given to `notegate device keygen NAME`.",
            )
        values = check_table(f"devices.{name}", table, DEVICE_SETTINGS)
        if values["person"] not in people:
            raise ConfigError(
                f"[devices.{name}] person '{values['person']}' is neither an owner nor a member of any environment",
                remedy="Name a login from [environments.*] owner or members.",
            )
        if values["public_key"] in owners_of_key:
            raise ConfigError(
                f"[devices.{name}] has the same public key as [devices.{owners_of_key[values['public_key']]}]",
                remedy="Give each device its own key (`notegate device keygen NAME` on that machine).",
            )
        owners_of_key[values["public_key"]] = name
        devices[name] = DeviceConfig(name=name, public_key=values["public_key"], person=values["person"])
    return MappingProxyType(devices)
