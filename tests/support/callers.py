"""Callers and vault copies every test may build: a caller with the tiers and classes tests name, and one
`notegate init` directory per worker and day that the ``vault`` fixture copies."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from notegate.policy import Caller
from notegate.services.vaultinit import init_directory

#: One `notegate init` directory per worker and UTC day (the default notes carry the date), copied for each
#: test: a copy costs a fraction of an init (git objects, two SQLite files, a commit pushed to the origin).
_TEMPLATES: dict[str, Path] = {}


def without_meaning(config_text: str) -> str:
    """Search by meaning off in a config `notegate init` wrote, whatever its default (off today; "auto", on where
    installed, once its cost on writes is fixed): a test's search results must not depend on whether the model
    is installed; the tests of search by meaning turn it on (tests/test_fixtures.py pins it)."""
    return config_text.replace('\nsearch_meaning = "auto"\n', "\nsearch_meaning = false\n", 1)


def vault_template(factory: pytest.TempPathFactory) -> Path:
    day = datetime.now(UTC).date().isoformat()
    if day not in _TEMPLATES:
        config = init_directory(factory.mktemp("vault-template") / "vault")
        config.write_text(without_meaning(config.read_text()))
        _TEMPLATES[day] = config.parent
    return _TEMPLATES[day]


def make_caller(
    tier: str = "trusted", client_class: str = "workstation", login: str = "owner", client: str = "laptop"
) -> Caller:
    return Caller(
        login=login,
        display_name=login.title(),
        client=client,
        client_class=client_class,
        tier=tier,
        session="test-session",
    )
