"""The owner's LiveSync devices page: enrol an Obsidian device, see the devices, revoke one.

Owner only (the environment picker's ``console-not-owner``), and both POSTs need a fresh step-up
(``livesync-device-add``, ``livesync-device-revoke`` in :data:`notegate.policy.console.CONSOLE_ACTIONS`): a
device key is permanent access to every note the database holds, and cutting a device off is the owner's
word, not a stale cookie's. Enrolment is the CLI's own code (:func:`notegate.livesync.enrol.enrol_device`): the
same rules refuse the same things. The Setup URI (the device's private key sealed inside) and its passphrase
are shown once, on the answer to the POST (``Cache-Control: no-store``), beside a QR code of the URI drawn as
inline SVG on the server (segno): the phone scans it, no script or outside service sees it. The passphrase is
never in the QR code: a photo of the screen alone does not hand the key over. Every action leaves one audit
row (tool ``web:livesync-device-*``, the kid, never a key).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from markupsafe import Markup
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from notegate.auth.members import Membership
from notegate.auth.websession import WebSession
from notegate.doors.web.console import Console
from notegate.errors import NotegateError
from notegate.livesync.enrol import ALGORITHMS, device_url, enrol_device

NO_STORE = {"cache-control": "no-store"}


def qr_svg(text: str) -> Markup:
    """``text`` as a QR code, an inline ``<svg>`` (no XML declaration, no script, no outside reference).
    Error correction M, LiveSync's Setup URI (about 1 kB) fits in a version-30-ish symbol a phone reads."""
    import segno  # imported here: only an enrolment draws a code

    code = segno.make(text, error="m", micro=False, boost_error=False)
    # segno writes only its own elements and numbers (the text is encoded into the path, never written out)
    svg = code.svg_inline(scale=2, border=4, dark="#000", light="#fff", title="LiveSync Setup URI")
    return Markup(svg)  # noqa: S704


class LiveSyncPage:
    def __init__(self, console: Console, members: Membership) -> None:
        self.console = console
        self.members = members

    @property
    def config(self) -> Any:
        return self.console.services.runtime.config

    def settings(self) -> Any:
        if self.config.livesync is None:
            raise NotegateError("notegate.toml has no [livesync] table", rule="livesync-not-configured")
        return self.config.livesync

    def record(self, environment: str | None, person: str, tool: str, outcome: str) -> None:
        self.console.record_action(environment, person, tool, outcome)

    def _render(self, name: str, session: WebSession, environment: str, **values: Any) -> Response:
        return self.console.owner_page(name, session, environment, nav_current="members", **values)

    # -- /livesync
    async def show(self, request: Request) -> Response:
        console = self.console
        session = await console.session(request)
        if session is None:
            return console.login_redirect(request)
        try:
            environment = console.environments.pick(session.login, request.query_params.get("env"))
            settings = self.settings()
            devices = await console.run(console.state.livesync_devices, environment)
            persons = [self.config.environment(environment).owner, *self.members.members(environment)]
        except NotegateError as exc:
            return console.refused_page(exc, session)
        return self._render(
            "livesync.html",
            session,
            environment,
            devices=devices,
            persons=persons,
            algorithms=ALGORITHMS,
            url=device_url(settings),
            database=settings.database,
            done=request.query_params.get("done", "")[:40],
        )

    async def add(self, request: Request) -> Response:
        tool = "web:livesync-device-add"
        done = await self.console.owner_form(request, tool)
        if isinstance(done, Response):
            return done
        session, environment, form = done
        console = self.console
        algorithm = form.get("algorithm", "ES256")
        try:
            enrolled = await console.run(
                enrol_device,
                console.state,
                self.members,
                self.settings(),
                environment=environment,
                owner=self.config.environment(environment).owner,
                name=form.get("name", "").strip()[:64],
                person=form.get("person", "").strip()[:64] or None,
                algorithm=algorithm if algorithm in ALGORITHMS else ALGORITHMS[0],
                url=None,
                now=console.clock(),
            )
        except NotegateError as exc:
            await console.run(self.record, environment, session.login, tool, f"refused:{exc.rule}")
            return console.refused_page(exc, session)
        await console.run(self.record, environment, session.login, tool, f"ok:{enrolled.kid}:{enrolled.person}")
        response = self._render(
            "livesync_enrolled.html", session, environment, device=enrolled, qr=qr_svg(enrolled.setup_uri)
        )
        response.headers.update(NO_STORE)
        return response

    async def revoke(self, request: Request) -> Response:
        tool = "web:livesync-device-revoke"
        done = await self.console.owner_form(request, tool)
        if isinstance(done, Response):
            return done
        session, environment, _form = done
        console = self.console
        name = request.path_params["name"][:64]
        kids = await console.run(console.state.revoke_livesync_devices, environment, name, now=console.clock())
        if not kids:
            exc = NotegateError(f"no active device named {name} in {environment}", rule="livesync-device-not-found")
            await console.run(self.record, environment, session.login, tool, f"refused:{exc.rule}")
            return console.refused_page(exc, session)
        await console.run(self.record, environment, session.login, tool, f"ok:{','.join(kids)}")
        return RedirectResponse(f"/livesync?{urlencode({'env': environment, 'done': 'device-revoked'})}", 303)
