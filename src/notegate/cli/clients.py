"""The AI clients' side: the ``hook`` Claude Code and Codex run, and ``setup`` that connects them."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from notegate.cli.common import _sub
from notegate.network import DEFAULT_LOCAL_URL


def add_hook(subs) -> None:
    p = _sub(subs, "hook", "run a Claude Code or Codex hook: hook JSON on stdin, what the client expects on stdout")
    # No `choices`: the hook itself answers 1 for an unknown event and never 2 (which Claude Code reads as "block").
    p.add_argument("event", help="session-start, session-end, pre-compact, stop or codex-notify")
    p.add_argument("hook_args", nargs="*", metavar="ARG", help="codex-notify: the JSON argument Codex passes")


def cmd_hook(args: argparse.Namespace) -> int:
    from notegate.hooks import main as run_hook

    return run_hook(args.event, sys.stdin, sys.stdout, os.environ, args=args.hook_args)


def add_setup(subs) -> None:
    p = _sub(
        subs, "setup", "connect Claude Code or Codex in one step: token, client.toml, MCP, plugin (--remove undoes)"
    )
    p.add_argument("client", choices=["claude-code", "codex"])
    p.add_argument("--remove", action="store_true", help="undo exactly what setup did (its journal), nothing else")
    p.add_argument("--scope", choices=["user"], default="user", help="Claude Code scope (user: works in every folder)")
    p.add_argument("--url", default=None, help=f"the server's URL (default: from --config, else {DEFAULT_LOCAL_URL})")
    p.add_argument("--token-file", default=None, help="token file (default: $XDG_CONFIG_HOME/notegate/token)")
    p.add_argument(
        "--config",
        default=None,
        help="the server's notegate.toml: mint a token there when the token file does not exist yet",
    )
    p.add_argument("--name", default=None, help="the minted token's name (default: the client's name)")
    p.add_argument("--tier", choices=["restricted", "trusted"], default=None, help="the minted token's tier")


def _setup_where(environ) -> object:
    import shutil

    from notegate.hooks.settings import config_path
    from notegate.setup.clients import Where

    home = Path(environ.get("HOME") or Path.home())
    config_home = Path(environ["XDG_CONFIG_HOME"]) if environ.get("XDG_CONFIG_HOME") else home / ".config"
    data_home = Path(environ["XDG_DATA_HOME"]) if environ.get("XDG_DATA_HOME") else home / ".local" / "share"
    codex_home = Path(environ["CODEX_HOME"]) if environ.get("CODEX_HOME") else home / ".codex"
    beside = Path(sys.executable).parent / "notegate"  # the console script of the interpreter running this
    notegate = str(beside) if os.access(beside, os.X_OK) else shutil.which("notegate", path=environ.get("PATH"))
    if not notegate:
        from notegate.errors import NotegateError

        raise NotegateError(
            "cannot find the notegate command this is running from.",
            rule="bad-argument",
            remedy="Install notegate as a tool (pipx install . or uv tool install .), then run setup again.",
        )
    return Where(
        home=home,
        config_home=config_home,
        data_home=data_home,
        client_toml=config_path({**environ, "HOME": str(home)}) or config_home / "notegate" / "client.toml",
        codex_config=codex_home / "config.toml",
        notegate=str(Path(notegate).absolute()),
        claude=shutil.which("claude", path=environ.get("PATH")),
        environ=dict(environ),
    )


def cmd_setup(args: argparse.Namespace) -> int:
    from notegate.setup.clients import Options, remove, set_up

    where = _setup_where(os.environ)
    if args.remove:
        lines = remove(args.client, where)
    else:
        options = Options(
            url=args.url,
            token_file=Path(args.token_file) if args.token_file else None,
            config=Path(args.config) if args.config else None,
            name=args.name,
            tier=args.tier,
            scope=args.scope,
        )
        lines = set_up(args.client, where, options)
    print(f"notegate setup {args.client}{' --remove' if args.remove else ''}:")
    for line in lines:
        print(f"  {line}")
    return 0
