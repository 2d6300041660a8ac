"""The consent page: a logged-in person approves or denies one pending OAuth request.

What it shows comes from :class:`~notegate.auth.consent.PendingConsent` only; it never sees a code or a
token (the backend keeps them). The client's name is chosen by the client, so it is always marked
unverified; the redirect host is what decides where the code goes, so it is shown most prominently. The
form may submit only to this server and to the request's own redirect origin (the CSP's form-action),
because a browser applies form-action to the redirect that follows the POST.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from notegate.auth.consent import ConsentBackend, PendingConsent
from notegate.doors.web.console import Console, login_required
from notegate.doors.web.headers import csp, csp_source
from notegate.errors import NotegateError

MAX_REQUEST_ID = 256


def _no_such_request() -> NotegateError:
    return NotegateError("no such request: it is unknown, expired or already answered", rule="consent-unknown")


class ConsentPage:
    def __init__(self, console: Console, backend: ConsentBackend | None) -> None:
        self.console = console
        self.backend = backend

    async def _pending(self, request_id: object) -> PendingConsent | None:
        if self.backend is None or not isinstance(request_id, str) or not 0 < len(request_id) <= MAX_REQUEST_ID:
            return None
        return await self.console.run(self.backend.pending, request_id, now=self.console.clock())

    async def show(self, request: Request) -> Response:
        console = self.console
        session = await console.session(request)
        if session is None:
            return console.login_redirect(request)
        pending = await self._pending(request.query_params.get("request"))
        if pending is None:
            return console.refused_page(_no_such_request(), session)
        target = csp_source(pending.redirect_uri)
        return console.page(
            "consent.html",
            csp=csp([target] if target else []),
            session=session,
            csrf=session.csrf,
            pending=pending,
        )

    async def answer(self, request: Request) -> Response:
        console = self.console
        session = await console.session(request)
        if session is None:
            return console.refused_page(login_required())
        try:
            form = await console.form(request, session.secret)
            decision = form.get("decision")
            if decision not in ("approve", "deny"):
                raise NotegateError("the form named no decision", rule="web-bad-request")
            pending = await self._pending(form.get("request"))
            if pending is None or self.backend is None:
                raise _no_such_request()
            now = console.clock()
            if decision == "approve":
                url = await console.run(self.backend.approve, pending.request_id, person=session.login, now=now)
            else:
                url = await console.run(self.backend.deny, pending.request_id, now=now)
        except NotegateError as exc:
            return console.refused_page(exc, session)
        await console.run(console.audit, f"web:consent-{decision}", session.login, f"ok:{pending.client_id}")
        return RedirectResponse(url, status_code=303)
