"""Browser fixtures: one chromium per run of this package (Debian's, never a downloaded one), a fresh console
server per test. Browser tests skip only when chromium is missing and NOTEGATE_REQUIRE_BROWSER is unset.
Package scope, not session: Playwright's sync API leaves its event loop marked running on the main thread,
so every anyio test after it in the same process fails "Cannot run the event loop while another loop is
running"; tearing it down on leaving tests/web frees the loop for the next package."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from support.web_harness import CHROMIUM, CHROMIUM_ARGS, Device, serve_console


@pytest.fixture(scope="package")
def browser():
    if not Path(CHROMIUM).exists():
        if os.environ.get("NOTEGATE_REQUIRE_BROWSER"):
            pytest.fail(f"NOTEGATE_REQUIRE_BROWSER is set but {CHROMIUM} is missing (apt-get install chromium)")
        pytest.skip(f"{CHROMIUM} is missing (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def console(vault: Path):
    with serve_console(vault) as served:
        yield served


@pytest.fixture
def device(browser):
    made = Device(browser)
    yield made
    made.close()


@pytest.fixture
def devices(browser):
    """Make more devices (each its own context and authenticator); all closed at the end."""
    made: list[Device] = []

    def make(**kwargs) -> Device:
        made.append(Device(browser, **kwargs))
        return made[-1]

    yield make
    for d in made:
        d.close()
