"""The documentation site builds strictly and offline (issue 34): no broken link, no page missing from the
navigation, no asset from another host, nothing downloaded while building, and its search works from the
built files opened straight from disk (``file://``), as a reader without a server opens them."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from support.sitebuild import REPO, copy_docs, mkdocs_build, normal, page_text

#: A tag that makes the browser fetch something (a script, a stylesheet, an image, a font, a frame).
FETCHING = re.compile(r"<(script|img|iframe|source|link)\b[^>]*?\b(src|href)=\"([^\"]+)\"", re.I)


def test_the_site_builds_with_every_asset_from_the_built_files(site: Path) -> None:
    pages = sorted(site.rglob("*.html"))
    assert len(pages) > 30
    for page in pages:
        source = page.read_text(encoding="utf-8")
        for tag, _attr, url in FETCHING.findall(source):
            if tag.lower() == "link" and "canonical" in source[: source.find(url)].rsplit("<", 1)[-1]:
                continue
            assert not re.match(r"(https?:)?//", url), f"{page.relative_to(site)} fetches {url}"
            if not url.startswith(("#", "data:")):
                local = url.split("#")[0].split("?")[0]  # 404.html names the site's root: a server serves it
                target = (site / local.lstrip("/") if local.startswith("/") else page.parent / local).resolve()
                assert target.exists(), f"{page.relative_to(site)} names {url}, which was not built"
        assert "fonts.googleapis" not in source and "fonts.gstatic" not in source
    assert (site / "search" / "search_index.js").is_file()  # the offline plugin's index, read without fetch()


def test_a_page_left_out_of_the_navigation_or_a_broken_link_fails_the_build(tmp_path: Path) -> None:
    config = copy_docs(tmp_path)
    (tmp_path / "docs" / "orphan.md").write_text("# Nobody links here\n")
    guide = tmp_path / "docs" / "how-to" / "doctor.md"
    guide.write_text(guide.read_text() + "\nSee [the missing page](no-such-page.md).\n")
    built = mkdocs_build(config, tmp_path / "site")
    assert built.returncode != 0
    assert "orphan.md" in built.stderr and 'not included in the "nav"' in built.stderr, built.stderr[-3000:]
    assert "no-such-page.md" in built.stderr, built.stderr[-3000:]


@pytest.fixture
def chromium() -> str:
    path = "/usr/bin/chromium"
    if not os.access(path, os.X_OK):
        if os.environ.get("NOTEGATE_REQUIRE_BROWSER") == "1":
            pytest.fail("chromium not installed (NOTEGATE_REQUIRE_BROWSER=1 requires it)")
        pytest.skip("chromium not installed: apt-get install -y chromium")
    return path


def test_search_works_from_the_built_files_opened_from_disk(site: Path, chromium: str) -> None:
    from playwright.sync_api import sync_playwright

    args = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]
    with sync_playwright() as play:
        browser = play.chromium.launch(executable_path=chromium, args=args)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            elsewhere: list[str] = []
            page.on(
                "request", lambda request: None if request.url.startswith("file:") else elsewhere.append(request.url)
            )
            page.goto((site / "index.html").as_uri())
            box = page.locator("input.md-search__input")
            box.click()
            box.type("idempotency", delay=20)
            page.wait_for_selector(".md-search-result__item", timeout=30_000)
            titles = page.locator(".md-search-result__item").all_text_contents()
        finally:
            browser.close()
    assert any("contract" in title.lower() for title in titles), titles
    assert elsewhere == []  # nothing fetched from anywhere but the built files


def test_the_printable_security_model_holds_every_explanation_page(site: Path) -> None:
    import yaml  # mkdocs's own dependency

    from docsgen.printview import explanation_pages

    nav = yaml.safe_load((REPO / "mkdocs.yml").read_text().replace("!!python", "#"))["nav"]
    pages = explanation_pages(nav)
    assert "explanation/security-model.md" in pages and "explanation/threat-model.md" in pages
    printed = page_text(site, "explanation/print.md")
    for path in pages:
        title = (REPO / "docs" / path).read_text(encoding="utf-8").splitlines()[0].removeprefix("# ")
        assert title and normal(title) in printed, (path, title)


def test_the_printable_security_model_prints_to_one_pdf(site: Path, chromium: str, tmp_path: Path) -> None:
    from docsgen.printview import pdf

    out = tmp_path / "security-model.pdf"
    pages = pdf(site, out)
    assert out.read_bytes().startswith(b"%PDF-") and pages >= 10, pages


def test_the_readme_is_a_front_page_whose_links_resolve(site: Path) -> None:
    """The README is a front page (at most 200 lines) that links into the site by source path (docs/…md):
    each link names a page that is built."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 200
    links = re.findall(r"\]\((docs/[^)#\s]+\.md)(?:#[^)]*)?\)", readme)
    assert len(links) >= 8, links
    for link in links:
        assert (site / link.removeprefix("docs/").replace(".md", ".html")).is_file(), link
    for section in ("tutorials", "how-to", "reference", "explanation"):
        assert len(list((site / section).glob("*.html"))) >= 4, section
