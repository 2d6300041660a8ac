"""The elevation approval page: the owner approves or denies one restricted session's request.

Why two steps: approving needs a user-verified passkey assertion at most ``elevation_assertion_seconds`` old
(a login cookie from hours ago proves nobody is at the keyboard). The page's passkey button runs a fresh
assertion against this person's web session (``/elevate/<id>/verify``); the server notes when it verified
it, and the Approve form then hands that time and its user-verification flag to the backend, which alone
decides (stale, unverified or wrong person: refused with its rule, and the page asks for a fresh one).
A noted assertion is spent by the first Approve, whatever the answer. Deny is always offered.

What it shows comes from :class:`~notegate.auth.grants.PendingElevation` only; it never sees the grant value.
The reason is the asking session's own words: autoescaped and marked as such.
"""

from __future__ import annotations

import hashlib
import time
from collections import OrderedDict
from collections.abc import Callable

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from notegate.auth.grants import ElevationBackend, PendingElevation
from notegate.auth.websession import WebSession
from notegate.doors.web.console import Console, login_required
from notegate.doors.web.headers import provider_csp
from notegate.errors import NotegateError

MAX_LINK_ID = 64
MAX_NOTED = 1024  # fresh assertions waiting for their Approve click, bounded


def _unknown() -> NotegateError:
    return NotegateError("this approval link is unknown, expired or already answered", rule="elevation-unknown")


def _when(at: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(at))


class ElevationPage:
    """``base`` is where this page lives (``/elevate`` by link id; the owner's elevations page mounts a second
    one by request id); ``gate``, if given, may refuse a signed-in person before anything is shown or done."""

    def __init__(
        self,
        console: Console,
        backend: ElevationBackend | None,
        *,
        base: str = "/elevate",
        gate: Callable[[WebSession, str], None] | None = None,
    ) -> None:
        self.console = console
        self.backend = backend
        self.base = base
        self.gate = gate
        # (hash of the web session secret, link id) -> the request this session approved (its result page)
        self._answered: OrderedDict[tuple[str, str], PendingElevation] = OrderedDict()

    @staticmethod
    def _key(session: WebSession, link_id: str) -> tuple[str, str]:
        return hashlib.sha256(session.secret.encode()).hexdigest(), link_id

    async def _pending(self, link_id: object) -> PendingElevation | None:
        if self.backend is None or not isinstance(link_id, str) or not 0 < len(link_id) <= MAX_LINK_ID:
            return None
        return await self.console.run(self.backend.pending, link_id, now=self.console.clock())

    def _render(self, session: WebSession, pending: PendingElevation, **extra: object) -> Response:
        providers = self._providers(session)
        return self.console.page(
            "elevate.html",
            extra.pop("status", 200),  # type: ignore[arg-type]
            csp=provider_csp(providers),
            session=session,
            csrf=session.csrf,
            pending=pending,
            asked=_when(pending.asked_at),
            expires=_when(pending.expires_at),
            base=self.base,
            providers=providers,
            **extra,
        )

    def _providers(self, session: WebSession) -> list[object]:
        """Providers this person has an account linked at: a fresh login there may approve too (oidc_pages)."""
        config = self.console.services.runtime.config
        linked = {r["provider"] for r in self.console.state.oidc_identities(session.login) if r["revoked_at"] is None}
        return [p for name, p in config.oidc.items() if name in linked]

    async def show(self, request: Request) -> Response:
        console = self.console
        session = await console.session(request)
        if session is None:
            return console.login_redirect(request)
        try:
            await self._gate(session, request.path_params["link_id"])
        except NotegateError as exc:
            return console.refused_page(exc, session)
        link_id = request.path_params["link_id"]
        approved = self._answered.pop(self._key(session, link_id), None)
        if approved is not None:  # the passkey check just approved it: show the outcome once
            return console.page("elevated.html", session=session, decision="approve", pending=approved)
        pending = await self._pending(link_id)
        if pending is None:
            return console.refused_page(_unknown(), session)
        return self._render(session, pending)

    async def _gate(self, session: WebSession, link_id: str) -> None:
        if self.gate is not None:
            await self.console.run(self.gate, session, link_id)

    async def options(self, request: Request) -> Response:
        console = self.console
        session = await console.session(request)
        try:
            if session is None:
                raise login_required()
            await console.json_body(request, session.secret)
            await self._gate(session, request.path_params["link_id"])
            if await self._pending(request.path_params["link_id"]) is None:
                raise _unknown()
            options = await console.own_passkey_options(session)
        except NotegateError as exc:
            return console.refused_json(exc)
        return JSONResponse(options)

    async def verify(self, request: Request) -> Response:
        """Verify a fresh assertion for this session and approve with it, in one action ("Approve with
        passkey": the check is the approval, so it can never be stale). Without UV the backend refuses."""
        console = self.console
        session = await console.session(request)
        link_id = request.path_params["link_id"]
        try:
            if session is None:
                raise login_required()
            data = await console.json_body(request, session.secret)
            await self._gate(session, link_id)
            pending = await self._pending(link_id)
            if pending is None or self.backend is None:
                raise _unknown()
            try:
                await console.own_assertion(session, data.get("credential"))
            except NotegateError as exc:
                if exc.rule != "passkey-user-verification":
                    raise
                # The assertion lacked user verification: the backend's own rule refuses (and audits it).
                await console.run(
                    self.backend.approve,
                    link_id,
                    person=session.login,
                    assertion_at=console.clock(),
                    user_verified=False,
                    now=console.clock(),
                )
                raise  # not reached: approve without UV always refuses
        except NotegateError as exc:
            await console.run(
                console.audit, "web:elevation-assertion", session.login if session else None, f"refused:{exc.rule}"
            )
            return console.refused_json(exc)
        key = self._key(session, link_id)
        now = console.clock()
        try:
            await console.run(
                self.backend.approve, link_id, person=session.login, assertion_at=now, user_verified=True, now=now
            )
        except NotegateError as exc:
            await console.run(console.audit, "web:elevation", session.login, f"refused:{exc.rule}")
            return console.refused_json(exc)
        await console.run(console.audit, "web:elevation-approve", session.login, f"ok:{pending.connector}")
        self._answered[key] = pending
        self._answered.move_to_end(key)
        while len(self._answered) > MAX_NOTED:
            self._answered.popitem(last=False)
        return JSONResponse({"redirect": f"{self.base}/{link_id}"})

    async def answer(self, request: Request) -> Response:
        console = self.console
        session = await console.session(request)
        if session is None:
            return console.refused_page(login_required())
        link_id = request.path_params["link_id"]
        pending: PendingElevation | None = None
        try:
            form = await console.form(request, session.secret)
            decision = form.get("decision")
            if decision not in ("approve", "deny"):
                raise NotegateError("the form named no decision", rule="web-bad-request")
            await self._gate(session, link_id)
            pending = await self._pending(link_id)
            if pending is None or self.backend is None:
                raise _unknown()
            now = console.clock()
            if decision == "approve":
                # An approval comes only with its passkey check (verify): a bare form post has none, so the
                # backend refuses it [elevation-assertion-unverified] and audits the attempt.
                await console.run(
                    self.backend.approve, link_id, person=session.login, assertion_at=None, user_verified=False, now=now
                )
            else:
                await console.run(self.backend.deny, link_id, person=session.login, now=now)
        except NotegateError as exc:
            await console.run(console.audit, "web:elevation", session.login, f"refused:{exc.rule}")
            if pending is not None and exc.rule != "elevation-unknown" and await self._pending(link_id) is not None:
                return self._render(session, pending, refusal=exc, status=403)
            return console.refused_page(exc, session)
        await console.run(console.audit, f"web:elevation-{decision}", session.login, f"ok:{pending.connector}")
        return console.page("elevated.html", session=session, decision=decision, pending=pending)
