"""Tiers, client classes and commit trailers are declared once, as :class:`~notegate.policy.Tier`,
:class:`~notegate.policy.ClientClass` and :class:`~notegate.vault.commits.Trailer` (issue 29 §2, §3).

Why: the tiers were spelled as free strings in six places (the policy file's module, the sessions service,
the token checks, the console's form, the hooks, the CLI), so a tier one list learned and another did not was
a caller judged by two different rules.  This scans every module for a string constant that *is* a tier or a
class name (docstrings and longer texts that mention one are not values); the few places that keep the plain
spelling are listed below with their reason, and the CLI's choices are held to the enums by a test.
"""

from __future__ import annotations

import argparse
import ast
from pathlib import Path

import pytest

import notegate
from notegate.cli import build_parser
from notegate.policy import CONVERSATION_TIERS, ClientClass, Tier
from notegate.vault.commits import Trailer

PACKAGE = Path(notegate.__file__).parent
WORDS = {*Tier, *ClientClass, *Trailer}

#: Where a plain spelling stays, and why.
KEPT: dict[str, tuple[set[str], str]] = {
    "policy/vocab.py": ({*Tier, *ClientClass}, "the one declaration"),
    "vault/commits.py": (set(Trailer), "the one declaration of the trailers"),
    "auth/devices.py": ({"trusted"}, "the device verdict's own reason, not a tier"),
    "cli/tokens.py": ({*Tier, *ClientClass}, "argparse choices: building the parser imports no policy (pinned below)"),
    "cli/clients.py": ({"restricted", "trusted"}, "argparse choices (pinned below)"),
    "cli/git.py": ({"workstation"}, "a clone's default device name"),
    "policyfile.py": ({"hosted"}, "the settings table's TOML defaults, checked against ClientClass at load"),
    "lab/scenario.py": ({*Tier, *ClientClass}, "the lab types CLI arguments as a person would"),
}
SOURCES = sorted(PACKAGE.rglob("*.py"))


def _docstrings(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def _spelled(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docs = _docstrings(tree)
    allowed = KEPT.get(path.relative_to(PACKAGE).as_posix(), (set(), ""))[0]
    return [
        f"line {node.lineno}: {node.value!r}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and node.value in WORDS
        and node.value not in allowed
        and id(node) not in docs
    ]


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.relative_to(PACKAGE).as_posix())
def test_no_module_spells_a_tier_or_a_class(path: Path) -> None:
    assert _spelled(path) == [], "use notegate.policy's Tier and ClientClass, notegate.vault.commits' Trailer"


def _choices(parser: argparse.ArgumentParser, *names: str) -> dict[str, tuple[str, ...]]:
    """The choices of every option under the sub-command path ``names``, by destination."""
    for name in names:
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        parser = sub.choices[name]
    return {a.dest: tuple(a.choices) for a in parser._actions if a.choices and not isinstance(a.choices, dict)}


def test_the_cli_offers_exactly_the_enums() -> None:
    parser = build_parser()
    create = _choices(parser, "token", "create")
    assert sorted(create["client_class"]) == sorted(ClientClass)
    assert tuple(create["tier"]) == CONVERSATION_TIERS
    assert tuple(_choices(parser, "token", "tier")["tier"]) == CONVERSATION_TIERS
    setup = _choices(parser, "setup")
    assert tuple(setup["tier"]) == CONVERSATION_TIERS


def test_values_read_back_are_their_members() -> None:
    """A tier read from the state database or a token's claims is a plain string: it equals its member."""
    assert Tier("trusted") is Tier.TRUSTED and Tier.TRUSTED == "trusted" and f"{Tier.MACHINE}" == "machine"
    assert ", ".join(ClientClass) == "hosted, workstation, machine"
