"""The handoff (``handoffs/<project>.md``): where the next session picks up, in four fixed sections."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from notegate.vault.formats.sections import parse_sections, render_sections
from notegate.vault.formats.values import check_extra, format_timestamp, parse_timestamp, set_field, take, utc
from notegate.vault.frontmatter import FormatError, FrontMatter, render_front_matter, split_front_matter
from notegate.vault.lines import check_inline

HANDOFF_SECTIONS = ("Where it stopped", "Next step", "Open questions", "Repo state")


@dataclass(frozen=True)
class Handoff:
    """The latest handoff of a project (``handoffs/<project>.md``): where the next session picks up.

    ``written`` is stored as ``YYYY-MM-DDTHH:MM:SSZ`` (seconds, UTC).  Front
    matter keys other than the five known ones are kept in ``extra`` so that
    properties a person adds in Obsidian survive a rewrite.
    """

    project: str
    branch: str
    written: datetime
    session: str
    client: str
    where_it_stopped: str = ""
    next_step: str = ""
    open_questions: str = ""
    repo_state: str = ""
    extra: dict[str, str | list[str]] = field(default_factory=dict)

    _KEYS = ("project", "branch", "written", "session", "client")

    def __post_init__(self) -> None:
        for key in ("project", "branch", "session", "client"):
            check_inline(getattr(self, key), f"handoff {key}")
        set_field(self, "written", utc(self.written, "handoff written"))
        for name in ("where_it_stopped", "next_step", "open_questions", "repo_state"):
            if not isinstance(getattr(self, name), str):
                raise FormatError(f"handoff {name} must be a string.", rule="format-value")
        set_field(self, "extra", check_extra(self.extra, self._KEYS, "handoff"))

    def render(self) -> str:
        """The note text; ``Handoff.parse(h.render()) == h``."""
        front: FrontMatter = {
            "project": self.project,
            "branch": self.branch,
            "written": format_timestamp(self.written),
            "session": self.session,
            "client": self.client,
            **self.extra,
        }
        texts = (self.where_it_stopped, self.next_step, self.open_questions, self.repo_state)
        return render_front_matter(front) + render_sections(zip(HANDOFF_SECTIONS, texts, strict=True))

    @classmethod
    def parse(cls, text: str) -> Handoff:
        """Read a handoff; raises :class:`FormatError` unless it has exactly the four sections."""
        data, body = split_front_matter(text)
        values = {key: take(data, key, "handoff") for key in cls._KEYS}
        written = parse_timestamp(values.pop("written"), "handoff written")
        where, nxt, questions, repo = parse_sections(body, HANDOFF_SECTIONS, "handoff")
        return cls(
            written=written,
            where_it_stopped=where,
            next_step=nxt,
            open_questions=questions,
            repo_state=repo,
            extra=data,
            **values,
        )
