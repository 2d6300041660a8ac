"""notegate as its own OAuth 2.1 authorization server: the provider the MCP SDK's ``auth_server_provider=`` takes.

The SDK serves /authorize, /token and /register and checks PKCE S256 at the token endpoint; this module
answers its questions (who is this client, store this request, load this code or token).  The state
machine itself is :mod:`notegate.auth.oauth_core` (synchronous, clocked); here it runs in worker threads.

Clients come two ways:

* **Client ID Metadata Documents** (``client_id`` is an https URL): fetched and validated by
  :mod:`notegate.auth.cimd`, never stored as a registration; the client is public.
* **Dynamic client registration**, open but capped (``oauth_max_registrations``): at the cap the oldest
  registration that never completed a consent is evicted (it holds no token); only when all have completed
  one is a registration refused.  Every redirect URI must be on the policy's allowlist.

An unknown or swept client gets ``None`` from :meth:`NotegateOAuthProvider.get_client`, which the SDK's
token endpoint answers ``401 invalid_client``: that is how Claude's clients learn to register again.

Static bearer tokens (``ngt_…``) are verified here too, because the SDK takes one verifier: they carry
the server's own resource, so /mcp's audience check (RFC 8707) holds for both kinds.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

import anyio.to_thread
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    AuthorizeError,
    RefreshToken,
    RegistrationError,
    TokenError,
)
from mcp.shared.auth import InvalidRedirectUriError, InvalidScopeError, OAuthClientInformationFull, OAuthToken
from pydantic import AnyUrl, PrivateAttr

from notegate.auth.cimd import CimdFetcher, CimdRefused, ClientDocument
from notegate.auth.cimd_pool import CimdPool
from notegate.auth.oauth_core import OAuthCore, TokenGrant, digest
from notegate.auth.tokens import PREFIX as STATIC_PREFIX
from notegate.auth.tokens import TokenRecord, failure_class, verify_token
from notegate.config import Config
from notegate.errors import NotegateError
from notegate.policy import (
    decide_redirect_uri,
    decide_registration,
    decide_registration_redirects,
    decide_token_environment,
)
from notegate.state import StateDB

log = logging.getLogger("notegate.oauth")


class NotegateClient(OAuthClientInformationFull):
    """A client as the SDK's handlers see it, with the policy's redirect and scope checks built in."""

    _allowlist: tuple[str, ...] = PrivateAttr(default=())
    _scopes: tuple[str, ...] = PrivateAttr(default=())
    _secret_hash: str | None = PrivateAttr(default=None)

    def bind(
        self, allowlist: tuple[str, ...], scopes: tuple[str, ...], secret_hash: str | None = None
    ) -> NotegateClient:
        self._allowlist = allowlist
        self._scopes = scopes
        self._secret_hash = secret_hash
        return self

    @property
    def secret_hash(self) -> str | None:
        """SHA-256 of the client_secret minted at registration (``client_secret`` itself is always None here)."""
        return self._secret_hash

    @property
    def registered(self) -> tuple[str, ...]:
        return tuple(str(u) for u in self.redirect_uris or ())

    def validate_redirect_uri(self, redirect_uri: AnyUrl | None) -> AnyUrl:
        if redirect_uri is None:
            if len(self.registered) != 1:
                raise InvalidRedirectUriError(
                    NotegateError(
                        "redirect_uri must be sent unless the client registered exactly one",
                        rule="redirect-not-registered",
                    ).explain()
                )
            redirect_uri = AnyUrl(self.registered[0])
        decision = decide_redirect_uri(str(redirect_uri), self.registered, self._allowlist)
        if not decision.allowed:
            raise InvalidRedirectUriError(NotegateError(decision.reason, rule=decision.rule).explain())
        return redirect_uri

    def validate_scope(self, requested_scope: str | None) -> list[str] | None:
        if requested_scope is None:
            return None  # authorize grants the default scope
        requested = requested_scope.split()
        unknown = [s for s in requested if s not in self._scopes]
        if unknown:
            raise InvalidScopeError(f"unknown scope {unknown[0]!r}; this server grants: {' '.join(self._scopes)}")
        return requested


class NotegateCode(AuthorizationCode):
    family_id: str
    code_hash: str


class NotegateRefresh(RefreshToken):
    family_id: str
    token_hash: str


def access_token(grant: TokenGrant, token: str) -> AccessToken:
    return AccessToken(
        token=token,
        client_id=grant.client_name,
        scopes=list(grant.scopes),
        expires_at=int(grant.expires_at),
        resource=grant.resource,
        subject=grant.login,
        claims=grant.claims(),
    )


def static_access_token(record: TokenRecord, token: str, resource: str) -> AccessToken:
    """A static token as an AccessToken: minted by this server for this server, so its resource is ours."""
    return AccessToken(
        token=token,
        client_id=record.name,
        scopes=[],
        resource=resource,
        subject=record.login,
        claims={**record.claims(), "token_id": record.id},
    )


class NotegateOAuthProvider:
    """The SDK's ``OAuthAuthorizationServerProvider`` over :class:`OAuthCore`, the state DB and CIMD."""

    def __init__(
        self,
        state: StateDB,
        config: Config,
        *,
        issuer: str,
        resource: str,
        cimd: CimdFetcher | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.state = state
        self.config = config
        self.policy = config.policy
        self.core = OAuthCore(state, config, issuer=issuer)
        self.issuer = self.core.issuer
        self.resource = resource
        self.clock = clock
        self.cimd = cimd or CimdFetcher(
            ca_file=config.cimd_ca_file or None, private_hosts=config.cimd_private_hosts, clock=clock
        )
        self.cimd_pool = CimdPool(self.cimd, workers=config.cimd_fetch_workers, seconds=config.cimd_fetch_seconds)
        self.scopes = (self.policy.oauth_default_scope,)

    async def _run(self, fn, *args, **kwargs):
        return await anyio.to_thread.run_sync(lambda: fn(*args, **kwargs))

    # -------------------------------------------------------------- clients
    def _cimd_client(self, doc: ClientDocument) -> NotegateClient:
        client = NotegateClient(
            client_id=doc.client_id,
            client_name=doc.client_name,
            redirect_uris=[AnyUrl(u) for u in doc.redirect_uris],
            token_endpoint_auth_method="none",  # noqa: S106 - a method name, not a secret
            grant_types=["authorization_code", "refresh_token"],
            scope=" ".join(self.scopes),
        )
        return client.bind(self.policy.oauth_redirect_allowlist, self.scopes)

    def client_sync(self, client_id: str) -> NotegateClient | None:
        """The client (blocking: a CIMD client is fetched in this thread; the server uses :meth:`get_client`)."""
        if client_id.startswith("https://"):
            try:
                return self._cimd_client(self.cimd.fetch(client_id))
            except CimdRefused as exc:
                log.info("client metadata document refused: %s", exc.rule)
                return None
        return self._registered(client_id)

    def _registered(self, client_id: str) -> NotegateClient | None:
        row = self.state.oauth_client(client_id)
        if row is None:
            return None
        client = NotegateClient.model_validate_json(row["info_json"])
        return client.bind(self.policy.oauth_redirect_allowlist, self.scopes, row["secret_hash"])

    async def get_client(self, client_id: str) -> NotegateClient | None:
        """The client, or None (unknown, swept, or its metadata document refused).  A metadata document is
        fetched in the CIMD pool (:mod:`notegate.auth.cimd_pool`), never on the shared worker threads; when
        that pool is full this raises :class:`CimdRefused` ``[cimd-busy]``, which the endpoints answer 429."""
        if client_id.startswith("https://"):
            try:
                return self._cimd_client(await self.cimd_pool.fetch(client_id))
            except CimdRefused as exc:
                if exc.rule == "cimd-busy":
                    raise
                log.info("client metadata document refused: %s", exc.rule)
                return None
        return await self._run(self._registered, client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        uris = [str(u) for u in client_info.redirect_uris or ()]
        decision = decide_registration_redirects(uris, self.policy.oauth_redirect_allowlist)
        if not decision.allowed:
            raise RegistrationError(
                "invalid_redirect_uri", NotegateError(decision.reason, rule=decision.rule).explain()
            )
        if not client_info.client_name:
            client_info.client_name = "unnamed client"
        cap = self.policy.oauth_max_registrations
        refused: list[str] = []

        def fits(count: int, evictable: bool) -> str | None:
            verdict = decide_registration(count, cap, evictable)
            if not verdict.allowed:
                refused.append(NotegateError(verdict.reason, rule=verdict.rule).explain())
                return None
            return "evict" if verdict.rule == "registration-evict" else "keep"

        # The SDK answers the registration with client_info (its secret shown once); the store gets a copy
        # without the secret and the secret's SHA-256 (auth/client_auth.py compares it).
        secret = client_info.client_secret
        stored = client_info.model_copy(update={"client_secret": None})
        await self._run(
            self.state.oauth_register_client,
            client_info.client_id,
            stored.model_dump_json(),
            self.clock(),
            fits,
            digest(secret) if secret else None,
        )
        if refused:
            raise RegistrationError("invalid_client_metadata", refused[0])

    # ------------------------------------------------------------ authorize
    async def authorize(self, client: OAuthClientInformationFull, params: AuthorizationParams) -> str:
        registered = tuple(str(u) for u in client.redirect_uris or ())
        try:
            return await self._run(
                self.core.start,
                client_id=client.client_id,
                client_name=client.client_name or client.client_id,
                redirect_uri=str(params.redirect_uri),
                redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
                registered=registered,
                state=params.state,
                code_challenge=params.code_challenge,
                scopes=params.scopes,
                # No resource asked (RFC 8707 is optional): the token is for the one resource here, /mcp.
                resource=params.resource or self.resource,
                now=self.clock(),
            )
        except NotegateError as exc:
            raise AuthorizeError("invalid_request", exc.explain()) from None

    # ---------------------------------------------------------------- codes
    async def load_authorization_code(self, client: OAuthClientInformationFull, authorization_code: str):
        grant = await self._run(self.core.load_code, client.client_id, authorization_code, now=self.clock())
        if grant is None:
            return None
        return NotegateCode(
            code=authorization_code,
            scopes=list(grant.scopes),
            expires_at=grant.expires_at,
            client_id=grant.client_id,
            code_challenge=grant.code_challenge,
            redirect_uri=AnyUrl(grant.redirect_uri),
            redirect_uri_provided_explicitly=grant.redirect_uri_provided_explicitly,
            resource=grant.resource,
            family_id=grant.family_id,
            code_hash=grant.code_hash,
        )

    async def exchange_authorization_code(self, client: OAuthClientInformationFull, authorization_code) -> OAuthToken:
        grant = await self._run(self.core.load_code, client.client_id, authorization_code.code, now=self.clock())
        issued = await self._run(self.core.exchange_code, grant, now=self.clock()) if grant else None
        if issued is None:
            raise TokenError("invalid_grant", "the authorization code was already used; its grant is revoked")
        return self._token(issued)

    # -------------------------------------------------------------- refresh
    async def load_refresh_token(self, client: OAuthClientInformationFull, refresh_token: str):
        grant = await self._run(self.core.load_refresh, client.client_id, refresh_token, now=self.clock())
        if grant is None:
            return None
        return NotegateRefresh(
            token=refresh_token,
            client_id=grant.client_id,
            scopes=list(grant.scopes),
            expires_at=int(grant.expires_at),
            resource=grant.resource,
            subject=grant.login,
            family_id=grant.family_id,
            token_hash=grant.token_hash,
        )

    async def exchange_refresh_token(self, client: OAuthClientInformationFull, refresh_token, scopes: list[str]):
        grant = await self._run(self.core.load_refresh, client.client_id, refresh_token.token, now=self.clock())
        issued = await self._run(self.core.rotate, grant, scopes, now=self.clock()) if grant else None
        if issued is None:
            raise TokenError("invalid_grant", "the refresh token was already used; its whole grant is revoked")
        return self._token(issued)

    @staticmethod
    def _token(issued) -> OAuthToken:
        return OAuthToken(
            access_token=issued.access_token,
            token_type="Bearer",  # noqa: S106 - the token type, not a secret
            expires_in=issued.expires_in,
            refresh_token=issued.refresh_token,
            scope=" ".join(issued.scopes),
        )

    # --------------------------------------------------------------- access
    def credential(self, token: str) -> TokenRecord | TokenGrant | None:
        """What the door counts and the health check reads: a static token's record or an OAuth grant."""
        if token.startswith(STATIC_PREFIX):
            record = verify_token(self.state, token)
            if record is not None and not self._serves(record):
                return None
            return record
        return self.core.access(token, now=self.clock())

    def _serves(self, record: TokenRecord) -> bool:
        return decide_token_environment(record.environment, self.config.environments).allowed

    def failure(self, token: str | None) -> str:
        """Why ``token`` is refused, for the server's log (no-token, unknown, revoked, oauth-not-live,
        wrong-environment)."""
        if token and token.startswith(STATIC_PREFIX):
            record = verify_token(self.state, token)
            if record is not None and not self._serves(record):
                return decide_token_environment(record.environment, self.config.environments).rule
        kind = failure_class(self.state, token)
        return "oauth-not-live" if kind == "not-static" else kind

    def access_sync(self, token: str) -> AccessToken | None:
        found = self.credential(token)
        if found is None:
            return None
        if isinstance(found, TokenRecord):
            return static_access_token(found, token, self.resource)
        return access_token(found, token)

    async def load_access_token(self, token: str) -> AccessToken | None:
        return await self._run(self.access_sync, token)

    async def revoke_token(self, token) -> None:
        await self._run(self.core.revoke, token.token, client_id=None, now=self.clock())

    async def revoke_for(self, client_id: str, token: str) -> bool:
        """RFC 7009 revocation by a client of its own token (the door's /revoke; public clients too)."""
        return await self._run(self.core.revoke, token, client_id=client_id, now=self.clock())
