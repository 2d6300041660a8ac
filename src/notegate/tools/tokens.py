"""The per-call tokens between the knowledge service and the tools process: never the client's own token.

Theory of operation
-------------------
* The MCP authorization specification forbids passing the token a client sent on to another service. So the
  knowledge service, having verified its caller at ``/mcp``, mints for each request to the tools process a
  short-lived token of its own (:class:`Minter`): a JWS signed with an Ed25519 key only the knowledge service
  holds (a file in its state folder, mode 600), whose public half it records in ``tools_keys`` as
  ``mint:<kid>``. The shape is RFC 8693's token exchange result: ``sub`` is the person, ``act.sub`` the
  knowledge service acting for them; ``aud`` is the tools process; the token names the connector login, the
  client, the environment and the tier, and a call token also the mount and the tool it may call.
* The tools process (:class:`Verifier`) accepts nothing else: the signature must verify with a recorded mint
  key whose id (its RFC 7638 thumbprint, checked against the recorded key) the tools process was started with
  (``notegate tools serve --mint-key``; ``notegate tools mint-key`` prints it): whoever can write the state
  database can record a key, but cannot make the tools process trust it, so cannot use the mounted
  credentials. Then ``typ``, ``iss``, ``aud`` and ``scope`` must be exactly ours, it must be fresh (at most
  ``TOKEN_SECONDS`` old, never issued in the future) and a call token is spent by its first use. A client's
  token (an opaque ``ngt_…`` or OAuth token) is no JWS at all and is refused.
* The reverse holds at ``/mcp``: its verifier knows only its own opaque tokens (by hash), so a token minted
  for the tools process is refused there like any unknown bearer.
"""

from __future__ import annotations

import base64
import json
import os
import secrets
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass
from pathlib import Path

from joserfc import jwt
from joserfc.errors import JoseError
from joserfc.jwk import OKPKey

from notegate.errors import NotegateError
from notegate.policy.caller import console_caller
from notegate.policy.vocab import Tier

ISSUER = "notegate"
AUDIENCE = "notegate-tools"
ACTOR = "notegate-knowledge-service"
TOKEN_TYPE = "notegate-tools+jwt"  # noqa: S105 - the JOSE typ header, not a secret
ALGORITHM = "Ed25519"
#: How long a minted token lives: one request to a loopback process needs seconds, not minutes.
TOKEN_SECONDS = 60
#: Clock skew tolerated on ``iat`` (one host, so small).
SKEW_SECONDS = 5
SCOPES = ("tools:list", "tools:call", "tools:health", "tools:verify", "tools:oauth")
#: What a health token names as its person and connector: no caller's, the knowledge service's own look.
HEALTH_SUBJECT = "health"
MINT_FILE = "tools-mint.jwk"
MINT_PURPOSE_PREFIX = "mint:"
#: The systemd credential (LoadCredential) holding the mint key ids the tools process trusts, one a line.
MINT_PIN_CREDENTIAL = "notegate-tools-mint"


@dataclass(frozen=True)
class ToolsCaller:
    """Who a verified token names: the person and connector login behind the call, never the gateway."""

    login: str
    connector: str
    client: str
    environment: str
    tier: str
    scope: str
    mount: str = ""
    tool: str = ""


class Minter:
    """The knowledge service's side: mints one token per request to the tools process."""

    def __init__(self, state, key_dir: Path, clock: Callable[[], float] = time.time) -> None:
        self.clock = clock
        path = key_dir / MINT_FILE
        if path.is_file():
            self._key = OKPKey.import_key(json.loads(path.read_text(encoding="utf-8")))
        else:
            self._key = OKPKey.generate_key("Ed25519")
            _write_private(path, json.dumps(self._key.as_dict(private=True)))
        self.kid = self._key.thumbprint()
        state.add_tools_key_once(MINT_PURPOSE_PREFIX + self.kid, json.dumps(self._key.as_dict(private=False)), clock())

    @classmethod
    def existing(cls, state, key_dir: Path, clock: Callable[[], float] = time.time) -> Minter | None:
        """The knowledge service's minter if its key file is there and readable (the doctor, run as the
        server's user), else None: never a new key, which would be one the tools process does not trust."""
        try:
            if not (key_dir / MINT_FILE).is_file():
                return None
            return cls(state, key_dir, clock)
        except (OSError, ValueError):
            return None

    def mint(self, caller, environment: str, scope: str, mount: str = "", tool: str = "") -> str:
        return self._sign(
            caller.login, caller.connector_id, caller.client, caller.tier, environment, scope, mount, tool
        )

    def mint_health(self, environment: str) -> str:
        """A ``tools:health`` token: the upstreams' status of ``environment``'s mounts ('' = every mount, for
        the doctor and the owner's console status)."""
        return self._sign(HEALTH_SUBJECT, HEALTH_SUBJECT, HEALTH_SUBJECT, Tier.MACHINE, environment, "tools:health")

    def mint_verify(self, environment: str, mount: str, variable: str, login: str) -> str:
        """A one-use ``tools:verify`` token: compare a value the owner holds with ``mount``'s stored
        ``variable`` (the answer is match or not; the stored value never leaves the tools process)."""
        caller = console_caller(login)
        return self._sign(
            login, caller.connector, caller.client, caller.tier, environment, "tools:verify", mount, variable
        )

    def mint_oauth(self, environment: str, mount: str, login: str) -> str:
        """A one-use ``tools:oauth`` token: start or finish ``mount``'s upstream OAuth grant for its owner."""
        caller = console_caller(login)
        return self._sign(login, caller.connector, caller.client, caller.tier, environment, "tools:oauth", mount)

    def _sign(
        self,
        login: str,
        connector: str,
        client: str,
        tier: str,
        environment: str,
        scope: str,
        mount: str = "",
        tool: str = "",
    ) -> str:
        now = int(self.clock())
        claims = {
            "iss": ISSUER,
            "aud": AUDIENCE,
            "sub": login,
            "act": {"sub": ACTOR},
            "connector": connector,
            "client": client,
            "environment": environment,
            "tier": tier,
            "scope": scope,
            "mount": mount,
            "tool": tool,
            "iat": now,
            "exp": now + TOKEN_SECONDS,
            "jti": secrets.token_urlsafe(16),
        }
        header = {"alg": ALGORITHM, "typ": TOKEN_TYPE, "kid": self.kid}
        return jwt.encode(header, claims, self._key, algorithms=[ALGORITHM])


def _write_private(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)


def _refuse(why: str) -> NotegateError:
    return NotegateError(
        f"the tools process accepts only tokens the knowledge service minted for it ({why})", rule="tools-token-invalid"
    )


class Verifier:
    """The tools process's side: accepts only fresh tokens minted for it, each call token once. ``pinned``: the
    mint key ids it trusts (None: every recorded one; `notegate tools serve` never starts without a pin)."""

    def __init__(self, state, clock: Callable[[], float] = time.time, pinned: Collection[str] | None = None) -> None:
        self.state = state
        self.clock = clock
        self.pinned = frozenset(pinned) if pinned is not None else None
        self._spent: dict[str, float] = {}

    def verify(self, token: str | None, scope: str) -> ToolsCaller:
        if not token:
            raise _refuse("no token")
        try:
            header = _header(token)
        except (ValueError, UnicodeDecodeError):
            raise _refuse("not a token of ours") from None
        if header.get("alg") != ALGORITHM or header.get("typ") != TOKEN_TYPE or not isinstance(header.get("kid"), str):
            raise _refuse("not a token of ours")
        if self.pinned is not None and header["kid"] not in self.pinned:
            raise _refuse("signed by a key this tools process was not started with")
        public = self.state.tools_key(MINT_PURPOSE_PREFIX + header["kid"])
        if public is None:
            raise _refuse("signed by an unknown key")
        try:
            key = OKPKey.import_key(json.loads(public))
            named = key.thumbprint() == header["kid"]  # the recorded key is the one its (pinned) id names
            claims = jwt.decode(token, key, algorithms=[ALGORITHM]).claims if named else None
        except (JoseError, ValueError):
            raise _refuse("the signature does not verify") from None
        if claims is None:
            raise _refuse("the recorded key is not the one its id names")
        now = self.clock()
        if claims.get("iss") != ISSUER or claims.get("aud") != AUDIENCE or claims.get("act") != {"sub": ACTOR}:
            raise _refuse("issued for another audience")
        if claims.get("scope") != scope or scope not in SCOPES:
            raise _refuse("issued for another purpose")
        iat, exp = claims.get("iat"), claims.get("exp")
        if not isinstance(iat, int) or not isinstance(exp, int) or exp - iat > TOKEN_SECONDS:
            raise _refuse("no valid lifetime")
        if iat > now + SKEW_SECONDS or exp <= now:
            raise _refuse("expired")
        fields = ("sub", "connector", "client", "environment", "tier", "mount", "tool", "jti")
        if not all(isinstance(claims.get(f), str) for f in fields):
            raise _refuse("claims missing")
        if scope in ("tools:call", "tools:verify", "tools:oauth"):
            self._spend(claims["jti"], exp, now)
        return ToolsCaller(
            login=claims["sub"],
            connector=claims["connector"],
            client=claims["client"],
            environment=claims["environment"],
            tier=claims["tier"],
            scope=scope,
            mount=claims["mount"],
            tool=claims["tool"],
        )

    def _spend(self, jti: str, exp: float, now: float) -> None:
        for old, until in list(self._spent.items()):
            if until <= now:
                del self._spent[old]
        if jti in self._spent:
            raise _refuse("already used")
        self._spent[jti] = exp


def _header(token: str) -> dict:
    """The JOSE header of a compact token, read before its signature (to pick the key by ``kid``)."""
    head = token.split(".", 1)[0]
    data = json.loads(base64.urlsafe_b64decode(head + "=" * (-len(head) % 4)))
    if not isinstance(data, dict):
        raise ValueError("header")
    return data
