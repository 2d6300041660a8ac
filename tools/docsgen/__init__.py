"""The documentation site's reference pages, generated from the one source of each fact (issue 34).

Why generated: a reference written by hand next to the code drifts (the README's did: `docs/clients.md` still
called OAuth "planned" after it shipped). Each page here is made at build time by ``hooks.py`` (an MkDocs
hook) from the table the code itself reads: the argparse tree (``cli``), the settings rows (``settings``),
the refusal registry (``rules``), the MCP server's own ``tools/list`` (``mcp``) and the ASGI route table
(``routes``). Nothing here is written into ``docs/``: the pages exist only in the built site, so there is no
second copy to fall out of step. ``tests/docs/`` builds the site and checks every fact is on its page.

Each module exposes ``page() -> str`` (the Markdown of its page) and ``facts()`` (what the page must hold, for
the tests). ``PAGES`` maps a page's path in the site to its module.
"""

from __future__ import annotations

import html
import re

#: Site path of each generated page -> the module (under ``docsgen``) that writes it.
PAGES = {
    "reference/cli.md": "cli",
    "reference/configuration.md": "settings",
    "reference/refusals.md": "rules",
    "reference/mcp-tools.md": "mcp",
    "reference/http-routes.md": "routes",
}

GENERATED_NOTE = (
    '!!! note "Generated"\n'
    "    This page is generated when the site is built, from {source}. "
    "Change the code, not this page: the tests fail when the two disagree.\n"
)


def text(value: str) -> str:
    """Prose taken from the code, safe inside Markdown: HTML escaped (a remedy saying ``Bearer <token>`` must
    not become a tag) and table pipes escaped; backticks are kept, so code spans in help lines stay code."""
    return html.escape(value, quote=False).replace("|", "\\|").replace("\n", " ")


def code(value: str) -> str:
    """``value`` as one inline code span, whatever backticks it holds."""
    ticks = "`" * (max((len(m) for m in re.findall(r"`+", value)), default=0) + 1)
    pad = " " if value.startswith("`") or value.endswith("`") else ""
    return f"{ticks}{pad}{value}{pad}{ticks}".replace("|", "\\|")
