"""How the tools process runs a container catalog entry (issue 32): one argument vector, built here, pure.

Why an argument vector from typed values: a mount's fields must never become a command line or a shell
string. Every element below is a fixed flag, a number from the settings, a network from a closed list, a
variable NAME (a closed alphabet, checked by decide_mount) or the image reference (checked by decide_pin).
A credential's VALUE is never an element: ``--env NAME`` without ``=`` makes the engine copy NAME from its
own environment, which the tools process fills with the mount's opened credentials, so ``ps`` shows names
only.

What the vector asks of the engine: ``--rm`` (nothing left behind), ``-i`` (MCP over stdin and stdout),
``--pull=never`` (the owner loads the image beforehand; nothing downloads at run time), the network the entry
declares (none by default), a read-only root filesystem, no capabilities, no privilege gain, and memory and
process-count limits. Nothing of the tools process's environment reaches the container: only the names given.
"""

from __future__ import annotations

#: The container engines the [tools] engine setting may name: both take the same ``run`` flags.
ENGINES = ("docker", "podman")
#: What the engine client itself needs to reach its daemon or its rootless runtime: given to the client's
#: process only (never passed on with ``--env``), and never a name a container mount may declare.
ENGINE_VARIABLES = (
    "PATH",
    "HOME",
    "DOCKER_HOST",
    "DOCKER_CONFIG",
    "DOCKER_CONTEXT",
    "DOCKER_CERT_PATH",
    "DOCKER_TLS_VERIFY",
    "CONTAINER_HOST",
    "CONTAINERS_CONF",
    "CONTAINERS_STORAGE_CONF",
    "XDG_RUNTIME_DIR",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
)


def image_reference(image: str, digest: str) -> str:
    """``registry/name@sha256:…``: the one image a pin names (the engine refuses it if the bytes differ)."""
    return f"{image}@{digest}"


def container_argv(
    engine: str,
    image: str,
    digest: str,
    *,
    network: str,
    variables: tuple[str, ...],
    memory_mb: int,
    pids: int,
) -> tuple[str, ...]:
    """The argument vector that runs a pinned image as one mount's upstream. ``engine`` is the engine's
    program (a resolved path); ``network`` '' means none; ``variables`` are the mount's declared names."""
    argv = [
        engine,
        "run",
        "--rm",
        "-i",
        "--pull=never",
        f"--network={network or 'none'}",
        "--read-only",
        "--cap-drop=ALL",
        "--security-opt=no-new-privileges",
        f"--memory={int(memory_mb)}m",
        f"--pids-limit={int(pids)}",
    ]
    for name in variables:
        argv += ["--env", name]
    argv.append(image_reference(image, digest))
    return tuple(argv)


def engine_environment(environ: dict[str, str]) -> dict[str, str]:
    """The engine client's own variables, taken from the tools process's environment (nothing else)."""
    return {name: environ[name] for name in ENGINE_VARIABLES if name in environ}
