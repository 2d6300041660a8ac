"""The session note (``sessions/<project>/<stem>.md``): immutable, one per session; a title, a summary
paragraph and a bullet list, with no headings inside (so no section iterator is needed)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from notegate.vault.formats.values import (
    check_extra,
    format_timestamp,
    parse_timestamp,
    set_field,
    take,
    take_list,
    utc,
)
from notegate.vault.frontmatter import FormatError, FrontMatter, render_front_matter, split_front_matter
from notegate.vault.lines import BOUNDARY_RE, check_inline, escape_paragraph, unescape_paragraph


@dataclass(frozen=True)
class SessionNote:
    """An immutable note about one session (``sessions/<project>/<stem>.md``).

    Body: ``# <title>``, a blank line, the summary paragraph (no blank lines
    in it; lines that would read as headings or list items are escaped), a
    blank line, then one ``- <bullet>`` line per bullet (one line each;
    ``[[wikilinks]]`` welcome).  An empty summary or empty bullet list is
    simply left out.
    """

    project: str
    session: str
    created: datetime
    updated: datetime
    title: str
    summary: str = ""
    bullets: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    extra: dict[str, str | list[str]] = field(default_factory=dict)

    _KEYS = ("project", "session", "created", "updated", "tags")

    def __post_init__(self) -> None:
        check_inline(self.project, "session note project")
        check_inline(self.session, "session note session")
        check_inline(self.title, "session note title")
        set_field(self, "created", utc(self.created, "session note created"))
        set_field(self, "updated", utc(self.updated, "session note updated"))
        set_field(self, "tags", tuple(check_inline(tag, "tag") for tag in self.tags))
        if not isinstance(self.summary, str):
            raise FormatError("session note summary must be a string.", rule="format-value")
        if self.summary and any(not piece.strip(" \t") for piece in BOUNDARY_RE.split(self.summary)):
            raise FormatError(
                "session note summary must be one paragraph: no blank lines, no leading or trailing line break.",
                rule="format-value",
            )
        bullets = tuple(self.bullets)
        for bullet in bullets:
            if not isinstance(bullet, str) or BOUNDARY_RE.search(bullet):
                raise FormatError("each session note bullet must be a one-line string.", rule="format-value")
        set_field(self, "bullets", bullets)
        set_field(self, "extra", check_extra(self.extra, self._KEYS, "session note"))

    def render(self) -> str:
        """The note text; ``SessionNote.parse(n.render()) == n``."""
        front: FrontMatter = {
            "project": self.project,
            "session": self.session,
            "created": format_timestamp(self.created),
            "updated": format_timestamp(self.updated),
            "tags": list(self.tags),
            **self.extra,
        }
        body = f"# {self.title}\n"
        if self.summary:
            body += f"\n{escape_paragraph(self.summary)}\n"
        if self.bullets:
            body += "\n" + "".join(f"- {bullet}\n" for bullet in self.bullets)
        return render_front_matter(front) + body

    @classmethod
    def parse(cls, text: str) -> SessionNote:
        """Read a session note written by :meth:`render`; anything else raises :class:`FormatError`."""
        data, body = split_front_matter(text)
        values = {key: take(data, key, "session note") for key in ("project", "session", "created", "updated")}
        tags = take_list(data, "tags")
        title_line, _, rest = body.partition("\n")
        if not title_line.startswith("# "):
            raise FormatError("session note: the body must start with '# <title>'.", rule="format-sections")
        summary, bullets = "", ()
        if rest:
            if not rest.startswith("\n") or not rest.endswith("\n"):
                raise FormatError("session note: expected a blank line after the title.", rule="format-sections")
            blocks = rest[1:-1].split("\n\n")
            first_line = blocks[0].split("\n", 1)[0]
            if not (first_line.startswith("- ") or first_line == "-"):
                summary = unescape_paragraph(blocks.pop(0))
            if len(blocks) > 1:
                raise FormatError("session note: unexpected text after the bullet list.", rule="format-sections")
            if blocks:
                lines = blocks[0].split("\n")
                if any(not (line.startswith("- ") or line == "-") for line in lines):
                    raise FormatError("session note: every bullet line must start with '- '.", rule="format-sections")
                bullets = tuple(line[2:] for line in lines)
        return cls(
            created=parse_timestamp(values.pop("created"), "session note created"),
            updated=parse_timestamp(values.pop("updated"), "session note updated"),
            title=title_line[2:],
            summary=summary,
            bullets=bullets,
            tags=tags,
            extra=data,
            **values,
        )
