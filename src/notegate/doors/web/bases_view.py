"""An Obsidian Bases file (``.base``) shown as its views: tables, cards and lists of the files it selects (pure).

Why server-rendered HTML: the console's CSP allows no script, and a view is a table of text and links.  The
base is read and planned by :mod:`notegate.vault.bases` (bounded YAML, a safe expression evaluator, a work
budget); this module only turns the planned rows into escaped HTML: every value is text, every link is
resolved against the paths the viewer can see (``/notes/…`` or ``/files/…``, as a note's links are), a card's
cover is shown only when it is an image of the vault (``img-src 'self'``), and a value that names a missing
file stays plain text.  Each view says how many files matched and how many are shown (``max_rows``).

Used for a ``.base`` page (every view) and for a base embedded in a note (``![[X.base]]``,
``![[X.base#View]]`` and ```` ```base ```` blocks: one view), where ``this`` is the embedding note.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from datetime import datetime

from notegate.doors.web.render import allowed_link, file_url, note_url
from notegate.vault.bases import (
    BaseError,
    BaseSpec,
    Row,
    ViewResult,
    ViewSpec,
    Work,
    parse_base,
    pick_view,
    plan_view,
)
from notegate.vault.basexpr import FileFacts, FileValue, LinkValue, display
from notegate.vault.links import Link, LinkTargets, resolve

__all__ = ["render_base"]


class _Page:
    def __init__(
        self, base_path: str, targets: LinkTargets, media_type: Callable[[str], str], query: str, origin: str
    ) -> None:
        self.base_path = base_path
        self.targets = targets
        self.media_type = media_type
        self.query = query
        self.origin = origin  # the file links are resolved from (the base, or the note embedding it)

    def resolve(self, target: str) -> str | None:
        if not target or "://" in target:
            return None
        link = Link(target.split("#", 1)[0].strip(), embed=False, wiki=True)
        path = resolve(link, self.origin, self.targets)
        if path is None or not (path.endswith(".md") or self.media_type(path)):
            return None
        return path

    def href(self, path: str) -> str:
        return (note_url(path) if path.endswith(".md") else file_url(path)) + self.query

    def link(self, path: str, text: str) -> str:
        return f'<a href="{html.escape(self.href(path))}" class="wikilink">{html.escape(text)}</a>'

    def value(self, value: object, depth: int = 0) -> str:
        """A value as HTML: links resolved (or plain text when missing), lists joined, everything escaped."""
        if isinstance(value, FileValue):
            return self.link(value.facts.path, value.facts.basename)
        if isinstance(value, LinkValue) and value.target.lower().startswith(("http://", "https://")):
            return self.value(value.target) if not value.display else self.external(value.target, value.display)
        if isinstance(value, LinkValue):
            path = self.resolve(value.target)
            shown = display(value)
            return self.link(path, shown) if path else f'<span class="missing">{html.escape(shown)}</span>'
        if isinstance(value, list) and depth < 3:
            return ", ".join(self.value(v, depth + 1) for v in value[:200])
        if isinstance(value, str) and value.lower().startswith(("http://", "https://")):
            return self.external(value, value)
        return html.escape(display(value))

    def external(self, url: str, text: str) -> str:
        """An http(s) value as a link when the note renderer would link it (:func:`allowed_link`), else text."""
        if len(url) > 2000 or not allowed_link(url):
            return html.escape(text)
        return f'<a href="{html.escape(url)}" rel="noopener noreferrer nofollow">{html.escape(text)}</a>'

    def cell(self, row: Row, prop: str, value: object) -> str:
        if prop in ("file.name", "file.basename"):  # Obsidian shows a note's name without ".md"
            return self.link(row.facts.path, _title(row))
        if prop == "file.path":
            return self.link(row.facts.path, row.facts.path)
        return self.value(value)

    def cover(self, value: object) -> str:
        target = value.target if isinstance(value, LinkValue) else value if isinstance(value, str) else ""
        path = self.resolve(target) if target else None
        if path is None or not self.media_type(path).startswith("image/"):
            return ""
        return f'<img src="{html.escape(self.href(path))}" alt="" class="embed base-cover">'


def _title(row: Row) -> str:
    return row.facts.basename if row.facts.ext == "md" else row.facts.name


def _group_heading(page: _Page, view: ViewSpec, group: object) -> str:
    shown = page.value(group) or "(empty)"
    return f'<span class="base-group-label">{html.escape(view.group_by[0] if view.group_by else "")}:</span> {shown}'


def _table(page: _Page, result: ViewResult) -> str:
    heads = "".join(f'<th scope="col">{html.escape(name)}</th>' for _p, name in result.columns)
    body: list[str] = []
    last: object = object()
    for row in result.rows:
        if result.view.group_by and row.group != last:
            last = row.group
            heading = _group_heading(page, result.view, row.group)
            body.append(f'<tr class="base-group"><th colspan="{len(result.columns)}">{heading}</th></tr>')
        cells = "".join(
            f'<td data-label="{html.escape(name)}" dir="auto">{page.cell(row, prop, value)}</td>'
            for (prop, name), value in zip(result.columns, row.cells, strict=True)
        )
        body.append(f'<tr class="base-row" data-path="{html.escape(row.facts.path)}">{cells}</tr>')
    foot = ""
    if result.summaries:
        sums = "".join(_summary_cell(page, result, prop, name) for prop, name in result.columns)
        foot = f'<tfoot><tr class="base-summary">{sums}</tr></tfoot>'
    return (
        f'<div class="scroll"><table class="base-table stack"><thead><tr>{heads}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody>{foot}</table></div>"
    )


def _summary_cell(page: _Page, result: ViewResult, prop: str, label: str) -> str:
    if prop not in result.summaries:
        return '<td data-label=""></td>'
    name, value = result.summaries[prop]
    shown = page.value(value) if value is not None else "—"
    return f'<td data-label="{html.escape(label)}" dir="auto">{html.escape(name)}: {shown}</td>'


def _summary_line(page: _Page, result: ViewResult) -> str:
    """Summaries under a cards or list view (a table has them in its footer)."""
    labels = dict(result.columns)
    parts = [
        f"{html.escape(labels.get(prop, prop))} ({html.escape(name)}): "
        + (page.value(value) if value is not None else "—")
        for prop, (name, value) in result.summaries.items()
    ]
    return f'<p class="hint base-summaries">{" · ".join(parts)}</p>' if parts else ""


def _cards(page: _Page, result: ViewResult) -> str:
    items: list[str] = []
    for row in result.rows:
        facts = "".join(
            f'<dt>{html.escape(name)}</dt><dd dir="auto">{page.cell(row, prop, value)}</dd>'
            for (prop, name), value in zip(result.columns, row.cells, strict=True)
            if prop != "file.name" and display(value)
        )
        cover = page.cover(row.image) if row.image is not None else ""
        items.append(
            f'<li class="base-card base-row" data-path="{html.escape(row.facts.path)}">{cover}'
            f'<p class="base-card-title">{page.link(row.facts.path, _title(row))}</p>'
            f"{f'<dl>{facts}</dl>' if facts else ''}</li>"
        )
    return f'<ul class="base-cards">{"".join(items)}</ul>'


def _list(page: _Page, result: ViewResult) -> str:
    items: list[str] = []
    for row in result.rows:
        rest = [
            page.cell(row, prop, value)
            for (prop, _name), value in zip(result.columns, row.cells, strict=True)
            if prop != "file.name" and display(value)
        ]
        extra = f' <span class="hint">{" · ".join(rest)}</span>' if rest else ""
        items.append(
            f'<li class="base-row" data-path="{html.escape(row.facts.path)}" dir="auto">'
            f"{page.link(row.facts.path, _title(row))}{extra}</li>"
        )
    return f'<ul class="base-list">{"".join(items)}</ul>'


def _view_html(page: _Page, result: ViewResult, index: int, *, heading: bool) -> str:
    view = result.view
    parts = [f'<section class="base-view" data-view="{html.escape(view.name)}" id="base-view-{index}">']
    if heading:
        parts.append(f'<h2 dir="auto">{html.escape(view.name)}</h2>')
    parts.extend(f'<p class="hint base-note">{html.escape(note)}</p>' for note in result.notes)
    shown = len(result.rows)
    parts.append(
        f'<p class="hint base-count" data-shown="{shown}" data-matched="{result.matched}">'
        f"{shown} of {result.matched} file{'s' if result.matched != 1 else ''}"
        f"{' (the rest are not shown)' if shown < result.matched else ''}</p>"
    )
    if result.rows:
        render = {"cards": _cards, "list": _list}.get(view.kind, _table)
        parts.append(render(page, result))
        if render is not _table:
            parts.append(_summary_line(page, result))
    parts.append("</section>")
    return "".join(parts)


def render_base(
    text: str,
    base_path: str,
    files: tuple[FileFacts, ...],
    targets: LinkTargets,
    media_type: Callable[[str], str],
    *,
    now: datetime,
    max_rows: int,
    query: str = "",
    view: str | None = None,
    this: FileFacts | None = None,
    only_one: bool = False,
) -> str:
    """The HTML of a base's views over ``files`` (all visible to the viewer).  ``view`` names one view (an
    embed's ``#View``); ``only_one`` shows just that view (or the first), as an embed does; ``this`` is the
    file ``this`` means (the embedding note; the base itself on its own page)."""
    try:
        spec: BaseSpec = parse_base(text)
    except BaseError as exc:
        return f'<p class="hint base-unreadable">This base cannot be shown: {html.escape(str(exc))}.</p>'
    origin = this.path if this is not None else base_path
    page = _Page(base_path, targets, media_type, query, origin)
    if view or only_one:
        chosen = pick_view(spec, view)
        if chosen is None:
            return f'<p class="hint base-unreadable">This base has no view named {html.escape(view or "")}.</p>'
        views = [chosen]
    else:
        views = list(spec.views)
    this = this or FileFacts(base_path)
    work = Work()  # one budget for the page's views
    out = []
    for index, item in enumerate(views):
        result = plan_view(spec, item, files, this=this, resolve=page.resolve, now=now, max_rows=max_rows, work=work)
        out.append(_view_html(page, result, index, heading=len(views) > 1 or not only_one))
    return "".join(out)
