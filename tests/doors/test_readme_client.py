"""The README's Python client runs as written, against a real `notegate serve` (a newcomer copies it)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from support import mint, running

README = Path(__file__).parents[2] / "README.md"


def the_python_block() -> str:
    text = README.read_text()
    section = text[text.index("**A program of your own**") :]
    match = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert match is not None, "the README's client section holds no python block"
    return match.group(1)


def test_the_readme_client_connects_starts_a_session_and_searches(vault: Path, tmp_path: Path) -> None:
    token = mint(vault, name="script", client_class="workstation")
    script = tmp_path / "client.py"
    script.write_text(the_python_block())
    with running(vault) as server:
        env = {**os.environ, "NOTEGATE_URL": server.url, "NOTEGATE_TOKEN": token}
        result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=120)
    assert result.returncode == 0, result.stderr[-3000:]
    printed = result.stdout.split()
    assert printed and all(path.endswith(".md") for path in printed), result.stdout
