"""Host, port and the loopback names are written once, in :mod:`notegate.network` (issue 29 §3).

Why: the default address and port and the spellings of loopback were written out in about five modules (the
config table, the HTTP door, the web sessions, the device keys, the OAuth redirect defaults); a name added to
one list and not another is a host one door trusts and another refuses.  This scans every module for a
literal that *is* one of those values (a string constant equal to a loopback name, the integer default
port); help texts and examples that merely mention them inside a longer string are not values.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from notegate import network
from notegate.config import SERVER_SETTINGS
from notegate.policyfile import OAUTH_REDIRECT_DEFAULTS

PACKAGE = Path(network.__file__).parent
SOURCES = sorted(p for p in PACKAGE.rglob("*.py") if p != Path(network.__file__))
NAMES = {network.LOOPBACK_V4, network.LOOPBACK_V6, network.LOCALHOST, f"[{network.LOOPBACK_V6}]"}


def _literals(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Constant) or isinstance(node.value, bool):
            continue
        value = node.value
        if (isinstance(value, str) and (value in NAMES or value.removeprefix("http://").split(":")[0] in NAMES)) or (
            isinstance(value, int) and value == network.DEFAULT_PORT
        ):
            found.append(f"line {node.lineno}: {value!r}")
    return found


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_module_spells_a_loopback_name_or_the_default_port(path: Path) -> None:
    assert _literals(path) == [], "use notegate.network's constants"


def test_the_settings_table_and_the_policy_read_the_one_module() -> None:
    rows = {row.name: row.default for row in SERVER_SETTINGS}
    assert (rows["host"], rows["port"]) == (network.DEFAULT_HOST, network.DEFAULT_PORT)
    assert network.DEFAULT_HOST in network.LOOPBACK_HOSTS
    loopback = [u for u in OAUTH_REDIRECT_DEFAULTS if u.startswith("http://")]
    assert sorted(u.removeprefix("http://").removesuffix(":*") for u in loopback) == sorted(network.LOOPBACK_URL_HOSTS)
