"""The doctor's tests' helpers: the CLI in a child process, and the checks a result list names."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

NOTEGATE = [sys.executable, "-m", "notegate.cli"]


def notegate(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([*NOTEGATE, *args], capture_output=True, text=True, timeout=300, env=env, cwd=cwd)


Doctor = Callable[..., tuple[int, list[dict[str, str]]]]


def failed(results: list[dict[str, str]]) -> set[str]:
    return {r["check"] for r in results if r["status"] == "fail"}


def statuses(results: list[dict[str, str]], check: str) -> list[str]:
    return [r["status"] for r in results if r["check"] == check]
