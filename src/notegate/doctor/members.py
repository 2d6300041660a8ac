"""Members: where the state database (the truth, since the console adds and removes members) and the config
file (the seed) disagree, one line each, so the owner can bring the file in line once.

Why a warning, not a failure: both disagreements are legal (a member invited from the console, a member the
console removed while the file still lists them); the file is only read at start, and a removed member stays
removed. A ``[devices.NAME]`` of a person who is no longer a member anywhere is named too: its key raises
nothing any more, and deleting the table is the clean end.
"""

from __future__ import annotations

from notegate.auth.members import Membership
from notegate.config import Config
from notegate.doctor.result import CheckResult, ok, warn
from notegate.state import StateDB

CHECK = "members.config"


def check_members(config: Config) -> CheckResult:
    if not config.state_url and not (config.state_dir / "state.sqlite").exists():
        return ok(CHECK, "no state database yet: the config file's members are the seed")
    try:
        state = StateDB.for_config(config)
    except Exception as exc:  # reported as what it is; state.integrity says more
        return warn(CHECK, f"the state database cannot be opened ({type(exc).__name__})", "See state.integrity.")
    try:
        lines = Membership(state, lambda: config).disagreements()
    finally:
        state.close()
    if not lines:
        return ok(CHECK, "the state database and the config file agree on every environment's members")
    return warn(
        CHECK,
        "; ".join(lines[:10]) + (f" (and {len(lines) - 10} more)" if len(lines) > 10 else ""),
        "Bring [environments.NAME] members (and [devices.*]) in line with the members page; the state database "
        "decides, the file only seeds a new database.",
    )
