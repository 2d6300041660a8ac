"""Container catalog entries in the tools process: find the engine at start, check each pinned image is
loaded, and describe how each mount runs it (the argument vector itself is built in policy/container.py).

Why check at start: the engine runs with ``--pull=never``, so an absent engine, a client whose daemon is not
running, or an image the owner has not loaded would otherwise show only as an upstream that crashes and
restarts forever. Each is a hard load failure instead, named by its rule, before anything listens.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from notegate.errors import NotegateError
from notegate.policy.container import ENGINE_VARIABLES, container_argv, engine_environment, image_reference
from notegate.tools.install import Entry, Launch, require_pinned
from notegate.tools.settings import ToolsConfig

#: How long the engine may take to answer at start (its version, an image's presence).
ENGINE_SECONDS = 20


def _ask(argv: list[str]) -> bool:
    try:
        done = subprocess.run(
            argv,
            env=engine_environment(dict(os.environ)),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=ENGINE_SECONDS,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def find_engine(name: str) -> str:
    """The engine's program, once its client is on PATH and its daemon (or runtime) answers."""
    program = shutil.which(name)
    if program is None:
        raise NotegateError(
            f"the catalog holds a container but {name} is not installed", rule="tools-container-engine-missing"
        )
    if not _ask([program, "version"]):
        raise NotegateError(
            f"the catalog holds a container but {name} does not answer (is its daemon running?)",
            rule="tools-container-engine-missing",
        )
    return program


def verify_image(entry: Entry, engine: str) -> None:
    """Refuse an entry whose pin does not hold, or whose image the engine has not loaded."""
    require_pinned(entry)
    if not _ask([engine, "image", "inspect", image_reference(entry.package, entry.digest)]):
        raise NotegateError(
            f"the engine holds no image {image_reference(entry.package, entry.digest)} for '{entry.name}'",
            rule="tools-image-missing",
        )


def container_launch(entry: Entry, engine: str, mount: str, variables: tuple[str, ...], config: ToolsConfig) -> Launch:
    """How one mount runs ``entry``. A declared variable the engine client itself reads is refused: its
    value would steer the engine, not reach the container."""
    clash = sorted(set(variables) & set(ENGINE_VARIABLES))
    if clash:
        raise NotegateError(
            f"mount '{mount}': the variable {clash[0]} is the container engine's own", rule="tools-mount-invalid"
        )
    argv = container_argv(
        engine,
        entry.package,
        entry.digest,
        network=entry.program,
        variables=variables,
        memory_mb=config.container_memory_mb,
        pids=config.container_pids,
    )
    config.installs.mkdir(parents=True, exist_ok=True)
    return Launch(argv, Path(config.installs))
