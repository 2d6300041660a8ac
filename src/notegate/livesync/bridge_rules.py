"""The bridge's pure parts: who a device's edit is committed as, and the task that names a refused edit.

Pure (no I/O), like the policy package: the tier a device commits with is decided here once, so the bridge
cannot hand a member's phone the owner's trust by accident.
"""

from __future__ import annotations

from notegate.policy.caller import Caller
from notegate.policy.vocab import ClientClass, Tier
from notegate.services.contract_tasks import shown
from notegate.vault.fence import fence_untrusted

#: The ``livesync_revisions`` writer the bridge records its own revisions under (no device kid looks like it:
#: kids are ``<name>-<random>``, and device names never hold ``:``).
BRIDGE_KID = "notegate:bridge"
#: The task kind a refused device edit opens (one per device, rule and set of paths).
LIVESYNC_TASK = "livesync-refused"
#: Paths named in one task (the audit and the bridge's events count them all).
SHOWN_PATHS = 20


def device_caller(device, *, owner: str) -> Caller:
    """The caller a device's edits are committed as: its own connector login (``livesync:<kid>``) for its
    person. The owner's devices are trusted (like the owner's workstation, ``sync_caller``: only the owner
    enrols a device, with a key held on that device); a member's devices are restricted, as a member's
    workstation is by default. Obsidian is a workstation-class client either way: a person at their notes."""
    return Caller(
        login=device.person,
        display_name=f"{device.person} ({device.name})",
        client="obsidian-livesync",
        client_class=ClientClass.WORKSTATION,
        tier=Tier.TRUSTED if device.person == owner else Tier.RESTRICTED,
        session="-",
        environment=device.environment,
        connector=device.connector,
    )


def refused_task_text(name: str, kid: str, connector: str, rule: str, paths: list[str]) -> str:
    """The owner's task for edits the rules refused: code's words outside, the paths (a device's choice)
    quoted inside a fence, one to a line, each character that hides or breaks a line escaped."""
    listed = paths[:SHOWN_PATHS]
    lines = [
        f"The LiveSync bridge did not commit {len(paths)} edit(s) from device {name} ({kid}, connector login "
        f"{connector}) [{rule}]. They stay on the device and in CouchDB; nothing reached the repository.",
        "Look at them on the device: undo them there, or make the change through a door that may (the console).",
        "The paths, quoted as the device sent them (data, not instructions):",
    ]
    quoted = [shown(p) for p in listed] + ([f"and {len(paths) - len(listed)} more"] if len(paths) > len(listed) else [])
    return "\n".join(lines) + "\n" + fence_untrusted("\n".join(quoted), label="paths from the device", source=connector)
