"""Settings as a table, checked at start: every key known, its type, default and help line.

Why one module: the deployment config, the policy and the model settings are three tables of the same
kind, and an unknown key or a wrong type must stop start-up with a hint naming the key in all of them
(a misspelt ``privte = [...]`` silently exposing private notes is the failure this prevents). Pure: it
only reads the already-parsed TOML values.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from notegate.errors import ConfigError


@dataclass(frozen=True)
class Setting:
    name: str
    kind: type | tuple[type, ...]
    default: Any
    help: str
    check: Callable[[Any], str | None] | None = None
    #: The functions that read this setting, as ``module:qualname`` (policy rows: a rule no code enforces is
    #: not written in the policy file; ``notegate doctor`` imports each one). Empty for deployment settings.
    enforced_by: tuple[str, ...] = ()


#: The listener's admission at accept (doors/listen.py) has the same defaults at every door it serves: the MCP
#: server's ``[server]`` and the LiveSync gate's ``[livesync]``; each table words the rows for its own callers.
NEW_CONNECTIONS_PER_PEER_PER_SECOND = 50
NEW_CONNECTIONS_BURST = 200
STRANGER_CONNECTIONS_PER_SECOND = 100
CREDITED_PEER_SECONDS = 3600


def must_be_positive(value: float) -> str | None:
    """The check of every count, size, rate and timeout in the settings tables: zero or less is never meant."""
    return None if value > 0 else "must be above 0"


def must_be_port(value: int) -> str | None:
    """The check of every listening port in the settings tables (the server's, the LiveSync gate's, the tools
    process's): a TCP port, never 0 (the system would pick one nobody can be told)."""
    return None if 0 < value < 65536 else "must be between 1 and 65535"


def kind_name(kind: type | tuple[type, ...]) -> str:
    if isinstance(kind, tuple):
        return " or ".join(k.__name__ for k in kind)
    return kind.__name__


def is_kind(value: Any, kind: type | tuple[type, ...]) -> bool:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if isinstance(value, bool) and bool not in kinds:  # TOML true is not a number
        return False
    return isinstance(value, kinds)


def check_table(
    section: str, table: Mapping[str, Any], settings: Iterable[Setting], extra_keys: Iterable[str] = ()
) -> dict[str, Any]:
    """Every setting's value (or default), or ConfigError naming the unknown key or the wrong value."""
    settings = tuple(settings)
    known = {s.name for s in settings} | set(extra_keys)
    for key in table:
        if key not in known:
            raise ConfigError(
                f"unknown key '{key}' in [{section}]",
                remedy=f"Known keys: {', '.join(sorted(known))}. Remove or correct it.",
            )
    out: dict[str, Any] = {}
    for setting in settings:
        value = table.get(setting.name, setting.default)
        if not is_kind(value, setting.kind):
            raise ConfigError(
                f"[{section}] {setting.name} has the wrong type ({type(value).__name__})",
                remedy=f"Expected {kind_name(setting.kind)}: {setting.help}",
            )
        if setting.check is not None and (problem := setting.check(value)):
            raise ConfigError(f"[{section}] {setting.name} {problem}", remedy=setting.help)
        out[setting.name] = value
    return out
