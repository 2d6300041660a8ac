"""A pin that does not hold is a hard load failure: `notegate tools serve` refuses to start, naming the rule,
before anything listens. Real cache, real CLI; nothing is installed for the refusals (the digest is checked
before any install)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from notegate.config import load_config
from notegate.state import StateDB
from notegate.tools.sealing import keygen, write_key_file
from support import free_port, notegate
from support.upstreams import TIME, upstream_cache


@pytest.fixture
def tools_vault(vault: Path, tmp_path: Path) -> tuple[Path, Path]:
    cache, _pin = upstream_cache(tmp_path / "cache")
    text = vault.read_text().replace(
        "[policy]", f'[tools]\ncache = "{cache}"\ninstalls = "{tmp_path / "installs"}"\n\n[policy]', 1
    )
    vault.write_text(text)
    key = tmp_path / "tools.key"
    write_key_file(key, keygen()[0])
    return vault, key


def add_entry(config: Path, **pin: str) -> None:
    state = StateDB.for_config(load_config(config))
    try:
        state.add_catalog_entry({"name": "time", **TIME, **pin, "created_at": time.time()})
    finally:
        state.close()


def serve(config: Path, key: Path):
    return notegate("tools", "serve", "--config", str(config), "--key-file", str(key), "--port", str(free_port()))


@pytest.mark.parametrize(
    ("pin", "rule"),
    [
        ({"digest": "sha256:" + "0" * 64}, "tools-pin-mismatch"),  # the cached wheel is not the pinned one
        ({"version": ">=2026.10.19"}, "tools-pin-invalid"),  # a range written into the database directly
        ({"version": "latest"}, "tools-pin-invalid"),  # a tag
        ({"version": "2026.10.10"}, "tools-artifact-missing"),  # a version the cache does not hold
    ],
)
def test_a_pin_that_does_not_hold_refuses_to_load(tools_vault, pin: dict[str, str], rule: str) -> None:
    config, key = tools_vault
    add_entry(config, **pin)
    done = serve(config, key)
    assert done.returncode == 1
    assert f"Refused [{rule}]" in done.stderr and "serving" not in done.stderr


def test_the_catalog_command_refuses_a_range(tools_vault) -> None:
    config, _key = tools_vault
    done = notegate(
        "tools",
        "catalog",
        "--config",
        str(config),
        "--name",
        "time",
        "--kind",
        "pypi",
        "--package",
        "mcp-server-time",
        "--version",
        "~=2026.10",
        "--digest",
        TIME["digest"],
        "--program",
        "mcp-server-time",
    )
    assert done.returncode == 1 and "Refused [tools-pin-invalid]" in done.stderr


def test_the_tools_process_will_not_start_without_its_key(tools_vault) -> None:
    config, _key = tools_vault
    done = notegate("tools", "serve", "--config", str(config), env={"PATH": "/usr/bin:/bin"})
    assert done.returncode == 1 and "Refused [tools-key-file]" in done.stderr


def test_the_tools_process_will_not_start_without_a_pinned_mint_key(tools_vault) -> None:
    """Trusting every mint key the state database records would trust whoever can write it."""
    config, key = tools_vault
    done = serve(config, key)  # an empty catalog loads: the pin is what is missing
    assert done.returncode == 1 and "Refused [tools-mint-unpinned]" in done.stderr, done.stderr
    kid = notegate("tools", "mint-key", "--config", str(config)).stdout.strip()
    assert kid == notegate("tools", "mint-key", "--config", str(config)).stdout.strip()  # one key, made once
    assert len(kid) == 43  # an RFC 7638 thumbprint (SHA-256, base64url): the public key's id, no secret
