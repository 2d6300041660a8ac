"""Code blocks of the documentation marked runnable (issue 34): ``<!-- runnable: NAME -->`` on the line before
a fenced block, at the block's own indentation (inside a list item too). The marker is an HTML comment, so
neither the site nor GitHub shows it; NAME says how a test runs the block (docs/reference/index.md lists them)."""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass
from pathlib import Path

DOCS = Path(__file__).resolve().parents[2] / "docs"
MARKED = re.compile(
    r"^(?P<indent>[ \t]*)<!-- runnable: (?P<name>[a-z0-9-]+) -->\n"
    r"(?P=indent)```(?P<lang>\w*)\n(?P<body>.*?)^(?P=indent)```",
    re.M | re.S,
)
#: Every marker a runner exists for (tests/docs/test_runnable.py, tests/docs/test_first_hour.py and
#: tests/doors/test_readme_client.py).
KINDS = (
    "python-token",
    "python-oauth",
    "sh-machine",
    "sh-vault",
    "sh-backup",
    "first-hour-serve",
    "first-hour-claude",
    "first-hour-agent",
    "first-hour-phone",
    "first-hour-public",
)


@dataclass(frozen=True)
class Block:
    name: str
    page: str  # docs-relative path
    lang: str
    code: str

    def __str__(self) -> str:
        return f"{self.page} ({self.name})"


def blocks(docs: Path = DOCS) -> list[Block]:
    found = []
    for path in sorted(docs.rglob("*.md")):
        text = path.read_text(encoding="utf-8")
        for match in MARKED.finditer(text):
            body = textwrap.dedent(match["body"]) if match["indent"] else match["body"]
            found.append(Block(match["name"], str(path.relative_to(docs)), match["lang"], body))
    return found


def marked(name: str) -> list[Block]:
    return [block for block in blocks() if block.name == name]


def the_block(name: str) -> str:
    """The one block marked ``name`` (a page holding two would make a test run only one of them)."""
    [block] = marked(name)
    return block.code
