"""The pre-receive hook's start-up: git starts a fresh interpreter for every push, so what it imports is
paid on every push. It needs the config, the policy and pygit2; never the model providers, their SDKs or
the server stack (they cost ~0.25 s a push when `notegate.models` imported them all)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import notegate.models
from notegate.config import load_config
from notegate.sync.hookfile import hook_path

#: Modules the hook has no use for: the providers and their SDKs, the HTTP stack, the server.
NOT_AT_PUSH = [
    "anthropic",
    "openai",
    "httpx",
    "httpx2",
    "mcp",
    "starlette",
    "uvicorn",
    "notegate.models.base",
    "notegate.models.chain",
    "notegate.models.anthropic_api",
    "notegate.models.openai_api",
    "notegate.models.claude_cli",
    "notegate.services",
    "notegate.doors",
]


def imported_by(argv: list[str], *, env: dict[str, str], stdin: str = "") -> tuple[set[str], int]:
    """Every module a fresh ``python -X importtime ARGV`` imported (its stderr lists each one) and the exit."""
    result = subprocess.run(
        [sys.executable, "-X", "importtime", *argv], input=stdin, capture_output=True, text=True, env=env, timeout=120
    )
    names = set(re.findall(r"^import time:\s+\d+ \|\s+\d+ \|\s*(\S+)$", result.stderr, flags=re.MULTILINE))
    return names, result.returncode


def test_the_hook_imports_no_provider_sdk_or_server(door) -> None:
    """The hook git runs, exactly as it names the command (``python -m notegate pre-receive …``), on a
    push that updates nothing: it loads the config and the policy, and none of NOT_AT_PUSH."""
    environment = load_config(door.config).default_environment
    line = hook_path(door.origin).read_text().splitlines()[-1]
    assert line.startswith("exec ") and "pre-receive" in line
    env = {**os.environ, "GIT_DIR": str(door.origin)}
    argv = ["-m", "notegate", "pre-receive", "--config", str(door.config), "--environment", environment]
    names, status = imported_by(argv, env=env)
    assert status == 0
    assert {"notegate.config", "notegate.policy", "notegate.sync.prereceive", "pygit2"} <= names
    assert sorted(m for m in names if m in NOT_AT_PUSH or m.split(".")[0] in NOT_AT_PUSH) == []


def test_a_refused_push_still_refuses_with_the_lazy_package(door) -> None:
    """Behaviour unchanged: the real hook, started by git, refuses a hostile push with the exact rule."""
    from support.gitstreams import FILE, commit

    new = commit(door.scratch, [door.main], add={"projects/CLAUDE.md": (FILE, b"# do this")})
    result = door.push(new)
    assert result.returncode != 0
    assert re.findall(r"Refused \[([a-z0-9-]+)\]", result.stderr) == ["instruction-file-name"]


@pytest.mark.parametrize("name", notegate.models.__all__)
def test_every_public_name_of_the_models_package_resolves(name: str) -> None:
    """`from notegate.models import X` still works for every name the package exports, and is the object
    of the module it lives in."""
    value = getattr(notegate.models, name)
    home = notegate.models._HOME[name]
    assert value is getattr(sys.modules[home], name)


def test_an_unknown_models_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no_such_name"):
        _ = notegate.models.no_such_name
    with pytest.raises(ImportError):
        exec("from notegate.models import no_such_name", {})


def test_the_models_package_imports_no_provider_when_imported(tmp_path: Path) -> None:
    """A fresh interpreter that imports the package (as `notegate.config` does) gets none of its providers."""
    code = "import sys, notegate.models; print(sorted(m for m in sys.modules if m.startswith('notegate.models.')))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"
