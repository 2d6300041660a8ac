"""The state database's integrity (read-only ``PRAGMA integrity_check``) and ``git fsck`` of each clone."""

from __future__ import annotations

from pathlib import Path

from notegate.doctor.result import CheckResult, fail, ok, warn
from notegate.state import integrity_problems
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
