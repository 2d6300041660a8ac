"""The `notegate` command. The only package that reads the environment or prints.

Commands are lazy-imported so light commands (hooks, floor, gate) start fast without the server stack.
Exit status: 0 ok, 1 refused/held/failed check, 2 usage or config error.

One module per command group, each building its commands' parsers next to the commands; this module
assembles them in the order ``notegate --help`` lists them, and keeps every name callers import from
``notegate.cli``.
"""

from __future__ import annotations

import argparse
import sys

from notegate.cli.admin import (
    add_audit,
    add_device,
    add_doctor,
    add_grant,
    add_lab,
    add_owner,
    cmd_audit,
    cmd_device,
    cmd_doctor,
    cmd_grant,
    cmd_lab,
    cmd_owner,
    parse_since,
)
from notegate.cli.backup import add_backup, add_restore, cmd_backup, cmd_restore
from notegate.cli.clients import add_hook, add_setup, cmd_hook, cmd_setup
from notegate.cli.common import EXAMPLES, _fail, _VersionAction, console_url, package_version, self_command
from notegate.cli.gates import add_floor, add_gate, cmd_floor, cmd_gate
from notegate.cli.git import add_hooks, add_pre_receive, add_sync, cmd_hooks, cmd_pre_receive, cmd_sync
from notegate.cli.jobs import add_reflect, add_review, cmd_reflect, cmd_review
from notegate.cli.livesync import add_livesync, cmd_livesync
from notegate.cli.serve import _connect_hint, _console_hint, add_mcp, add_serve, cmd_mcp, cmd_serve
from notegate.cli.tokens import add_token, cmd_token
from notegate.cli.tools import add_tools, cmd_tools
from notegate.cli.vault import (
    MISSING_LINKS_SHOWN,
    add_import,
    add_init,
    add_reindex,
    add_status,
    cmd_import,
    cmd_init,
    cmd_reindex,
    cmd_status,
    import_summary,
)

__all__ = [
    "COMMANDS",
    "EXAMPLES",
    "MISSING_LINKS_SHOWN",
    "_connect_hint",
    "_console_hint",
    "build_parser",
    "command_named",
    "console_url",
    "import_summary",
    "main",
    "package_version",
    "parse_since",
    "self_command",
]

#: Each command's parser, in the order ``notegate --help`` and argparse's "invalid choice" list them.
PARSERS = (
    add_init,
    add_serve,
    add_audit,
    add_mcp,
    add_token,
    add_owner,
    add_import,
    add_reindex,
    add_review,
    add_reflect,
    add_hook,
    add_grant,
    add_device,
    add_pre_receive,
    add_hooks,
    add_lab,
    add_sync,
    add_setup,
    add_backup,
    add_restore,
    add_status,
    add_doctor,
    add_floor,
    add_gate,
    add_livesync,
    add_tools,
)


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The whole command line, or with ``only`` (a command's name) one whose other commands are bare
    choices: it parses every argv that starts with that name exactly as the whole parser does (a test
    compares them), and ``main`` uses it so each call builds the arguments of its own command only."""
    parser = argparse.ArgumentParser(
        prog="notegate",
        description="One shared Markdown memory for every AI session, versioned in git, behind one guarded door.",
    )
    parser.add_argument("--version", action=_VersionAction, help="print notegate's version and exit")
    subs = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    subs.notegate_only = only  # read by _sub
    for add in PARSERS:
        add(subs)
    return parser


COMMANDS = {
    "init": cmd_init,
    "serve": cmd_serve,
    "mcp": cmd_mcp,
    "token": cmd_token,
    "owner": cmd_owner,
    "import": cmd_import,
    "reindex": cmd_reindex,
    "floor": cmd_floor,
    "gate": cmd_gate,
    "review": cmd_review,
    "reflect": cmd_reflect,
    "hook": cmd_hook,
    "device": cmd_device,
    "grant": cmd_grant,
    "pre-receive": cmd_pre_receive,
    "hooks": cmd_hooks,
    "doctor": cmd_doctor,
    "sync": cmd_sync,
    "lab": cmd_lab,
    "setup": cmd_setup,
    "status": cmd_status,
    "audit": cmd_audit,
    "backup": cmd_backup,
    "restore": cmd_restore,
    "livesync": cmd_livesync,
    "tools": cmd_tools,
}


def command_named(argv: list[str]) -> str | None:
    """The command ``argv`` runs when its first word names one, else None (``--help``, ``--version``, a
    typo, nothing: those need the whole parser). The top level takes no option with a value, so argparse
    hands everything after that first word to that command's parser."""
    return argv[0] if argv and argv[0] in COMMANDS else None


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = build_parser(command_named(argv)).parse_args(argv)
    from notegate.errors import ConfigError, NotegateError

    try:
        return COMMANDS[args.command](args)
    except ConfigError as exc:
        return _fail(f"notegate {args.command}: {exc.explain()}", 2)
    except NotegateError as exc:
        return _fail(f"notegate {args.command}: {exc.explain()}", 1)
    except KeyboardInterrupt:
        return 130
