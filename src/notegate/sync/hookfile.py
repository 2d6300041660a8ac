"""The pre-receive hook file notegate installs into a bare origin, and how to recognise one.

One module writes it (``notegate init``, ``notegate hooks install``) and one reads it (``notegate
doctor``), so the two never disagree on what "installed" means.  The same holds for the origin's pack
bound, ``receive.maxInputSize`` (:func:`bound_pack`): git refuses a pack larger than it while receiving,
before the hook runs or anything is stored, so a push cannot fill the origin's disk first and be refused
after. The hook is a two-line shell script that
hands git's pre-receive input to ``notegate pre-receive`` with the deployment config and the environment
whose rules apply; the absolute paths it names live in the origin's ``hooks/`` directory, never in a
repository or a log.
"""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path

import pygit2

#: The line that marks a hook as ours; the doctor looks for it.
HOOK_MARKER = "# notegate pre-receive hook: installed by notegate; reinstall with `notegate hooks install`"


def hook_path(origin_dir: Path) -> Path:
    return origin_dir / "hooks" / "pre-receive"


def notegate_command() -> list[str]:
    """How the hook starts notegate: this interpreter running the package, so no PATH lookup is needed."""
    return [sys.executable, "-m", "notegate"]


def render_hook(config_path: Path, environment: str, command: list[str] | None = None) -> str:
    argv = [*(command or notegate_command()), "pre-receive", "--config", str(config_path), "--environment", environment]
    return f"#!/bin/sh\n{HOOK_MARKER}\nexec {shlex.join(argv)}\n"


def install_hook(origin_dir: Path, config_path: Path, environment: str, command: list[str] | None = None) -> Path:
    """Write the hook (mode 0755), replacing an older notegate hook; returns its path."""
    path = hook_path(origin_dir)
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(path.name + ".notegate-tmp")
    temporary.write_text(render_hook(config_path.resolve(), environment, command), encoding="utf-8")
    os.chmod(temporary, 0o755)  # noqa: S103 - git runs hooks only when they are executable; nothing secret in it
    os.replace(temporary, path)
    return path


def installed(origin_dir: Path) -> bool:
    """Is our hook in place and executable in this bare origin?"""
    path = hook_path(origin_dir)
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    return HOOK_MARKER in text and os.access(path, os.X_OK)


#: The origin's setting that bounds one push's pack (git-config(1), receive.maxInputSize).
PACK_BOUND = "receive.maxInputSize"


def bound_pack(origin_dir: Path, max_push_bytes: int) -> None:
    """Set the origin's ``receive.maxInputSize`` to the policy's ``max_push_bytes``."""
    pygit2.Repository(str(origin_dir)).config[PACK_BOUND] = int(max_push_bytes)


def pack_bound(origin_dir: Path) -> int | None:
    """The origin's ``receive.maxInputSize`` in bytes (git's k/m/g suffixes read); None when unset or not a
    number git reads (git then takes no bound at all)."""
    try:
        config = pygit2.Repository(str(origin_dir)).config
        return config.get_int(PACK_BOUND) if PACK_BOUND in config else None
    except (pygit2.GitError, ValueError, KeyError):
        return None
