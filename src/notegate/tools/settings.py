"""The ``[tools]`` table of notegate.toml: where the tools process listens, where the knowledge service reaches
it, where the upstreams come from, and the bounds of one call. Rows with defaults (docs/how-to/tools-gateway.md lists
them, and a test checks it names every one). Pure."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from notegate.network import LOOPBACK_URL_HOSTS
from notegate.policy.container import ENGINES
from notegate.settings import Setting, must_be_port, must_be_positive


def _engine(value: str) -> str | None:
    return None if value in ENGINES else f"must be one of {', '.join(ENGINES)}"


def _loopback_url(value: str) -> str | None:
    if value == "" or value.startswith(tuple(f"http://{host}:" for host in LOOPBACK_URL_HOSTS)):
        return None
    return "must be '' (no tools gateway) or http://127.0.0.1:PORT (the tools process listens on loopback only)"


TOOLS_SETTINGS: tuple[Setting, ...] = (
    Setting(
        "url",
        str,
        "",
        "Where the knowledge service reaches the tools process ('' = no tools gateway): http://127.0.0.1:PORT.",
        _loopback_url,
    ),
    Setting("port", int, 8767, "The loopback port `notegate tools serve` listens on.", must_be_port),
    Setting(
        "cache",
        str,
        "upstream-cache",
        "The folder of pinned artifacts (pypi/, npm/, npm-cache/) filled by `make upstream-cache`; relative "
        "to this file. Nothing is downloaded at run time.",
    ),
    Setting(
        "installs",
        str,
        "upstream-installs",
        "Where each catalog entry is installed into its own environment; relative to this file.",
    ),
    Setting(
        "call_seconds", float, 30.0, "The longest one upstream call may take before it is refused.", must_be_positive
    ),
    Setting(
        "max_result_bytes",
        int,
        262144,
        "The largest result (as JSON) one upstream call may return; a larger one is refused.",
        must_be_positive,
    ),
    Setting(
        "max_answer_bytes",
        int,
        4194304,
        "The largest answer (a listing or one call's result, as JSON) the knowledge service reads from the "
        "tools process; a larger one is cut off as it arrives and refused. Keep it above max_result_bytes.",
        must_be_positive,
    ),
    Setting(
        "max_line_bytes",
        int,
        4194304,
        "The longest line (one JSON-RPC message) an upstream may write on its stdout. A longer one is refused "
        "as it arrives, never held whole, and the upstream is restarted. Keep it above max_result_bytes.",
        must_be_positive,
    ),
    Setting(
        "engine",
        str,
        "docker",
        "The container engine that runs container catalog entries: docker or podman (its client must be on "
        "PATH and its daemon or runtime up when the tools process starts, if the catalog holds a container).",
        _engine,
    ),
    Setting(
        "container_memory_mb",
        int,
        512,
        "The memory one container upstream may use, in MiB (the engine's --memory).",
        must_be_positive,
    ),
    Setting(
        "container_pids",
        int,
        256,
        "The most processes and threads one container upstream may run (the engine's --pids-limit).",
        must_be_positive,
    ),
    Setting(
        "restart_seconds",
        float,
        1.0,
        "The first wait before a crashed upstream is started again; it doubles per crash, up to 64 times it.",
        must_be_positive,
    ),
)


@dataclass(frozen=True)
class ToolsConfig:
    """The [tools] table, paths resolved against the config file's folder."""

    url: str = ""
    port: int = 8767
    cache: Path = Path("upstream-cache")
    installs: Path = Path("upstream-installs")
    call_seconds: float = 30.0
    max_result_bytes: int = 262144
    max_line_bytes: int = 4194304
    max_answer_bytes: int = 4194304
    restart_seconds: float = 1.0
    engine: str = "docker"
    container_memory_mb: int = 512
    container_pids: int = 256

    @classmethod
    def from_table(cls, values: dict[str, Any], base: Path) -> ToolsConfig:
        return cls(
            url=values["url"],
            port=values["port"],
            cache=(base / values["cache"]).resolve(),
            installs=(base / values["installs"]).resolve(),
            call_seconds=float(values["call_seconds"]),
            max_result_bytes=values["max_result_bytes"],
            max_line_bytes=values["max_line_bytes"],
            max_answer_bytes=values["max_answer_bytes"],
            restart_seconds=float(values["restart_seconds"]),
            engine=values["engine"],
            container_memory_mb=values["container_memory_mb"],
            container_pids=values["container_pids"],
        )
