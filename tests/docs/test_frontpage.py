"""What the README and the first-hour tutorial say `make run` prints is what `notegate serve` prints (issue 34):
each line they show, with ``…`` for what depends on the machine (absolute paths, lines left out), matches a
line of the real hints, in order."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from support.sitebuild import REPO


def shown(page: Path) -> list[str]:
    """The lines of the ``text`` block that follows the page's first ``make run``."""
    text = page.read_text(encoding="utf-8")
    block = re.search(r"```text\n(.*?)```", text[text.index("make run") :], re.S)
    assert block is not None, f"{page.name} shows no output of make run"
    return [line for line in block.group(1).splitlines() if line.strip() not in ("", "…")]


@pytest.mark.parametrize("page", ["README.md", "docs/tutorials/first-hour.md"])
def test_the_printed_lines_a_page_shows_are_the_servers(
    vault: Path, page: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As `make run` runs it: the demo vault in var/demo, notegate from .venv/bin (not on PATH)."""
    import shutil
    import sys

    from notegate.cli import _connect_hint, _console_hint
    from notegate.config import load_config

    demo = tmp_path / "var" / "demo"
    shutil.copytree(vault.parent, demo, symlinks=True)
    config = load_config(demo / "notegate.toml")
    token = demo / "demo.token"
    program = Path(sys.executable).parent / "notegate"
    if not program.exists():
        pytest.skip("no notegate entry point beside this interpreter (make builds one in .venv/bin)")
    monkeypatch.setattr(sys, "argv", [str(program)])
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    connect = _connect_hint("http://localhost:8765", str(token), demo / "notegate.toml")
    real = (connect + "\n" + _console_hint(config, 8765)).splitlines()
    at = 0
    for line in shown(REPO / page):
        pattern = re.compile(".*".join(re.escape(part) for part in line.split("…")) + r"\Z")
        while at < len(real) and not pattern.match(real[at]):
            at += 1
        assert at < len(real), f"{page} shows a line serve does not print (in this order): {line!r}\n" + "\n".join(real)
        at += 1
