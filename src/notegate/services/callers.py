"""Who is calling: the one function that turns a verified credential (+ a device proof, + a grant) into a
:class:`~notegate.policy.Caller`, for every door that takes one (MCP over HTTP and stdio, the contracts,
``/healthz``, ``/metrics``, the console).

Theory of operation
-------------------
* **Decisions in policy, lookups here.** The policy says what a credential's claims make a caller
  (:func:`~notegate.policy.caller_of`), whether its person still belongs to its environment
  (:func:`~notegate.policy.decide_member_caller`), whether a device proof or a grant lifts it
  (:func:`~notegate.policy.decide_device_tier`, :func:`~notegate.policy.decide_presented_grant`) and what a
  lifted caller is (:func:`~notegate.policy.lifted`).  This module only fetches the facts those decisions
  read: the membership rows, the device header's verdict, the stored grant.
* **One order for every door:** the credential's own caller, then membership (a removed member's surviving
  credential is refused at its next request), then the device header, then the grant.  A door that has no
  header or grant passes none; nothing a request *writes* ever reaches a tier.
* Refusals raise with the deciding rule; a device header that does not count raises nothing (the caller
  keeps exactly the tier its credential gave it, and the verifier audits why).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from notegate.errors import AuthError, NotegateError
from notegate.policy import Caller, Decision, caller_of

if TYPE_CHECKING:
    from notegate.auth.devices import DeviceVerifier
    from notegate.auth.grants import Grants

#: (login, environment, client class) -> may that person still act there (auth/members.py).
MemberCheck = Callable[[str, "str | None", str], Decision]


class Callers:
    """The lookups behind a caller: devices configured for this server, its grants, its membership."""

    def __init__(
        self,
        *,
        devices: DeviceVerifier | None = None,
        grants: Grants | None = None,
        members: MemberCheck | None = None,
        clock: Callable[[], float] | None = None,
    ) -> None:
        self.devices = devices
        self.grants = grants
        self.members = members
        self.clock = clock

    def resolve(
        self,
        credential: Any,
        *,
        session: str = "-",
        device_header: str | bytes | None = None,
        grant: str | None = None,
        conversation: str | None = None,
    ) -> Caller:
        """The caller ``credential`` is for this request: a static token's record or an OAuth grant (each with
        ``caller()``), the SDK's verified access token (its ``claims`` and ``client_id``), or a caller no
        credential decides (a fixed connector login, the console's person), which is taken as it is.

        ``session`` names the request's session ("-": none); ``device_header`` is the request's device
        proof and ``grant`` the grant value a tool call presented (with the ``conversation`` it came from)."""
        caller = _own_caller(credential, session)
        if self.members is not None:
            decision = self.members(caller.login, caller.environment, caller.client_class)
            if not decision.allowed:
                raise AuthError(decision.reason, rule=decision.rule)
        if self.devices is not None and not isinstance(credential, Caller):
            caller, _verdict = self.devices.tier_for(caller, device_header)
        return self.with_grant(caller, grant, conversation)

    def with_grant(self, caller: Caller, grant: str | None, conversation: str | None) -> Caller:
        """The caller as a presented grant leaves it: lifted when the grant applies; a grant that does not
        apply is refused with its rule (the model passed it on purpose, so it must learn why it did not count)."""
        if not grant:
            return caller
        if self.grants is None or self.clock is None:
            raise NotegateError("this server does not issue grants", rule="grant-unknown")
        granted, decision = self.grants.tier_for(caller, grant, conversation, self.clock())
        if not decision.allowed:
            raise NotegateError(decision.reason, rule=decision.rule)
        return granted


def _own_caller(credential: Any, session: str) -> Caller:
    """The caller a credential is before anything lifts it (the policy's :func:`caller_of` reads its claims)."""
    if isinstance(credential, Caller):
        return credential if session == "-" else replace(credential, session=session)
    if callable(getattr(credential, "caller", None)):  # TokenRecord, TokenGrant
        return credential.caller(session)
    claims = getattr(credential, "claims", None)  # the SDK's AccessToken
    if not isinstance(claims, Mapping) or not claims:
        raise AuthError("no verified credential on this request", remedy="Send Authorization: Bearer <token>.")
    return caller_of(claims, client=str(credential.client_id), session=session)
