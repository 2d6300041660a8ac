"""The owner's inbox review page and elevations page.

Theory of operation: every page and action asks :func:`notegate.policy.decide_console_owner` for the
environment it names (a member, or an environment that is not there, is refused ``console-not-owner``), then
acts through the app's one :class:`~notegate.services.container.Services` as the fixed connector login
``web:console`` of the signed-in person, so the MCP tools' rules apply unchanged: an author's own connector
cannot promote its item, the floor holds what it holds, a version that changed since the page showed it is
refused ``stale-revision``. Every state-changing action is a form POST with the CSRF token and leaves an audit
row. What an item says is untrusted: it reaches the page only through autoescaped templates, inside ``<pre>``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from notegate.auth.grants import ElevationBackend, Grant, Grants, PendingElevation
from notegate.auth.websession import WebSession
from notegate.doors.web.console import Console, login_required
from notegate.doors.web.elevation_page import ElevationPage, _when
from notegate.doors.web.visible import visible
from notegate.errors import NotegateError, http_status, remedy_in
from notegate.policy import Caller
from notegate.services.notes import unified_diff

MAX_REASON_CHARS = 500
#: The most of an item's text the review page shows (the rest is counted): enough for any handoff.
MAX_ITEM_CHARS = 20_000


@dataclass(frozen=True)
class Row:
    """One inbox item as the page shows it: the service's item, and the diff promotion would make."""

    item: Any
    target: str | None
    diff: str | None
    refusal: NotegateError | None  # why no diff (no route, a malformed target, …)
    text: str = ""  # the item's own text, shown fenced as untrusted data (the first MAX_ITEM_CHARS)
    cut: int = 0  # characters of the text not shown


@dataclass(frozen=True)
class Waiting:
    """What waits for the owner in one environment: counts only, never an item's text."""

    environment: str
    inbox: int  # items waiting for a decision
    held: int
    tasks: int  # open task notes (a refused fetch, dropped contract values, …)
    elevations: int  # pending elevation requests


class OwnerPages:
    """The owner's pages of one app: shared gate, inbox review, elevation requests and grants."""

    def __init__(self, console: Console, grants: Grants) -> None:
        self.console = console
        self.grants = grants
        self.requests = ElevationPage(console, _ById(grants), base="/elevations", gate=self._request_gate)
        console.env.filters["visible"] = visible  # untrusted text: see doors/web/visible.py

    # -- the gate
    @property
    def config(self) -> Any:
        return self.console.services.runtime.config

    def environment(self, session: WebSession, requested: str | None) -> str:
        """The environment a page works in, if ``session``'s person owns it; else ``console-not-owner``."""
        return self.console.environments.pick(session.login, requested)

    def owned(self, session: WebSession) -> list[str]:
        return self.console.environments.owned(session.login)

    def caller(self, session: WebSession, environment: str) -> Caller:
        return self.console.caller(session.login, environment)

    def _request_gate(self, session: WebSession, request_id: str) -> None:
        live, environment = self.grants.environment_of_request(request_id, now=self.console.clock())
        if live:  # an unknown id is the backend's own "elevation-unknown"
            self.environment(session, environment)

    # -- home: what is waiting, per environment the person owns
    def _waiting(self, session: WebSession) -> list[Waiting]:
        out = []
        for environment in self.owned(session):
            listed = self.console.services.inbox.list_inbox(self.caller(session, environment), environment)
            pending, _active = self._elevations(environment)
            out.append(
                Waiting(
                    environment=environment,
                    inbox=listed.waiting,
                    held=sum(1 for i in listed.items if i.kind != "task" and i.held),
                    tasks=sum(1 for i in listed.items if i.kind == "task"),
                    elevations=len(pending),
                )
            )
        return out

    async def home(self, request: Request) -> Response:
        """``/``: a signed-in person's start page (counts produced by the services, per environment they
        own); anyone else goes to the login."""
        console = self.console
        session = await console.session(request)
        if session is None:
            return RedirectResponse("/login", status_code=303)
        try:
            waiting = await console.run(self._waiting, session)
        except NotegateError as exc:
            return console.refused_page(exc, session)
        return console.page("home.html", session=session, csrf=session.csrf, waiting=waiting)

    # -- inbox
    def _rows(self, caller: Caller, environment: str) -> tuple[list[Row], list[Any], list[Any]]:
        inbox = self.console.services.inbox
        listed = inbox.list_inbox(caller, environment)
        waiting: list[Row] = []
        held: list[Any] = []
        tasks: list[Any] = []
        for item in listed.items:
            if item.kind == "task":
                tasks.append(item)
                continue
            if item.held:
                held.append(item)
                continue
            text = self._text(caller, item.path, environment)
            shown = {"text": text[:MAX_ITEM_CHARS], "cut": max(0, len(text) - MAX_ITEM_CHARS)}
            try:
                preview = inbox.preview_promotion(caller, item.path, item.version, environment)
            except NotegateError as exc:
                waiting.append(Row(item, None, None, exc, **shown))
                continue
            diff = unified_diff(preview.before, preview.after, preview.target, "now", "after promotion")
            waiting.append(Row(item, preview.target, diff, None, **shown))
        return waiting, held, tasks

    def _text(self, caller: Caller, path: str, environment: str) -> str:
        """What the item says, so the owner never decides blind (the floor's reasons alone are not the item)."""
        try:
            return self.console.services.notes.read_note(caller, path, environment=environment).text
        except NotegateError:
            return ""

    async def inbox(self, request: Request) -> Response:
        console = self.console
        session = await console.session(request)
        if session is None:
            return console.login_redirect(request)
        try:
            environment = self.environment(session, request.query_params.get("env"))
        except NotegateError as exc:
            return console.refused_page(exc, session)
        return await self._inbox_page(session, environment, done=request.query_params.get("done"))

    async def _inbox_page(
        self, session: WebSession, environment: str, *, done: str | None = None, refusal: NotegateError | None = None
    ) -> Response:
        """The inbox page; with ``refusal``, the refused action's message inline at its top, in console terms."""
        console = self.console
        try:
            caller = await console.run(self.caller, session, environment)  # a membership lookup: off the loop
            waiting, held, tasks = await console.run(self._rows, caller, environment)
        except NotegateError as exc:
            return console.refused_page(exc, session)
        shown = None
        if refusal is not None:
            remedy = remedy_in("console", refusal.rule)
            shown = refusal.explain() if remedy is None else f"Refused [{refusal.rule}]: {refusal.message} {remedy}"
        return console.page(
            "inbox.html",
            http_status(refusal.rule) if refusal is not None else 200,
            session=session,
            csrf=session.csrf,
            environment=environment,
            environments=self.owned(session),
            waiting=waiting,
            held=held,
            tasks=tasks,
            done=done,
            refusal=refusal,
            refusal_text=shown,
        )

    async def inbox_action(self, request: Request) -> Response:
        console = self.console
        action = request.path_params["action"]
        session = await console.session(request)
        try:
            if session is None:
                raise login_required()
            form = await console.form(request, session.secret)
            environment = self.environment(session, form.get("env"))
            item, version = form.get("item", ""), form.get("version", "")
            if action not in ("promote", "hold", "delete") or not item or not version:
                raise NotegateError("the form named no item, version or action", rule="web-bad-request")
            caller = await console.run(self.caller, session, environment)
            services = console.services
            if action == "promote":
                result = await console.run(services.inbox.promote_inbox, caller, item, version, environment)
                commit = result.commit
            elif action == "hold":
                reason = " ".join(form.get("reason", "").split())[:MAX_REASON_CHARS]
                if not reason:
                    raise NotegateError("a hold needs a reason", rule="bad-argument", remedy="Say why you hold it.")
                result = await console.run(services.inbox.hold_inbox, caller, item, version, reason, environment)
                commit = result.commit
            else:
                result = await console.run(services.inbox.delete_inbox, caller, item, version, environment)
                commit = result.commit
        except NotegateError as exc:
            await console.run(
                console.audit, f"web:inbox-{action}", session.login if session else None, f"refused:{exc.rule}"
            )
            if session is None or exc.rule.startswith(("csrf-", "login-", "console-", "web-")):
                return console.refused_page(exc, session)
            return await self._inbox_page(session, environment, refusal=exc)  # on the same page, inline
        await console.run(console.audit, f"web:inbox-{action}", session.login, f"ok:{(commit or '-')[:12]}")
        return RedirectResponse(f"/inbox?env={quote(environment, safe='')}&done={action}", status_code=303)

    # -- elevations
    def _elevations(self, environment: str) -> tuple[list[PendingElevation], list[Grant]]:
        now = self.console.clock()
        default = self.config.default_environment
        pending = self.grants.open_requests(environment, default=default, now=now)
        active = [
            g
            for g in self.grants.list()
            if (g.environment or default) == environment and g.revoked_at is None and g.expires_at > now
        ]
        return pending, active

    async def elevations(self, request: Request) -> Response:
        console = self.console
        session = await console.session(request)
        if session is None:
            return console.login_redirect(request)
        try:
            environment = self.environment(session, request.query_params.get("env"))
            pending, active = await console.run(self._elevations, environment)
        except NotegateError as exc:
            return console.refused_page(exc, session)
        return console.page(
            "elevations.html",
            session=session,
            csrf=session.csrf,
            environment=environment,
            environments=self.owned(session),
            pending=[(p, _when(p.expires_at)) for p in pending],
            grants=[(g, _when(g.expires_at)) for g in active],
            done=request.query_params.get("done"),
        )

    async def revoke(self, request: Request) -> Response:
        console = self.console
        session = await console.session(request)
        grant_id = request.path_params["grant_id"]
        try:
            if session is None:
                raise login_required()
            form = await console.form(request, session.secret)
            environment = self.environment(session, form.get("env"))
            _pending, active = await console.run(self._elevations, environment)
            if not any(g.grant_id == grant_id for g in active):
                raise NotegateError("no such live grant in this environment", rule="grant-unknown")
            await console.run(self.grants.revoke, grant_id, person=session.login, now=console.clock())
        except NotegateError as exc:
            await console.run(
                console.audit, "web:grant-revoke", session.login if session else None, f"refused:{exc.rule}"
            )
            return console.refused_page(exc, session)
        await console.run(console.audit, "web:grant-revoke", session.login, f"ok:{grant_id}")
        return RedirectResponse(f"/elevations?env={quote(environment, safe='')}&done=revoke", status_code=303)


class _ById(ElevationBackend):
    """The approval page's backend keyed by a request's public id instead of its link id."""

    def __init__(self, grants: Grants) -> None:
        self.grants = grants

    def pending(self, link_id: str, *, now: float) -> PendingElevation | None:
        return self.grants.pending_by_id(link_id, now=now)

    def approve(
        self, link_id: str, *, person: str, assertion_at: float | None, user_verified: bool, now: float
    ) -> Grant:
        return self.grants.approve_by_id(
            link_id, person=person, assertion_at=assertion_at, user_verified=user_verified, now=now
        )

    def deny(self, link_id: str, *, person: str, now: float) -> None:
        self.grants.deny_by_id(link_id, person=person, now=now)
