"""The console's Tools pages under test: a vault with a [tools] table, the seal key made by the real CLI, one
catalog pin, and a real tools process app (the Gateway with its key file, pinned to the server's mint key) on
loopback in this process, without upstreams (the pages' verify and health questions need no upstream)."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import uvicorn

from notegate.config import load_config
from notegate.state import StateDB
from notegate.tools.app import Gateway, create_tools_app
from notegate.tools.sealing import read_key_file
from notegate.tools.tokens import Minter
from support import free_port
from support.web_harness import cli

#: mcp-server-time's pin (adding a pin needs no artifact; installing it does, and nothing here installs).
TIME_PIN = {
    "kind": "pypi",
    "package": "mcp-server-time",
    "version": "2026.10.19",
    "digest": "sha256:5c099a001c6ca78260bda419f2e9b2aabee1adc4fe6ca56d8959871ad8da58a1",
    "program": "mcp-server-time",
}


def with_tools(vault: Path) -> tuple[Path, int]:
    """Add [tools] (a free loopback port), the seal key and the 'time' pin; returns the key file and port."""
    port = free_port()
    text = vault.read_text().replace("[policy]", f'[tools]\nurl = "http://127.0.0.1:{port}"\n\n[policy]', 1)
    vault.write_text(text)
    key = vault.parent / "tools.key"
    cli(vault, "tools", "keygen", "--output", str(key))
    cli(vault, "tools", "catalog", "--name", "time", *(f"--{k}={v}" for k, v in TIME_PIN.items()))
    return key, port


@contextlib.contextmanager
def tools_process(vault: Path, key: Path, port: int) -> Iterator[Gateway]:
    """The tools process's app on 127.0.0.1:port, trusting the server's mint key (made here if missing)."""
    config = load_config(vault)
    state = StateDB.for_config(config)
    kid = Minter(state, config.state_dir).kid
    gateway = Gateway(state, read_key_file(key), config.tools, mint_keys=[kid])
    server = uvicorn.Server(
        uvicorn.Config(create_tools_app(gateway), host="127.0.0.1", port=port, log_level="warning", lifespan="off")
    )
    thread = threading.Thread(target=server.run, daemon=True, name="tools-process")
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the tools app did not start"
        time.sleep(0.02)
    try:
        yield gateway
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        state.close()
