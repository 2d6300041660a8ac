"""The state database's integrity (read-only ``PRAGMA integrity_check``; on PostgreSQL: it connects, its
migrations are this notegate's and every table and column is there) and ``git fsck`` of each clone."""

from __future__ import annotations

from pathlib import Path

from notegate.doctor.result import CheckResult, fail, ok, warn
from notegate.postgres import describe_url
from notegate.state import inspect_postgres, integrity_problems
from notegate.vault.store import git_fsck

FSCK_TIMEOUT = 120.0


def check_state(path: Path) -> CheckResult:
    if not path.exists():
        return warn(
            "state.integrity", f"{path} does not exist yet", "It is created by `notegate init` or at first start."
        )
    problems = integrity_problems(path)
    if problems:
        return fail(
            "state.integrity",
            f"{path}: {'; '.join(problems[:5])}",
            "Stop the server, restore the state database from a backup (`notegate restore`), or move it aside "
            "and mint tokens again; the vault itself lives in git and is not affected.",
        )
    return ok("state.integrity", f"{path}: integrity_check ok")


def check_state_url(url: str) -> CheckResult:
    """The PostgreSQL state database of ``[state] url``, looked at read-only; never the URL's password."""
    where = describe_url(url)
    status = inspect_postgres(url)
    if status.unreachable:
        return fail(
            "state.integrity",
            f"{where}: cannot connect ({status.unreachable})",
            "Check that the PostgreSQL server is running and reachable and that the user may connect; a password "
            "comes from ~/.pgpass (or PGPASSFILE) or PGPASSWORD, never from the doctor's output.",
        )
    if not status.migrations:
        return warn("state.integrity", f"{where}: no notegate state there yet", "It is created at first start.")
    problems = status.problems()
    if problems:
        return fail(
            "state.integrity",
            f"{where}: {'; '.join(problems)}",
            "Start the server of this notegate version (it applies missing migrations); a database of a newer "
            "notegate is served by that version only; for missing tables, restore the state (`notegate restore`).",
        )
    return ok("state.integrity", f"{where}: connected, schema {max(status.migrations)}, every table present")


def check_fsck(label: str, repo_dir: Path, *, timeout: float = FSCK_TIMEOUT) -> CheckResult:
    if not repo_dir.exists():
        return warn("git.fsck", f"{repo_dir} does not exist yet", "Nothing to check.", subject=label)
    problems = git_fsck(repo_dir, timeout)
    if problems:
        return fail(
            "git.fsck",
            f"{repo_dir}: {'; '.join(problems[:5])}",
            "Stop writers to it; re-clone the server's clone from the origin (delete it, `notegate serve` "
            "fetches a new one), or repair the origin from a good clone (`git push --mirror`).",
            subject=label,
        )
    return ok("git.fsck", f"{repo_dir}: git fsck found no problem", subject=label)
