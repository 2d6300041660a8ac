"""The reference pages are generated from the one source of each fact, and a test fails when code and page
disagree (issue 34): every command and flag of the argparse tree, every setting row, every refusal rule,
every MCP tool of the server's own tools/list and every HTTP route is on its built page with its words."""

from __future__ import annotations

import ast
from importlib import import_module
from pathlib import Path

import pytest

from docsgen import PAGES
from support.sitebuild import REPO, normal, page_text


@pytest.mark.parametrize("page", sorted(PAGES), ids=lambda p: p.removeprefix("reference/"))
def test_every_fact_of_the_code_is_on_its_built_page(site: Path, page: str) -> None:
    built = page_text(site, page)
    facts = import_module(f"docsgen.{PAGES[page]}").facts()
    assert len(facts) >= 5, page
    for heading, strings in facts:
        assert normal(heading) in built, (page, heading)
        for string in strings:
            assert normal(string) in built, (page, heading, string)


def test_a_new_command_flag_setting_or_rule_reaches_its_page(monkeypatch: pytest.MonkeyPatch) -> None:
    """The generators read the live tables: what is added to them is on the page at the next build."""
    import argparse

    import notegate.cli as cli
    from docsgen import cli as cli_page
    from docsgen import rules as rules_page
    from docsgen import settings as settings_page
    from notegate import config, errors
    from notegate.settings import Setting

    def add_brand_new(subs) -> None:
        parser = subs.add_parser("brand-new", help="a command added after the docs were written")
        parser.add_argument("--shiny", default="7", help="a flag nobody documented by hand")

    monkeypatch.setattr(cli, "PARSERS", (*cli.PARSERS, add_brand_new))
    monkeypatch.setitem(errors.RULES, "brand-new-rule", "Do the new thing instead.")
    row = Setting("brand_new_limit", int, 42, "A limit added after the docs were written.")
    monkeypatch.setattr(config, "SERVER_SETTINGS", (*config.SERVER_SETTINGS, row))
    assert isinstance(cli.build_parser(), argparse.ArgumentParser)
    assert "## notegate brand-new" in cli_page.page() and "a flag nobody documented by hand" in cli_page.page()
    assert "### server.brand_new_limit" in settings_page.page() and "default `42`" in settings_page.page()
    assert "`brand-new-rule` | Do the new thing instead." in rules_page.page().replace("\\|", "|")


def test_every_command_says_what_it_does() -> None:
    from docsgen.cli import commands

    found = commands()
    assert {c.words[0] for c in found} >= {"init", "serve", "token", "sync", "backup", "restore", "doctor"}
    silent = [" ".join(c.words) for c in found if not c.help.strip()]
    assert silent == [], f"commands with no help line (their page entry says nothing): {silent}"


def test_every_table_of_settings_rows_is_on_the_configuration_page() -> None:
    """A new module-level table of ``Setting`` rows in the source, not named in docsgen.settings.TABLES, would
    be a setting with no entry: found here by reading the source, not by trusting the generator."""
    from docsgen.settings import TABLES

    tables = set()
    for path in (REPO / "src" / "notegate").rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in tree.body:
            if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                target, value = node.target.id, node.value
            elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                target, value = node.targets[0].id, node.value
            else:
                continue
            calls = [n for n in ast.walk(value) if isinstance(n, ast.Call)] if value is not None else []
            if any(getattr(c.func, "id", None) in ("Setting", "PolicySetting") for c in calls):
                module = ".".join(path.relative_to(REPO / "src").with_suffix("").parts)
                tables.add((module, target))
    assert tables == set(TABLES), tables ^ set(TABLES)


def test_the_mcp_page_is_the_servers_own_tools_list() -> None:
    """The generator asks the real server; its answer is the one the pinned wire surface holds."""
    import json

    from docsgen.mcp import surface

    pinned = json.loads((REPO / "tests" / "doors" / "mcp_surface.json").read_text(encoding="utf-8"))
    assert surface()["tools"] == pinned["tools"] and surface()["instructions"] == pinned["instructions"]


def test_the_routes_page_walks_the_whole_route_table() -> None:
    from docsgen.routes import table

    paths = {route.path for route in table()}
    assert {"/healthz", "/metrics", "/mcp", "/authorize", "/token", "/register", "/contracts", "/login"} <= paths
    assert any(path.startswith("/.well-known/oauth-protected-resource") for path in paths)
