"""The web console: passkey login for persons, their passkeys page, the OAuth consent page and the
elevation approval page.

``web_routes`` is all ``doors/http.py`` needs: it returns the console's routes, each wrapped in the
security-headers middleware, for the one ASGI app.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

from starlette.convertors import PathConvertor, register_url_convertor
from starlette.requests import Request
from starlette.responses import FileResponse, Response
from starlette.routing import Route, request_response

from notegate.auth.consent import ConsentBackend
from notegate.auth.grants import ElevationBackend, Grants, owners_in
from notegate.auth.oidc import RelyingParty
from notegate.auth.passkeys import Passkeys, relying_party
from notegate.auth.websession import CookiePolicy, is_loopback
from notegate.doors.web.admin_pages import AdminPages
from notegate.doors.web.consent_page import ConsentPage
from notegate.doors.web.console import Console
from notegate.doors.web.elevation_page import ElevationPage
from notegate.doors.web.headers import SecurityHeaders
from notegate.doors.web.livesync_page import LiveSyncPage
from notegate.doors.web.members_page import MembersPage
from notegate.doors.web.notes_pages import NotesPages
from notegate.doors.web.oidc_pages import OidcPages
from notegate.doors.web.review_page import OwnerPages
from notegate.doors.web.stepup import StepUpGate
from notegate.doors.web.tools_pages import ToolsOAuthPages, ToolsPages
from notegate.network import DEFAULT_PORT, LOOPBACK_URL_HOSTS
from notegate.services.admin import AdminService
from notegate.services.callers import Callers
from notegate.services.container import Services
from notegate.services.runtime import Runtime
from notegate.tools.health import ToolsHealth


class NotePathConvertor(PathConvertor):
    """Like ``{path:notepath}``, but any character, newlines too: Starlette's ``.*`` stops at a newline, so a
    path holding ``%0A`` matched no route and got a bare 404. Here it reaches the notes service's path
    parser, which refuses it by name like any other bad path."""

    regex = r"[\s\S]*"


register_url_convertor("notepath", NotePathConvertor())

STATIC = Path(__file__).parent / "static"
STATIC_FILES = {"passkeys.js": "text/javascript", "console.css": "text/css", "notes.css": "text/css"}


def _version() -> str:
    from importlib.metadata import version

    return version("notegate")


def console_hosts(runtime: Runtime, port: int) -> frozenset[str]:
    """The Host values the console answers to: loopback names on its port, the public host, allowed_hosts."""
    hosts = {f"{name}:{port}" for name in LOOPBACK_URL_HOSTS}
    if runtime.config.public_url:
        parts = urlsplit(runtime.config.public_url)
        hosts.add(parts.netloc.lower())
        if parts.port is None:
            hosts.add(f"{parts.hostname}:{443 if parts.scheme == 'https' else 80}")
    hosts.update(h.lower() for h in runtime.config.allowed_hosts)
    return frozenset(hosts)


def web_routes(
    runtime: Runtime,
    *,
    consent: ConsentBackend | None = None,
    elevation: ElevationBackend | None = None,
    port: int = DEFAULT_PORT,
    services: Services | None = None,
    callers: Callers | None = None,
) -> list[Route]:
    """The console's routes. ``consent`` is the authorization server's side of the consent page; without
    one, the page answers "no such request" to every request id. ``elevation`` should be the very
    :class:`Grants` the MCP door's resolver uses (one per app); without one, one is built over the runtime.
    ``services`` should be the app's one :class:`Services` (the owner's pages act through it, with the
    same rules as the MCP tools); without one, one is built over the runtime. ``callers`` should be the app's
    one :class:`Callers` (the console's callers resolved as every other door's); without one, one is built
    over the runtime's membership."""
    services = services if services is not None else Services.build(runtime)
    if callers is None:
        callers = Callers(members=runtime.members.check_caller, clock=runtime.clock)
    rp = relying_party(runtime.config.public_url, port)
    console = Console(
        state=runtime.state,
        clock=runtime.clock,
        passkeys=Passkeys(runtime.state, rp, runtime.members.persons),
        cookies=CookiePolicy(secure=not is_loopback(runtime.config.public_url)),
        origin=rp.origin,
        services=services,
        callers=callers,
    )
    page = ConsentPage(console, consent)
    owner_of = owners_in(lambda: runtime.config)
    if elevation is None:
        elevation = Grants(runtime.state, runtime.policy, owner_of=owner_of)
    elevate = ElevationPage(console, elevation)
    grants = elevation if isinstance(elevation, Grants) else Grants(runtime.state, runtime.policy, owner_of=owner_of)
    owner = OwnerPages(console, grants)
    admin = AdminPages(console, AdminService(runtime, version=_version))
    notes = NotesPages(console)
    members = MembersPage(console, runtime.members)
    livesync = LiveSyncPage(console, runtime.members)
    rp_oidc = RelyingParty(runtime.state, lambda: runtime.config.oidc, redirect_uri=f"{rp.origin}/oidc/callback")
    oidc = OidcPages(console, rp_oidc, runtime.members, grants)
    hosts = console_hosts(runtime, port)
    step_up = StepUpGate(console)
    tools = ToolsPages(console, ToolsHealth.of_runtime(runtime))
    tools_oauth = ToolsOAuthPages(tools)

    async def static(request: Request) -> Response:
        name = request.path_params["name"]
        if name not in STATIC_FILES:
            return Response("not found", status_code=404, media_type="text/plain")
        return FileResponse(STATIC / name, media_type=STATIC_FILES[name])

    table = [
        ("/", owner.home, ["GET"]),
        ("/login", console.login_page, ["GET"]),
        ("/login/options", console.login_options, ["POST"]),
        ("/login/verify", console.login_verify, ["POST"]),
        ("/logout", console.logout, ["POST"]),
        ("/enroll/{token}", console.enrol_page, ["GET"]),
        ("/enroll/{token}/options", console.enrol_options, ["POST"]),
        ("/enroll/{token}/verify", console.enrol_verify, ["POST"]),
        ("/step-up/options", step_up.options, ["POST"]),
        ("/step-up/verify", step_up.verify, ["POST"]),
        ("/passkeys", console.passkeys_page, ["GET"]),
        ("/passkeys/options", console.add_options, ["POST"]),
        ("/passkeys/verify", console.add_verify, ["POST"]),
        ("/passkeys/{passkey_id}/revoke", console.revoke, ["POST"]),
        ("/oauth/consent", page.show, ["GET"]),
        ("/oauth/consent", page.answer, ["POST"]),
        ("/elevate/{link_id}", elevate.show, ["GET"]),
        ("/elevate/{link_id}", elevate.answer, ["POST"]),
        ("/elevate/{link_id}/options", elevate.options, ["POST"]),
        ("/elevate/{link_id}/verify", elevate.verify, ["POST"]),
        ("/inbox", owner.inbox, ["GET"]),
        ("/inbox/{action}", owner.inbox_action, ["POST"]),
        ("/elevations", owner.elevations, ["GET"]),
        ("/elevations/grants/{grant_id}/revoke", owner.revoke, ["POST"]),
        ("/elevations/{link_id}", owner.requests.show, ["GET"]),
        ("/elevations/{link_id}", owner.requests.answer, ["POST"]),
        ("/elevations/{link_id}/options", owner.requests.options, ["POST"]),
        ("/elevations/{link_id}/verify", owner.requests.verify, ["POST"]),
        ("/audit", admin.audit, ["GET"]),
        ("/connections", admin.connections, ["GET"]),
        ("/connections/tokens", admin.create_token, ["POST"]),
        ("/connections/tokens/{token_id}/revoke", admin.revoke_token, ["POST"]),
        ("/connections/oauth/{family_id}/revoke", admin.revoke_family, ["POST"]),
        ("/status", admin.status, ["GET"]),
        ("/notes", notes.browse, ["GET"]),
        ("/notes/{path:notepath}", notes.browse, ["GET"]),
        ("/search", notes.search, ["GET"]),
        ("/deleted", notes.deleted, ["GET"]),
        ("/files/{path:notepath}", notes.file, ["GET"]),
        ("/history/{path:notepath}", notes.history, ["GET"]),
        ("/restore/{path:notepath}", notes.restore, ["POST"]),
        ("/edit/{path:notepath}", notes.edit_page, ["GET"]),
        ("/edit/{path:notepath}", notes.edit, ["POST"]),
        ("/members", members.show, ["GET"]),
        ("/members/invite", members.invite, ["POST"]),
        ("/members/{login}/remove", members.remove, ["POST"]),
        ("/livesync", livesync.show, ["GET"]),
        ("/livesync/devices", livesync.add, ["POST"]),
        ("/livesync/devices/{name}/revoke", livesync.revoke, ["POST"]),
        ("/join/{token}", members.join_page, ["GET"]),
        ("/join/{token}/options", members.join_options, ["POST"]),
        ("/join/{token}/verify", members.join_verify, ["POST"]),
        ("/oidc/{provider}/start", oidc.start, ["POST"]),
        ("/tools", tools.show, ["GET"]),
        ("/tools/mounts", tools.create, ["POST"]),
        ("/tools/mounts/{mount}", tools.mount_page, ["GET"]),
        ("/tools/mounts/{mount}/remove", tools.remove, ["POST"]),
        ("/tools/mounts/{mount}/credential", tools.credential, ["POST"]),
        ("/tools/mounts/{mount}/check", tools.verify, ["POST"]),
        ("/tools/mounts/{mount}/approve", tools.approve, ["POST"]),
        ("/tools/mounts/{mount}/oauth", tools_oauth.start, ["POST"]),
        ("/tools/oauth/callback", tools_oauth.callback, ["GET"]),
        ("/tools/oauth/client.json", tools_oauth.document, ["GET"]),
        ("/oidc/callback", oidc.callback, ["GET"]),
        ("/static/web/{name}", static, ["GET"]),
    ]
    # Every POST passes the step-up gate (notegate.policy.console): a route missing from POST_ACTIONS fails here.
    table = [
        (
            path,
            step_up.guard(path, handler, json=path.endswith(("/options", "/verify"))) if "POST" in methods else handler,
            methods,
        )
        for path, handler, methods in table
    ]
    return [
        Route(path, SecurityHeaders(request_response(handler), allowed_hosts=hosts), methods=methods)
        for path, handler, methods in table
    ]
