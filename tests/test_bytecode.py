"""The suite byte-compiles the package before it starts (conftest.pytest_configure), so the fresh
interpreters it starts (git's pre-receive hook per push, the Claude Code hooks, the CLI's real path) load
bytecode instead of compiling every notegate module again."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import notegate


def test_every_module_of_the_package_has_current_bytecode() -> None:
    stale = []
    for source in sorted(Path(notegate.__file__).parent.rglob("*.py")):
        cached = Path(importlib.util.cache_from_source(str(source)))
        if not cached.is_file() or cached.stat().st_mtime < source.stat().st_mtime:
            stale.append(str(source.relative_to(Path(notegate.__file__).parent)))
    assert stale == []
