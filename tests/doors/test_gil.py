"""The server hands the GIL over every millisecond (doors/gil.py): set by ``notegate serve`` before it serves."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

from notegate.doors import gil

SERVE = Path(__file__).resolve().parents[2] / "src" / "notegate" / "cli" / "serve.py"


def test_share_sets_the_interval_for_the_process() -> None:
    before = sys.getswitchinterval()
    try:
        sys.setswitchinterval(0.005)
        gil.share()
        assert sys.getswitchinterval() == gil.SWITCH_INTERVAL == 0.001
    finally:
        sys.setswitchinterval(before)


def test_the_serve_command_shares_it_before_it_serves() -> None:
    """Read from the source: ``cmd_serve`` calls ``gil.share()`` before the server is run."""
    tree = ast.parse(SERVE.read_text(encoding="utf-8"))
    serve = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "cmd_serve")
    calls = [(n.lineno, ast.unparse(n.func)) for n in ast.walk(serve) if isinstance(n, ast.Call)]
    shared = [line for line, name in calls if name == "gil.share"]
    served = [line for line, name in calls if name.endswith(".run") or name == "bounded_server"]
    assert shared and served and min(shared) < min(served), calls
