"""What the owner's audit, connections and status pages read and change, for one environment at a time.

The door decides who is asking (a passkey session) and whether they own the environment
(``policy.decide_console_owner``); this service then works only inside that environment: the audit rows it
lists are that environment's, the tokens it creates are bound to it (through the CLI's own ``issue_token``, so
a name is free per environment ``[token-name-taken]``), and a revoke names an id that must belong to it
(``policy.decide_console_revoke``). Nothing here returns a secret except the one freshly minted token, once,
to the caller that created it; nothing here reads a note's contents.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from notegate.auth.tokens import TokenRecord, issue_token, list_tokens, revoke_token_id
from notegate.config import DeviceConfig, EnvironmentConfig
from notegate.errors import NotegateError
from notegate.policy import console_caller, decide_console_revoke, fixed_client
from notegate.services.runtime import Runtime
from notegate.services.status import Status, collect_from


@dataclass(frozen=True)
class Family:
    """One live OAuth grant family (a connector login ``oauth:<id>``), never a token."""

    family_id: str
    client_id: str
    client_name: str
    login: str
    created_at: float
    live_tokens: int
    last_token_at: float | None
    #: What tells two clients of one self-chosen name apart: when each registered, and where it sends a
    #: person back to (its redirect URIs' hosts; a Client ID Metadata Document's client id is its URL).
    registered_at: float | None = None
    redirect_hosts: tuple[str, ...] = ()

    @property
    def connector(self) -> str:
        return f"oauth:{self.family_id}"


@dataclass(frozen=True)
class Connections:
    environment: EnvironmentConfig
    tokens: list[TokenRecord]
    families: list[Family]
    devices: list[DeviceConfig]


def _refuse_unless(decision) -> None:
    if not decision.allowed:
        raise NotegateError(decision.reason, rule=decision.rule)


#: The console's own page views in the audit: what the owner's browser read (the connector login
#: ``web:console``, audited under its client name), as (client, tools); the audit page leaves them out unless
#: asked (``views=1``).
CONSOLE_VIEWS = (
    fixed_client("web:console"),
    ("read_note", "list_notes", "search_notes", "note_history", "read_attachment", "list_inbox", "deleted_notes"),
)


def _redirect_hosts(info_json: str | None) -> tuple[str, ...]:
    """The hosts (with port) of a registered client's redirect URIs, at most five, from its stored info."""
    import json
    from urllib.parse import urlsplit

    try:
        uris = json.loads(info_json or "{}").get("redirect_uris") or []
    except (ValueError, AttributeError):
        return ()
    hosts: dict[str, None] = {}
    for uri in uris if isinstance(uris, list) else ():
        try:
            netloc = urlsplit(str(uri)).netloc
        except ValueError:
            continue
        if netloc:
            hosts[netloc[:100]] = None
    return tuple(hosts)[:5]


class AdminService:
    def __init__(self, runtime: Runtime, *, version: Callable[[], str] = lambda: "") -> None:
        self.rt = runtime
        self.version = version

    # -- the audit
    def audit(self, environment: str, query) -> list:
        """One page of the environment's audit rows, newest first (``query``: an ``AuditQuery``), plus one
        more row than asked when there are older ones (the caller pages on)."""
        rows = self.rt.state.audit_rows(
            environment=environment,
            since=query.since,
            until=query.until,
            connector=query.connector,
            path=query.path,
            tool=query.tool,
            outcome=query.outcome,
            before_id=query.before,
            limit=query.limit + 1,
            without_client=None if query.views else CONSOLE_VIEWS,
        )
        return list(reversed(rows))

    def record(self, environment: str, person: str, tool: str, outcome: str, path: str | None = None) -> None:
        """One audit row for an owner's action in the browser (connector ``web:console``)."""
        caller = console_caller(person)
        self.rt.state.audit(
            now=self.rt.clock(),
            environment=environment,
            login=person,
            client=caller.client,
            client_class=caller.client_class,
            tier=caller.tier,
            session=caller.session,
            tool=tool,
            path=path,
            outcome=outcome,
        )

    # -- connections
    def connections(self, environment: str) -> Connections:
        env = self.rt.config.environment(environment)
        people = {env.owner, *env.members}
        tokens = [r for r in list_tokens(self.rt.state) if r.environment == env.name and r.revoked_at is None]
        families = [
            Family(
                family_id=r["family_id"],
                client_id=r["client_id"],
                client_name=r["client_name"],
                login=r["login"],
                created_at=r["created_at"],
                live_tokens=r["live_tokens"],
                last_token_at=r["last_token_at"],
                registered_at=r["registered_at"],
                redirect_hosts=_redirect_hosts(r["client_info"]),
            )
            for r in self.rt.state.oauth_live_families(env.name, self.rt.clock())
        ]
        devices = [d for d in self.rt.config.devices.values() if d.person in people]
        return Connections(env, tokens, families, sorted(devices, key=lambda d: d.name))

    def create_token(
        self, environment: str, *, person: str, name: str, client_class: str, tier: str | None
    ) -> tuple[str, TokenRecord]:
        """Mint a static token of ``environment`` for its owner, exactly as ``notegate token create`` does;
        returns the token (to show once) and its record."""
        env = self.rt.config.environment(environment)
        delivered: list[str] = []
        record = issue_token(
            self.rt.state,
            name=name,
            client_class=client_class,
            tier=tier or None,
            login=person,
            environment=env.name,
            deliver=delivered.append,
            now=self.rt.clock(),
        )
        return delivered[0], record

    def revoke_token(self, environment: str, token_id: str) -> TokenRecord:
        row = self.rt.state.token(token_id) if token_id.isascii() and len(token_id) <= 64 else None
        live = row is not None and row["revoked_at"] is None
        _refuse_unless(decide_console_revoke("token", row["environment"] if live else None, environment))
        revoke_token_id(self.rt.state, token_id, now=self.rt.clock())
        return next(r for r in list_tokens(self.rt.state) if r.id == token_id)

    def revoke_family(self, environment: str, family_id: str) -> str:
        row = self.rt.state.oauth_family(family_id) if family_id.isascii() and len(family_id) <= 64 else None
        live = row is not None and row["revoked_at"] is None
        _refuse_unless(decide_console_revoke("grant family", row["environment"] if live else None, environment))
        self.rt.state.oauth_revoke_family(family_id, self.rt.clock())
        return f"oauth:{family_id}"

    # -- status
    def status(self, environment: str) -> Status:
        return collect_from(self.rt, self.version(), [self.rt.config.environment(environment).name])
