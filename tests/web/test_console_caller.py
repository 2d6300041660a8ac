"""The console's caller comes from the one function every door turns a credential into a caller with
(``services/callers.py`` ``Callers.resolve``), as MCP's, the contracts', ``/healthz``'s and ``/metrics``'.

A real server on loopback (httpx, no browser): the owner's notes pages and inbox page act as the
``web:console`` connector of the signed-in person, bound to the page's environment, and that caller is the
resolver's answer."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from notegate.policy import Caller, ClientClass, Tier, console_caller
from notegate.services.callers import Callers
from support.web_harness import Console, serve_console
from support.web_notes import Signed, sign_in


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Console]:
    import shutil

    from support.callers import vault_template

    target = tmp_path_factory.mktemp("console-caller") / "vault"
    shutil.copytree(vault_template(tmp_path_factory), target, symlinks=True)
    with serve_console(target / "notegate.toml") as console:
        yield console


@pytest.fixture(scope="module")
def owner(served: Console) -> Signed:
    return sign_in(served, "owner")  # once: the passkey row is per login


@pytest.fixture
def resolved(monkeypatch: pytest.MonkeyPatch) -> list[tuple[object, Caller]]:
    """Every (credential, caller) the one resolver answers while the test runs."""
    seen: list[tuple[object, Caller]] = []
    real = Callers.resolve

    def spy(self: Callers, credential: object, **kwargs: object) -> Caller:
        caller = real(self, credential, **kwargs)
        seen.append((credential, caller))
        return caller

    monkeypatch.setattr(Callers, "resolve", spy)
    return seen


@pytest.mark.parametrize("page", ["/notes", "/inbox"])
def test_the_console_acts_as_the_caller_the_one_resolver_answers(
    served: Console, owner: Signed, resolved: list[tuple[object, Caller]], page: str
) -> None:
    response = owner.client.get(page)
    assert response.status_code == 200, response.text[:500]
    environment = served.runtime.config.default_environment
    expected = console_caller("owner", environment)
    assert (expected, expected) in resolved, resolved
    assert expected.connector_id == "web:console"
    assert (expected.client_class, expected.tier) == (ClientClass.WORKSTATION, Tier.TRUSTED)
