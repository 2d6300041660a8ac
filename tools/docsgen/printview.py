"""The printable security model: every page of the site's Explanation section, in navigation order, as one
page (``explanation/print.md`` in the built site) that a browser prints to one PDF; ``python -m
docsgen.printview SITE_DIR OUT.pdf`` prints it with Debian's chromium (``make security-pdf``).

Why one page built from the others and not a second document: an owner hands a reviewer the same words the
site shows, so the printed model cannot drift from the explanation pages."""

from __future__ import annotations

import re
import sys
from pathlib import Path

PRINT_PAGE = "explanation/print.md"
SECTION = "Explanation"
_HEADING = re.compile(r"^(#{1,5}) ", re.M)
_FENCE = re.compile(r"^(```|~~~).*?^\1", re.M | re.S)


def explanation_pages(nav: list) -> list[str]:
    """The source paths of the Explanation section's pages, in navigation order (the print page aside)."""
    for entry in nav or []:
        if isinstance(entry, dict) and SECTION in entry:
            pages = []
            for item in entry[SECTION]:
                path = next(iter(item.values())) if isinstance(item, dict) else item
                if (
                    isinstance(path, str)
                    and path.endswith(".md")
                    and path != PRINT_PAGE
                    and not path.endswith("index.md")
                ):
                    pages.append(path)
            return pages
    raise ValueError(f"the navigation has no {SECTION!r} section")


def _demote(markdown: str) -> str:
    """Every heading one level down (the part's title becomes ##), code blocks left alone."""
    parts, last = [], 0
    for fence in _FENCE.finditer(markdown):
        parts.append(_HEADING.sub(lambda m: "#" + m.group(1) + " ", markdown[last : fence.start()]))
        parts.append(fence.group(0))
        last = fence.end()
    parts.append(_HEADING.sub(lambda m: "#" + m.group(1) + " ", markdown[last:]))
    return "".join(parts)


def print_page(docs: Path, nav: list) -> str:
    from notegate.cli.common import package_version

    out = [
        "# notegate: the security model",
        "",
        f"*notegate {package_version()}. Every page of the Explanation section, in order, for whoever reviews "
        "a deployment. Print this page (or save it as PDF) from the browser.*",
        "",
    ]
    for path in explanation_pages(nav):
        text = (docs / path).read_text(encoding="utf-8")
        out += ['<div class="ng-page-break"></div>', "", _demote(text).strip(), ""]
    return "\n".join(out) + "\n"


def pdf(site: Path, out: Path) -> int:
    """Print the built print page to ``out`` with Debian's chromium (never a downloaded browser); the page
    count."""
    from playwright.sync_api import sync_playwright

    page_file = site / PRINT_PAGE.replace(".md", ".html")
    if not page_file.is_file():
        raise FileNotFoundError(f"{page_file} not built: run mkdocs build first")
    args = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]
    with sync_playwright() as play:
        browser = play.chromium.launch(executable_path="/usr/bin/chromium", args=args)
        try:
            page = browser.new_page()
            page.goto(page_file.as_uri())
            page.pdf(path=str(out), format="A4", print_background=True, outline=True, tagged=True)
        finally:
            browser.close()
    return out.read_bytes().count(b"/Type /Page") - out.read_bytes().count(b"/Type /Pages")


if __name__ == "__main__":
    pages = pdf(Path(sys.argv[1]), Path(sys.argv[2]))
    print(f"{sys.argv[2]}: {pages} pages")
