"""The whole app in this process on a real uvicorn server, counting the state database's token lookups."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import uvicorn

from notegate.config import load_config
from notegate.doors.http import create_app
from notegate.services.runtime import Runtime
from support import free_port


class Served:
    def __init__(self, url: str, runtime: Runtime, app) -> None:
        self.url = url
        self.runtime = runtime
        self.app = app
        self.lookups = 0


@contextlib.contextmanager
def serve_in_process(config_path: Path) -> Iterator[Served]:
    """The whole app on a real uvicorn server on 127.0.0.1, counting the state DB's token-row lookups."""
    port = free_port()
    runtime = Runtime(load_config(config_path))
    app = create_app(runtime, host="127.0.0.1", port=port)
    served = Served(f"http://127.0.0.1:{port}", runtime, app)
    state = runtime.state
    lookup = state.token

    def counted(token_id: str):
        served.lookups += 1
        return lookup(token_id)

    state.token = counted  # the real lookup still runs: this only counts it
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, daemon=True, name="door-cost-server")
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the server did not start")
        time.sleep(0.02)
    try:
        yield served
    finally:
        server.should_exit = True
        thread.join(timeout=30)
