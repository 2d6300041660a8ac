"""Issue 12: `notegate` installs as a tool from a clone (`pipx install .` / `uv tool install .`), documented.
What this checks offline: the install guide (docs/how-to/install.md) gives both commands and the version line
they print,
and the distribution exposes the one `notegate` command a tool install puts on PATH. The install itself is
`tests/test_install.py::test_install_and_import_on_every_other_python` (a real non-editable `pip install` of
the clone, what pipx and uv run; NOTEGATE_TEST_INSTALL=1, it downloads the dependencies)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_the_install_guide_says_how_to_install_the_tool() -> None:
    guide = (REPO / "docs" / "how-to" / "install.md").read_text()
    section = guide[guide.index("## Install notegate as a tool") :]
    section = section[: section.index("\n## ", 4)]
    assert re.search(r"^pipx install \.\s+# or: uv tool install \.$", section, re.M), section
    version = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
    assert f"notegate --version        # notegate {version} " in section


def test_the_tool_install_puts_one_notegate_command_on_path() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert project["scripts"] == {"notegate": "notegate.cli:main"}
    assert "gui-scripts" not in project
