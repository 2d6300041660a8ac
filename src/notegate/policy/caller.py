"""Who is asking: :class:`Caller` (person, client, class, tier), the fixed connector logins only the owner's
own programs use, and the decisions about a caller rather than a note: tiers by default, device keys,
environments, the Host header, the metrics reader, connection counts, token names, console owners.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Protocol

from notegate.policy.decision import Decision, allow, deny
from notegate.policy.settings import Policy
from notegate.policy.vocab import CONVERSATION_TIERS, ClientClass, Tier


@dataclass(frozen=True)
class Caller:
    """Who makes a request. Decided from credentials by the door, never from what a caller writes.

    ``login`` is the person (owner or member); ``connector`` names the connector login: the one credential
    (a static token today, an OAuth grant family later) this client holds for that person.  Authorship is
    per connector login, so the owner's phone and the owner's workstation are different authors.
    """

    login: str
    display_name: str
    client: str
    client_class: ClientClass
    tier: Tier
    session: str = "-"
    environment: str | None = None
    connector: str = ""
    grant_id: str = ""  # the owner-approved grant that made it trusted (its public id), if one did

    def audit_fields(self, default_environment: str | None = None) -> dict[str, str | None]:
        """Who this caller is, as an audit row names it (one spelling for every door and service)."""
        return {
            "environment": self.environment or default_environment,
            "login": self.login,
            "client": self.client,
            "client_class": self.client_class,
            "tier": self.tier,
            "session": self.session,
        }

    @property
    def connector_id(self) -> str:
        """The connector login's stable id (``token:<id>``); callers built without one are named by client."""
        return self.connector or f"client:{self.client}@{self.login}"


#: The fixed connector logins: callers no credential decides, built only by code that the owner runs
#: (the scheduled jobs, the CLI).  connector -> (client, display name or None for the person, session).
FIXED_CONNECTORS: dict[str, tuple[str, str | None, str]] = {
    "job:review": ("notegate-review", "notegate reviewer", "scheduled-review"),
    "job:reflect": ("notegate-reflect", "notegate reflector", "reflect"),
    "cli:import": ("notegate-import", None, "-"),
    "cli:init": ("notegate-init", "notegate init", "-"),
    # The owner's browser after a passkey login: console actions (review, restore, edit) commit as this.
    "web:console": ("notegate-console", None, "console"),
}


def fixed_client(connector: str) -> str:
    """The client name a fixed connector login's audit rows carry (``notegate status``: the last review)."""
    return FIXED_CONNECTORS[connector][0]


def fixed_caller(connector: str, person: str) -> Caller:
    """The caller of a fixed connector login: a trusted workstation, because only the owner starts it.

    One table and one function, so the four fixed callers cannot drift apart (a job built by hand with
    another tier or class would be judged by different rules).  An unknown connector is a bug: it raises.
    """
    try:
        client, display_name, session = FIXED_CONNECTORS[connector]
    except KeyError:
        raise ValueError(f"{connector!r} is not a fixed connector login") from None
    return Caller(
        login=person,
        display_name=display_name or person,
        client=client,
        client_class=ClientClass.WORKSTATION,
        tier=Tier.TRUSTED,
        session=session,
        connector=connector,
    )


def console_caller(person: str, environment: str | None = None) -> Caller:
    """Who a signed-in person's console action is: the fixed connector login ``web:console`` of that person,
    bound to the environment the page works in.  Its credential is the passkey session (whose owner gate,
    :func:`decide_console_owner`, comes first), so nothing here looks at claims, devices or grants."""
    return replace(fixed_caller("web:console", person), environment=environment)


def sync_caller(device: str, person: str) -> Caller:
    """Who commits what ``notegate sync`` finds changed in a workstation's vault: the owner at that device
    (connector login ``sync:<device>``), trusted like the other programs only the owner starts."""
    return Caller(
        login=person,
        display_name=person,
        client="notegate-sync",
        client_class=ClientClass.WORKSTATION,
        tier=Tier.TRUSTED,
        session="-",
        connector=f"sync:{device}",
    )


def device_caller(device, *, owner: str) -> Caller:
    """The caller a LiveSync device's edits are committed as (the LiveSync bridge; decided here once, so the
    bridge cannot hand a member's phone the owner's trust by accident): its own connector login
    (``livesync:<kid>``) for its person. The owner's devices are trusted (like the owner's workstation,
    ``sync_caller``: only the owner enrols a device, with a key held on that device); a member's devices are
    restricted, as a member's workstation is by default. Obsidian is a workstation-class client either way: a
    person at their notes."""
    return Caller(
        login=device.person,
        display_name=f"{device.person} ({device.name})",
        client="obsidian-livesync",
        client_class=ClientClass.WORKSTATION,
        tier=Tier.TRUSTED if device.person == owner else Tier.RESTRICTED,
        session="-",
        environment=device.environment,
        connector=device.connector,
    )


def caller_of(claims: Mapping[str, object], *, client: str, session: str = "-") -> Caller:
    """The caller a verified credential names: the one place a credential's claims become a :class:`Caller`
    (a static token's row, an OAuth grant's, and the SDK's access token carrying either; see
    :func:`notegate.services.callers.Callers.resolve` for the device key and the grant that may lift it).

    The class and the tier are the credential's own, parsed into the vocabulary. A claim that is missing
    gets the least a credential can be -- a hosted client at its class's default tier -- because trust is
    never a fallback. A value outside the vocabulary is kept as written, so every decision's last branch
    refuses it (``unknown-tier``) instead of the door crashing on it."""
    login = str(claims.get("login") or "")
    environment = claims.get("environment")
    client_class = _parsed(ClientClass, claims.get("client_class") or ClientClass.HOSTED)
    return Caller(
        login=login,
        display_name=str(claims.get("display_name") or login),
        client=client,
        client_class=client_class,
        tier=_parsed(Tier, claims.get("tier") or default_tier(client_class)),
        session=session,
        environment=str(environment) if environment else None,
        connector=str(claims.get("connector") or ""),
    )


def _parsed(vocabulary, value: object):
    """``value`` as its member of ``vocabulary``, or as written when it is none (see :func:`caller_of`)."""
    return vocabulary(value) if value in tuple(vocabulary) else str(value)


def lifted(caller: Caller, *, grant_id: str = "") -> Caller:
    """The caller a verified device key (:func:`decide_device_tier`) or an approved grant
    (:func:`notegate.policy.decide_grant`) leaves: trusted, and nothing else changed -- the same person,
    class and connector login, so what it wrote while restricted is still its own (it may not promote it)."""
    return replace(caller, tier=Tier.TRUSTED, grant_id=grant_id or caller.grant_id)


@dataclass(frozen=True)
class Author:
    """Who wrote part of an inbox item: a connector login, its client name and its person.

    ``connector`` is empty for parts recorded before connector logins existed; such a part counts as
    written by *every* connector login of that person (the safe direction).
    """

    connector: str
    client: str
    person: str

    @classmethod
    def of(cls, caller: Caller) -> Author:
        return cls(caller.connector_id, caller.client, caller.login)

    @property
    def label(self) -> str:
        """How trailers and listings name it: the connector (client name) and the person."""
        return f"{self.client} ({self.person})"


# -------------------------------------------------------------- decisions
def sees_private(caller: Caller) -> bool:
    """Private notes exist only for trusted callers (listing, reading and search statistics alike)."""
    return caller.tier == Tier.TRUSTED


def default_tier(client_class: str) -> Tier:
    """Restricted by default; machines are their own tier. Trust is never the default."""
    return Tier.MACHINE if client_class == ClientClass.MACHINE else Tier.RESTRICTED


def needs_session_handle(policy: Policy, caller: Caller) -> bool:
    """Must this caller pass a session_start handle to every knowledge tool? (Clients with no hooks.)"""
    return caller.client_class in policy.session_gate_classes


class DeviceProof(Protocol):
    """What the device-key verifier proved (``notegate.auth.devices.DeviceVerdict``): policy needs only this."""

    @property
    def trusted(self) -> bool: ...

    @property
    def person(self) -> str | None: ...


def decide_device_tier(caller: Caller, verdict: DeviceProof) -> Decision:
    """Does a verified device key make this caller trusted? Allowed: the caller becomes trusted. Denied: the
    caller keeps exactly the tier its credential gave it (a bad header never lowers or raises anything).

    Only the owner's own machine qualifies: a workstation-class credential of the device's person. A hosted
    connector or a machine presenting a device header gains nothing (a key copied into a chat app's config
    must not turn the chat into the owner's workstation), nor does another person's workstation."""
    if not verdict.trusted:
        return deny("device-not-verified", "the device header did not verify; the caller keeps its tier.")
    if caller.client_class != ClientClass.WORKSTATION or caller.tier not in CONVERSATION_TIERS:
        return deny(
            "device-wrong-class",
            f"a device key lifts only a workstation credential, not a {caller.client_class} one.",
        )
    if not verdict.person or verdict.person != caller.login:
        return deny("device-wrong-person", "the device belongs to another person than this credential's.")
    return allow("device-trusted", "a configured device key of this person verified.")


def decide_environment(caller: Caller, requested: str, *, default: str) -> Decision:
    """A credential is bound to one environment (its own, or the deployment's default): any other one is
    not there for it. The answer never confirms that another environment exists."""
    bound = caller.environment or default
    if requested == bound:
        return allow("environment")
    return deny("unknown-environment", f"no such environment; this credential is for '{bound}'.")


def decide_token_environment(bound: str | None, served: Collection[str]) -> Decision:
    """May a credential bound to environment ``bound`` (None: the deployment's default) open the door here?
    Not when this deployment serves no such environment (it was removed, or the token is another server's):
    refused at the bearer check, like an unknown token, rather than admitted to fail on every tool."""
    if bound is None or bound in served:
        return allow("token-environment")
    return deny("wrong-environment", "the credential is for an environment this server does not serve")


def decide_host(host: str | None, allowed: Collection[str]) -> Decision:
    """May a request naming ``host`` in its Host header reach the MCP door at all (DNS-rebinding protection)?
    The same answer as the SDK's own check, which stays behind it: an exact entry, or ``NAME:*`` for NAME with
    any port. Decided before the bearer check, so a foreign Host gets its 421 whether or not a token came."""
    if host:
        if host in allowed:
            return allow("host-allowed")
        if any(entry.endswith(":*") and host.startswith(entry[:-1]) for entry in allowed):
            return allow("host-allowed")
    return deny("host-not-allowed", "the Host header is not one this server answers to")


def decide_reader(caller: Caller) -> Decision:
    """May ``caller`` use the knowledge tools at all (list, search: results are then filtered)?"""
    if caller.tier == Tier.MACHINE or caller.client_class == ClientClass.MACHINE:
        return deny(
            "machine-no-mcp",
            "machine credentials cannot use the knowledge tools.",
        )
    if caller.tier in CONVERSATION_TIERS:
        return allow("reader")
    return deny("unknown-tier", f"tier '{caller.tier}' may not read notes.")


def decide_person(persons: frozenset[str], login: str) -> Decision:
    """May ``login`` hold passkeys and use the console? Only an owner or member of an environment (the
    deployment config), so removing a member from the config locks them out at once."""
    if login in persons:
        return allow("person", "an owner or member of an environment")
    return deny("person-unknown", f"'{login}' is neither the owner nor a member of any environment")


def decide_console_owner(person: str, environment: str, environment_owner: str | None) -> Decision:
    """May a signed-in ``person`` use the owner's pages of ``environment`` (review the inbox, approve
    elevations, restore notes, see the audit and the connections)?  Only its owner: a member signs in for
    their own passkeys and elevation approvals, never to act on another person's vault."""
    if environment_owner is not None and person == environment_owner:
        return allow("console-owner", f"'{person}' owns environment '{environment}'")
    return deny(
        "console-not-owner",
        f"'{person}' is not the owner of environment '{environment}'; only its owner may use these pages",
    )


def decide_console_revoke(kind: str, item_environment: str | None, environment: str) -> Decision:
    """May the owner's page of ``environment`` revoke a connection (a static token, an OAuth grant family)
    bound to ``item_environment``?  Only one of its own: owning another environment too does not make this
    page the place to revoke there, and a token of a member's environment is never this owner's to end."""
    if item_environment == environment:
        return allow("console-revoke", f"the {kind} belongs to environment '{environment}'")
    return deny("console-revoke-other-environment", f"this {kind} does not belong to environment '{environment}'")


def decide_metrics_reader(*, loopback_peer: bool, behind_proxy: bool, client_class: str | None) -> Decision:
    """May this request read ``/metrics``?  A scraper on this machine, or a program holding a live machine
    token (a monitoring system is a machine).  The figures are counts per environment, but they still say
    how busy a vault is and when: a conversation's token never reads them.

    Behind a proxy (``public_url`` set) a loopback peer proves nothing: a proxy on this machine makes every
    request from the internet look local, so there only a machine token reads them."""
    if loopback_peer and not behind_proxy:
        return allow("metrics-loopback", "the request comes from this machine")
    if client_class == ClientClass.MACHINE:
        return allow("metrics-machine", "a live machine token")
    if client_class is None:
        return deny("metrics-unauthenticated", "reading /metrics from another machine needs a machine token")
    return deny("metrics-not-machine", f"a {client_class} token cannot read /metrics; only a machine token can")


def metrics_environments(
    reader: Decision, token_environment: str | None, default_environment: str, environments: Collection[str]
) -> frozenset[str]:
    """Which environments' figures a reader :func:`decide_metrics_reader` let in sees.  A scraper on this
    machine (not behind a proxy) is the deployment's operator: every environment.  A machine token sees
    its own environment only (a token without one: the default's): the figures name environments, tool
    activity, refusal rules and inbox counts, and a monitoring token of one environment's owner is no
    reason to tell them how another person's vault is used.  Anything else sees nothing."""
    if not reader.allowed:
        return frozenset()
    if reader.rule == "metrics-loopback":
        return frozenset(environments)
    if reader.rule == "metrics-machine":
        name = token_environment or default_environment
        return frozenset({name}) if name in environments else frozenset()
    return frozenset()


def decide_connection(
    *,
    from_peer: int,
    per_peer: int,
    open_total: int,
    max_total: int,
    waiting: int,
    credited: bool = False,
    waiting_credited: int = 0,
    over_rate: bool = False,
    rate: float = 0.0,
    drop_seconds: float = 0.0,
) -> Decision:
    """May the listener serve one more TCP connection, before any HTTP is read?  ``from_peer`` connections
    of the same peer are open (at most ``per_peer``), ``open_total`` in all (at most ``max_total``), of
    which ``waiting`` (from peers never credited) and ``waiting_credited`` (from credited peers) have never
    completed a request head.  ``credited``: the peer completed a request with a valid credential lately.
    ``over_rate``: the peer has spent its budget of new connections (``rate`` a second).  The peer's own
    part (:func:`decide_peer_connection`) comes first, then the server's slots (:func:`decide_connection_slot`);
    the listener asks the first at ``accept()`` and the second once the connection has a protocol."""
    peer = decide_peer_connection(
        from_peer=from_peer,
        per_peer=per_peer,
        credited=credited,
        over_rate=over_rate,
        rate=rate,
        drop_seconds=drop_seconds,
    )
    if not peer.allowed:
        return peer
    return decide_connection_slot(
        open_total=open_total,
        max_total=max_total,
        waiting=waiting,
        credited=credited,
        waiting_credited=waiting_credited,
    )


def decide_peer_connection(
    *,
    from_peer: int,
    per_peer: int,
    credited: bool,
    over_rate: bool,
    rate: float,
    drop_seconds: float = 0.0,
    strangers_over: bool = False,
    strangers_rate: float = 0.0,
) -> Decision:
    """May this peer open one more connection?  Why: a peer that opens connections faster than ``rate`` a
    second is refused ``too-many-new-connections``: a peer that reconnects at full speed as soon as it is
    refused costs the server an accept each time, so the listener refuses it at accept, before any protocol
    object, and then has the kernel drop its new connections for ``drop_seconds`` (0: it cannot here).  A
    credited peer (a valid credential lately) is not held to the rate: its connections are a caller's.  All
    strangers together open at most ``strangers_rate`` a second (``strangers_over``: that budget is spent):
    many addresses each under its own budget (a botnet) otherwise add up to more work than the server has,
    and the callers it knows would wait behind it.  One peer holds at most ``per_peer`` connections,
    credited or not."""
    if over_rate and not credited:
        dropped = f"; its next connections go unanswered for {drop_seconds:g} s" if drop_seconds > 0 else ""
        return deny(
            "too-many-new-connections",
            f"this address opens new connections faster than {rate:g} a second "
            f"(new_connections_per_peer_per_second = {rate:g}){dropped}",
        )
    if strangers_over and not credited:
        return deny(
            "too-many-new-connections",
            f"addresses not known as callers open new connections faster than {strangers_rate:g} a second in "
            f"all (stranger_connections_per_second = {strangers_rate:g})",
        )
    if from_peer >= per_peer:
        return deny(
            "too-many-connections-per-peer",
            f"this address already holds {from_peer} connections, the most one peer may open "
            f"(max_connections_per_peer = {per_peer})",
        )
    return allow("connection")


def decide_connection_slot(
    *, open_total: int, max_total: int, waiting: int, credited: bool, waiting_credited: int
) -> Decision:
    """Has the server a slot for one more connection?  Why: a stranger who opens connections and sends half a
    request head (or nothing) holds a slot while sending no request, so the slots of callers who did send
    one run out.  When the server is full, the connection that has waited longest for its first head gives
    its slot to the new one (``connection-replaces-waiting``: the listener closes that one), so connections
    that never completed a request cannot starve the ones that did.  A stranger's newcomer never displaces
    a credited peer's connection; a credited peer's newcomer displaces a stranger's first, then a credited
    one's (``connection-replaces-waiting-credited``).  Only when no waiting connection may give way is the
    new one refused."""
    if open_total < max_total:
        return allow("connection")
    if waiting > 0:
        return allow("connection-replaces-waiting", "the oldest connection that never sent a request makes room")
    if credited and waiting_credited > 0:
        return allow(
            "connection-replaces-waiting-credited",
            "the oldest connection of a credited peer that never sent a request makes room",
        )
    return deny(
        "too-many-connections", f"the server already serves {open_total} connections (max_connections = {max_total})"
    )


def decide_token_standing(client_class: str, tier: str, *, contracts: bool) -> Decision:
    """May a new static token have this class and this tier (and contracts)?  The class and the tier are each
    one of the vocabulary's; the machine class and the machine tier go together (a machine is judged by the
    contracts it was given, a conversation by its tier, never a mix); only a machine token calls contracts."""
    if client_class not in tuple(ClientClass):
        return deny("bad-argument", f"unknown client class '{client_class}' (one of {', '.join(ClientClass)})")
    if tier not in tuple(Tier):
        return deny("bad-argument", f"unknown tier '{tier}' (one of {', '.join(Tier)})")
    if (client_class == ClientClass.MACHINE) != (tier == Tier.MACHINE):
        return deny(
            "bad-argument",
            "the machine class and the machine tier go together: --class machine has the machine tier, a "
            "hosted or workstation class is restricted or trusted",
        )
    if contracts and client_class != ClientClass.MACHINE:
        return deny("bad-argument", "only a machine token calls contracts (mint it with --class machine)")
    return allow("token-standing", f"a {client_class} token at the {tier} tier")


def decide_token_tier_change(client_class: str, tier: str) -> Decision:
    """May the owner give a live token of ``client_class`` the tier ``tier``?  A conversation's token moves
    between restricted and trusted; a machine token keeps its tier (its class decides it: see
    :func:`decide_token_standing`), so it is left alone, not refused."""
    if tier not in CONVERSATION_TIERS:
        return deny("bad-argument", f"unknown tier '{tier}'")
    if client_class == ClientClass.MACHINE:
        return deny("token-machine-tier", "a machine token keeps the machine tier")
    return allow("token-tier", f"a {client_class} token becomes {tier}")


def decide_session_handle(caller: Caller, *, login: str, client: str) -> Decision:
    """May ``caller`` use a live session handle that ``session_start`` gave to ``login`` over ``client``?
    Only the same person through the same client: a handle leaked into another conversation, or copied to
    another client of the same person, names a session that is not theirs."""
    if login != caller.login or client != caller.client:
        return deny("session-handle-foreign", "the session handle belongs to another login or client")
    return allow("session-handle", "the handle's own login and client")


def decide_token_name(name: str, active_names: Iterable[str]) -> Decision:
    """May a new static token be called ``name`` in an environment whose live tokens are ``active_names``?
    Names are how the owner revokes and re-tiers tokens (``token revoke laptop``), so two live tokens of one
    environment never share one, ignoring case; a revoked token's name is free again."""
    wanted = name.casefold()
    if any(existing.casefold() == wanted for existing in active_names):
        return deny("token-name-taken", f"a live token named '{name}' already exists in this environment.")
    return allow("token-name-free")
