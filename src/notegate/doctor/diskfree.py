"""Free space on each disk a write needs (the server's clone, a local origin, the SQLite state): red below the
policy's ``min_free_bytes``, where the server already refuses new writes ``[disk-full]``."""

from __future__ import annotations

from notegate.doctor.result import CheckResult, fail, ok, warn
from notegate.services import diskspace


def check_free(config, environment: str) -> list[CheckResult]:
    results = []
    floor = config.policy.min_free_bytes
    for room in diskspace.rooms(config, environment):
        subject = room.part.what
        if room.free_bytes is None:
            found = f"{room.part.path}: free space unknown"
            results.append(warn("disk.free", found, "Check that the disk is mounted.", subject=subject))
            continue
        found = f"{room.part.path}: {_mib(room.free_bytes)} free (min_free_bytes {_mib(floor)})"
        if room.low(config.policy):
            results.append(
                fail(
                    "disk.free",
                    found,
                    "New writes are refused [disk-full] until there is more free: free space on that disk (or "
                    "lower [policy] min_free_bytes); the server needs no restart.",
                    subject=subject,
                )
            )
        else:
            results.append(ok("disk.free", found, subject=subject))
    return results


def _mib(n: int) -> str:
    return f"{n / (1 << 20):.1f} MiB"
