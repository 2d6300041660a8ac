"""Building the documentation site with the real ``mkdocs build --strict`` and reading what it built (issue 34)."""

from __future__ import annotations

import html
import os
import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def mkdocs_build(config: Path, site: Path) -> subprocess.CompletedProcess[str]:
    """``mkdocs build --strict`` as a reader runs it, in a fresh interpreter, from this checkout's code."""
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "PYTHONPATH": str(REPO / "src")}
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", str(config), "--site-dir", str(site)],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        cwd=config.parent,
    )


_BLOCK = {"p", "li", "td", "th", "tr", "div", "pre", "br", "h1", "h2", "h3", "h4", "h5", "h6", "dt", "dd", "summary"}
_VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


class _Text(HTMLParser):
    """The text of a page's article (what a reader sees), without the navigation around it."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.depth = 0
        self.parts: list[str] = []

    def handle_starttag(self, tag, attrs):
        if self.depth and tag in _BLOCK:
            self.parts.append(" ")
        if (self.depth or tag == "article") and tag not in _VOID:
            self.depth += 1

    def handle_endtag(self, tag):
        if self.depth:
            self.depth -= 1
            if tag in _BLOCK:
                self.parts.append(" ")

    def handle_data(self, data):
        if self.depth:
            self.parts.append(data)


def page_text(site: Path, page: str) -> str:
    """The article's text of a built page (``reference/cli.md`` -> ``site/reference/cli.html``), one space
    between words."""
    parser = _Text()
    parser.feed((site / page.replace(".md", ".html")).read_text(encoding="utf-8"))
    return normal("".join(parser.parts))


def normal(text: str) -> str:
    """Text as a reader sees it, for comparing: Markdown's backticks gone, whitespace collapsed."""
    return re.sub(r"\s+", " ", html.unescape(text).replace("`", "")).strip()


def copy_docs(target: Path) -> Path:
    """The site's sources (mkdocs.yml, docs/, tools/) in ``target``, to build a changed copy; its config."""
    for name in ("docs", "tools"):
        shutil.copytree(REPO / name, target / name, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "mkdocs.yml", target / "mkdocs.yml")
    return target / "mkdocs.yml"
