"""Device keys through the real door: a restricted workstation token plus a valid `X-Notegate-Device` header
is a trusted caller; the same token with no header, a header for another server, or a removed key stays
restricted (reads still work) and the reason is an audit row.  Real server, the official SDK client."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import pytest

from notegate.auth.devices import generate_device_key, mint_device_header
from support import mcp_http, mint, running, text_of

pytestmark = pytest.mark.anyio
PEM, PUBLIC = generate_device_key()


def _trust_device(config_path: Path) -> None:
    text = config_path.read_text()
    config_path.write_text(text + f'\n[devices.laptop]\npublic_key = "{PUBLIC}"\nperson = "owner"\n')


async def _write(url: str, token: str, headers: dict[str, str]) -> tuple[bool, str]:
    async with mcp_http(url, token, headers) as client:
        read = await client.call_tool("list_notes", {"folder": "rules"})
        assert not read.is_error, text_of(read)
        preview = await client.call_tool(
            "write_note", {"path": "projects/device.md", "content": "hello\n", "base_revision": "absent"}
        )
        return preview.is_error, text_of(preview)


def _audit_outcomes(config_path: Path) -> list[str]:
    db = sqlite3.connect(config_path.parent / "state" / "state.sqlite")
    try:
        return [row[0] for row in db.execute("SELECT outcome FROM audit WHERE tool = 'device-key'")]
    finally:
        db.close()


async def test_a_valid_device_header_makes_the_workstation_trusted(vault: Path):
    _trust_device(vault)
    token = mint(vault, tier="restricted")
    with running(vault) as server:
        header = mint_device_header(PEM, "laptop", f"{server.url}/mcp", now=time.time())
        refused, text = await _write(server.url, token, {"X-Notegate-Device": header})
        assert not refused, text
        assert "diff" in text.lower() or "preview" in text.lower()


@pytest.mark.parametrize(
    ("case", "outcome"),
    [
        ("none", None),
        ("wrong-audience", "device-wrong-audience"),
        ("expired", "device-expired"),
        ("garbage", "device-malformed"),
    ],
)
async def test_without_a_valid_header_the_token_stays_restricted(vault: Path, case: str, outcome: str | None):
    _trust_device(vault)
    token = mint(vault, tier="restricted")
    with running(vault) as server:
        headers = {}
        if case == "wrong-audience":
            headers["X-Notegate-Device"] = mint_device_header(
                PEM, "laptop", "https://elsewhere.example/mcp", now=time.time()
            )
        elif case == "expired":
            headers["X-Notegate-Device"] = mint_device_header(
                PEM, "laptop", f"{server.url}/mcp", now=time.time() - 13 * 3600, lifetime=3600
            )
        elif case == "garbage":
            headers["X-Notegate-Device"] = "not.a.jws"
        refused, text = await _write(server.url, token, headers)
        assert refused and "Refused [restricted-outside-inbox]" in text, text
    outcomes = _audit_outcomes(vault)
    if outcome is None:
        assert outcomes == []
    else:
        assert outcomes and all(o.startswith(outcome) for o in outcomes), outcomes


async def test_removing_the_key_from_the_config_revokes_the_device(vault: Path):
    token = mint(vault, tier="restricted")  # the key was never (or is no longer) in the deployment config
    with running(vault) as server:
        header = mint_device_header(PEM, "laptop", f"{server.url}/mcp", now=time.time())
        refused, text = await _write(server.url, token, {"X-Notegate-Device": header})
        assert refused and "Refused [restricted-outside-inbox]" in text, text
    assert any(o.startswith("device-unknown-key") for o in _audit_outcomes(vault))
