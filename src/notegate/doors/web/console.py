"""The console's person pages: login, logout, enrol through a one-time link, and the passkeys page.

Every state-changing request is a POST that carries the CSRF token of the browser's cookie secret (form
field ``csrf`` or header ``X-CSRF-Token``) and, when the browser sends one, an Origin equal to the
console's. The WebAuthn ceremonies run in ``static/passkeys.js``: the page asks for options, the browser
asks the authenticator, the page posts the answer back; the server decides everything.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, quote

import anyio.to_thread
from jinja2 import Environment, FileSystemLoader
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response

from notegate.auth.passkeys import Passkeys, check_enrol_link, list_passkeys, revoke_passkey
from notegate.auth.websession import (
    PRE_PREFIX,
    PRE_SESSION_SECONDS,
    CookiePolicy,
    WebSession,
    WebSessions,
    check_csrf,
    check_origin,
    csrf_token,
    mint_secret,
    parse_next,
    parse_secret,
)
from notegate.doors.web.environments import Environments
from notegate.doors.web.headers import provider_csp
from notegate.doors.web.snippets import plain_snippet
from notegate.errors import NotegateError, http_status
from notegate.policy import Caller, console_caller, decide_console_action
from notegate.services.callers import Callers

HERE = Path(__file__).parent
MAX_JSON_BYTES = 64 << 10
# The HTTP status of each refusal is the registry's (errors.http_status), the same at every door.

#: The nav bar's entry each page template belongs to (base.html marks it as the current page).
NAV_OF = {
    "home.html": "home",
    "passkeys.html": "passkeys",
    "inbox.html": "inbox",
    "elevations.html": "elevations",
    "admin_audit.html": "audit",
    "admin_connections.html": "connections",
    "admin_token_created.html": "connections",
    "admin_status.html": "status",
    "members.html": "members",
    "member_invited.html": "members",
    **dict.fromkeys(
        ("notes.html", "note.html", "history.html", "search.html", "deleted.html", "edit.html", "preview.html"),
        "notes",
    ),
    "stale.html": "notes",
    "tools.html": "tools",
    "tools_mount.html": "tools",
    "tools_connect.html": "tools",
}

MAX_FORM_FIELDS = 8


async def bounded_body(request: Request, limit: int = MAX_JSON_BYTES) -> bytes:
    """The request body, read at most ``limit`` far (:data:`MAX_JSON_BYTES` unless a form carries a note)."""
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise NotegateError(f"the request body is over {limit} bytes", rule="web-bad-request")
        chunks.append(chunk)
    return b"".join(chunks)


def utc(value: float | None) -> str:
    """A UNIX time as a person reads it, ``2026-12-01 17:55Z`` (or ``-``): never a bare number on a page."""
    if value is None:
        return "-"
    return time.strftime("%Y-%m-%d %H:%MZ", time.gmtime(value))


def filesize(size: int) -> str:
    """A size as a person reads it: ``512 bytes``, ``12.3 KB``, ``4.0 MB`` (powers of 1,024)."""
    if size < 1024:
        return f"{size} bytes"
    value = float(size)
    for unit in ("KB", "MB", "GB"):
        value /= 1024
        if value < 1024 or unit == "GB":
            break
    return f"{value:.1f} {unit}"


def login_required() -> NotegateError:
    """The refusal of a console request that needs a signed-in person and came without a session: one wording
    for every page and action (``[login-required]``; a GET page sends the browser to the login page instead)."""
    return NotegateError("this needs a logged-in person", rule="login-required")


def templates() -> Environment:
    """Autoescaping everywhere: nothing a client or a person chose reaches a page unescaped."""
    env = Environment(loader=FileSystemLoader(HERE / "templates"), autoescape=True)
    env.filters["filesize"] = filesize
    env.filters["utc"] = utc
    env.filters["plain_snippet"] = plain_snippet
    return env


class Console:
    """State and helpers shared by the console's handlers (one per app)."""

    def __init__(
        self,
        *,
        state: Any,
        clock: Callable[[], float],
        passkeys: Passkeys,
        cookies: CookiePolicy,
        origin: str,
        services: Any = None,
        callers: Callers | None = None,
    ) -> None:
        self.state = state
        #: The one function every door turns a credential into a caller with (services/callers.py).
        self.callers = callers if callers is not None else Callers()
        self.clock = clock
        self.passkeys = passkeys
        self.sessions = WebSessions(state)
        self.cookies = cookies
        self.origin = origin
        #: The app's one Services: the owner's pages act through the same services (and rules) as MCP.
        self.services = services
        #: The one environment picker of every owner's page (``?env=``, the form's ``env``).
        self.environments = Environments(lambda: self.services.runtime.config)
        self.env = templates()

    # -- helpers
    async def run(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        return await anyio.to_thread.run_sync(lambda: fn(*args, **kwargs))

    def caller(self, person: str, environment: str | None) -> Caller:
        """Who a signed-in person's console action is, through the one function every door uses
        (:meth:`notegate.services.callers.Callers.resolve`, as MCP, the contracts, ``/healthz`` and ``/metrics``):
        the credential is the passkey session, whose person is the fixed connector login ``web:console``
        (:func:`notegate.policy.console_caller`); membership is checked as for every other door's caller (a
        removed member's surviving session is refused with ``member-removed``); no device key or grant lifts it."""
        return self.callers.resolve(console_caller(person, environment))

    def record_action(self, environment: str | None, person: str | None, tool: str, outcome: str) -> None:
        """One audit row for a person's action on an owner's page (connector login ``web:console``).  The row's
        client, class and tier are the console connector's (:func:`notegate.policy.console_caller`), not a
        resolved caller: refusals are recorded too, a removed member's included, so this never resolves one."""
        caller = console_caller(person or "-")
        self.state.audit(
            now=self.clock(),
            environment=environment,
            login=person,
            client=caller.client,
            client_class=caller.client_class,
            tier=caller.tier,
            session=None,
            tool=tool,
            path=None,
            outcome=outcome[:900],
        )

    async def owner_form(self, request: Request, tool: str) -> tuple[WebSession, str, dict[str, str]] | Response:
        """An owner's page's POST: the signed-in person, the environment the form names and its fields, or the
        refusal page (audited as ``tool``).  Whether this person may act there is the action's own check."""
        session = await self.session(request)
        if session is None:
            return self.refused_page(login_required())
        environment: str | None = None
        try:
            form = await self.form(request, session.secret)
            environment = self.environments.pick(session.login, form.get("env"))
        except NotegateError as exc:
            await self.run(self.record_action, environment, session.login, tool, f"refused:{exc.rule}")
            return self.refused_page(exc, session)
        return session, environment, form

    async def session(self, request: Request) -> WebSession | None:
        raw = request.cookies.get(self.cookies.session_name)
        return await self.run(self.sessions.current, raw, now=self.clock()) if raw else None

    def pre_secret(self, request: Request) -> str | None:
        return parse_secret(request.cookies.get(self.cookies.pre_name), PRE_PREFIX)

    def page(self, name: str, status: int = 200, *, csp: str | None = None, **values: Any) -> HTMLResponse:
        values.setdefault("nav_current", NAV_OF.get(name))
        html = self.env.get_template(name).render(**values)
        headers = {"content-security-policy": csp} if csp else None
        return HTMLResponse(html, status_code=status, headers=headers)

    def owner_page(self, name: str, session: WebSession, environment: str, **values: Any) -> HTMLResponse:
        """A page of an owner's area (audit, connections, status, members, LiveSync, tools): the session, its CSRF
        token, the environment shown and the environments this person owns (the picker), then the page's own."""
        return self.page(
            name,
            session=session,
            csrf=session.csrf,
            env=environment,
            owned=self.environments.owned(session.login),
            **values,
        )

    def refused_page(self, exc: NotegateError, session: WebSession | None = None) -> HTMLResponse:
        return self.page("refused.html", http_status(exc.rule), rule=exc.rule, text=exc.explain(), session=session)

    @staticmethod
    def refused_json(exc: NotegateError) -> JSONResponse:
        return JSONResponse({"error": exc.explain(), "rule": exc.rule}, status_code=http_status(exc.rule))

    def with_pre_cookie(self, request: Request, render: Callable[[str], Response]) -> Response:
        """Render with the browser's pre-session secret, minting one (and its cookie) if it has none."""
        secret = self.pre_secret(request)
        fresh = secret is None
        secret = secret or mint_secret(PRE_PREFIX)
        response = render(secret)
        if fresh:
            response.headers.append(
                "set-cookie", self.cookies.header(self.cookies.pre_name, secret, PRE_SESSION_SECONDS)
            )
        return response

    def login_redirect(self, request: Request) -> RedirectResponse:
        target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
        return RedirectResponse(f"/login?next={quote(target, safe='')}", status_code=303)

    async def own_passkey_options(self, session: WebSession) -> dict[str, Any]:
        """Options for a passkey assertion bound to this session (a step-up, an elevation's approval)."""
        return await self.run(self.passkeys.authentication_options, binding=session.secret, now=self.clock())

    async def own_assertion(self, session: WebSession, credential: object) -> Any:
        """Verify an assertion bound to this session (user verification required, the authenticator's own
        rules raised as they are) and that it is this session's person's passkey: the record, or
        ``[passkey-invalid]``."""
        record = await self.run(
            self.passkeys.authenticate, binding=session.secret, credential=credential, now=self.clock()
        )
        if record.login != session.login:
            raise NotegateError("this passkey belongs to another person than this session's", rule="passkey-invalid")
        return record

    async def json_body(self, request: Request, binding: str | None) -> dict[str, Any]:
        """A JSON POST from the console's own script: Origin, CSRF header, then at most 64 KiB of JSON."""
        check_origin(request.headers.get("origin"), request.headers.get("sec-fetch-site"), self.origin)
        check_csrf(binding, request.headers.get("x-csrf-token"))
        body = await bounded_body(request)
        try:
            data = json.loads(body)
        except ValueError:
            data = None
        if not isinstance(data, dict):
            raise NotegateError("the request is not a JSON object", rule="web-bad-request")
        return data

    async def form(self, request: Request, binding: str | None, *, limit: int = MAX_JSON_BYTES) -> dict[str, str]:
        """A form POST: Origin, then the CSRF field. ``limit`` bounds the body (a note editor's form is larger)."""
        check_origin(request.headers.get("origin"), request.headers.get("sec-fetch-site"), self.origin)
        body = await bounded_body(request, limit)
        try:
            pairs = parse_qsl(body.decode("ascii"), keep_blank_values=True, max_num_fields=MAX_FORM_FIELDS)
        except (UnicodeDecodeError, ValueError):
            raise NotegateError("the form is not one of this console's", rule="web-bad-request") from None
        values = dict(pairs)
        check_csrf(binding, values.get("csrf"))
        return values

    def open_session(self, response: Response, login: str, passkey_id: str) -> None:
        session = self.sessions.open(login=login, passkey_id=passkey_id, now=self.clock())
        max_age = int(session.expires_at - self.clock())
        response.headers.append("set-cookie", self.cookies.header(self.cookies.session_name, session.secret, max_age))

    def audit(self, tool: str, login: str | None, outcome: str) -> None:
        self.state.audit(
            now=self.clock(),
            environment=None,
            login=login,
            client="web-console",
            client_class="person",
            tier=None,
            session=None,
            tool=tool,
            path=None,
            outcome=outcome,
        )

    # -- pages
    async def login_page(self, request: Request) -> Response:
        if await self.session(request) is not None:
            return RedirectResponse(parse_next(request.query_params.get("next")) or "/", status_code=303)
        # A login lands on what is waiting (the home page's counts), unless it was on its way somewhere.
        after = parse_next(request.query_params.get("next")) or "/"
        return self.with_pre_cookie(
            request,
            lambda secret: self.page(
                "login.html",
                csp=provider_csp(self.services.runtime.config.oidc.values()),
                csrf=csrf_token(secret),
                next=after,
                session=None,
                providers=list(self.services.runtime.config.oidc.values()),  # [oidc.NAME]: docs/how-to/members.md
            ),
        )

    async def login_options(self, request: Request) -> Response:
        binding = self.pre_secret(request)
        try:
            await self.json_body(request, binding)
            assert binding is not None  # check_csrf refused a browser without one
            options = await self.run(self.passkeys.authentication_options, binding=binding, now=self.clock())
        except NotegateError as exc:
            return self.refused_json(exc)
        return JSONResponse(options)

    async def login_verify(self, request: Request) -> Response:
        binding = self.pre_secret(request)
        try:
            data = await self.json_body(request, binding)
            assert binding is not None
            record = await self.run(
                self.passkeys.authenticate, binding=binding, credential=data.get("credential"), now=self.clock()
            )
        except NotegateError as exc:
            await self.run(self.audit, "web:login", None, f"refused:{exc.rule}")
            return self.refused_json(exc)
        response = JSONResponse({"redirect": parse_next(data.get("next")) or "/"})
        await self.run(self.open_session, response, record.login, record.id)
        await self.run(self.audit, "web:login", record.login, f"ok:{record.id}")
        return response

    async def logout(self, request: Request) -> Response:
        session = await self.session(request)
        try:
            await self.form(request, session.secret if session else None)
        except NotegateError as exc:
            return self.refused_page(exc, session)
        await self.run(self.sessions.close, request.cookies.get(self.cookies.session_name))
        response = RedirectResponse("/login", status_code=303)
        response.headers.append("set-cookie", self.cookies.clear(self.cookies.session_name))
        return response

    # -- enrolment through a one-time link
    async def enrol_page(self, request: Request) -> Response:
        token = request.path_params["token"]
        try:
            login = await self.run(check_enrol_link, self.state, token, now=self.clock())
        except NotegateError as exc:
            return self.refused_page(exc)
        return self.with_pre_cookie(
            request,
            lambda secret: self.page(
                "enroll.html", csrf=csrf_token(secret), login=login, base=f"/enroll/{token}", session=None
            ),
        )

    async def enrol_options(self, request: Request) -> Response:
        binding = self.pre_secret(request)
        try:
            await self.json_body(request, binding)
            assert binding is not None
            options = await self.run(
                self.passkeys.enrol_options,
                enrol_token=request.path_params["token"],
                binding=binding,
                now=self.clock(),
            )
        except NotegateError as exc:
            return self.refused_json(exc)
        return JSONResponse(options)

    async def enrol_verify(self, request: Request) -> Response:
        binding = self.pre_secret(request)
        try:
            data = await self.json_body(request, binding)
            assert binding is not None
            record = await self.run(
                self.passkeys.enrol,
                enrol_token=request.path_params["token"],
                binding=binding,
                credential=data.get("credential"),
                name=data.get("name"),
                now=self.clock(),
            )
        except NotegateError as exc:
            await self.run(self.audit, "web:enrol", None, f"refused:{exc.rule}")
            return self.refused_json(exc)
        response = JSONResponse({"redirect": "/passkeys"})
        await self.run(self.open_session, response, record.login, record.id)
        await self.run(self.audit, "web:enrol", record.login, f"ok:{record.id}")
        return response

    # -- the logged-in passkeys page
    async def passkeys_page(self, request: Request) -> Response:
        session = await self.session(request)
        if session is None:
            return self.login_redirect(request)
        rows = await self.run(list_passkeys, self.state, session.login)
        policy = self.services.runtime.policy
        fresh = decide_console_action(policy, "passkey-add", step_up_age=self.clock() - session.created_at)
        providers = list(self.services.runtime.config.oidc.values())
        linked = await self.run(self.state.oidc_identities, session.login)
        return self.page(
            "passkeys.html",
            csp=provider_csp(providers),
            providers=providers,
            identities=[r["provider"] for r in linked if r["revoked_at"] is None],
            session=session,
            csrf=session.csrf,
            passkeys=[r for r in rows if r.revoked_at is None],
            current=session.passkey_id,
            fresh=fresh.allowed,
        )

    async def add_options(self, request: Request) -> Response:
        session = await self.session(request)
        try:
            if session is None:
                raise login_required()
            await self.json_body(request, session.secret)
            options = await self.run(
                self.passkeys.registration_options, login=session.login, binding=session.secret, now=self.clock()
            )
        except NotegateError as exc:
            return self.refused_json(exc)
        return JSONResponse(options)

    async def add_verify(self, request: Request) -> Response:
        session = await self.session(request)
        try:
            if session is None:
                raise login_required()
            data = await self.json_body(request, session.secret)
            record = await self.run(
                self.passkeys.register,
                login=session.login,
                binding=session.secret,
                credential=data.get("credential"),
                name=data.get("name"),
                now=self.clock(),
            )
        except NotegateError as exc:
            return self.refused_json(exc)
        await self.run(self.audit, "web:passkey-add", session.login, f"ok:{record.id}")
        return JSONResponse({"redirect": "/passkeys", "id": record.id})

    async def revoke(self, request: Request) -> Response:
        session = await self.session(request)
        if session is None:
            return self.refused_page(login_required())
        passkey_id = request.path_params["passkey_id"]
        try:
            await self.form(request, session.secret)
            live = [r for r in await self.run(list_passkeys, self.state, session.login) if r.revoked_at is None]
            if not any(r.id == passkey_id for r in live):
                raise NotegateError("you have no such passkey", rule="passkey-unknown")
            if len(live) == 1:
                raise NotegateError("this is your only passkey: revoking it would lock you out", rule="passkey-last")
            await self.run(revoke_passkey, self.state, passkey_id, now=self.clock(), login=session.login)
        except NotegateError as exc:
            return self.refused_page(exc, session)
        await self.run(self.audit, "web:passkey-revoke", session.login, f"ok:{passkey_id}")
        if passkey_id == session.passkey_id:  # its sessions, this one included, ended with it
            return RedirectResponse("/login", status_code=303)
        return RedirectResponse("/passkeys", status_code=303)
