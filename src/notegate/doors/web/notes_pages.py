"""The owner's notes pages: browse folders, search, read a note rendered, its attachments, its history with
the diff of each revision, restore a revision (or a deleted note) and edit a note, each write in two steps.

Every page is the environment owner's only (:func:`notegate.policy.decide_console_owner`), and acts only
through the app's one :class:`~notegate.services.container.Services` as the fixed connector login
``web:console`` (:func:`notegate.policy.fixed_caller`), so MCP's visibility, path, content and write rules
apply unchanged; that caller previews every write (:func:`notegate.policy.two_step_reason`), so a
confirmation commits only the exact change a preview showed.  Every POST carries the session's CSRF token
and is audited (:meth:`Console.audit`).  A note's text reaches a page only escaped (a textarea, a diff)
or through :mod:`notegate.doors.web.render`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote, urlencode

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from notegate.auth.websession import WebSession
from notegate.doors.web.bases_view import render_base
from notegate.doors.web.canvas_view import render_canvas
from notegate.doors.web.console import Console, login_required
from notegate.doors.web.render import BaseEmbedder, note_url, render_note
from notegate.errors import NoSuchNote, NotegateError, StaleRevision, http_status
from notegate.policy import Caller, attachment_media_type, sees_private
from notegate.services.basefacts import BaseFacts
from notegate.vault.links import LinkTargets

LIST_PAGE = 1000
#: How many deleted notes the deleted page lists (newest deletion first).
DELETED_PAGE = 100
#: Files served inline (shown in an <img>); anything else downloads, never rendered on this origin.
INLINE_PREFIX = "image/"
#: The CSP of a served file: no script, no plugin, no frame, a sandbox whatever the browser sniffs.
FILE_CSP = "default-src 'none'; img-src 'self'; style-src 'none'; sandbox; frame-ancestors 'none'; base-uri 'none'"


#: The audit's tool name of each POST route (by its first path segment).
POST_TOOLS = {"edit": "web:edit", "restore": "web:restore"}


def _first(request: Request) -> str:
    return request.url.path.lstrip("/").split("/", 1)[0]


@dataclass(frozen=True)
class Owner:
    session: WebSession
    caller: Caller
    environment: str
    #: ``?env=NAME`` when the page was asked for an environment, else "": every link and form keeps it.
    envq: str = ""

    @property
    def enva(self) -> str:
        return "&" + self.envq[1:] if self.envq else ""


def diff_lines(diff: str) -> list[tuple[str, str]]:
    """A unified diff as (class, line) pairs for an escaped, coloured <pre>."""
    out = []
    for line in diff.splitlines():
        if line.startswith(("+++", "---", "@@")):
            kind = "meta"
        elif line.startswith("+"):
            kind = "add"
        elif line.startswith("-"):
            kind = "del"
        else:
            kind = "same"
        out.append((kind, line))
    return out


def _crumbs(path: str, query: str = "") -> list[tuple[str, str]]:
    """(name, url) of each folder above ``path`` and the path itself (``query``: the page's ``?env=``)."""
    parts = [p for p in path.split("/") if p]
    return [(part, note_url("/".join(parts[: i + 1])) + query) for i, part in enumerate(parts)]


class NotesPages:
    def __init__(self, console: Console) -> None:
        self.console = console
        self.services = console.services
        self.runtime = console.services.runtime
        self._targets: tuple[tuple[str | None, str | None, bool], LinkTargets] | None = None
        self.base_facts = BaseFacts(self.services.notes)

    # -- the gate of every page
    async def owner(self, request: Request) -> Owner | Response:
        """The signed-in owner and their console caller, or the response that sends anyone else away."""
        session = await self.console.session(request)
        if session is None:
            if request.method == "GET":
                return self.console.login_redirect(request)
            await self.run(
                self.console.audit, POST_TOOLS.get(_first(request), "web:notes"), None, "refused:login-required"
            )
            return self.refused(login_required(), None)
        asked = request.query_params.get("env")
        try:
            environment = self.console.environments.pick(session.login, asked)
        except NotegateError as exc:
            if request.method != "GET":
                tool = POST_TOOLS.get(_first(request), "web:notes")
                await self.run(self.console.audit, tool, session.login, f"refused:{exc.rule}")
            return self.refused(exc, session)
        try:
            caller = await self.run(self.console.caller, session.login, environment)
        except NotegateError as exc:
            return self.refused(exc, session)
        return Owner(session, caller, environment, "?" + urlencode({"env": environment}) if asked else "")

    def refused(self, exc: NotegateError, session: WebSession | None) -> Response:
        return self.console.refused_page(exc, session)

    def page(self, name: str, who: Owner, **values: Any) -> Response:
        return self.console.page(
            name,
            session=who.session,
            csrf=who.session.csrf,
            environment=who.environment,
            env=who.environment,
            owned=self.console.environments.owned(who.session.login),
            envq=who.envq,
            enva=who.enva,
            **values,
        )

    async def run(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        return await self.console.run(fn, *args, **kwargs)

    def targets(self, caller: Caller) -> LinkTargets:
        """Every path the caller can see, indexed for resolving links; rebuilt only when the tip moves."""
        commit, paths = self.services.notes.visible_paths(caller)
        key = (caller.environment, commit, sees_private(caller))
        cached = self._targets
        if cached is not None and cached[0] == key:
            return cached[1]
        targets = LinkTargets(paths)
        self._targets = (key, targets)
        return targets

    # -- reads
    async def browse(self, request: Request) -> Response:
        who = await self.owner(request)
        if isinstance(who, Response):
            return who
        path = request.path_params.get("path", "").strip("/")
        if path.endswith(".md"):
            return await self.read(who, path, request.query_params.get("committed", "")[:12])
        if path.endswith(".canvas"):
            return await self.canvas(who, path)
        if path.endswith(".base"):
            return await self.base(who, path)
        try:
            listing = await self.run(
                self.services.notes.list_notes,
                who.caller,
                path,
                recursive=False,
                limit=LIST_PAGE,
                cursor=request.query_params.get("after") or None,
            )
        except NotegateError as exc:
            return self.refused(exc, who.session)
        return self.page(
            "notes.html", who, folder=listing.folder, listing=listing, crumbs=_crumbs(path, who.envq), query=""
        )

    async def read(self, who: Owner, path: str, committed: str = "") -> Response:
        notes = self.services.notes
        try:
            note = await self.run(notes.read_note, who.caller, path)
        except NoSuchNote as exc:
            try:  # a deleted note still has its history (and a restore)
                await self.run(notes.note_history, who.caller, path, 1)
            except NotegateError:
                return self.refused(exc, who.session)
            return self.page(
                "note.html",
                who,
                path=path,
                note=None,
                html="",
                crumbs=_crumbs(path, who.envq),
                deleted=True,
                committed="",
            )
        except NotegateError as exc:
            return self.refused(exc, who.session)
        targets = await self.run(self.targets, who.caller)
        policy = self.runtime.policy

        def embedded(path: str) -> str | None:
            """A note embedded in this one, read as the owner reads it (its own visibility and audit)."""
            try:
                return notes.read_note(who.caller, path).text
            except NotegateError:
                return None

        html = await self.run(
            render_note,
            note.text,
            note.path,
            targets,
            lambda p: attachment_media_type(policy, p),
            query=who.envq,
            read=embedded,
            bases=self._bases(who),
        )
        return self.page(
            "note.html",
            who,
            path=note.path,
            note=note,
            html=html,
            crumbs=_crumbs(path, who.envq),
            deleted=False,
            committed=committed if committed.isalnum() else "",
        )

    async def canvas(self, who: Owner, path: str) -> Response:
        """A canvas drawn as a canvas (doors/web/canvas_view.py), with its download beside it."""
        try:
            read = await self.run(self.services.notes.read_attachment, who.caller, path)
        except NotegateError as exc:
            return self.refused(exc, who.session)
        targets = await self.run(self.targets, who.caller)
        policy = self.runtime.policy
        html = await self.run(
            render_canvas, read.data, read.path, targets, lambda p: attachment_media_type(policy, p), query=who.envq
        )
        return self.page("canvas.html", who, path=read.path, html=html, crumbs=_crumbs(path, who.envq))

    async def base(self, who: Owner, path: str) -> Response:
        """A Bases file shown as its views (doors/web/bases_view.py), with its download beside it."""
        try:
            read = await self.run(self.services.notes.read_attachment, who.caller, path)
        except NotegateError as exc:
            return self.refused(exc, who.session)
        text = read.data.decode("utf-8", "replace")
        html = await self.run(self._bases(who), read.path, "", text, read.path, False)
        return self.page("bases.html", who, path=read.path, html=html, crumbs=_crumbs(path, who.envq))

    def _bases(self, who: Owner) -> BaseEmbedder:
        """How this page shows a base: its text (read as the owner reads it, when embedded by path), over
        the facts of every file the owner sees (:class:`BaseFacts`), at most ``[server] base_rows`` rows a
        view, ``this`` the embedding note (or the base itself on its own page)."""
        notes, policy, config = self.services.notes, self.runtime.policy, self.runtime.config

        def show(path: str | None, view: str, text: str | None, this_path: str, embedded: bool = True) -> str:
            if text is None and path is not None:
                try:
                    text = notes.read_attachment(who.caller, path).data.decode("utf-8", "replace")
                except NotegateError:
                    return '<p class="hint base-unreadable">This base cannot be read.</p>'
            facts = self.base_facts.facts(who.caller)
            return render_base(
                text or "",
                path or this_path,
                facts.files,
                facts.targets,
                lambda p: attachment_media_type(policy, p),
                now=datetime.fromtimestamp(self.runtime.clock(), UTC).replace(tzinfo=None),
                max_rows=config.base_rows,
                query=who.envq,
                view=view or None,
                this=facts.by_path.get(this_path),
                only_one=embedded,
            )

        return show

    async def search(self, request: Request) -> Response:
        who = await self.owner(request)
        if isinstance(who, Response):
            return who
        query = request.query_params.get("q", "")[:500]
        inbox = request.query_params.get("inbox") == "1"
        result = None
        if query.strip():
            try:
                result = await self.run(
                    self.services.notes.search_notes, who.caller, query, limit=50, include_inbox=inbox
                )
            except NotegateError as exc:
                return self.refused(exc, who.session)
        return self.page("search.html", who, query=query, result=result, inbox=inbox)

    async def deleted(self, request: Request) -> Response:
        """Notes deleted from the vault (from its history, newest first), each linked to its history, where
        a past version is restored in two steps."""
        who = await self.owner(request)
        if isinstance(who, Response):
            return who
        try:
            found = await self.run(self.services.notes.deleted_notes, who.caller, DELETED_PAGE)
        except NotegateError as exc:
            return self.refused(exc, who.session)
        return self.page("deleted.html", who, deleted=found, crumbs=[], limit=DELETED_PAGE)

    async def file(self, request: Request) -> Response:
        """An attachment's bytes as the policy types it: images inline (for <img>), anything else a
        download; nosniff and a sandboxing CSP always (the security-headers middleware adds the rest)."""
        who = await self.owner(request)
        if isinstance(who, Response):
            return who
        try:
            read = await self.run(self.services.notes.read_attachment, who.caller, request.path_params["path"])
        except NotegateError as exc:
            return self.refused(exc, who.session)
        name = read.path.rsplit("/", 1)[-1]
        how = "inline" if read.media_type.startswith(INLINE_PREFIX) else "attachment"
        headers = {
            "content-disposition": f"{how}; filename*=UTF-8''{quote(name, safe='')}",
            "content-security-policy": FILE_CSP,
            "x-content-type-options": "nosniff",
        }
        return Response(read.data, media_type=read.media_type, headers=headers)

    async def history(self, request: Request) -> Response:
        who = await self.owner(request)
        if isinstance(who, Response):
            return who
        path = request.path_params["path"]
        notes = self.services.notes
        try:
            revisions = await self.run(notes.note_revisions, who.caller, path, 50)
            current = await self.run(self._current, who.caller, path)
        except NotegateError as exc:
            return self.refused(exc, who.session)
        shown = [(r.change, r.revision, diff_lines(r.diff)) for r in revisions]
        return self.page("history.html", who, path=path, revisions=shown, base=current, crumbs=_crumbs(path, who.envq))

    def _current(self, caller: Caller, path: str) -> str:
        """The note's revision now ("absent" once deleted): the base a restore starts from."""
        try:
            return self.services.notes.read_note(caller, path).revision
        except NoSuchNote:
            return "absent"

    # -- two-step writes
    async def restore(self, request: Request) -> Response:
        """Step 1 (step=preview): the diff from the note now to the chosen revision, and a confirm form.
        Step 2 (step=confirm): the same restore, confirmed; it commits only what step 1 showed."""
        who = await self.owner(request)
        if isinstance(who, Response):
            return who
        path = request.path_params["path"]
        try:
            form = await self.console.form(request, who.session.secret)
        except NotegateError as exc:
            await self.run(self.console.audit, "web:restore", who.session.login, f"refused:{exc.rule}")
            return self.refused(exc, who.session)
        confirm = form.get("step") == "confirm"
        commit, base = form.get("commit", ""), form.get("base", "")
        try:
            result = await self.run(self.services.notes.restore_note, who.caller, path, commit, base, confirmed=confirm)
        except NotegateError as exc:
            await self.run(self.console.audit, "web:restore", who.session.login, f"refused:{exc.rule}")
            return self._refused_write(exc, who, path)
        return await self._written(who, "web:restore", result, path, {"commit": commit, "base": base}, "/restore/")

    async def edit_page(self, request: Request) -> Response:
        who = await self.owner(request)
        if isinstance(who, Response):
            return who
        path = request.path_params["path"]
        try:
            note = await self.run(self.services.notes.read_note, who.caller, path)
            text, base = note.text, note.revision
        except NoSuchNote:
            text, base = "", "absent"  # a new note
        except NotegateError as exc:
            return self.refused(exc, who.session)
        return self.page("edit.html", who, path=path, text=text, base=base, crumbs=_crumbs(path, who.envq))

    async def edit(self, request: Request) -> Response:
        """Step 1 (step=preview): the textarea's text against the base, as a diff; step 2 (step=confirm)
        commits that exact text, refused if the text or the note changed since the preview."""
        who = await self.owner(request)
        if isinstance(who, Response):
            return who
        path = request.path_params["path"]
        # A note's text, percent-encoded: up to 3 bytes a byte (non-ASCII), plus the other fields.
        limit = 3 * self.runtime.policy.max_note_bytes + (16 << 10)
        try:
            form = await self.console.form(request, who.session.secret, limit=limit)
        except NotegateError as exc:
            await self.run(self.console.audit, "web:edit", who.session.login, f"refused:{exc.rule}")
            return self.refused(exc, who.session)
        confirm = form.get("step") == "confirm"
        content = form.get("content", "").replace("\r\n", "\n")  # a textarea sends CRLF line ends
        base = form.get("base", "")
        try:
            result = await self.run(self.services.notes.write_note, who.caller, path, content, base, confirmed=confirm)
        except NotegateError as exc:
            await self.run(self.console.audit, "web:edit", who.session.login, f"refused:{exc.rule}")
            return self._refused_write(exc, who, path)
        return await self._written(who, "web:edit", result, path, {"content": content, "base": base}, "/edit/")

    def _refused_write(self, exc: NotegateError, who: Owner, path: str) -> Response:
        if isinstance(exc, StaleRevision):  # show what changed, and start again from the note now
            response = self.page(
                "stale.html", who, path=path, rule=exc.rule, text=exc.explain(), diff=diff_lines(exc.diff)
            )
            response.status_code = http_status(exc.rule)
            return response
        return self.refused(exc, who.session)

    async def _written(
        self, who: Owner, tool: str, result: Any, path: str, fields: dict[str, str], action: str
    ) -> Response:
        login = who.session.login
        if result.status == "preview":
            await self.run(self.console.audit, tool, login, "preview")
            return self.page(
                "preview.html",
                who,
                path=path,
                diff=diff_lines(result.diff),
                fields=fields,
                action=action + quote(path, safe="/") + who.envq,
                what="Restore" if tool == "web:restore" else "Save",
                crumbs=_crumbs(path, who.envq),
            )
        await self.run(self.console.audit, tool, login, f"ok:{result.commit[:12]}")
        return RedirectResponse(f"{note_url(path)}?committed={result.commit[:12]}{who.enva}", status_code=303)
