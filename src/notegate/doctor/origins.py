"""Each environment's origin: reachable, the server's clone in step with it, and (for a bare origin on this
machine) notegate's pre-receive hook installed, since libgit2's local pushes and anyone else's pushes meet
only the hook, and its ``receive.maxInputSize`` no larger than the policy's ``max_push_bytes`` (git refuses
a larger pack before storing it; the hook alone would refuse it only once it is on the disk).

Read-only: the origin's refs are listed, never fetched, so the doctor leaves the clone as it found it.
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

from notegate.config import Config, EnvironmentConfig
from notegate.doctor.result import CheckResult, fail, ok, warn
from notegate.errors import OriginUnavailable
from notegate.services.envdirs import CLONE_NAME, env_dir
from notegate.sync import hookfile
from notegate.sync.quarantine import STALE_QUARANTINE_SECONDS, stale_quarantines
from notegate.vault.store import VaultStore

ORIGIN_TIMEOUT = 20.0
_USERINFO = re.compile(r"(?<=://)[^/@]*@")


def shown_origin(env: EnvironmentConfig) -> str:
    """The origin as the doctor prints it: a URL without any user or password in it."""
    return _USERINFO.sub("", env.origin_url)


def _short(commit: str | None) -> str:
    return commit[:12] if commit else "nothing yet"


def check_environment(config: Config, env: EnvironmentConfig, *, timeout: float = ORIGIN_TIMEOUT) -> list[CheckResult]:
    """origin.reachable, origin.sync, origin.hook, origin.pack-bound and origin.quarantine for one environment."""
    results = [_check_hook(env), *_check_pack_bound(config, env), *_check_quarantines(env)]
    clone = env_dir(config.state_dir, env.name) / CLONE_NAME
    if not (clone / "HEAD").exists():
        return [
            warn(
                "origin.sync",
                f"the server has no clone of this environment yet ({clone})",
                "`notegate serve` creates it at start.",
                subject=env.name,
            ),
            *results,
        ]
    store = VaultStore(env.name, clone, env.origin_url)
    try:
        tip = store.origin_main(timeout)
    except OriginUnavailable as exc:
        return [
            fail(
                "origin.reachable",
                f"{shown_origin(env)}: {exc.message}",
                "Check the origin's address in [environments."
                f"{env.name}] origin, the network and the credentials; writes are refused until it answers.",
                subject=env.name,
            ),
            *results,
        ]
    results.insert(0, ok("origin.reachable", f"{shown_origin(env)} answers; main at {_short(tip)}", subject=env.name))
    results.insert(1, _sync_result(env.name, store, tip))
    return results


def _sync_result(name: str, store: VaultStore, tip: str | None) -> CheckResult:
    ahead, behind = store.compare_with_origin(tip)
    local = store.head()
    if ahead == 0 and behind == 0:
        return ok("origin.sync", f"the server's clone is at the origin's main ({_short(local)})", subject=name)
    if ahead == 0:
        count = f"{behind} commit(s)" if behind is not None else "commits it has not fetched"
        return fail(
            "origin.sync",
            f"the server's clone ({_short(local)}) is behind the origin ({_short(tip)}) by {count}",
            "Start `notegate serve` (it fetches every fetch_interval_seconds); if it is running, its log says "
            "why the fetch fails.",
            subject=name,
        )
    if behind == 0:
        return fail(
            "origin.sync",
            f"the server's clone ({_short(local)}) is {ahead} commit(s) ahead of the origin ({_short(tip)}): "
            "the origin lost commits the server acknowledged",
            "Restore the origin's main from the server's clone (push it back), then check who rewrote it.",
            subject=name,
        )
    return fail(
        "origin.sync",
        f"the server's clone ({_short(local)}) and the origin ({_short(tip)}) have diverged: the origin's "
        "history was rewritten",
        "Decide which history is right; push the server's clone back to the origin, or move the clone aside so "
        "the server fetches the origin afresh.",
        subject=name,
    )


def _check_hook(env: EnvironmentConfig) -> CheckResult:
    if not env.is_local_origin:
        return warn(
            "origin.hook",
            f"{shown_origin(env)} is not on this machine: its push rules cannot be checked from here",
            "Configure the forge's push ruleset for protected paths (README: the git door).",
            subject=env.name,
        )
    origin = Path(env.origin_url)
    if hookfile.installed(origin):
        return ok("origin.hook", "notegate's pre-receive hook is installed and executable", subject=env.name)
    path = hookfile.hook_path(origin)
    if not path.exists():
        found = f"{path} is missing"
    elif hookfile.HOOK_MARKER not in path.read_text(encoding="utf-8", errors="replace"):
        found = f"{path} is not notegate's hook"
    elif not os.access(path, os.X_OK):
        found = f"{path} is not executable"
    else:
        found = f"{path} cannot be used"
    return fail(
        "origin.hook",
        found + ": pushes to the origin are not checked against the policy",
        f"Run `notegate hooks install {origin}` (or `chmod +x` it); merge another pre-receive hook into it by hand.",
        subject=env.name,
    )


def _check_pack_bound(config: Config, env: EnvironmentConfig) -> list[CheckResult]:
    """origin.pack-bound: a local bare origin bounds one push's pack by the policy's ``max_push_bytes``."""
    origin = Path(env.origin_url)
    if not env.is_local_origin or not (origin / "HEAD").is_file():  # gone: origin.hook and reachable say so
        return []
    limit = config.policy.max_push_bytes
    bound = hookfile.pack_bound(origin)
    if bound is not None and 0 < bound <= limit:
        return [ok("origin.pack-bound", f"{hookfile.PACK_BOUND} is {bound} bytes", subject=env.name)]
    found = f"{hookfile.PACK_BOUND} is not set" if bound is None or bound <= 0 else f"{hookfile.PACK_BOUND} is {bound}"
    return [
        fail(
            "origin.pack-bound",
            f"{found}, above max_push_bytes ({limit}): a push may store a pack that large before the hook refuses it"
            if bound
            else f"{found}: a push may store a pack of any size before the hook refuses it",
            f"Run `notegate hooks install {origin}` (it sets {hookfile.PACK_BOUND} to max_push_bytes), or `git -C "
            f"{origin} config {hookfile.PACK_BOUND} {limit}`.",
            subject=env.name,
        )
    ]


def _check_quarantines(env: EnvironmentConfig) -> list[CheckResult]:
    """origin.quarantine: no quarantine folder a push cut short left in a local bare origin (older than
    ``STALE_QUARANTINE_SECONDS``: a younger one may be a push under way)."""
    origin = Path(env.origin_url)
    if not env.is_local_origin or not (origin / "HEAD").is_file():
        return []
    left = stale_quarantines(origin, now=time.time())
    if not left:
        return [ok("origin.quarantine", "no quarantine folder left by a push cut short", subject=env.name)]
    days = max(q.age_seconds for q in left) / 86400
    size = sum(q.stored_bytes for q in left) / (1 << 20)
    return [
        warn(
            "origin.quarantine",
            f"{len(left)} quarantine folder(s) left in {origin / 'objects'} by pushes cut short "
            f"({size:.1f} MiB, the oldest {days:.1f} days old): {', '.join(q.path.name for q in left[:3])}",
            f"The next push through notegate's hook removes every one older than "
            f"{STALE_QUARANTINE_SECONDS // 3600} h; or delete them (nothing acknowledged is in them).",
            subject=env.name,
        )
    ]
