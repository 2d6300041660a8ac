"""The command-line reference, from the argparse tree ``notegate.cli.build_parser`` builds (the parser that
parses every real call), so a command, flag, choice or default exists on the page exactly when it exists in
the code."""

from __future__ import annotations

import argparse
import contextlib
import os
from collections.abc import Iterator
from dataclasses import dataclass

from docsgen import GENERATED_NOTE, code, text

#: Variables some parsers read for a default (``--config`` from ``$NOTEGATE_CONFIG`` …): unset while the tree is
#: built, so the page shows the defaults a fresh shell gets, not the builder's environment.
_ENVIRONMENT_PREFIXES = ("NOTEGATE_", "CLAUDE_CODE_")


@dataclass(frozen=True)
class Command:
    words: tuple[str, ...]  # ("token", "create")
    help: str
    parser: argparse.ArgumentParser


@contextlib.contextmanager
def _fresh_shell() -> Iterator[None]:
    saved = {k: v for k, v in os.environ.items() if k.startswith(_ENVIRONMENT_PREFIXES)}
    for key in saved:
        del os.environ[key]
    try:
        yield
    finally:
        os.environ.update(saved)


def commands() -> list[Command]:
    """Every command and sub-command, depth first, in the order ``notegate --help`` lists them."""
    from notegate.cli import build_parser

    with _fresh_shell():
        root = build_parser()
    found: list[Command] = []

    def walk(parser: argparse.ArgumentParser, words: tuple[str, ...]) -> None:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                helps = {choice.dest: choice.help or "" for choice in action._choices_actions}
                for name, sub in action.choices.items():
                    found.append(Command((*words, name), helps.get(name, ""), sub))
                    walk(sub, (*words, name))

    walk(root, ())
    return found


def arguments(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    """A command's own arguments (not ``-h`` and not its sub-command choice)."""
    return [
        a
        for a in parser._actions
        if not isinstance(a, argparse._HelpAction | argparse._SubParsersAction) and a.help != argparse.SUPPRESS
    ]


def _spelling(action: argparse.Action) -> str:
    if action.option_strings:
        names = ", ".join(action.option_strings)
        if action.nargs == 0:
            return names
        metavar = action.metavar or (
            "{" + ",".join(map(str, action.choices)) + "}" if action.choices else action.dest.upper()
        )
        return f"{names} {metavar}"
    return str(action.metavar or action.dest)


def _default(action: argparse.Action) -> str:
    default = action.default
    if action.nargs == 0 or default in (None, argparse.SUPPRESS, [], False):
        return ""
    return code(str(default))


def _what(action: argparse.Action) -> str:
    parts = [text(action.help)] if action.help else []
    if action.choices and not action.option_strings:
        parts.append("one of " + ", ".join(code(str(c)) for c in action.choices))
    if action.required and action.option_strings:
        parts.append("required")
    if action.nargs in ("*", "+") or isinstance(action, argparse._AppendAction):
        parts.append("repeatable")
    return "; ".join(parts)


def page() -> str:
    from notegate.cli import EXAMPLES

    out = [
        "# Command line",
        "",
        GENERATED_NOTE.format(source="the argparse tree of `notegate.cli` (`build_parser`)"),
        "Every command exits 0 when it did what was asked, 1 when something was refused, held or failed a check, "
        "and 2 on a usage or configuration error. `notegate COMMAND -h` prints the same as this page.",
        "",
    ]
    for command in commands():
        depth = "##" if len(command.words) == 1 else "###"
        out += [f"{depth} notegate {' '.join(command.words)}", ""]
        if command.help:
            out += [text(command.help), ""]
        usage = command.parser.format_usage().removeprefix("usage: ").strip()
        out += ["```text", " ".join(usage.split()), "```", ""]
        rows = arguments(command.parser)
        if rows:
            out += ["| argument | what | default |", "| --- | --- | --- |"]
            out += [f"| {code(_spelling(a))} | {_what(a)} | {_default(a)} |" for a in rows]
            out.append("")
        example = EXAMPLES.get(command.words[0]) if len(command.words) == 1 else None
        if example:
            out += ["Example:", "", "```sh", example, "```", ""]
    return "\n".join(out)


def facts() -> list[tuple[str, list[str]]]:
    """(heading, strings the page must show under it): each command's words and help, each argument's
    spelling, help and default."""
    found = []
    for command in commands():
        strings = [command.help] if command.help else []
        for action in arguments(command.parser):
            strings.append(_spelling(action))
            if action.help:
                strings.append(action.help)
            if _default(action):
                strings.append(str(action.default))
        found.append(("notegate " + " ".join(command.words), strings))
    return found
