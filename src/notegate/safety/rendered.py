"""The rendered view of an item: what a reader sees once Markdown and HTML are rendered (pure).

Why: ``CLAUDE\\.md``, ``CLAUDE&#46;md``, ``CLAUDE<!-- -->.md`` and ``**CLAUDE**.md`` all *show* as
``CLAUDE.md``, so the floor's instruction-file check runs on this view too (found in a security review).
Only the stretches where rendering could join a name are rendered: doing the whole item would cost more
than the rest of the floor together.
"""

from __future__ import annotations

import html
import re

_HTML_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_MD_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")
_EMPHASIS = re.compile(r"[*_`~]+")
DOT_LOOKALIKES = str.maketrans({"\u00b7": ".", "\u3002": ".", "\u2024": ".", "\uff0e": ".", "\u2027": "."})

# Where rendering could join a name: an escape, an entity, a comment, a dot look-alike, or an emphasis marker
# with a dot close after it (``**CLAUDE**.md``, ``C*LAUDE*.md``) or right before it (``CLAUDE.**md**``).
_RENDER_TRIGGER = re.compile(
    r"\\[!-/:-@\[-`{-~]|&#?[A-Za-z0-9]{1,10};|<!--|[\u00b7\u3002\u2024\uff0e\u2027]"
    r"|[*_`~][^\s]{0,30}?[.\u00b7\u3002]|\.[*_`~]"
)
_WINDOW = 40  # longer than any instruction-file name, so a window holds a whole name around its trigger


def render_windows(text: str) -> list[str]:
    """The stretches of ``text`` whose rendering could differ in a way that spells a name (rendering all of
    a large item costs more than the rest of the floor together, so only these are rendered)."""
    spans: list[list[int]] = []
    for match in _RENDER_TRIGGER.finditer(text):
        start, end = max(0, match.start() - _WINDOW), match.end() + _WINDOW
        if spans and start <= spans[-1][1]:
            spans[-1][1] = max(spans[-1][1], end)
        else:
            spans.append([start, end])
    return [text[a:b] for a, b in spans]


def rendered_view(text: str) -> str:
    """What a reader sees once Markdown and HTML are rendered: ``CLAUDE\\.md``, ``CLAUDE&#46;md``,
    ``CLAUDE<!-- -->.md`` and ``**CLAUDE**.md`` all show as ``CLAUDE.md``, so the name check runs on this
    view too (found in review). Dot look-alikes (middle dot, ideographic full stop) become dots."""
    view = _HTML_COMMENT.sub("", text)
    view = html.unescape(view)
    view = _MD_ESCAPE.sub(r"\1", view)
    view = _EMPHASIS.sub("", view)
    return view.translate(DOT_LOOKALIKES)
