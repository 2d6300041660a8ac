"""Hand-written guides that list names scripts match are checked against the code that uses the names
(issue 34): the doctor's check names (its --json output's ``check``)."""

from __future__ import annotations

import ast
import re

from support.sitebuild import REPO

#: The families a doctor check's name starts with (``origin.sync``, ``workstation.hooks`` …).
FAMILIES = ("config", "policy", "device", "origin", "syncer", "state", "git", "disk", "sync", "workstation")
#: Strings of that shape in the doctor's code that are not check names.
NOT_CHECKS = {"state.sqlite"}  # the state database's file name


def test_the_doctor_guide_lists_every_check_the_doctor_runs() -> None:
    pattern = re.compile(rf"(?:{'|'.join(FAMILIES)})\.[a-z][a-z-]*\Z")
    in_code = set()
    for path in (REPO / "src" / "notegate" / "doctor").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and pattern.match(node.value):
                in_code.add(node.value)
    guide = (REPO / "docs" / "how-to" / "doctor.md").read_text(encoding="utf-8")
    in_guide = set(re.findall(r"^\| `([a-z]+\.[a-z-]+)` \|", guide, re.M))
    in_code -= NOT_CHECKS
    assert len(in_code) >= 15
    assert in_code == in_guide, f"only in the code: {in_code - in_guide}; only in the guide: {in_guide - in_code}"
