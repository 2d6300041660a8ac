"""Which environment an owner's page works in: the one shared picker of every console page.

A page names its environment with ``?env=NAME`` (a form with its ``env`` field); without one it is the
default environment if the signed-in person owns it, else the first one they own. Whatever is picked, the
answer is :func:`notegate.policy.decide_console_owner`'s: a member, or an environment that is not there, is
refused ``console-not-owner`` in the same words, so a page never tells which environments exist.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from notegate.errors import PolicyDenied
from notegate.policy import decide_console_owner

#: An environment name longer than this is not one (config names are short); cut before any lookup.
MAX_ENV_CHARS = 100


def owner_of(config: Any, name: str) -> str | None:
    env = config.environments.get(name)
    return env.owner if env is not None else None


def owned(config: Any, person: str) -> list[str]:
    """The environments ``person`` owns, in the config's order."""
    return [name for name, env in config.environments.items() if env.owner == person]


def pick(config: Any, person: str, asked: str | None) -> str:
    """The environment a page of ``person`` works in, or ``PolicyDenied [console-not-owner]``."""
    if asked:
        name = asked[:MAX_ENV_CHARS]
    else:
        mine = owned(config, person)
        name = config.default_environment if not mine or config.default_environment in mine else mine[0]
    decision = decide_console_owner(person, name, owner_of(config, name))
    if not decision.allowed:
        raise PolicyDenied(decision.reason, rule=decision.rule)
    return name


class Environments:
    """The picker over the live deployment config (read on every call: a removed environment is gone)."""

    def __init__(self, config: Callable[[], Any]) -> None:
        self.config = config

    def pick(self, person: str, asked: str | None) -> str:
        return pick(self.config(), person, asked)

    def owned(self, person: str) -> list[str]:
        return owned(self.config(), person)
