"""The owner's Tools pages: the catalog, the mounts of the environment (create, remove), each mount's
credentials (a write-only field, and "verify against a copy you hold"), its held tool listings (shown as a
diff, approved with a fresh passkey check) and its audit.

Every action is a POST behind the step-up gate (``tools-*`` rows of ``notegate.policy.console``), carries the
session's CSRF token and leaves one audit row (tool ``web:tools-*``, never a credential's value). A credential
typed here goes to :class:`~notegate.tools.sealing.CredentialSealer` and is never shown again, not even on the
answer to the POST that stored it: this process holds no key that opens it. The catalog is read-only here:
pinning a package installs software on the host, which stays the operator's (``notegate tools catalog``).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote, urlencode, urlsplit

from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response

from notegate.auth.websession import WebSession
from notegate.doors.web.console import Console, login_required
from notegate.doors.web.notes_pages import diff_lines
from notegate.errors import NotegateError
from notegate.tools.admin import ToolsAdmin
from notegate.tools.health import ToolsHealth
from notegate.tools.oauth_names import CALLBACK_PATH, CLIENT_DOCUMENT_PATH, CLIENT_NAME, MAX_FIELD_CHARS

NO_STORE = {"cache-control": "no-store"}
#: How many audit rows of one mount its page shows (newest last).
AUDIT_ROWS = 100


class ToolsPages:
    def __init__(self, console: Console, health: ToolsHealth | None) -> None:
        self.console = console
        self.admin = ToolsAdmin(console.state)
        self.health = health

    async def _status(self, environment: str) -> dict[str, Any]:
        if self.health is None:
            return {"status": "unconfigured", "upstreams": {}}
        return await self.health.of(environment)

    def _render(self, name: str, session: WebSession, environment: str, **values: Any) -> Response:
        response = self.console.owner_page(name, session, environment, **values)
        response.headers.update(NO_STORE)
        return response

    # -- GET /tools
    async def show(self, request: Request) -> Response:
        console = self.console
        session = await console.session(request)
        if session is None:
            return console.login_redirect(request)
        try:
            environment = console.environments.pick(session.login, request.query_params.get("env"))
            mounts = await console.run(self.admin.mounts, environment)
            catalog = await console.run(console.state.catalog_entries)
            held = await console.run(lambda: {m["name"]: len(console.state.pending_tools(m["name"])) for m in mounts})
        except NotegateError as exc:
            return console.refused_page(exc, session)
        status = await self._status(environment)
        return self._render(
            "tools.html",
            session,
            environment,
            mounts=mounts,
            catalog=catalog,
            held=held,
            tools=status,
            done=request.query_params.get("done", "")[:40],
        )

    # -- GET /tools/mounts/{mount}
    async def mount_page(self, request: Request) -> Response:
        console = self.console
        session = await console.session(request)
        if session is None:
            return console.login_redirect(request)
        name = request.path_params["mount"][:40]
        try:
            environment = console.environments.pick(session.login, request.query_params.get("env"))
            mount = await console.run(self.admin.mount, environment, name)
            held = await console.run(self.admin.held, environment, name)
            calls = await console.run(console.state.tool_calls, name, AUDIT_ROWS)
            entries = await console.run(console.state.catalog_entries)
        except NotegateError as exc:
            return console.refused_page(exc, session)
        remote = next(
            (str(e["package"]) for e in entries if e["name"] == mount["catalog"] and e["kind"] == "remote"), ""
        )
        status = await self._status(environment)
        return self._render(
            "tools_mount.html",
            session,
            environment,
            mount=mount,
            held=[(h, diff_lines(h.diff)) for h in held],
            shown=" ".join(f"{h.tool}@{h.digest}" for h in held),
            calls=calls,
            upstream=status["upstreams"].get(name),
            tools_status=status["status"],
            done=request.query_params.get("done", "")[:40],
            verified=request.query_params.get("verified", "")[:10],
            remote=remote,
        )

    # -- the POSTs
    async def _act(self, request: Request, tool: str, act) -> tuple[WebSession, str, Any] | Response:
        done = await self.console.owner_form(request, tool)
        if isinstance(done, Response):
            return done
        session, environment, form = done
        console = self.console
        try:
            result = await act(session, environment, form)
        except NotegateError as exc:
            await console.run(console.record_action, environment, session.login, tool, f"refused:{exc.rule}")
            return console.refused_page(exc, session)
        return session, environment, result

    def _back(self, environment: str, mount: str | None = None, **query: str) -> RedirectResponse:
        where = f"/tools/mounts/{quote(mount, safe='')}" if mount else "/tools"
        return RedirectResponse(f"{where}?{urlencode({'env': environment, **query})}", 303)

    async def create(self, request: Request) -> Response:
        console = self.console

        async def act(session: WebSession, environment: str, form: dict[str, str]) -> str:
            row = await console.run(
                lambda: self.admin.create_mount(
                    name=form.get("name", "").strip(),
                    catalog=form.get("catalog", "").strip(),
                    account=form.get("account", "").strip(),
                    environment=environment,
                    variables=form.get("variables", ""),
                    write_tools=form.get("write_tools", ""),
                    now=console.clock(),
                )
            )
            await console.run(
                console.record_action, environment, session.login, "web:tools-mount-create", f"ok:{row['name']}"
            )
            return str(row["name"])

        done = await self._act(request, "web:tools-mount-create", act)
        if isinstance(done, Response):
            return done
        _session, environment, name = done
        return self._back(environment, name, done="mount-created")

    async def remove(self, request: Request) -> Response:
        console = self.console
        name = request.path_params["mount"][:40]

        async def act(session: WebSession, environment: str, form: dict[str, str]) -> None:
            await console.run(self.admin.remove_mount, environment, name, console.clock())
            await console.run(console.record_action, environment, session.login, "web:tools-mount-remove", f"ok:{name}")

        done = await self._act(request, "web:tools-mount-remove", act)
        if isinstance(done, Response):
            return done
        return self._back(done[1], done="mount-removed")

    async def credential(self, request: Request) -> Response:
        console = self.console
        name = request.path_params["mount"][:40]

        async def act(session: WebSession, environment: str, form: dict[str, str]) -> None:
            variable = form.get("variable", "")[:64]
            value = form.get("value", "")
            await console.run(self.admin.store_credential, environment, name, variable, value, console.clock())
            # the variable's name only: the value was sealed and is gone from this process
            await console.run(
                console.record_action, environment, session.login, "web:tools-credential-set", f"ok:{name}:{variable}"
            )

        done = await self._act(request, "web:tools-credential-set", act)
        if isinstance(done, Response):
            return done
        return self._back(done[1], name, done="credential-sealed")

    async def verify(self, request: Request) -> Response:
        console = self.console
        name = request.path_params["mount"][:40]

        async def act(session: WebSession, environment: str, form: dict[str, str]) -> str:
            mount = await console.run(self.admin.mount, environment, name)
            variable = form.get("variable", "")[:64]
            if variable not in mount["variables"]:
                raise NotegateError(f"the mount '{name}' declares no variable {variable}", rule="tools-mount-invalid")
            if self.health is None:
                raise NotegateError("no tools gateway is configured", rule="tools-unavailable")
            match = await self.health.verify(environment, name, variable, form.get("value", ""), session.login)
            if match is None:
                raise NotegateError("the tools process did not answer", rule="tools-unavailable")
            outcome = "match" if match else "mismatch"
            await console.run(
                console.record_action,
                environment,
                session.login,
                "web:tools-credential-verify",
                f"ok:{name}:{variable}:{outcome}",
            )
            return outcome

        done = await self._act(request, "web:tools-credential-verify", act)
        if isinstance(done, Response):
            return done
        return self._back(done[1], name, verified=done[2])

    async def approve(self, request: Request) -> Response:
        console = self.console
        name = request.path_params["mount"][:40]

        async def act(session: WebSession, environment: str, form: dict[str, str]) -> int:
            count = await console.run(
                self.admin.approve, environment, name, form.get("shown", "")[:20000], session.login, console.clock()
            )
            await console.run(
                console.record_action, environment, session.login, "web:tools-approve", f"ok:{name}:{count}"
            )
            return count

        done = await self._act(request, "web:tools-approve", act)
        if isinstance(done, Response):
            return done
        return self._back(done[1], name, done="approved")


class ToolsOAuthPages:
    """Starting a remote mount's upstream OAuth grant, the authorization server's return, and the gateway's
    Client ID Metadata Document. The OAuth itself (discovery, registration, PKCE, the code's exchange, the
    sealed tokens) happens in the tools process; this process relays the owner's browser and never holds
    a token of the upstream."""

    def __init__(self, pages: ToolsPages) -> None:
        self.pages = pages
        self.console = pages.console

    def _document_url(self) -> str | None:
        """The Client ID Metadata Document's URL: only an https address can be a client id (CIMD)."""
        return f"{self.console.origin}{CLIENT_DOCUMENT_PATH}" if self.console.origin.startswith("https://") else None

    async def start(self, request: Request) -> Response:
        console, pages = self.console, self.pages
        name = request.path_params["mount"][:40]

        async def act(session: WebSession, environment: str, form: dict[str, str]) -> tuple[str, str]:
            mount = await console.run(pages.admin.mount, environment, name)
            if pages.health is None:
                raise NotegateError("no tools gateway is configured", rule="tools-unavailable")
            url = await pages.health.oauth_start(
                environment, name, session.login, f"{console.origin}{CALLBACK_PATH}", self._document_url()
            )
            await console.run(console.record_action, environment, session.login, "web:tools-oauth-start", f"ok:{name}")
            return url, str(mount["account"])

        done = await pages._act(request, "web:tools-oauth-start", act)
        if isinstance(done, Response):
            return done
        session, environment, (url, account) = done
        # A link, not a redirect: the page's CSP allows forms to post to this origin only, and a browser applies
        # form-action to a redirect that answers a form; the owner also sees where they are sent.
        return pages._render(
            "tools_connect.html",
            session,
            environment,
            mount=name,
            account=account,
            url=url,
            host=urlsplit(url).netloc,
        )

    async def callback(self, request: Request) -> Response:
        """The authorization server sends the owner's browser back here: relay it to the tools process once the
        signed-in person is found to own the mount's environment."""
        console, pages = self.console, self.pages
        session = await console.session(request)
        if session is None:
            return console.refused_page(login_required())
        query = request.query_params
        state = query.get("state", "")[:MAX_FIELD_CHARS]
        environment: str | None = None
        try:
            if pages.health is None:
                raise NotegateError("no tools gateway is configured", rule="tools-unavailable")
            mount, environment = await pages.health.oauth_pending(state, session.login)
            console.environments.pick(session.login, environment)  # the owner of that environment only
            if query.get("error") or not query.get("code"):
                raise NotegateError(
                    f"the remote server answered {query.get('error', 'no code')[:40]!r}", rule="tools-oauth-failed"
                )
            fields = {"state": state, "code": query["code"][:MAX_FIELD_CHARS]}
            if query.get("iss"):
                fields["iss"] = query["iss"][:MAX_FIELD_CHARS]
            await pages.health.oauth_finish(environment, mount, session.login, fields)
        except NotegateError as exc:
            await console.run(
                console.record_action, environment, session.login, "web:tools-oauth-grant", f"refused:{exc.rule}"
            )
            return console.refused_page(exc, session)
        await console.run(console.record_action, environment, session.login, "web:tools-oauth-grant", f"ok:{mount}")
        return pages._back(environment, mount, done="oauth-granted")

    async def document(self, request: Request) -> Response:
        """The gateway's Client ID Metadata Document (what a CIMD-capable authorization server fetches)."""
        url = self._document_url()
        if url is None:
            return JSONResponse({"error": "served on an https address only"}, status_code=404)
        return JSONResponse(
            {
                "client_id": url,
                "client_name": CLIENT_NAME,
                "redirect_uris": [f"{self.console.origin}{CALLBACK_PATH}"],
                "grant_types": ["authorization_code", "refresh_token"],
                "response_types": ["code"],
                "token_endpoint_auth_method": "none",
            },
            headers={"cache-control": "public, max-age=3600"},
        )
