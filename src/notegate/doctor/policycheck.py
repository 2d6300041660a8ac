"""The config and the policy file load and agree.

The policy checks read the raw ``[policy]`` table, not the loaded config, so each fault is reported under
its own check even when it also stops the config from loading (a route into ``rules/`` fails both
``config.load`` and ``policy.routes``): the owner sees what to fix, not only that start-up would stop.
"""

from __future__ import annotations

import importlib
import tomllib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from notegate.config import Config, load_config
from notegate.doctor.result import CheckResult, fail, ok
from notegate.errors import ConfigError
from notegate.policy import Policy, glob_problem, routes_reaching_guarded
from notegate.policyfile import POLICY_SETTINGS, as_policy_value
from notegate.settings import Setting, check_table

#: The [policy] keys whose values are globs (or exact paths, which are globs without wildcards).
GLOB_KEYS = ("private", "protected", "protected_from_routes", "inbox_reserved")


def read_raw(path: Path) -> tuple[dict[str, Any] | None, str]:
    """The file's TOML as parsed, or (None, why not)."""
    try:
        return tomllib.loads(path.read_text(encoding="utf-8")), ""
    except FileNotFoundError:
        return None, f"{path} does not exist"
    except (OSError, UnicodeDecodeError) as exc:
        return None, f"{path} cannot be read ({type(exc).__name__})"
    except tomllib.TOMLDecodeError as exc:
        return None, f"{path} is not valid TOML ({exc})"


def check_load(path: Path) -> tuple[CheckResult, Config | None]:
    try:
        config = load_config(path)
    except ConfigError as exc:
        return fail("config.load", exc.message, exc.remedy or "Fix the key it names.", subject=str(path)), None
    return ok("config.load", f"{path} loads: {len(config.environments)} environment(s)", subject=str(path)), config


def lenient_policy(table: Mapping[str, Any]) -> Policy:
    """The policy's values with only their keys and types checked (so the checks below can look at rules
    the full validation would refuse).  ConfigError for an unknown key or a wrong type."""
    values = check_table("policy", table, POLICY_SETTINGS)
    return Policy(**{name: as_policy_value(value) for name, value in values.items()})


def _policy_table(raw: Mapping[str, Any]) -> Mapping[str, Any]:
    table = raw.get("policy", {})
    if not isinstance(table, dict):
        raise ConfigError("[policy] is not a table", remedy="Write the policy as a [policy] table.")
    return table


def check_globs(raw: Mapping[str, Any]) -> CheckResult:
    try:
        policy = lenient_policy(_policy_table(raw))
    except ConfigError as exc:
        return fail("policy.globs", f"the [policy] table does not load: {exc.message}", exc.remedy or "")
    problems = [
        f"{key} '{glob}' {problem}"
        for key in GLOB_KEYS
        for glob in getattr(policy, key)
        if (problem := glob_problem(glob)) is not None
    ]
    if problems:
        return fail(
            "policy.globs",
            "; ".join(problems),
            "Write globs as relative vault paths: folders separated by /, * and ? inside a segment, ** as a "
            "whole segment (e.g. private/**).",
        )
    count = sum(len(getattr(policy, key)) for key in GLOB_KEYS)
    return ok("policy.globs", f"{count} globs of {', '.join(GLOB_KEYS)} are well-formed")


def check_routes(raw: Mapping[str, Any]) -> CheckResult:
    try:
        policy = lenient_policy(_policy_table(raw))
    except ConfigError as exc:
        return fail("policy.routes", f"the [policy] table does not load: {exc.message}", exc.remedy or "")
    reaching = routes_reaching_guarded(policy)
    if reaching:
        found = "; ".join(f"routes.{kind} could promote to {target}" for kind, target in reaching)
        return fail(
            "policy.routes",
            f"{found}, a path no route may reach (protected, protected_from_routes or the inbox)",
            "Point routes at ordinary folders such as handoffs/, log/ or design/.",
        )
    routed = [kind for kind, template in policy.routes if template]
    return ok("policy.routes", f"{len(routed)} route(s) reach no protected path")


def enforcer_problem(target: str) -> str | None:
    """Why ``module:qualname`` does not name an importable function, or None when it does."""
    module_name, sep, qualname = target.partition(":")
    if not sep or not module_name or not qualname:
        return f"'{target}' is not module:qualname"
    try:
        obj: Any = importlib.import_module(module_name)
    except ImportError as exc:
        return f"'{target}': module {module_name} does not import ({type(exc).__name__})"
    for part in qualname.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            return f"'{target}': {module_name} has no {qualname}"
    if not callable(obj):
        return f"'{target}' is not a function"
    return None


def check_enforcers(rows: Iterable[Setting] = POLICY_SETTINGS) -> CheckResult:
    """Every policy row names the code that enforces it, and that code exists (DESIGN.md §1.6)."""
    rows = tuple(rows)
    problems: list[str] = []
    for row in rows:
        if not row.enforced_by:
            problems.append(f"{row.name} names no enforcer")
        problems += [f"{row.name}: {p}" for t in row.enforced_by if (p := enforcer_problem(t)) is not None]
    if problems:
        return fail(
            "policy.enforcers",
            "; ".join(problems),
            "Give each [policy] row in policyfile.py an enforced_by naming the function(s) that read it, or "
            "remove a rule no code enforces.",
        )
    count = len({t for row in rows for t in row.enforced_by})
    return ok("policy.enforcers", f"all {len(rows)} policy rules name enforcers; {count} functions import")
