"""No policy rule without an enforcer: every [policy] row names the functions that read it, each one
imports, and its source really reads that key.  A row naming a missing function fails the doctor."""

from __future__ import annotations

import ast
import dataclasses
import importlib
import inspect
import textwrap
from pathlib import Path

import pytest

from notegate.doctor import exit_status, run_doctor
from notegate.doctor.policycheck import check_enforcers, enforcer_problem
from notegate.policyfile import POLICY_SETTINGS
from notegate.settings import Setting

ROWS = {row.name: row for row in POLICY_SETTINGS}


def _resolve(target: str):
    module, _, qualname = target.partition(":")
    obj = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


@pytest.mark.parametrize("name", sorted(ROWS))
def test_every_row_names_enforcers_that_exist_and_read_it(name: str) -> None:
    row = ROWS[name]
    assert row.enforced_by, f"[policy] {name} names no enforcer"
    for target in row.enforced_by:
        assert enforcer_problem(target) is None, target
        source = textwrap.dedent(inspect.getsource(_resolve(target)))
        attributes = {n.attr for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Attribute)}
        assert name in attributes, f"{target} does not read .{name}"


def test_the_check_is_green_on_the_shipped_rows() -> None:
    result = check_enforcers()
    assert result.status == "ok", result.found


@pytest.mark.parametrize(
    ("enforced_by", "needle"),
    [
        (("notegate.policy:decide_the_unknowable",), "has no decide_the_unknowable"),
        (("notegate.no_such_module:decide",), "does not import"),
        (("notegate.policy:Policy.no_such_method",), "has no Policy.no_such_method"),
        (("notegate.policy:SLUG",), "is not a function"),
        (("notegate.policy.decide",), "is not module:qualname"),
        ((), "names no enforcer"),
    ],
)
def test_a_row_with_a_missing_enforcer_fails(enforced_by: tuple[str, ...], needle: str) -> None:
    bad = Setting("max_moons", int, 3, "A rule nothing enforces.", enforced_by=enforced_by)
    result = check_enforcers((*POLICY_SETTINGS, bad))
    assert result.check == "policy.enforcers" and result.status == "fail"
    assert "max_moons" in result.found and needle in result.found


def test_the_doctor_exits_1_for_a_row_without_enforcer(demo: Path, isolated_env: dict[str, str]) -> None:
    missing = dataclasses.replace(POLICY_SETTINGS[0], enforced_by=("notegate.policy:Policy.is_secret",))
    results = run_doctor(demo, isolated_env, rows=(missing, *POLICY_SETTINGS[1:]))
    assert exit_status(results) == 1
    assert {r.check for r in results if r.status == "fail"} == {"policy.enforcers"}
