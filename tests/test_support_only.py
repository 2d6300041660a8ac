"""Test modules share helpers only through ``tests/support/`` (issue 29 §5).

Why: a test module that imports another test module (or a conftest) ties the two together: moving or renaming
one test breaks another, and pytest imports the donor's tests twice under two names.  So this holds every
Python file under ``tests/`` to three rules: it imports no ``test_*`` module and no ``conftest``, it uses no
relative import, and a module that is neither a test, a conftest nor a package ``__init__`` lives in
``tests/support/``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
SOURCES = sorted(p for p in TESTS.rglob("*.py") if "artifacts" not in p.parts and "node_modules" not in p.parts)
#: The folders of tests: every helper lives in ``support``, so an import from any other (``web.harness``) names a
#: module that was moved (it fails only when that line runs: inside a test function, in one test).
TEST_FOLDERS = frozenset(p.name for p in TESTS.iterdir() if p.is_dir() and p.name not in ("support", "__pycache__"))


def _imported(path: Path) -> list[tuple[int, str, int]]:
    """(line, module, level) of every import in ``path``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            found.append((node.lineno, node.module or "", node.level))
        elif isinstance(node, ast.Import):
            found += [(node.lineno, alias.name, 0) for alias in node.names]
    return found


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.relative_to(TESTS).as_posix())
def test_imports_no_test_module_no_conftest_nothing_relative(path: Path) -> None:
    wrong = [
        f"line {line}: {'.' * level}{module}"
        for line, module, level in _imported(path)
        if level
        or module.split(".")[0] in TEST_FOLDERS
        or (
            any(part.startswith("test_") or part == "conftest" for part in module.split("."))
            and not module.startswith(("notegate", "mcp", "pytest", "_pytest"))
        )
    ]
    assert wrong == [], "move the shared helper to tests/support/ and import it from there"


def test_helpers_live_in_support() -> None:
    stray = [
        p.relative_to(TESTS).as_posix()
        for p in SOURCES
        if not p.name.startswith("test_")
        and p.name not in ("conftest.py", "__init__.py")
        and TESTS / "support" not in p.parents
    ]
    assert stray == []
