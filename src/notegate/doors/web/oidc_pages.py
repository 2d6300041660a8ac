"""Logging in, joining, stepping up and approving an elevation through an OpenID Connect provider.

``POST /oidc/{provider}/start`` (a form with the browser's CSRF token) keeps a pending login and sends the
browser to the provider; ``GET /oidc/callback`` finishes it (auth/oidc.py validates everything) and then, by
the pending login's purpose:

* ``login``: the identity (issuer, subject) must be linked to a person who is still an owner or member;
  an unknown subject gets a page saying what the owner must do (``oidc-subject-unknown``). The session counts
  as a step-up only when the login proved a second factor (``oidc2:``), else never (``oidc:``).
* ``link``: an invitation's person links this account (the invitation is spent, the person becomes a member).
* ``step-up``: a fresh login (``max_age``, ``prompt=login``) of this session's own person with a second factor
  (:func:`notegate.policy.decide_provider_step_up`) opens a fresh session; a refusal quotes what the provider sent
  and offers the passkey instead.
* ``approve``: the same decision, then the elevation is approved with the login's ``auth_time`` as its
  assertion time (a stale login cannot approve: refused before the backend is asked).

Every outcome is an audit row (``web:oidc-<purpose>``).
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from notegate.auth.grants import ElevationBackend
from notegate.auth.members import INVITE_PREFIX, Membership
from notegate.auth.oidc import PURPOSES, Finished, RelyingParty
from notegate.auth.websession import OIDC_PROVEN, OIDC_UNPROVEN, hash_secret, parse_next, parse_secret
from notegate.doors.web.console import Console, login_required
from notegate.errors import NotegateError
from notegate.policy import Decision, decide_console_action, decide_provider_step_up


class OidcPages:
    def __init__(
        self, console: Console, rp: RelyingParty, members: Membership, elevation: ElevationBackend | None
    ) -> None:
        self.console = console
        self.rp = rp
        self.members = members
        self.elevation = elevation

    @property
    def policy(self) -> Any:
        return self.console.services.runtime.policy

    def audit(self, purpose: str, login: str | None, outcome: str) -> None:
        self.console.audit(f"web:oidc-{purpose}", login, outcome)

    def step_up(self, finished: Finished, now: float) -> Decision:
        p = finished.provider
        return decide_provider_step_up(
            finished.claims,
            now=now,
            max_age=self.policy.elevation_assertion_seconds,
            second_factor_amr=p.second_factor_amr,
            second_factor_acr=p.second_factor_acr,
        )

    # -- POST /oidc/{provider}/start?purpose=...
    async def start(self, request: Request) -> Response:
        """The purpose comes in the query (it decides which secret the form's CSRF token is bound to): a login or
        an invitation's link is a browser's pre-session; a step-up, an approval or linking one's own account is
        the signed-in session's."""
        console = self.console
        session = await console.session(request)
        purpose = request.query_params.get("purpose", "login")[:20]
        try:
            if purpose not in PURPOSES:
                raise NotegateError("the form named no purpose this console knows", rule="web-bad-request")
            own = purpose in ("step-up", "approve", "link-self")
            if own and session is None:
                raise login_required()
            binding = session.secret if own and session is not None else console.pre_secret(request)
            form = await console.form(request, binding)
            assert binding is not None  # the CSRF check refused a browser without one
            now = console.clock()
            kwargs: dict[str, Any] = {"next_path": parse_next(form.get("next"))}
            if purpose == "link":
                row = await console.run(self.members.check_invite, form.get("invite"), now=now)
                if not self.rp.provider(request.path_params["provider"]).serves(row["environment"]):
                    raise NotegateError(
                        "this provider is not offered for that environment", rule="oidc-provider-unknown"
                    )
                kwargs["invite_hash"] = hash_secret(parse_secret(form.get("invite"), INVITE_PREFIX) or "")
                kwargs["login"] = row["login"]
            elif own and session is not None:
                kwargs.update(login=session.login, max_age=self.policy.elevation_assertion_seconds)
                if purpose == "approve":
                    kwargs["next_path"] = str(form.get("link", ""))[:64]
                if purpose == "link-self":  # a new way in for this person: as adding a passkey, a fresh step-up
                    decision = decide_console_action(
                        self.policy, "oidc-link", step_up_age=console.clock() - session.created_at
                    )
                    if not decision.allowed:
                        raise NotegateError(decision.reason, rule=decision.rule)
                    kwargs.pop("max_age")
            url = await console.run(
                self.rp.start, request.path_params["provider"], purpose=purpose, binding=binding, now=now, **kwargs
            )
        except NotegateError as exc:
            await console.run(self.audit, purpose, session.login if session else None, f"refused:{exc.rule}")
            return console.refused_page(exc, session)
        return RedirectResponse(url, status_code=303)

    # -- GET /oidc/callback
    async def callback(self, request: Request) -> Response:
        console = self.console
        session = await console.session(request)
        pre = console.pre_secret(request)
        query = {k: v for k, v in request.query_params.items() if k in ("code", "state", "error")}
        finished: Finished | None = None
        try:
            finished = await console.run(
                self.rp.finish, query, bindings=(pre, session.secret if session else None), now=console.clock()
            )
            return await self._finish(request, session, finished)
        except NotegateError as exc:
            purpose = finished.purpose if finished is not None else "callback"
            await console.run(self.audit, purpose, session.login if session else None, f"refused:{exc.rule}")
            step_up_next = None  # the passkey is the fallback of a step-up the provider could not prove
            if finished is not None and session is not None and finished.purpose in ("step-up", "approve"):
                back = finished.next if finished.purpose == "step-up" else f"/elevate/{finished.next}"
                step_up_next = parse_next(back) or "/"
            return console.page(
                "refused.html",
                403,
                rule=exc.rule,
                text=exc.explain(),
                session=session,
                csrf=session.csrf if session else None,
                step_up_next=step_up_next,
                subject=_subject(finished) if exc.rule == "oidc-subject-unknown" else None,
            )

    async def _finish(self, request: Request, session: Any, finished: Finished) -> Response:
        console = self.console
        now = console.clock()
        provider = finished.provider
        if finished.purpose == "link":
            assert finished.login is not None
            identity = await console.run(self._link, finished, now)
            response = RedirectResponse("/", status_code=303)
            await console.run(console.open_session, response, finished.login, OIDC_UNPROVEN + identity["id"])
            await console.run(self.audit, "link", finished.login, f"ok:{provider.name}:{identity['id']}")
            return response
        if finished.purpose == "link-self":
            if session is None or finished.login != session.login:
                raise NotegateError("the login was started by another session", rule="oidc-state-unknown")
            identity = await console.run(self.rp.link, provider, finished.claims, session.login, now=now)
            await console.run(self.audit, "link-self", session.login, f"ok:{provider.name}:{identity['id']}")
            return RedirectResponse("/passkeys", status_code=303)
        identity = await console.run(self.rp.identity, provider, finished.claims)
        if identity is None:
            raise NotegateError(
                f"this '{provider.name}' account is not linked to any person here", rule="oidc-subject-unknown"
            )
        login = identity["login"]
        if finished.purpose == "login":
            served = [e for e in console.services.runtime.config.environments if provider.serves(e)]
            if not any([await console.run(self.members.may_use, login, e) for e in served]):
                raise NotegateError(
                    f"'{login}' is neither the owner nor a member of any environment this provider serves",
                    rule="person-unknown",
                )
            proven = self.step_up(finished, now).allowed
            response = RedirectResponse(parse_next(finished.next) or "/", status_code=303)
            kind = OIDC_PROVEN if proven else OIDC_UNPROVEN
            await console.run(console.open_session, response, login, kind + identity["id"])
            await console.run(console.state.oidc_identity_used, identity["id"], now=now)
            await console.run(self.audit, "login", login, f"ok:{provider.name}:{'mfa' if proven else 'single'}")
            return response
        # step-up and approve: this session's own person, fresh, with a second factor
        if session is None or login != session.login or finished.login != session.login:
            raise NotegateError("the provider's login is another person's than this session's", rule="passkey-invalid")
        decision = self.step_up(finished, now)
        if not decision.allowed:
            raise NotegateError(decision.reason, rule=decision.rule)
        if finished.purpose == "step-up":
            response = RedirectResponse(parse_next(finished.next) or "/", status_code=303)
            await console.run(console.open_session, response, login, OIDC_PROVEN + identity["id"])
            await console.run(console.sessions.close, request.cookies.get(console.cookies.session_name))
            await console.run(self.audit, "step-up", login, f"ok:{provider.name}")
            return response
        link_id = finished.next or ""
        if self.elevation is None:
            raise NotegateError("this server has no elevation requests", rule="elevation-unknown")
        pending = await console.run(self.elevation.pending, link_id, now=now)
        if pending is None:
            raise NotegateError("this approval link is unknown, expired or already answered", rule="elevation-unknown")
        await console.run(
            self.elevation.approve,
            link_id,
            person=login,
            assertion_at=float(finished.claims["auth_time"]),
            user_verified=True,
            now=now,
        )
        await console.run(self.audit, "approve", login, f"ok:{pending.connector}")
        return console.page("elevated.html", session=session, decision="approve", pending=pending)

    def _link(self, finished: Finished, now: float) -> Any:
        """Spend the invitation this login started from and link the account to its person, once."""
        assert finished.login is not None and finished.invite_hash is not None
        row = self.console.state.invite(finished.invite_hash)
        if row is None or row["used_at"] is not None or row["expires_at"] <= now:
            raise NotegateError("this invitation was already used or has expired", rule="invite-used")
        existing = self.rp.identity(finished.provider, finished.claims)
        if existing is not None and existing["login"] != finished.login:
            raise NotegateError("this provider account is linked to another person here", rule="oidc-identity-taken")
        if (
            self.console.state.use_invite(finished.invite_hash, how=f"oidc:{finished.provider.name}", by="", now=now)
            is None
        ):
            raise NotegateError("this invitation was already used", rule="invite-used")
        return self.rp.link(finished.provider, finished.claims, finished.login, now=now)


def _subject(finished: Finished | None) -> dict[str, str] | None:
    """What the owner needs to know about an unknown account (issuer and subject: public identifiers)."""
    if finished is None:
        return None
    return {
        "provider": finished.provider.display_name,
        "issuer": finished.provider.issuer,
        "sub": str(finished.claims.get("sub", ""))[:200],
    }
