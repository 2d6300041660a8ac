"""Fixtures for the LiveSync gate: a real CouchDB-protocol server (pouchdb-server from npm, in memory), a real
gate (`notegate livesync gate` in its own process), enrolled devices, and a PouchDB device driven by
tests/livesync/npm/client.mjs.

The npm packages are pinned in tests/livesync/npm/package.json and package-lock.json and installed by
`make livesync-npm` (and .ci/run); nothing is downloaded here. Without them the tests skip, with the reason,
unless NOTEGATE_REQUIRE_LIVESYNC=1 (CI), where they fail."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from support.livesync import (
    Lab,
    require_npm,
)


@pytest.fixture(scope="module")
def lab(tmp_path_factory) -> Iterator[Lab]:
    require_npm()
    running = Lab(tmp_path_factory.mktemp("livesync")).start()
    try:
        yield running
    finally:
        running.stop()
