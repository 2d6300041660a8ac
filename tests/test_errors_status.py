"""A rule's HTTP status lives in the one registry (``errors.HTTP_STATUS``, beside its remedy); the doors look
it up and keep no rule→status table of their own (issue 29 §3, STYLE.md habit 16).

Why: four doors each held a table, so one rule could be 404 at one door and 400 at the next, and a rule
added to the registry got whatever status a door's default gave it.
"""

from __future__ import annotations

import ast
from http import HTTPStatus
from pathlib import Path

import pytest

from notegate import errors
from notegate.errors import HTTP_STATUS, RULES, http_status

DOORS = Path(errors.__file__).parents[1] / "doors"
SOURCES = sorted(DOORS.rglob("*.py"))


def test_every_status_row_names_a_registered_rule_and_an_error_status() -> None:
    for rule, status in HTTP_STATUS.items():
        assert rule in RULES, rule
        assert 400 <= status < 600 and HTTPStatus(status), (rule, status)


def test_an_unlisted_rule_is_a_bad_request() -> None:
    assert http_status("bad-argument") == 400
    assert http_status("no-such-note") == 404 and http_status("disk-full") == 507


def _own_tables(path: Path) -> list[str]:
    """Dict displays mapping a registered rule to a status, and refusals built with a status of their own."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values, strict=True):
                is_rule = isinstance(key, ast.Constant) and key.value in RULES
                is_status = isinstance(value, ast.Constant | ast.Tuple) and (
                    isinstance(value, ast.Tuple) or isinstance(value.value, int)
                )
                if is_rule and is_status:
                    found.append(f"line {node.lineno}: {key.value!r} -> a status of its own")
        if isinstance(node, ast.Call):
            for keyword in node.keywords:
                if keyword.arg == "status" and isinstance(keyword.value, ast.Constant):
                    rules = [k for k in node.keywords if k.arg == "rule"]
                    if rules:
                        found.append(f"line {node.lineno}: a refusal with status={keyword.value.value}")
    return found


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(DOORS)))
def test_no_door_maps_a_rule_to_a_status_of_its_own(path: Path) -> None:
    assert _own_tables(path) == [], "look the status up with errors.http_status(rule)"
