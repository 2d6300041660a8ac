"""Run every check in order and collect their results; the CLI renders them.

A check that cannot run because the config did not load is reported as a warning naming why, so the
report always has the same shape; the failure that caused it is already in the list.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from notegate.doctor import (
    devices,
    diskfree,
    integrity,
    livesync,
    origins,
    policycheck,
    scopes,
    syncstate,
    tools,
    workstation,
)
from notegate.doctor.members import check_members
from notegate.doctor.oidc import check_providers
from notegate.doctor.result import CheckResult, fail, warn
from notegate.policyfile import POLICY_SETTINGS
from notegate.services.envdirs import CLONE_NAME, env_dir
from notegate.settings import Setting

#: Checks that need the loaded config.
CONFIG_CHECKS = (
    "origin.reachable",
    "origin.sync",
    "origin.hook",
    "syncer.scope",
    "state.integrity",
    "members.config",
    "git.fsck",
    "disk.free",
)


def run_doctor(
    config_path: Path | None,
    environ: Mapping[str, str],
    *,
    vaults: Iterable[Path] = (),
    rows: Iterable[Setting] = POLICY_SETTINGS,
    origin_timeout: float = origins.ORIGIN_TIMEOUT,
) -> list[CheckResult]:
    """Every check: the server's (when ``config_path`` is given), each workstation vault's, the workstation's."""
    results: list[CheckResult] = []
    if config_path is not None:
        results += _server_checks(config_path, rows, origin_timeout)
    for vault in vaults:
        label = f"vault {vault}"
        results.append(scopes.check_scope(label, vault))
        results.append(integrity.check_fsck(label, vault))
        results.append(syncstate.check_sync_stop(label, vault))
    results += workstation.check_workstation(environ)
    return results


def _server_checks(config_path: Path, rows: Iterable[Setting], origin_timeout: float) -> list[CheckResult]:
    path = config_path.resolve()
    raw, why = policycheck.read_raw(path)
    if raw is None:
        return [
            fail("config.load", why, "Pass --config FILE, or create one with `notegate init DIR`.", subject=str(path)),
            *_skipped("the config file cannot be read"),
        ]
    load, config = policycheck.check_load(path)
    results = [
        load,
        policycheck.check_globs(raw),
        policycheck.check_routes(raw),
        policycheck.check_enforcers(rows),
        *devices.check_devices(raw),
    ]
    if config is None:
        return results + _skipped("the config does not load")
    for env in config.environments.values():
        results += origins.check_environment(config, env, timeout=origin_timeout)
    for env in config.environments.values():
        clone = env_dir(config.state_dir, env.name) / CLONE_NAME
        results.append(scopes.check_scope(f"{env.name} clone", clone))
        if env.is_local_origin:
            results.append(scopes.check_scope(f"{env.name} origin", Path(env.origin_url)))
    if config.state_url:
        results.append(integrity.check_state_url(config.state_url))
    else:
        results.append(integrity.check_state(config.state_dir / "state.sqlite"))
    results.append(check_members(config))
    results += check_providers(config)
    for env in config.environments.values():
        results.append(integrity.check_fsck(f"{env.name} clone", env_dir(config.state_dir, env.name) / CLONE_NAME))
        if env.is_local_origin:
            results.append(integrity.check_fsck(f"{env.name} origin", Path(env.origin_url)))
    for env in config.environments.values():
        results += diskfree.check_free(config, env.name)
    results += livesync.check_livesync(config)
    results += tools.check_tools(config)  # only when [tools] url is set
    return results


def _skipped(why: str) -> list[CheckResult]:
    return [
        warn(name, f"not checked: {why}", "Fix the failure above, then run the doctor again.") for name in CONFIG_CHECKS
    ]
