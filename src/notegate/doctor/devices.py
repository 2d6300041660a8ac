"""Device keys well-formed: each ``[devices.NAME]`` has an Ed25519 public key line and a configured person.

Read from the raw file like the policy checks, so a bad key is reported here by name even though it also
stops the config from loading.  Only the key's shape is judged and only the device's name is printed:
public keys are not secrets, but there is nothing to gain by echoing them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from notegate.config import ENVIRONMENT_SETTINGS, is_device_name, parse_public_key
from notegate.doctor.result import CheckResult, fail, ok

CHECK = "device.keys"
_DEFAULT_OWNER = next(s.default for s in ENVIRONMENT_SETTINGS if s.name == "owner")


def _people(raw: Mapping[str, Any]) -> set[str]:
    people: set[str] = set()
    environments = raw.get("environments", {})
    if not isinstance(environments, dict):
        return people
    for table in environments.values():
        if isinstance(table, dict):
            people.add(str(table.get("owner", _DEFAULT_OWNER)))
            members = table.get("members", [])
            people |= {m for m in members if isinstance(m, str)} if isinstance(members, list) else set()
    return people


def device_problem(name: str, table: Any, people: set[str]) -> str | None:
    """What is wrong with one ``[devices.NAME]`` table, or None."""
    if not is_device_name(name):
        return "its name is not a lowercase device name"
    if not isinstance(table, dict):
        return "it is not a table"
    unknown = sorted(set(table) - {"public_key", "person"})
    if unknown:
        return f"unknown key(s) {', '.join(unknown)}"
    try:
        parse_public_key(table.get("public_key", ""))
    except ValueError as exc:
        return f"public_key does not parse as an Ed25519 key ({exc})"
    person = table.get("person", "")
    if not isinstance(person, str) or person not in people:
        return "person is neither an owner nor a member of any environment"
    return None


def check_devices(raw: Mapping[str, Any]) -> list[CheckResult]:
    devices = raw.get("devices", {})
    if not isinstance(devices, dict):
        return [fail(CHECK, "[devices] is not a set of [devices.NAME] tables", "Write one table per device.")]
    if not devices:
        return [ok(CHECK, "no device keys configured (workstations stay restricted without one)")]
    people = _people(raw)
    results = []
    for name, table in devices.items():
        problem = device_problem(name, table, people)
        if problem is None:
            results.append(ok(CHECK, "public key parses as Ed25519; its person is configured", subject=name))
        else:
            results.append(
                fail(
                    CHECK,
                    problem,
                    "Paste the lines `notegate device keygen NAME --person LOGIN` printed on that machine, naming "
                    "a login from [environments.*] owner or members.",
                    subject=name,
                )
            )
    return results
