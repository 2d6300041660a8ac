"""Every `notegate …` command line the README and the site show in a shell block parses with the real
argparse tree (issue 34): a renamed flag or command makes the page that still shows the old one fail here,
not a newcomer pasting it."""

from __future__ import annotations

import re
import shlex

import pytest

from support.sitebuild import REPO

SHELL_BLOCK = re.compile(r"^([ \t]*)```(?:sh|bash|shell)?\n(.*?)^\1```", re.M | re.S)


def command_lines() -> list[tuple[str, list[str]]]:
    """(page, argv) of each `notegate` command in a shell block (or an unlabelled one), continuation lines
    joined, comments dropped, each command of a `&&`/`|`/`;` chain on its own."""
    found = []
    for page in [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]:
        for block in SHELL_BLOCK.finditer(page.read_text(encoding="utf-8")):
            for line in block.group(2).replace("\\\n", " ").splitlines():
                if not line.strip().startswith("notegate "):
                    continue
                words, command = shlex.split(line, comments=True), []
                for word in [*words, ";"]:
                    if word in ("&&", "||", "|", ";"):
                        if command:
                            found.append((str(page.relative_to(REPO)), command))
                        command = []
                    else:
                        command.append(word)
    return [(page, argv) for page, argv in found if argv[0] == "notegate"]


def test_the_pages_show_enough_commands_to_check() -> None:
    assert len(command_lines()) >= 25


@pytest.mark.parametrize(("page", "argv"), command_lines(), ids=lambda v: " ".join(v) if isinstance(v, list) else v)
def test_each_command_a_page_shows_parses(page: str, argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    from notegate.cli import build_parser

    try:
        build_parser().parse_args(argv[1:])
    except SystemExit as exit:  # --version and -h exit 0 after printing
        assert exit.code == 0, f"{page}: {' '.join(argv)}\n{capsys.readouterr().err}"
