"""What every command group shares: the examples, ``_sub`` (a command's parser, or a stand-in when this
call runs another command), loading the config, failing with a message, and how a hint names notegate."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from notegate.network import local_url

EXAMPLES = {
    "tools": "notegate tools serve --config ./vault/notegate.toml --key-file /etc/notegate/tools.key",
    "init": "notegate init ./vault",
    "serve": "notegate serve --config ./vault/notegate.toml --port 8765",
    "mcp": "notegate mcp --config ./vault/notegate.toml --token-file ~/.config/notegate/token",
    "token": "notegate token create --config ./vault/notegate.toml --name laptop --class workstation",
    "import": "notegate import --config ./vault/notegate.toml ~/Obsidian/MyVault --dry-run",
    "reindex": "notegate reindex --config ./vault/notegate.toml",
    "review": "ANTHROPIC_API_KEY=... notegate review --config ./vault/notegate.toml --dry-run",
    "reflect": "notegate reflect --config ./vault/notegate.toml --raw ~/.claude/projects",
    "grant": "notegate grant list --config ./vault/notegate.toml && notegate grant revoke g-0123456789abcdef",
    "device": "notegate device keygen laptop && notegate device header --url http://127.0.0.1:8765",
    "owner": "notegate owner enroll --config ./vault/notegate.toml --login alice",
    "hook": 'echo \'{"cwd": "/path/to/repo", "session_id": "s1"}\' | notegate hook session-start',
    "pre-receive": "notegate hooks install ./vault/origin.git --config ./vault/notegate.toml  # git then runs it",
    "hooks": "notegate hooks install /srv/git/vault.git --config ./vault/notegate.toml --environment personal",
    "doctor": "notegate doctor --config ./vault/notegate.toml --json",
    "sync": "notegate sync ~/Obsidian/Vault --config ~/.config/notegate/notegate.toml --once",
    "status": "notegate status --config ./vault/notegate.toml --json",
    "audit": "notegate audit --config ./vault/notegate.toml --since 2h --connector laptop --path projects",
    "backup": "notegate backup --config ./vault/notegate.toml --to /backups --recipient age1...",
    "restore": "notegate restore --from /backups/notegate-backup-20261201T020000Z --identity key.txt --rehearse",
    "lab": "notegate lab --keep  # the whole stack on this machine, then the promises as PASS/FAIL checks",
    "setup": "notegate setup claude-code --config ./vault/notegate.toml  # later: notegate setup claude-code --remove",
}


def package_version() -> str:
    """The installed distribution's version (what pip, pipx and uv installed), as serverInfo reports it."""
    from importlib.metadata import version

    return version("notegate")


class _VersionAction(argparse.Action):
    """``--version``, looked up only when asked (hooks start on every session and must not pay for it)."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help=None):
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        print(f"notegate {package_version()}")
        parser.exit()


def _config_arg(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--config",
        default=os.environ.get("NOTEGATE_CONFIG", "notegate.toml"),
        help="path to notegate.toml (default: $NOTEGATE_CONFIG or ./notegate.toml)",
    )


class _Unparsed:
    """Stands in for the parser of a command this call does not run: it takes every ``add_*`` and
    ``set_defaults`` call and keeps nothing, so ``build_parser`` reads the same for every command."""

    def __getattr__(self, name: str):
        if not name.startswith(("add_", "set_")):
            raise AttributeError(name)
        return lambda *args, **kwargs: self


def _sub(subs, name: str, help_text: str) -> argparse.ArgumentParser:
    only = getattr(subs, "notegate_only", None)
    if only is not None and name != only:
        # Still a choice, with its one-line help: the command list and the "invalid choice" error stay
        # those of the whole parser. Its arguments are never built: that was half of a short command's
        # start-up (about 30 ms of CPU for two dozen commands, issue 9).
        subs.add_parser(name, help=help_text, add_help=False)
        return _Unparsed()
    example = EXAMPLES.get(name)
    return subs.add_parser(
        name,
        help=help_text,
        description=help_text + (f"\n\nexample:\n  {example}" if example else ""),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )


def _fail(message: str, code: int = 1) -> int:
    print(message, file=sys.stderr)
    return code


def _load(args: argparse.Namespace):
    from notegate.config import load_config

    return load_config(args.config)


def _state(row) -> str:
    return "revoked" if row.revoked_at else "active"


def _print_rows(rows, as_json: bool, line) -> int:
    """A listing command's output: JSON objects with --json, else one aligned line per row."""
    if as_json:
        print(json.dumps([r.__dict__ for r in rows], indent=2))
    else:
        for r in rows:
            print(line(r))
    return 0


def console_url(config, port: int | None = None) -> str:
    """Where a person opens the console: the public URL, or http://localhost:PORT (passkeys need a domain)."""
    return config.public_url.rstrip("/") if config.public_url else local_url(port or config.port)


def _progress(total: int | None, desc: str, quiet: bool, unit: str = "note"):
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit=unit, disable=quiet, file=sys.stderr, leave=False)


def self_command() -> str:
    """How a shell reaches this very notegate: ``notegate`` when that is what PATH finds, else its absolute
    path. After ``make run`` notegate lives in the checkout's ``.venv/bin``, which is not on PATH, so a hint
    saying plain ``notegate`` would fail when pasted."""
    import shlex
    import shutil

    found = shutil.which("notegate")
    me = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if me is not None and me.name == "notegate" and me.exists():
        if found is not None and Path(found).resolve() == me.resolve():
            return "notegate"
        return shlex.quote(str(me.absolute()))
    if found is not None:
        return "notegate"
    return f"{shlex.quote(sys.executable)} -m notegate"
