"""The console's step-up: one gate in front of every POST route, and the "confirm with passkey" ceremony.

Theory of operation: :data:`POST_ACTIONS` names the console action of every POST route (by its route path);
:func:`web_routes` wraps each POST handler in :meth:`StepUpGate.guard`, which asks
:func:`notegate.policy.console.decide_console_action` with the age of the session's last user-verified
passkey assertion before the handler runs. A refused action never reaches its handler: a form route answers
with the refused page (rule ``step-up-required``) holding a "Confirm with your passkey" button, a JSON route
with the refusal as JSON; both are audited. The ceremony (``/step-up/options``, ``/step-up/verify``) is a
login assertion bound to the signed-in session: when it verifies for the same person, a new session is opened
(its ``created_at`` is the assertion's time) and the old one closed, and the browser goes back to the page it
came from. A POST route missing from :data:`POST_ACTIONS` makes :func:`web_routes` fail to build the app.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from urllib.parse import quote

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from notegate.auth.websession import parse_next
from notegate.doors.web.console import Console, login_required
from notegate.doors.web.headers import provider_csp
from notegate.errors import NotegateError, PathRejected
from notegate.policy import decide_console_action, guarded_note
from notegate.vault.paths import NotePath

Handler = Callable[[Request], Awaitable[Response]]

#: The console action of every POST route (a route path, or a template over its path parameters).
POST_ACTIONS: dict[str, str] = {
    "/login/options": "login",
    "/login/verify": "login",
    "/logout": "logout",
    "/enroll/{token}/options": "enrol",
    "/enroll/{token}/verify": "enrol",
    "/step-up/options": "step-up",
    "/step-up/verify": "step-up",
    "/passkeys/options": "passkey-add",
    "/passkeys/verify": "passkey-add",
    "/passkeys/{passkey_id}/revoke": "passkey-revoke",
    "/oauth/consent": "consent-answer",
    "/elevate/{link_id}": "elevation-answer",
    "/elevate/{link_id}/options": "elevation-assertion",
    "/elevate/{link_id}/verify": "elevation-assertion",
    "/inbox/{action}": "inbox-{action}",
    "/elevations/grants/{grant_id}/revoke": "grant-revoke",
    "/elevations/{link_id}": "elevation-answer",
    "/elevations/{link_id}/options": "elevation-assertion",
    "/elevations/{link_id}/verify": "elevation-assertion",
    "/connections/tokens": "token-create",
    "/connections/tokens/{token_id}/revoke": "token-revoke",
    "/connections/oauth/{family_id}/revoke": "oauth-revoke",
    "/restore/{path:notepath}": "note-restore",
    "/edit/{path:notepath}": "note-edit",
    "/members/invite": "member-invite",
    "/members/{login}/remove": "member-remove",
    "/join/{token}/options": "join",
    "/join/{token}/verify": "join",
    "/oidc/{provider}/start": "oidc-start",
    "/tools/mounts": "tools-mount-create",
    "/tools/mounts/{mount}/remove": "tools-mount-remove",
    "/tools/mounts/{mount}/credential": "tools-credential-set",
    "/tools/mounts/{mount}/check": "tools-credential-verify",
    "/tools/mounts/{mount}/approve": "tools-approve",
    "/tools/mounts/{mount}/oauth": "tools-oauth-start",
    "/livesync/devices": "livesync-device-add",
    "/livesync/devices/{name}/revoke": "livesync-device-revoke",
}

#: Where the ceremony sends the browser back to, per action: the page the refused form was on.
BACK: dict[str, Callable[[Request], str]] = {
    "passkey-add": lambda _r: "/passkeys",
    "token-create": lambda _r: "/connections",
    "inbox-promote": lambda _r: "/inbox",
    "member-invite": lambda _r: "/members",
    "member-remove": lambda _r: "/members",
    "tools-mount-create": lambda _r: "/tools",
    "tools-credential-set": lambda r: _mount_page(r),
    "tools-credential-verify": lambda r: _mount_page(r),
    "tools-approve": lambda r: _mount_page(r),
    "tools-oauth-start": lambda r: _mount_page(r),
    "livesync-device-add": lambda _r: "/livesync",
    "livesync-device-revoke": lambda _r: "/livesync",
    "note-edit": lambda r: "/edit/" + quote(r.path_params.get("path", ""), safe="/") + _query(r),
    "note-restore": lambda r: "/history/" + quote(r.path_params.get("path", ""), safe="/") + _query(r),
}


def _mount_page(request: Request) -> str:
    return "/tools/mounts/" + quote(str(request.path_params.get("mount", ""))[:40], safe="")


def _query(request: Request) -> str:
    return f"?{request.url.query}" if request.url.query else ""


def action_of(route: str, request: Request) -> str:
    """The console action ``request`` on ``route`` is (``inbox-{action}`` filled from the path)."""
    template = POST_ACTIONS[route]
    if "{" not in template:
        return template
    return template.format(**{k: str(v)[:40] for k, v in request.path_params.items()})


def _note_path(raw: object) -> str | None:
    try:
        return NotePath.parse(str(raw).strip("/")).value
    except PathRejected:
        return None


class StepUpGate:
    """The one place the console enforces :func:`decide_console_action`, and the step-up ceremony."""

    def __init__(self, console: Console) -> None:
        self.console = console

    @property
    def policy(self):  # the live policy: the same one the services write under
        return self.console.services.runtime.policy

    def guard(self, route: str, handler: Handler, *, json: bool) -> Handler:
        """``handler`` behind the step-up decision of ``route``'s action (``json``: answer as the script expects)."""
        if route not in POST_ACTIONS:
            raise LookupError(f"the console's POST route {route} names no action in POST_ACTIONS")
        console = self.console

        async def guarded(request: Request) -> Response:
            action = action_of(route, request)
            session = await console.session(request)
            if session is None:  # the handler refuses it in its own words ([login-required], a login page)
                return await handler(request)
            guarded_path = "path" in request.path_params and guarded_note(
                self.policy, _note_path(request.path_params["path"])
            )
            age = console.clock() - session.created_at
            decision = decide_console_action(self.policy, action, step_up_age=age, guarded=guarded_path)
            if decision.allowed:
                return await handler(request)
            exc = NotegateError(decision.reason, rule=decision.rule)
            await console.run(console.audit, f"web:{action}", session.login, f"refused:{exc.rule}")
            if json:
                return console.refused_json(exc)
            back = BACK.get(action, lambda _r: "/")(request)
            providers = await console.run(self.providers_of, session.login)
            return console.page(
                "refused.html",
                403 if exc.rule == "step-up-required" else 400,
                rule=exc.rule,
                text=exc.explain(),
                session=session,
                csrf=session.csrf,
                step_up_next=parse_next(back) or "/" if exc.rule == "step-up-required" else None,
                step_up_providers=providers,
                csp=provider_csp(providers),
            )

        return guarded

    def providers_of(self, login: str) -> list[object]:
        """The identity providers ``login`` has an account linked at: each may stand in for the passkey."""
        config = self.console.services.runtime.config
        linked = {r["provider"] for r in self.console.state.oidc_identities(login) if r["revoked_at"] is None}
        return [p for name, p in config.oidc.items() if name in linked]

    # -- the ceremony: confirm with a passkey, get a fresh session
    async def options(self, request: Request) -> Response:
        console = self.console
        session = await console.session(request)
        try:
            if session is None:
                raise login_required()
            await console.json_body(request, session.secret)
            options = await console.own_passkey_options(session)
        except NotegateError as exc:
            return console.refused_json(exc)
        return JSONResponse(options)

    async def verify(self, request: Request) -> Response:
        """A user-verified assertion of this session's person opens a new session (and closes this one)."""
        console = self.console
        session = await console.session(request)
        try:
            if session is None:
                raise login_required()
            data = await console.json_body(request, session.secret)
            record = await console.own_assertion(session, data.get("credential"))
        except NotegateError as exc:
            await console.run(console.audit, "web:step-up", session.login if session else None, f"refused:{exc.rule}")
            return console.refused_json(exc)
        response = JSONResponse({"redirect": parse_next(data.get("next")) or "/"})
        await console.run(console.open_session, response, record.login, record.id)
        await console.run(console.sessions.close, request.cookies.get(console.cookies.session_name))
        await console.run(console.audit, "web:step-up", record.login, f"ok:{record.id}")
        return response
