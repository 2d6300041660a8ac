"""Machine contracts (who may call one, which, and what a health export may plausibly hold) and backups and
restores (the target directory, the state URL stored in a config, the manifest and its files).
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection
from dataclasses import dataclass

from notegate.policy.caller import Caller
from notegate.policy.decision import Decision, allow, deny
from notegate.policy.vocab import ClientClass, Tier


def decide_contract_door(caller: Caller) -> Decision:
    """May ``caller`` use the contract door at all?  Machines only: a conversation has a model to deliver
    rules to and reaches notes through the MCP tools, never a contract (the second lock on the door)."""
    if caller.client_class == ClientClass.MACHINE and caller.tier == Tier.MACHINE:
        return allow("contract-door")
    return deny(
        "contract-not-for-conversations",
        f"a {caller.client_class} credential cannot call contracts: conversations use the MCP tools.",
    )


def decide_contract(caller: Caller, granted: Collection[str], name: str, known: Collection[str]) -> Decision:
    """May this machine call contract ``name``?  Only one it was given at creation that this server ships;
    anything else is "no such contract", in the same words whether it exists or not."""
    door = decide_contract_door(caller)
    if not door.allowed:
        return door
    if name in granted and name in known:
        return allow("contract-granted")
    return deny("no-such-contract", "no such contract for this credential.")


@dataclass(frozen=True)
class PlausibleRange:
    low: float
    high: float


#: What a day's health export may plausibly hold, in the unit the vault records (inclusive bounds). A value
#: outside is dropped loudly, never recorded: an exporter's scale error (grams as kilograms, minutes as hours)
#: lands far outside these. Sources: the limits of human physiology, with generous margins.
HEALTH_RANGES: dict[str, PlausibleRange] = {
    "steps": PlausibleRange(0, 150_000),
    "weight": PlausibleRange(2, 400),  # kg
    "sleep": PlausibleRange(0, 24),  # h
    "resting_heart_rate": PlausibleRange(20, 250),  # 1/min
    "heart_rate": PlausibleRange(20, 250),  # 1/min
    "distance": PlausibleRange(0, 300),  # km
    "active_energy": PlausibleRange(0, 20_000),  # kcal
    "water": PlausibleRange(0, 20),  # L
    "body_fat": PlausibleRange(1, 80),  # %
    "blood_oxygen": PlausibleRange(50, 100),  # %
}


def decide_health_value(metric: str, value: float) -> Decision:
    """May a converted health value be recorded?  Only a known metric, finite, inside its plausible range."""
    bounds = HEALTH_RANGES.get(metric)
    if bounds is None:
        return deny("health-unknown-metric", f"the vault records no metric named {metric!r}.")
    if not math.isfinite(value) or not bounds.low <= value <= bounds.high:
        return deny(
            "health-implausible-value",
            f"{metric} = {value:g} is outside the plausible range {bounds.low:g}..{bounds.high:g}.",
        )
    return allow("health-value")


# -- backups and restores (services/backup.py, services/restore.py) -----------------------------------------
def decide_restore_target(exists: bool, entries: int) -> Decision:
    """May a backup be restored into a directory that ``exists`` with ``entries`` entries?  Only a new or
    empty one: a restore never mixes a backup's state with files already there (or overwrites a vault)."""
    if not exists or entries == 0:
        return allow("restore-target", "a new or empty directory")
    return deny("restore-target-not-empty", f"the target directory is not empty ({entries} entries)")


_STATE_URL = re.compile(r"^postgres(?:ql)?://([^/?#]*)(.*)$", re.DOTALL)


def _percent_decoded(text: str) -> str:
    return re.sub(r"%([0-9A-Fa-f]{2})", lambda m: chr(int(m.group(1), 16)), text)


def decide_state_url_stored(url: str) -> Decision:
    """May ``url`` be written into a config file (``notegate init --state-url``, ``restore --state-url``)?
    Not with a password in it: a config file is copied, backed up and read by every command. libpq reads the
    password itself from ``~/.pgpass`` (or the file PGPASSFILE names) or PGPASSWORD."""
    found = _STATE_URL.match(url)
    if found is None:
        return deny("config-invalid", "the state URL must be a postgresql:// URL")
    userinfo = found.group(1).rpartition("@")[0]
    query = found.group(2).partition("?")[2].partition("#")[0]
    keys = {_percent_decoded(pair.partition("=")[0]).strip().lower() for pair in query.split("&")}
    if ":" in userinfo or "password" in keys:  # libpq decodes %-escapes in keys too
        return deny("state-url-password", "the state URL holds a password, which would be written into the config")
    return allow("state-url", "a PostgreSQL URL without a password")


def decide_new_state_database(rows: int) -> Decision:
    """May init or restore put a deployment's state into a PostgreSQL database that holds ``rows`` rows in
    notegate's tables? Only an empty one: two deployments' tokens and audit never mix, and a restore never
    lands on top of a live state."""
    if rows == 0:
        return allow("new-state-database", "no notegate rows there")
    return deny("state-database-not-empty", f"the state database already holds {rows} rows of a notegate state")


def decide_backup_manifest(
    format_version: int, schema_version: int, *, supported_format: int, supported_schema: int
) -> Decision:
    """May this notegate restore a backup whose manifest has ``format_version`` and a state database of
    ``schema_version``?  Not a newer one of either: its tables or files may mean what this code cannot know."""
    if format_version > supported_format:
        return deny(
            "backup-manifest-newer",
            f"the manifest has format {format_version}; this notegate reads format {supported_format} at most",
        )
    if schema_version > supported_schema:
        return deny(
            "backup-manifest-newer",
            f"the backup's state database has schema {schema_version}; this notegate knows schema "
            f"{supported_schema} at most",
        )
    return allow("backup-manifest", "a manifest this notegate can restore")


def decide_backup_file(
    name: str, *, present: bool, expected_size: int, size: int, expected_sha256: str, sha256: str
) -> Decision:
    """Is the file ``name`` of a backup the one the manifest describes?  Present, of its size, of its hash
    (a shorter file is named truncated; any other difference altered)."""
    if not present:
        return deny("backup-file-missing", f"the backup file {name} is missing")
    if size < expected_size:
        return deny("backup-file-truncated", f"the backup file {name} is truncated ({size} of {expected_size} bytes)")
    if size != expected_size or sha256 != expected_sha256:
        return deny(
            "backup-file-altered", f"the backup file {name} was altered (its SHA-256 differs from the manifest)"
        )
    return allow("backup-file", f"{name} is as the manifest says")
