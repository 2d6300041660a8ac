"""The owner's members page (invite, see, remove) and the invited person's join page.

Every owner action is a POST behind the step-up gate (``member-invite`` and ``member-remove`` need a fresh
passkey or a provider login that proved a second factor: they grant or take trust for a whole person), carries
the session's CSRF token, and leaves one audit row in the environment (tool ``web:member-*``), refused or not.
An invitation's link is shown once, on the answer to the POST that made it (``Cache-Control: no-store``); the
server keeps only its hash. The join page needs no session: the invitation's secret is the authority, and it
is spent only by a passkey that verified or a provider account that was linked (auth/members.py).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response

from notegate.auth.members import Membership
from notegate.auth.websession import csrf_token
from notegate.doors.web.console import Console
from notegate.doors.web.headers import provider_csp
from notegate.errors import NotegateError

NO_STORE = {"cache-control": "no-store"}


class MembersPage:
    def __init__(self, console: Console, members: Membership) -> None:
        self.console = console
        self.members = members

    @property
    def config(self) -> Any:
        return self.console.services.runtime.config

    def record(self, environment: str | None, person: str | None, tool: str, outcome: str) -> None:
        self.console.record_action(environment, person, tool, outcome)

    def providers_for(self, environment: str) -> list[Any]:
        return [p for p in self.config.oidc.values() if p.serves(environment)]

    # -- /members
    async def show(self, request: Request) -> Response:
        console = self.console
        session = await console.session(request)
        if session is None:
            return console.login_redirect(request)
        try:
            environment = console.environments.pick(session.login, request.query_params.get("env"))
            views = await console.run(self.members.overview, environment)
            invites = await console.run(console.state.invites, environment)
        except NotegateError as exc:
            return console.refused_page(exc, session)
        return self.console.owner_page(
            "members.html",
            session,
            environment,
            members=views,
            invites=invites,
            now=console.clock(),
            done=request.query_params.get("done", "")[:40],
        )

    async def invite(self, request: Request) -> Response:
        done = await self.console.owner_form(request, "web:member-invite")
        if isinstance(done, Response):
            return done
        session, environment, form = done
        console = self.console
        try:
            invitation = await console.run(
                self.members.invite, environment, form.get("login", "").strip(), by=session.login, now=console.clock()
            )
        except NotegateError as exc:
            await console.run(self.record, environment, session.login, "web:member-invite", f"refused:{exc.rule}")
            return console.refused_page(exc, session)
        await console.run(
            self.record,
            environment,
            session.login,
            "web:member-invite",
            f"ok:{invitation.invite_id}:{invitation.login}",
        )
        response = self.console.owner_page(
            "member_invited.html",
            session,
            environment,
            invitation=invitation,
            link=f"{console.origin}/join/{invitation.token}",
        )
        response.headers.update(NO_STORE)
        return response

    async def remove(self, request: Request) -> Response:
        done = await self.console.owner_form(request, "web:member-remove")
        if isinstance(done, Response):
            return done
        session, environment, _form = done
        console = self.console
        login = request.path_params["login"][:64]
        try:
            ended = await console.run(self.members.remove, environment, login, by=session.login, now=console.clock())
        except NotegateError as exc:
            await console.run(self.record, environment, session.login, "web:member-remove", f"refused:{exc.rule}")
            return console.refused_page(exc, session)
        # One audit row names everything that ended (ids and counts, never a secret).
        summary = ";".join(f"{kind}={','.join(ids) if ids else '-'}" for kind, ids in sorted(ended.items()))
        await console.run(self.record, environment, session.login, "web:member-remove", f"ok:{login}:{summary}"[:900])
        return RedirectResponse(f"/members?{urlencode({'env': environment, 'done': 'member-removed'})}", 303)

    # -- /join/{token}: the invited person
    async def join_page(self, request: Request) -> Response:
        console = self.console
        token = request.path_params["token"]
        try:
            row = await console.run(self.members.check_invite, token, now=console.clock())
        except NotegateError as exc:
            return console.refused_page(exc)
        return console.with_pre_cookie(
            request,
            lambda secret: console.page(
                "join.html",
                csp=provider_csp(self.providers_for(row["environment"])),
                csrf=csrf_token(secret),
                login=row["login"],
                environment=row["environment"],
                token=token,
                providers=self.providers_for(row["environment"]),
                session=None,
            ),
        )

    async def join_options(self, request: Request) -> Response:
        console = self.console
        binding = console.pre_secret(request)
        try:
            await console.json_body(request, binding)
            assert binding is not None
            row = await console.run(self.members.check_invite, request.path_params["token"], now=console.clock())
            options = await console.run(
                console.passkeys.invited_options, login=row["login"], binding=binding, now=console.clock()
            )
        except NotegateError as exc:
            return console.refused_json(exc)
        return JSONResponse(options)

    async def join_verify(self, request: Request) -> Response:
        console = self.console
        binding = console.pre_secret(request)
        token = request.path_params["token"]
        row = None
        try:
            data = await console.json_body(request, binding)
            assert binding is not None
            now = console.clock()
            row = await console.run(self.members.check_invite, token, now=now)
            record = await console.run(
                console.passkeys.enrol_invited,
                login=row["login"],
                binding=binding,
                credential=data.get("credential"),
                name=data.get("name"),
                now=now,
                spend=lambda: self.members.accept(token, how="passkey", now=now),
            )
        except NotegateError as exc:
            environment = row["environment"] if row is not None else None
            await console.run(self.record, environment, None, "web:member-join", f"refused:{exc.rule}")
            return console.refused_json(exc)
        response = JSONResponse({"redirect": "/passkeys"})
        await console.run(console.open_session, response, record.login, record.id)
        await console.run(self.record, row["environment"], record.login, "web:member-join", f"ok:passkey:{record.id}")
        return response
