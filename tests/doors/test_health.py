"""/healthz against a real `notegate serve`: "ok" to anyone, one environment's details to its own token only.

The review found that an anonymous /healthz listed every environment's name and head commit.
"""

from __future__ import annotations

from pathlib import Path

import httpx2
import pygit2
import pytest

from support import mint, notegate, running


@pytest.fixture
def two_envs(vault: Path) -> Path:
    pygit2.init_repository(str(vault.parent / "household.git"), bare=True, initial_head="main")
    text = vault.read_text().replace(
        "[policy]",
        '[environments.household]\norigin = "household.git"\nowner = "partner"\nmembers = ["kid"]\n\n[policy]',
        1,
    )
    vault.write_text(text)
    return vault


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def test_anonymous_gets_only_the_status(two_envs: Path) -> None:
    with running(two_envs) as server:
        response = httpx2.get(f"{server.url}/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}
    assert "personal" not in response.text and "household" not in response.text


def test_a_token_sees_its_own_environment_only(two_envs: Path) -> None:
    personal = mint(two_envs, name="laptop", environment="personal")
    household = mint(two_envs, name="kid-phone", login="kid", client_class="hosted", environment="household")
    default = mint(two_envs, name="no-env")  # a token minted without an environment works in the default one
    with running(two_envs) as server:
        mine = httpx2.get(f"{server.url}/healthz", headers=bearer(personal)).json()
        theirs = httpx2.get(f"{server.url}/healthz", headers=bearer(household)).json()
        fallback = httpx2.get(f"{server.url}/healthz", headers=bearer(default)).json()
    assert mine["status"] == "ok" and set(mine["environments"]) == {"personal"}
    assert len(mine["environments"]["personal"]["head"]) == 40
    assert theirs["status"] == "ok" and set(theirs["environments"]) == {"household"}
    assert set(fallback["environments"]) == {"personal"}


#: Credentials /healthz must refuse (and never answer with details).
BAD_HEADERS = [
    "Bearer ngt_0000_nope",  # shaped like a token, unknown
    "Bearer",  # no token at all
    "Basic b3duZXI6cHc=",  # another scheme
]


def test_a_bad_credential_is_refused_with_the_rule(vault: Path) -> None:
    with running(vault) as server:
        responses = [httpx2.get(f"{server.url}/healthz", headers={"Authorization": h}) for h in BAD_HEADERS]
    for response in responses:
        assert response.status_code == 401
        assert response.headers["www-authenticate"].startswith("Bearer")
        body = response.json()
        assert body["error"].startswith("Refused [unauthenticated]: ")
        assert "environments" not in body


def test_a_revoked_token_sees_only_the_status_refusal(vault: Path) -> None:
    token = mint(vault, name="gone")
    with running(vault) as server:
        assert "environments" in httpx2.get(f"{server.url}/healthz", headers=bearer(token)).json()
        notegate("token", "revoke", "--config", str(vault), "gone").check_returncode()
        response = httpx2.get(f"{server.url}/healthz", headers=bearer(token))
    assert response.status_code == 401 and response.json()["error"].startswith("Refused [unauthenticated]: ")
