"""Browser fixtures: one chromium per test session (Debian's, never a downloaded one), a fresh console
server per test. Browser tests skip only when chromium is missing and NOTEGATE_REQUIRE_BROWSER is unset."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from web.harness import CHROMIUM, CHROMIUM_ARGS, Console, Device, serve_console


@pytest.fixture(scope="session")
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


def enrolled(console: Console, device: Device, login: str | None = None) -> Device:
    assert device.enrol(console.enrol_link(login)) == "ok"
    return device
