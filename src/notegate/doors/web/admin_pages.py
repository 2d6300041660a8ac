"""The owner's audit, connections and status pages.

Every page and action needs a passkey session whose person owns the environment asked for
(``?env=NAME``, or the form's ``env``; by default the first environment the person owns), decided by
``policy.decide_console_owner``. Every POST carries the session's CSRF token (``Console.form``) and leaves an
audit row (tool ``web:<action>``, connector ``web:console``), refused or not. What the pages show is produced
by code: ids, names, counts, times, rule names, note paths; never a note's contents or a token, except the one
token just created, on the answer to the POST that created it (``Cache-Control: no-store``), never again.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from notegate.auth.websession import WebSession
from notegate.doors.web.admin_query import MAX_PAGE, parse_audit_query
from notegate.doors.web.console import Console, login_required
from notegate.errors import NotegateError
from notegate.policy import CONVERSATION_TIERS, ClientClass
from notegate.services.admin import AdminService

#: The token classes and tiers the create form offers (the CLI's own choices).
TIER_CHOICES = ("", *CONVERSATION_TIERS)
NO_STORE = {"cache-control": "no-store"}


class AdminPages:
    def __init__(self, console: Console, admin: AdminService) -> None:
        self.console = console
        self.admin = admin

    # -- who is asking, for which environment
    def _gate(self, session: WebSession, asked: str | None) -> str:
        return self.console.environments.pick(session.login, asked)

    async def _page_session(self, request: Request) -> WebSession | Response:
        session = await self.console.session(request)
        return self.console.login_redirect(request) if session is None else session

    # -- /audit
    async def audit(self, request: Request) -> Response:
        session = await self._page_session(request)
        if not isinstance(session, WebSession):
            return session
        try:
            query = parse_audit_query(request.query_params.multi_items(), now=self.console.clock())
            environment = self._gate(session, query.env)
            rows = await self.console.run(self.admin.audit, environment, query)
        except NotegateError as exc:
            return self.console.refused_page(exc, session)
        older = None
        if len(rows) > query.limit:
            rows = rows[: query.limit]
            older = "/audit?" + urlencode(query.link(env=environment, before=str(rows[-1]["id"])))
        newest = "/audit?" + urlencode(query.link(env=environment, before=None)) if query.before else None
        return self.console.owner_page(
            "admin_audit.html",
            session,
            environment,
            rows=rows,
            query=dict(query.raw),
            older=older,
            newest=newest,
            max_page=MAX_PAGE,
        )

    # -- /connections
    async def connections(self, request: Request) -> Response:
        session = await self._page_session(request)
        if not isinstance(session, WebSession):
            return session
        try:
            environment = self._gate(session, request.query_params.get("env"))
            found = await self.console.run(self.admin.connections, environment)
        except NotegateError as exc:
            return self.console.refused_page(exc, session)
        return self.console.owner_page(
            "admin_connections.html",
            session,
            environment,
            c=found,
            classes=tuple(ClientClass),
            tiers=TIER_CHOICES,
            done=request.query_params.get("done", "")[:40],
        )

    async def _action(
        self, request: Request, tool: str, act: Callable[[WebSession, str, dict[str, str]], Any]
    ) -> tuple[WebSession, str, Any] | Response:
        """Session, form (Origin + CSRF), owner gate, then ``act``; audited either way."""
        session = await self.console.session(request)
        if session is None:
            return self.console.refused_page(login_required())
        environment: str | None = None
        try:
            form = await self.console.form(request, session.secret)
            environment = self._gate(session, form.get("env"))
            result = await self.console.run(act, session, environment, form)
        except NotegateError as exc:
            await self.console.run(self.admin.record, environment, session.login, tool, f"refused:{exc.rule}")
            return self.console.refused_page(exc, session)
        return session, environment, result

    async def create_token(self, request: Request) -> Response:
        def act(session: WebSession, environment: str, form: dict[str, str]):
            token, record = self.admin.create_token(
                environment,
                person=session.login,
                name=form.get("name", ""),
                client_class=form.get("class", ""),
                tier=form.get("tier", ""),
            )
            self.admin.record(environment, session.login, "web:token-create", f"ok:token:{record.id}")
            return token, record

        done = await self._action(request, "web:token-create", act)
        if isinstance(done, Response):
            return done
        session, environment, (token, record) = done
        response = self.console.owner_page("admin_token_created.html", session, environment, token=token, record=record)
        response.headers.update(NO_STORE)
        return response

    async def revoke_token(self, request: Request) -> Response:
        token_id = request.path_params["token_id"]

        def act(session: WebSession, environment: str, form: dict[str, str]):
            record = self.admin.revoke_token(environment, token_id)
            self.admin.record(environment, session.login, "web:token-revoke", f"ok:token:{record.id}")
            return record

        done = await self._action(request, "web:token-revoke", act)
        if isinstance(done, Response):
            return done
        _session, environment, _record = done
        return RedirectResponse(f"/connections?{urlencode({'env': environment, 'done': 'token-revoked'})}", 303)

    async def revoke_family(self, request: Request) -> Response:
        family_id = request.path_params["family_id"]

        def act(session: WebSession, environment: str, form: dict[str, str]):
            connector = self.admin.revoke_family(environment, family_id)
            self.admin.record(environment, session.login, "web:oauth-revoke", f"ok:{connector}")
            return connector

        done = await self._action(request, "web:oauth-revoke", act)
        if isinstance(done, Response):
            return done
        _session, environment, _connector = done
        return RedirectResponse(f"/connections?{urlencode({'env': environment, 'done': 'family-revoked'})}", 303)

    # -- /status
    async def status(self, request: Request) -> Response:
        session = await self._page_session(request)
        if not isinstance(session, WebSession):
            return session
        try:
            environment = self._gate(session, request.query_params.get("env"))
            status = await self.console.run(self.admin.status, environment)
        except NotegateError as exc:
            return self.console.refused_page(exc, session)
        return self.console.owner_page("admin_status.html", session, environment, report=status)
