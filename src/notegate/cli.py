"""The `notegate` command. The only module that reads the environment or prints.

Commands are lazy-imported so light commands (hooks, floor, gate) start fast without the server stack.
Exit status: 0 ok, 1 refused/held/failed check, 2 usage or config error.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

EXAMPLES = {
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

    p = _sub(subs, "init", "create a notegate directory: config, bare origin, server clone, default layout")
    p.add_argument("directory")
    p.add_argument("--owner", default="owner", help="login of the vault's owner (default: owner)")
    p.add_argument(
        "--empty", action="store_true", help="no demo notes: start empty, e.g. to bring a vault in with import"
    )
    p.add_argument(
        "--state-url",
        default="",
        help="keep the state in this empty PostgreSQL database ([state] url; no password in it: ~/.pgpass)",
    )

    p = _sub(subs, "serve", "serve MCP over Streamable HTTP at /mcp (and /healthz)")
    _config_arg(p)
    p.add_argument("--host", default=None, help="listen address (default: from config, 127.0.0.1)")
    p.add_argument("--port", type=int, default=None, help="listen port (default: from config, 8765)")
    p.add_argument("--token-file", default=None, help="a token file to show in the connection hint")
    p.add_argument(
        "--log-format",
        choices=["text", "json"],
        default="text",
        help="the server log: one line per event, as words (default) or one JSON object for log collectors",
    )

    p = _sub(subs, "audit", "show the audit table: who called which tool on which path, and the outcome")
    _config_arg(p)
    p.add_argument("--since", default=None, help="rows from this time on: 30m, 2h, 7d, or 2026-12-01[T10:00] (UTC)")
    p.add_argument("--connector", default=None, help="a client name (token name) or login")
    p.add_argument("--path", default=None, help="a note, or a folder: every path under it")
    p.add_argument("--tool", default=None, help="a tool name, e.g. write_note")
    p.add_argument("--outcome", default=None, help="ok, error, or a refusal's rule, e.g. stale-revision")
    p.add_argument("--limit", type=int, default=200, help="the newest rows to show (default: 200)")
    p.add_argument("--json", action="store_true")

    p = _sub(subs, "mcp", "serve the same tools over stdio for a local client")
    _config_arg(p)
    p.add_argument("--token-file", required=True, help="file holding the bearer token that decides the caller")

    p = _sub(subs, "token", "create, list, revoke bearer tokens or change their tier")
    tsubs = p.add_subparsers(dest="token_command", required=True, metavar="ACTION")
    c = tsubs.add_parser("create", help="mint a token; it is printed once, only its hash is kept")
    _config_arg(c)
    c.add_argument("--name", required=True, help="the client's name (shown in commits and audit)")
    c.add_argument("--class", dest="client_class", required=True, choices=["workstation", "hosted", "machine"])
    c.add_argument("--tier", choices=["restricted", "trusted"], default=None, help="default: restricted")
    c.add_argument("--login", default=None, help="whose token this is (default: the environment's owner)")
    c.add_argument("--display-name", default=None, help="author name in commits (default: the login)")
    c.add_argument("--environment", default=None, help="default environment for this token")
    c.add_argument(
        "--contract",
        dest="contracts",
        action="append",
        default=[],
        metavar="NAME",
        help="a machine token: a contract it may call (repeat; e.g. --contract health-daily --contract capture)",
    )
    c.add_argument(
        "--output",
        default=None,
        help="write the token to this file (mode 600; missing folders are created, mode 700) instead of stdout",
    )
    ls = tsubs.add_parser("list", help="list tokens (never their values)")
    _config_arg(ls)
    ls.add_argument("--json", action="store_true")
    rv = tsubs.add_parser("revoke", help="revoke a token by id or name")
    _config_arg(rv)
    rv.add_argument("token")
    tr = tsubs.add_parser(
        "tier", help="change a token's tier; it stays the same connector login (what it wrote stays its own)"
    )
    _config_arg(tr)
    tr.add_argument("token", help="id or name")
    tr.add_argument("tier", choices=("restricted", "trusted"))

    p = _sub(subs, "owner", "passkeys of persons (owners and members): one-time enrol links, list, revoke")
    osubs = p.add_subparsers(dest="owner_command", required=True, metavar="ACTION")
    oe = osubs.add_parser("enroll", help="print a one-time link (15 min, single use) that enrols a first passkey")
    _config_arg(oe)
    oe.add_argument("--login", default=None, help="whose passkey (default: the default environment's owner)")
    oe.add_argument("--port", type=int, default=None, help="the port the server listens on (default: the config's)")
    ol = osubs.add_parser("list", help="list passkeys (never their keys)")
    _config_arg(ol)
    ol.add_argument("--json", action="store_true")
    orv = osubs.add_parser("revoke", help="revoke a passkey by id: it logs in no more, its sessions end")
    _config_arg(orv)
    orv.add_argument("passkey_id", metavar="ID")

    p = _sub(subs, "import", "bring a Markdown/Obsidian folder in whole: notes and attachments, in batched commits")
    _config_arg(p)
    p.add_argument("source")
    p.add_argument("--message", default="Import notes", help="commit summary")
    p.add_argument("--environment", default=None)
    p.add_argument("--login", default=None, help="author login (default: the environment's owner)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument(
        "--allow-secrets", action="store_true", help="import notes that hold what looks like a credential too"
    )
    p.add_argument("--into", default="", metavar="FOLDER", help="put everything under this folder of the vault")
    p.add_argument(
        "--encoding", default=None, metavar="NAME", help="read notes that are not UTF-8 as NAME (e.g. cp1252)"
    )
    p.add_argument("--dry-run", action="store_true", help="decide and report everything, commit nothing")
    p.add_argument(
        "--allow-policy-folders",
        action="store_true",
        help="let the vault's inbox/ and protected (rules/) folders be the policy's (refused by default)",
    )
    p.add_argument("--list-skipped", action="store_true", help="name each skipped file (default: counts by reason)")
    p.add_argument("--json", action="store_true", help="print the report as JSON")

    p = _sub(subs, "reindex", "rebuild the search index from git")
    _config_arg(p)
    p.add_argument("--environment", default=None)
    p.add_argument("--quiet", action="store_true", help="no progress bar")

    p = _sub(subs, "review", "review the inbox with the configured model: promote or hold each item")
    _config_arg(p)
    p.add_argument("--dry-run", action="store_true", help="decide, print, change nothing")
    p.add_argument("--environment", default=None)
    p.add_argument("--json", action="store_true", help="print the summary as JSON")

    p = _sub(subs, "reflect", "turn new conversation logs into session state and inbox captures")
    _config_arg(p)
    p.add_argument("--raw", required=True, help="folder of Claude Code / Codex JSONL transcripts")
    p.add_argument("--environment", default=None)
    p.add_argument("--force", action="store_true", help="ignore the minimum interval between runs")

    p = _sub(subs, "hook", "run a Claude Code or Codex hook: hook JSON on stdin, what the client expects on stdout")
    # No `choices`: the hook itself answers 1 for an unknown event and never 2 (which Claude Code reads as "block").
    p.add_argument("event", help="session-start, session-end, pre-compact, stop or codex-notify")
    p.add_argument("hook_args", nargs="*", metavar="ARG", help="codex-notify: the JSON argument Codex passes")

    p = _sub(subs, "grant", "elevation grants the owner approved: list them, revoke one")
    gsub = p.add_subparsers(dest="grant_command", required=True, metavar="ACTION")
    gl = gsub.add_parser("list", help="list grants (their ids, never their values)")
    _config_arg(gl)
    gl.add_argument("--json", action="store_true")
    gr = gsub.add_parser("revoke", help="revoke a grant by its id (g-...): it stops counting at once")
    _config_arg(gr)
    gr.add_argument("grant_id")

    p = _sub(subs, "device", "device keys: the owner's own machine is trusted (keygen, list, header)")
    dsubs = p.add_subparsers(dest="device_command", required=True, metavar="ACTION")
    dk = dsubs.add_parser(
        "keygen",
        help="write a new Ed25519 private key (mode 0600) and print the config lines for its public key",
        description="example:\n  notegate device keygen laptop --person owner",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    dk.add_argument("name", help="the device's name (lowercase letters, digits, - and _)")
    dk.add_argument("--person", default="owner", help="whose machine this is (default: owner)")
    dk.add_argument("--dir", default=None, help="key folder (default: $XDG_CONFIG_HOME/notegate/devices)")
    dl = dsubs.add_parser(
        "list",
        help="list this machine's device keys (and, with a config, the devices it trusts)",
        description="example:\n  notegate device list --config ./vault/notegate.toml --json",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    dl.add_argument("--dir", default=None, help="key folder (default: $XDG_CONFIG_HOME/notegate/devices)")
    dl.add_argument("--config", default=os.environ.get("NOTEGATE_CONFIG"), help="also list [devices.*] of this file")
    dl.add_argument("--json", action="store_true")
    dh = dsubs.add_parser(
        "header",
        help='print {"X-Notegate-Device": "<JWS>"}, what Claude Code\'s headersHelper expects',
        description="example (Claude Code sets CLAUDE_CODE_MCP_SERVER_URL for its headersHelper):\n"
        "  notegate device header --name laptop --url http://127.0.0.1:8765/mcp",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    dh.add_argument("--name", default=os.environ.get("NOTEGATE_DEVICE"), help="device key (default: the only one)")
    dh.add_argument(
        "--url",
        default=os.environ.get("CLAUDE_CODE_MCP_SERVER_URL") or os.environ.get("NOTEGATE_URL"),
        help="the server's URL (default: $CLAUDE_CODE_MCP_SERVER_URL, else $NOTEGATE_URL)",
    )
    dh.add_argument("--lifetime", type=int, default=None, help="seconds the header is valid (default and max: 12 h)")
    dh.add_argument("--value", action="store_true", help="print only the JWS (for Codex's env_http_headers)")
    dh.add_argument("--dir", default=None, help="key folder (default: $XDG_CONFIG_HOME/notegate/devices)")

    p = _sub(subs, "pre-receive", "a bare origin's pre-receive hook: refuse a push that breaks the policy")
    _config_arg(p)
    p.add_argument("--environment", default=None, help="whose rules and owner apply (default: the default one)")

    p = _sub(subs, "hooks", "install notegate's pre-receive hook into a bare origin")
    hsubs = p.add_subparsers(dest="hooks_command", required=True, metavar="ACTION")
    hi = hsubs.add_parser("install", help="write ORIGIN/hooks/pre-receive (refuses to replace another hook)")
    hi.add_argument("origin", help="the bare repository (e.g. /srv/git/vault.git)")
    _config_arg(hi)
    hi.add_argument("--environment", default=None, help="whose rules and owner apply (default: the default one)")
    hi.add_argument("--force", action="store_true", help="replace a pre-receive hook notegate did not write")
    p = _sub(subs, "lab", "run the whole stack on this machine (needs /usr/bin/chromium) and check its promises")
    p.add_argument("--dir", default=None, help="an empty or new directory for the lab (default: a temporary one)")
    p.add_argument("--keep", action="store_true", help="keep the lab's directory (vault, origins, logs) afterwards")
    p = _sub(subs, "sync", "git-sync a workstation's vault clone: commit local changes, fetch, replay, push")
    p.add_argument("directory", metavar="DIR", help="the vault clone (git clone ORIGIN DIR) Obsidian edits")
    _config_arg(p)
    p.add_argument("--environment", default=None, help="whose owner and rules apply (default: the default one)")
    p.add_argument("--once", action="store_true", help="one tick, then exit with its status (cron, launchd)")
    p.add_argument("--resume", action="store_true", help="clear a stop after fixing its reason, then sync again")
    p.add_argument(
        "--device",
        default=os.environ.get("NOTEGATE_DEVICE"),
        help="this machine's name in commit trailers, sync:<device> (default: $NOTEGATE_DEVICE, else the host name)",
    )
    p.add_argument("--quiet", action="store_true", help="print nothing when a tick had nothing to report")
    p.epilog = (
        "exit status: 0 synced; 1 origin unavailable (try again); 2 usage or config error; stopped (see "
        "DIR/.git/notegate-sync-stopped): 3 conflict, 4 incoming commits refused, 5 local change refused, "
        "6 push refused; 7 synced but files the policy refuses were left out"
    )

    p = _sub(
        subs, "setup", "connect Claude Code or Codex in one step: token, client.toml, MCP, plugin (--remove undoes)"
    )
    p.add_argument("client", choices=["claude-code", "codex"])
    p.add_argument("--remove", action="store_true", help="undo exactly what setup did (its journal), nothing else")
    p.add_argument("--scope", choices=["user"], default="user", help="Claude Code scope (user: works in every folder)")
    p.add_argument("--url", default=None, help="the server's URL (default: from --config, else http://localhost:8765)")
    p.add_argument("--token-file", default=None, help="token file (default: $XDG_CONFIG_HOME/notegate/token)")
    p.add_argument(
        "--config",
        default=None,
        help="the server's notegate.toml: mint a token there when the token file does not exist yet",
    )
    p.add_argument("--name", default=None, help="the minted token's name (default: the client's name)")
    p.add_argument("--tier", choices=["restricted", "trusted"], default=None, help="the minted token's tier")

    p = _sub(
        subs, "backup", "write an encrypted, consistent backup (state DB, every repository, config); safe while serving"
    )
    _config_arg(p)
    p.add_argument("--to", required=True, help="folder to write notegate-backup-<UTC time>/ into")
    p.add_argument("--recipient", required=True, help="the age public key (age1...) to encrypt to")
    p.add_argument("--json", action="store_true", help="print the backup folder and its manifest as JSON")

    p = _sub(subs, "restore", "check a backup and restore it into a new directory, or rehearse a full restore")
    p.add_argument("--from", dest="source", required=True, help="a notegate-backup-... folder")
    p.add_argument("--identity", default=None, help="the age identity file (AGE-SECRET-KEY-...)")
    target = p.add_mutually_exclusive_group(required=True)
    target.add_argument("--to", default=None, help="a new or empty directory to restore into")
    target.add_argument("--rehearse", action="store_true", help="restore into a temporary directory and run checks")
    p.add_argument(
        "--state-url",
        default="",
        help="with --to: restore the state into this empty PostgreSQL database (no password in it: ~/.pgpass)",
    )
    p.add_argument("--json", action="store_true", help="print the rehearsal's checks as a JSON list")

    p = _sub(subs, "status", "environments, origin and sync, last commit, index, tokens, inbox, last review/reflect")
    _config_arg(p)
    p.add_argument("--json", action="store_true", help="print the status as JSON")

    p = _sub(subs, "doctor", "check the deployment and this workstation; exit 1 on any failure")
    p.add_argument(
        "--config",
        default=os.environ.get("NOTEGATE_CONFIG"),
        help="the server's notegate.toml (default: $NOTEGATE_CONFIG, else ./notegate.toml when present)",
    )
    p.add_argument("--vault", action="append", default=[], help="also check a workstation's vault clone (repeatable)")
    p.add_argument("--json", action="store_true", help="print the checks as a JSON list")

    p = _sub(subs, "floor", "run the floor (checks that hold an inbox item whatever a model says)")
    fsubs = p.add_subparsers(dest="floor_command", required=True, metavar="ACTION")
    fc = fsubs.add_parser("check", help="print {verdict, reasons}; exit 0 pass, 1 hold")
    fc.add_argument("file", nargs="?", default="-")
    fc.add_argument("--path", default=None, help="the item's vault path, checked for instruction-file names")
    _config_arg(fc)

    p = _sub(subs, "gate", "run the output gate on model output (strict JSON, schema, content gates, citations)")
    gsubs = p.add_subparsers(dest="gate_command", required=True, metavar="ACTION")
    gc = gsubs.add_parser(
        "check-output",
        help='print the normalised JSON (exit 0) or {"error": CODE} (exit 1)',
        description="example:\n  notegate gate check-output --schema review --manifest sources.txt answer.json",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    gc.add_argument("--schema", required=True, help="a schema shipped with notegate: review, reflect, session")
    gc.add_argument("--manifest", required=True, help="file listing the sources the job gave the model (one a line)")
    gc.add_argument("file", nargs="?", default="-", help="the model's raw output (default: stdin)")
    return parser


def _fail(message: str, code: int = 1) -> int:
    print(message, file=sys.stderr)
    return code


def _load(args: argparse.Namespace):
    from notegate.config import load_config

    return load_config(args.config)


def cmd_init(args: argparse.Namespace) -> int:
    from notegate.errors import InitError
    from notegate.services.vaultinit import init_directory

    try:
        path = init_directory(Path(args.directory), owner=args.owner, empty=args.empty, state_url=args.state_url)
    except InitError as exc:
        return _fail(f"notegate init: {exc.explain()}", 2)
    print(f"Created {path}")
    print(f"Serve it with: {self_command()} serve --config {path}")
    return 0


def cmd_token(args: argparse.Namespace) -> int:
    from notegate.auth.tokens import issue_token, list_tokens, revoke_token, set_token_tier, write_token_file
    from notegate.errors import NotegateError
    from notegate.state import StateDB

    config = _load(args)
    db = StateDB.for_config(config)
    if args.token_command == "create":  # noqa: S105 - a sub-command name
        env = config.environment(args.environment)
        login = args.login or env.owner
        from notegate.contracts import BUILTIN_MODULES

        unknown = [c for c in args.contracts if c not in BUILTIN_MODULES]
        if unknown:
            return _fail(f"notegate token: no such contract {unknown[0]!r}; contracts: {', '.join(BUILTIN_MODULES)}", 2)
        if args.client_class != "machine" and not config.may_use(login, env.name):
            return _fail(
                f"notegate token: '{login}' is neither the owner nor a member of environment '{env.name}'. "
                f"Add it to members in [environments.{env.name}] first.",
                2,
            )
        out = Path(args.output).expanduser().absolute() if args.output else None

        def deliver(token: str) -> None:  # before the token is stored: an undelivered secret is never live
            if out is not None:
                write_token_file(out, token)
            else:
                print(token, flush=True)

        try:
            record = issue_token(
                db,
                name=args.name,
                client_class=args.client_class,
                tier=args.tier,
                login=login,
                display_name=args.display_name,
                environment=env.name,  # a token works in exactly one environment
                deliver=deliver,
                now=time.time(),
                contracts=tuple(args.contracts),
            )
        except NotegateError as exc:
            if out is not None and exc.rule != "token-output-failed" and out.exists():
                out.unlink()  # it holds a value that never became a token
            raise
        if out is not None:
            print(f"token {record.id} ({record.client_class}, {record.tier}) written to {out}", file=sys.stderr)
        else:
            print(
                f"token {record.id} ({record.client_class}, {record.tier}); shown once, keep it safe", file=sys.stderr
            )
        return 0
    if args.token_command == "list":  # noqa: S105 - a sub-command name
        return _print_rows(
            list_tokens(db),
            args.json,
            lambda r: (
                f"{r.id}  {r.name:<20} {r.login:<12} {r.client_class:<12} {r.tier:<10} {_state(r)}"
                + (f"  contracts: {','.join(r.contracts)}" if r.contracts else "")
            ),
        )
    if args.token_command == "tier":  # noqa: S105 - a sub-command name
        count = set_token_tier(db, args.token, args.tier)
        if not count:
            return _fail(f"no active conversation token with id or name '{args.token}'")
        print(f"{count} token(s) now {args.tier}")
        return 0
    count = revoke_token(db, args.token, now=time.time())
    if not count:
        return _fail(f"no active token with id or name '{args.token}'")
    print(f"revoked {count} token(s)")
    return 0


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


def cmd_grant(args: argparse.Namespace) -> int:
    """The owner's view of elevation grants: state, expiry, connector login; revoke by id."""
    from notegate.auth.grants import Grants
    from notegate.state import StateDB

    config = _load(args)
    grants = Grants(StateDB.for_config(config), config.policy)
    now = time.time()
    if args.grant_command == "list":
        rows = [
            {
                **{k: v for k, v in g.__dict__.items() if k != "conversation"},
                "bound_to_conversation": g.conversation is not None,
                "state": "revoked" if g.revoked_at else ("expired" if g.expires_at <= now else "active"),
            }
            for g in grants.list()
        ]
        if args.json:
            print(json.dumps(rows, indent=2))
        else:
            for r in rows:
                until = time.strftime("%Y-%m-%d %H:%M", time.gmtime(r["expires_at"]))
                print(
                    f"{r['grant_id']}  {r['login']:<12} {r['client']:<20} {r['connector']:<24} {r['state']:<8} {until}Z"
                )
        return 0
    owner = config.environment(None).owner
    if not grants.revoke(args.grant_id, person=owner, now=now):
        return _fail(f"no active grant with id '{args.grant_id}'")
    print(f"revoked grant {args.grant_id}")
    return 0


def console_url(config, port: int | None = None) -> str:
    """Where a person opens the console: the public URL, or http://localhost:PORT (passkeys need a domain)."""
    return config.public_url.rstrip("/") if config.public_url else f"http://localhost:{port or config.port}"


def _console_hint(config, port: int) -> str:
    """Where the owner's console is and how to get a first passkey's link: the command, with absolute paths
    (the link itself is a credential, minted only when asked for, never into a log)."""
    url = console_url(config, port)
    here = Path(sys.executable).parent / "notegate"
    program = str(here) if here.exists() else "notegate"
    port_arg = f" --port {port}" if port != config.port and not config.public_url else ""
    config_arg = str(Path(config.path).absolute()) if config.path else "CONFIG"
    return (
        f"Console (passkey login): {url}/\n"
        f"  first passkey: {program} owner enroll --config {config_arg}{port_arg}\n"
        "  prints a one-time enrol link (15 min, single use): open it in the browser that keeps the passkey."
    )


def cmd_owner(args: argparse.Namespace) -> int:
    from notegate.auth.passkeys import create_enrol_link, list_passkeys, persons, revoke_passkey
    from notegate.state import StateDB

    config = _load(args)
    db = StateDB.for_config(config)
    if args.owner_command == "enroll":
        login = args.login or config.environment(None).owner
        token = create_enrol_link(db, login=login, known=persons(config), now=time.time())
        print(f"{console_url(config, args.port)}/enroll/{token}")
        print(f"one-time link for {login}: open it within 15 minutes; it works once", file=sys.stderr)
        return 0
    if args.owner_command == "list":
        return _print_rows(list_passkeys(db), args.json, lambda r: f"{r.id}  {r.login:<12} {r.name:<24} {_state(r)}")
    if not revoke_passkey(db, args.passkey_id, now=time.time()):
        return _fail(f"no active passkey with id '{args.passkey_id}'")
    print(f"revoked passkey {args.passkey_id}; its sessions ended")
    return 0


def _progress(total: int | None, desc: str, quiet: bool, unit: str = "note"):
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit=unit, disable=quiet, file=sys.stderr, leave=False)


def cmd_import(args: argparse.Namespace) -> int:
    import codecs

    from notegate.errors import NotegateError, PathRejected
    from notegate.services.container import Services
    from notegate.services.importer import import_folder, importing_caller
    from notegate.services.runtime import Runtime
    from notegate.vault.paths import FolderPath

    config = _load(args)
    src = Path(args.source)
    if not src.is_dir():
        return _fail(f"notegate import: {args.source} is not a folder", 2)
    if args.encoding:
        try:
            codecs.lookup(args.encoding)
        except LookupError:
            return _fail(f"notegate import: --encoding {args.encoding}: no such encoding (try cp1252 or latin-1)", 2)
    if args.into:
        try:
            FolderPath.parse(args.into.strip("/"))
        except PathRejected as exc:
            return _fail(f"notegate import: --into: {exc.explain()}", 2)
    runtime = Runtime(config)
    env_cfg = config.environment(args.environment)
    env = runtime.environment(env_cfg.name)
    login = args.login or env_cfg.owner
    try:
        with _progress(None, "importing", args.quiet, unit="file") as bar:  # notes and attachments alike

            def scanned(total: int) -> None:
                bar.total = total
                bar.refresh()

            report = import_folder(
                Services.build(runtime).notes,
                env,
                importing_caller(login),
                src,
                message=args.message.splitlines()[0][:100] if args.message else "Import notes",
                progress=bar.update,
                on_scanned=scanned,
                allow_secrets=args.allow_secrets,
                into=args.into,
                encoding=args.encoding,
                dry_run=args.dry_run,
                allow_policy_folders=args.allow_policy_folders,
                # an import leaves a pack per batch and per commit: pack both repos, beside the index's catch-up
                after_commits=lambda: env.store.repack(deltas=False),
            )
    except NotegateError as exc:
        return _fail(f"notegate import: {exc.explain()}")
    finally:
        runtime.close()
    if args.json:
        print(json.dumps(report.__dict__, indent=2))
    else:
        print(import_summary(report, list_skipped=args.list_skipped))
    return 1 if report.refused else 0


MISSING_LINKS_SHOWN = 50  # the summary lists this many links that point nowhere; --json lists every one


def import_summary(report, *, list_skipped: bool = False) -> str:
    """The import's report as a person reads it: the refusals first (each one needs the person's action),
    then what was skipped counted by reason (each file with ``list_skipped``: a vault's thousands of skipped
    files must not bury the few refusals), what landed elsewhere, the links that point nowhere, the counts
    and the commit (or that a dry run committed nothing)."""
    lines = []
    for path, reason in report.refused:
        lines.append(f"refused  {path}: {reason}")
    if list_skipped:
        for path, reason in report.skipped:
            lines.append(f"skipped  {path}: {reason}")
    else:
        reasons: dict[str, int] = {}
        for _path, reason in report.skipped:
            reasons[reason] = reasons.get(reason, 0) + 1
        for reason, count in sorted(reasons.items(), key=lambda item: (-item[1], item[0])):
            lines.append(f"skipped  {count:,} × {reason}")
        if reasons:
            lines.append("         (--list-skipped names each skipped file)")
    folders: dict[tuple[str, str], int] = {}  # one line per folder that lands under another name
    for source, dest in report.landed:
        key = (source.rpartition("/")[0] + "/", dest.rpartition("/")[0] + "/")
        folders[key] = folders.get(key, 0) + 1
    for (source, dest), count in folders.items():
        lines.append(f"landed   {source} -> {dest} ({count} file{'s' if count != 1 else ''})")
    for source, dest in report.renamed:  # the two look alike: the line says what changed
        lines.append(f"renamed  {source} -> {dest}: the name was not in Unicode NFC (macOS stores it decomposed)")
    for path, encoding in report.converted:
        lines.append(f"converted {path} from {encoding} to UTF-8")
    if report.missing_links:
        shown = report.missing_links[:MISSING_LINKS_SHOWN]
        lines.append(f"{len(report.missing_links)} link(s) point at nothing in the vault:")
        lines.extend(f"  {note}: {link}" for note, link in shown)
        if len(report.missing_links) > len(shown):
            lines.append(f"  … and {len(report.missing_links) - len(shown)} more (--json lists them all)")
    verb = "would import" if report.dry_run else "imported"
    rows = [
        (f"notes ({verb})", len(report.added)),
        (f"attachments ({verb})", len(report.attachments)),
        ("unchanged", len(report.unchanged)),
        ("skipped", len(report.skipped)),
        ("refused", len(report.refused)),
    ]
    width = max(len(name) for name, _ in rows)
    lines.append("")
    lines.extend(f"{name:<{width}}  {count:>6,}" for name, count in rows)
    if report.dry_run:
        lines.append("dry run: nothing was committed")
    elif report.commit:
        lines.append(f"{len(report.commits)} commit(s), the last {report.commit[:12]}, pushed")
    else:
        lines.append("nothing to commit")
    if report.refused:
        lines.append(f"{len(report.refused)} file(s) refused: exit status 1 (fix them and run the same import again)")
    return "\n".join(lines)


def cmd_reindex(args: argparse.Namespace) -> int:
    from notegate.services.runtime import Runtime

    config = _load(args)
    runtime = Runtime(config)
    names = [args.environment] if args.environment else list(config.environments)
    for name in names:
        env = runtime.environment(name)
        total = len(env.store.listing().notes)
        with _progress(total, f"indexing {name}", args.quiet) as bar:
            count = env.index.rebuild(env.store, progress=bar.update)
        canvases = count - total  # a canvas is searched by its cards' text, and is no note in the listing
        what = f"{total} notes and {canvases} canvas files" if canvases > 0 else f"{count} notes"
        print(f"{name}: indexed {what} at {(env.index.indexed_commit or 'empty')[:12]}")
    runtime.close()
    return 0


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


def _connect_hint(url: str, token_file: str | None, config: str | Path | None = None) -> str:
    """How to connect, without ever printing a token (stderr often ends up in a log). Paths are absolute and
    the registration is at user scope, so the lines work pasted into any folder."""
    token = f"$(cat {Path(token_file).expanduser().absolute()})" if token_file else "<token>"
    config_arg = str(Path(config).absolute()) if config else "CONFIG"
    notegate = self_command()
    return (
        f"notegate is serving MCP at {url}/mcp\n"
        "Connect Claude Code (from any folder; user scope):\n"
        f"  claude mcp add --scope user --transport http notegate {url}/mcp "
        f'--header "Authorization: Bearer {token}"\n'
        f"  or all in one step (token, client.toml, MCP, plugin): {notegate} setup claude-code --config {config_arg} "
        f"--url {url}\n"
        "Any MCP client: Streamable HTTP at the URL above with that Authorization header.\n"
        f"Make a token: {notegate} token create --config {config_arg} --name NAME --class workstation "
        "[--tier trusted]\n"
        "Hosted apps (claude.ai, ChatGPT, phones) connect with OAuth to the same URL, no token: enrol your passkey\n"
        f"first ({notegate} owner enroll --config {config_arg} prints a one-time link), then approve the app on the\n"
        "consent page. They stay restricted; put notegate behind TLS for them (README: OAuth / hosted clients)."
    )


def cmd_review(args: argparse.Namespace) -> int:
    from notegate.models import build_chain
    from notegate.services.container import Services
    from notegate.services.review import ReviewJob
    from notegate.services.runtime import Runtime

    config = _load(args)
    runtime = Runtime(config)
    try:
        job = ReviewJob(
            Services.build(runtime),
            build_chain(config.models, os.environ),
            dry_run=args.dry_run,
            environment=args.environment,
        )
        summary = job.run()
    finally:
        runtime.close()
    if args.json:
        print(json.dumps(summary.__dict__, indent=2))
    else:
        for line in summary.planned:
            print(f"would {line}")
        for line in summary.notes:
            print(line, file=sys.stderr)
        print(summary.line() + (" (dry run)" if args.dry_run else ""))
    return 0 if summary.ok else 1


def cmd_reflect(args: argparse.Namespace) -> int:
    from notegate.models import build_chain
    from notegate.services.container import Services
    from notegate.services.reflect import ReflectJob
    from notegate.services.runtime import Runtime

    config = _load(args)
    runtime = Runtime(config)
    try:
        job = ReflectJob(
            Services.build(runtime),
            build_chain(config.models, os.environ),
            Path(args.raw),
            environment=args.environment,
        )
        outcome = job.run(force=args.force)
    finally:
        runtime.close()
    print(outcome.line())
    return 0 if outcome.ok else 1


def cmd_hook(args: argparse.Namespace) -> int:
    from notegate.hooks import main as run_hook

    return run_hook(args.event, sys.stdin, sys.stdout, os.environ, args=args.hook_args)


def cmd_serve(args: argparse.Namespace) -> int:

    import uvicorn

    from notegate.doors.http import base_url, create_app
    from notegate.doors.listen import bind_listener, bounded_protocol
    from notegate.services import eventlog
    from notegate.services.runtime import Runtime

    config = _load(args)
    host = args.host or config.host
    port = args.port or config.port
    listener = bind_listener(host, port)  # a busy port is refused here, before anything says "serving"
    runtime = Runtime(config)
    app = create_app(runtime, host=host, port=port)
    eventlog.configure(args.log_format)
    hint = _connect_hint(base_url(runtime, host, port), args.token_file, config.path)
    print(hint, file=sys.stderr, flush=True)
    print(_console_hint(config, port), file=sys.stderr, flush=True)
    # The protocol bounds connections (file descriptors) before any HTTP parsing: per peer, in all, and the
    # time a request head may take (doors/listen.py); uvicorn's limit_concurrency stays off, since it would
    # count strangers' half heads against callers.  The app's guard bounds open requests per credential.
    protocol = bounded_protocol(
        max_connections=config.max_connections,
        per_peer=config.max_connections_per_peer,
        header_timeout=config.header_timeout_seconds,
    )
    server = uvicorn.Server(
        uvicorn.Config(
            app,
            host=host,
            port=port,
            http=protocol,
            ws="none",  # nothing here speaks WebSocket; an upgrade would leave the protocol's bounds
            log_level="warning",
            log_config=None,  # uvicorn's lines go through our handler, in the chosen --log-format
            access_log=False,
            limit_concurrency=None,
            timeout_keep_alive=config.idle_connection_seconds,
            # uvicorn believes X-Forwarded-For from 127.0.0.1 by default: the app decides instead, from
            # [server] trusted_proxies (auth/ratelimit.source_of), so no local process names its own source.
            proxy_headers=False,
        )
    )
    server.run(sockets=[listener])
    return 0


def cmd_mcp(args: argparse.Namespace) -> int:
    import threading

    from notegate.auth.tokens import verify_token
    from notegate.doors.mcp import CallerResolver, build_mcp
    from notegate.errors import AuthError
    from notegate.policy import decide_token_environment
    from notegate.services.container import Services
    from notegate.services.runtime import Runtime

    config = _load(args)
    runtime = Runtime(config)
    try:
        token = Path(args.token_file).read_text(encoding="utf-8").strip()
    except OSError:
        return _fail("notegate mcp: cannot read the token file", 2)
    record = verify_token(runtime.state, token)
    if record is None:
        return _fail("notegate mcp: the token in the token file is not valid (revoked or mistyped)", 2)
    served = decide_token_environment(record.environment, config.environments)  # the HTTP door's own decision
    if not served.allowed:
        raise AuthError(f"the token in the token file is refused: {served.reason}", rule=served.rule)
    runtime.open_all()

    def loop() -> None:
        while True:
            time.sleep(config.policy.fetch_interval_seconds)
            runtime.sync_all()

    threading.Thread(target=loop, daemon=True, name="notegate-sync").start()

    def still_valid() -> bool:  # one indexed row per call: a revoked token stops this process at its next call
        return verify_token(runtime.state, token) is not None

    services = Services.build(runtime)
    server = build_mcp(services, resolver=CallerResolver(fixed=record.caller(), still_valid=still_valid))
    server.run()
    return 0


def _device_dir(args: argparse.Namespace) -> Path:
    from notegate.auth.devices import key_dir

    return Path(args.dir) if args.dir else key_dir(os.environ, Path.home())


def cmd_device(args: argparse.Namespace) -> int:
    from notegate.auth import devices
    from notegate.errors import NotegateError

    directory = _device_dir(args)
    if args.device_command == "keygen":
        if not devices.is_device_name(args.name):
            raise NotegateError(f"'{args.name}' is not a device name.", rule="device-name-invalid")
        pem, public_key = devices.generate_device_key()
        path = devices.write_private_key(directory, args.name, pem)
        print(f"[devices.{args.name}]")
        print(f'public_key = "{public_key}"')
        print(f'person = "{args.person}"')
        print(
            f"private key written to {path} (mode 600). Paste the lines above into the server's deployment config "
            "(notegate.toml), never into the vault; delete them to revoke this device.",
            file=sys.stderr,
        )
        return 0
    if args.device_command == "list":
        local = devices.local_keys(directory)
        configured = {}
        if args.config and Path(args.config).exists():
            configured = dict(_load(args).devices)
        by_key = {d.public_key: d.name for d in configured.values()}
        rows = [
            {"name": name, "public_key": key, "file": str(path), "configured_as": by_key.get(key)}
            for name, key, path in local
        ]
        trusted = [{"name": d.name, "person": d.person, "public_key": d.public_key} for d in configured.values()]
        if args.json:
            print(json.dumps({"local": rows, "configured": trusted}, indent=2))
            return 0
        for row in rows:
            state = f"configured as {row['configured_as']}" if row["configured_as"] else "not in this config"
            print(f"local       {row['name']:<20} {row['public_key']}  {state if configured else ''}".rstrip())
        for device in trusted:
            print(f"configured  {device['name']:<20} {device['public_key']}  person {device['person']}")
        if not rows and not trusted:
            print(f"no device keys in {directory}", file=sys.stderr)
        return 0
    if not args.url:
        raise NotegateError("no server URL to sign the device header for.", rule="device-audience-missing")
    name, path = devices.choose_key(directory, args.name)
    header = devices.mint_device_header(
        path.read_bytes(),
        name,
        args.url,
        now=time.time(),
        lifetime=args.lifetime or devices.DEVICE_DEFAULT_LIFETIME_SECONDS,
    )
    print(header if args.value else json.dumps({devices.HEADER_NAME: header}))
    return 0


def cmd_pre_receive(args: argparse.Namespace) -> int:
    """git's pre-receive hook: fail closed (exit 1) on any finding and on anything unexpected."""
    from notegate.policy import PUSHER_VARIABLES
    from notegate.sync.prereceive import check_push, parse_alternates

    config = _load(args)
    environment = config.environment(args.environment).name
    git_dir = Path(os.environ.get("GIT_DIR", ".")).resolve()
    object_dirs = [os.environ[v] for v in ("GIT_OBJECT_DIRECTORY", "GIT_QUARANTINE_PATH") if os.environ.get(v)]
    object_dirs += parse_alternates(os.environ.get("GIT_ALTERNATE_OBJECT_DIRECTORIES", ""))
    pusher_values = {name: os.environ[name] for name in PUSHER_VARIABLES if name in os.environ}
    stdin_text = sys.stdin.buffer.read().decode("utf-8", errors="replace")
    try:
        quarantine = Path(os.environ["GIT_QUARANTINE_PATH"]) if os.environ.get("GIT_QUARANTINE_PATH") else None
        dirs = [Path(d) for d in object_dirs]
        report = check_push(config, environment, stdin_text, pusher_values, git_dir, dirs, quarantine=quarantine)
    except Exception as exc:  # a guard fails closed, whatever went wrong
        return _fail(f"notegate pre-receive: push refused: the check could not run ({type(exc).__name__})", 1)
    for line in report.lines():
        print(f"notegate: {line}", file=sys.stderr)
    return 0 if report.ok else 1


def cmd_hooks(args: argparse.Namespace) -> int:
    from notegate.sync.hookfile import HOOK_MARKER, bound_pack, hook_path, install_hook

    origin = Path(args.origin)
    if not (origin / "objects").is_dir() or not (origin / "HEAD").is_file():
        return _fail(f"notegate hooks: {args.origin} is not a bare git repository", 2)
    config = _load(args)
    environment = config.environment(args.environment).name
    existing = hook_path(origin)
    if existing.exists() and not args.force:
        text = existing.read_text(encoding="utf-8", errors="replace")
        if HOOK_MARKER not in text:
            return _fail(
                f"notegate hooks: {existing} exists and notegate did not write it; pass --force to replace it", 1
            )
    path = install_hook(origin, config.path, environment)
    bound_pack(origin, config.policy.max_push_bytes)
    print(f"installed {path} (environment {environment}; receive.maxInputSize {config.policy.max_push_bytes})")
    return 0


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


def _when(at: float | None, now: float) -> str:
    if at is None:
        return "never"
    minutes = int(max(0.0, now - at) // 60)
    ago = f"{minutes} min ago" if minutes < 120 else f"{minutes // 60} h ago"
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(at)) + f" ({ago})"


def cmd_status(args: argparse.Namespace) -> int:
    from notegate.services.status import collect

    status = collect(_load(args), package_version())
    if args.json:
        print(json.dumps(status.to_json(), indent=2))
        return 0
    now = time.time()
    print(f"notegate {status.version}")
    for env in status.environments:
        print(f"environment {env.name}")
        print(f"  origin       {'reachable' if env.origin_reachable else 'UNREACHABLE'}; {env.sync}")
        print(f"  last commit  {(env.head or 'none')[:12]} {_when(env.last_commit_at, now) if env.head else ''}")
        fresh = "up to date" if env.index_fresh else f"behind (at {(env.index_commit or 'nothing')[:12]})"
        print(f"  notes        {env.notes}; index {env.index_bytes / 1024:.0f} KiB, {fresh}")
        print(f"  inbox        {env.inbox_waiting} waiting, {env.inbox_held} held")
        if env.tasks:
            print(f"  tasks        {len(env.tasks)} open{' (a fetch was refused)' if env.fetch_refused else ''}")
    print(f"tokens         {status.tokens_active} active, {status.tokens_revoked} revoked")
    print(
        f"last review    {_when(status.last_review_at, now)}"
        + (f"; {status.last_review_line}" if status.last_review_line else "")
    )
    print(
        f"last reflect   {_when(status.last_reflect_at, now)}"
        + (f"; {status.last_reflect_line}" if status.last_reflect_line else "")
    )
    return 0 if all(e.origin_reachable and e.in_sync is not False for e in status.environments) else 1


#: --since's relative form: a number and a unit (minutes, hours, days).
_SINCE_UNITS = {"m": 60, "h": 3600, "d": 86400}


def parse_since(text: str, now: float) -> float:
    """``--since`` as a UNIX time: ``30m``/``2h``/``7d`` back from ``now``, or an ISO date or time (UTC)."""
    from datetime import UTC, datetime

    from notegate.errors import NotegateError

    raw = text.strip()
    if raw[:-1].isdigit() and raw[:-1].isascii() and raw[-1:] in _SINCE_UNITS and len(raw) <= 12:
        return now - int(raw[:-1]) * _SINCE_UNITS[raw[-1]]
    try:
        when = datetime.fromisoformat(raw) if len(raw) <= 40 else None
    except ValueError:
        when = None
    if when is None:
        raise NotegateError(
            f"--since '{raw[:40]}' is neither a duration nor a date",
            rule="bad-argument",
            remedy="Pass a duration such as 30m, 2h or 7d, or a UTC date such as 2026-12-01 or 2026-12-01T10:00.",
        )
    return (when if when.tzinfo else when.replace(tzinfo=UTC)).timestamp()


def cmd_audit(args: argparse.Namespace) -> int:
    """The audit table, read-only: never contents or tokens (the table holds none)."""
    from notegate.state import StateDB

    config = _load(args)
    since = parse_since(args.since, time.time()) if args.since else None
    db = StateDB.for_config(config)
    try:
        rows = db.audit_rows(
            since=since,
            connector=args.connector,
            path=args.path,
            tool=args.tool,
            outcome=args.outcome,
            limit=max(1, min(args.limit, 100_000)),
        )
    finally:
        db.close()
    if args.json:
        print(json.dumps([dict(r) for r in rows], indent=2))
        return 0
    if not rows:
        print("no audit rows match", file=sys.stderr)
        return 0
    print("time (UTC)  environment  client (person)  tool  path  outcome  [commit]")
    for r in rows:
        at = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(r["at"]))
        who = f"{r['client'] or '-'} ({r['login'] or '-'})"
        commit = f"  {r['commit_id'][:12]}" if r["commit_id"] else ""
        print(f"{at}Z  {r['environment'] or '-'}  {who}  {r['tool']}  {r['path'] or '-'}  {r['outcome']}{commit}")
    return 0


def cmd_doctor(args: argparse.Namespace) -> int:
    from notegate.doctor import exit_status, render_json, render_text, run_doctor

    config = Path(args.config) if args.config else None
    if config is None and Path("notegate.toml").exists():
        config = Path("notegate.toml")
    results = run_doctor(config, os.environ, vaults=[Path(v) for v in args.vault])
    if not results:
        return _fail("notegate doctor: nothing to check here; pass --config FILE (the server's notegate.toml)", 2)
    if args.json:
        print(render_json(results))
    else:
        print(render_text(results, color=sys.stdout.isatty() and not os.environ.get("NO_COLOR")))
    return exit_status(results)


def _host_device(hostname: str) -> str:
    """A device name from the host name: lowercase, other characters as '-', at most 63."""
    name = "".join(ch if ch.isascii() and (ch.isalnum() or ch in "-_") else "-" for ch in hostname.lower())
    return name.split(".")[0].strip("-_")[:63] or "workstation"


def cmd_sync(args: argparse.Namespace) -> int:
    import signal
    import socket
    import threading

    from notegate.config import is_device_name
    from notegate.sync.daemon import EXIT_OK, EXIT_USAGE, Syncer, run_loop
    from notegate.sync.workclone import NotAClone
    from notegate.vault import durable

    config = _load(args)
    durable.enable(config.durability)  # the clone's commits and refs, and git's (see notegate.vault.durable)
    env = config.environment(args.environment)
    device = args.device or _host_device(socket.gethostname())
    if not is_device_name(device):
        return _fail("notegate sync: --device must be lowercase letters, digits, - and _ (at most 63)", EXIT_USAGE)
    try:
        syncer = Syncer(Path(args.directory), config.policy, owner=env.owner, device=device, git_env=dict(os.environ))
    except NotAClone as exc:
        return _fail(f"notegate sync: {exc.explain()}", EXIT_USAGE)

    def show(report) -> int:
        quiet = args.quiet and report.code == EXIT_OK and not (report.committed or report.pulled or report.pushed)
        for line in [] if quiet else report.lines():
            print(f"notegate sync: {line}", file=sys.stdout if report.code == EXIT_OK else sys.stderr, flush=True)
        return report.code

    if args.resume:
        report = syncer.resume()
        if args.once or report.stop is not None:
            return show(report)
        show(report)
    elif args.once:
        return show(syncer.tick())
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())

    def say(line: str) -> None:
        stamp = time.strftime("%Y-%m-%d %H:%M:%S")
        if not (args.quiet and line == "in sync"):
            print(f"{stamp} notegate sync: {line}", file=sys.stderr, flush=True)

    return run_loop(syncer, stop, say)


def cmd_floor(args: argparse.Namespace) -> int:
    from notegate.safety.floor import check_item
    from notegate.safety.names import DEFAULT_INSTRUCTION_FILES

    names = DEFAULT_INSTRUCTION_FILES
    if Path(args.config).exists():
        policy = _load(args).policy
        names = getattr(policy, "instruction_files", names)
    text = sys.stdin.buffer.read() if args.file == "-" else Path(args.file).read_bytes()
    try:
        decoded = text.decode("utf-8")
    except UnicodeDecodeError:
        print(json.dumps({"verdict": "hold", "reasons": ["not-utf8: the item is not valid UTF-8"]}))
        return 1
    verdict = check_item(decoded, path=args.path, instruction_files=names)
    print(json.dumps(verdict.to_json(), ensure_ascii=False))
    return 1 if verdict.held else 0


def cmd_gate(args: argparse.Namespace) -> int:
    from notegate.errors import NotegateError
    from notegate.safety.outputgate import check_output, load_schema

    try:
        load_schema(args.schema)
    except (LookupError, ValueError, OSError, NotegateError):
        return _fail(f"notegate gate: unknown schema '{args.schema}' (shipped: review, reflect, session)", 2)
    try:
        manifest_text = Path(args.manifest).read_text(encoding="utf-8")
    except OSError:
        return _fail("notegate gate: cannot read the manifest file", 2)
    stripped = manifest_text.strip()
    if stripped.startswith("["):
        manifest = [str(x) for x in json.loads(stripped)]
    else:
        manifest = [line.strip() for line in manifest_text.splitlines() if line.strip()]
    raw = sys.stdin.buffer.read() if args.file == "-" else Path(args.file).read_bytes()
    result = check_output(raw.decode("utf-8", errors="replace"), args.schema, manifest)
    if result.ok:
        print(json.dumps(result.value, ensure_ascii=False, sort_keys=True))
        return 0
    print(json.dumps({"error": result.error}))
    return 1


def cmd_backup(args: argparse.Namespace) -> int:
    from datetime import UTC, datetime

    from notegate.services.backup import take_backup

    result = take_backup(_load(args), Path(args.to), args.recipient, now=datetime.now(UTC), version=package_version())
    if args.json:
        print(json.dumps({"folder": str(result.folder), "manifest": json.loads(result.manifest.to_json())}))
    else:
        written = sum(1 for _ in result.folder.iterdir())  # the encrypted files, the manifest and its seal
        print(f"Backup written to {result.folder} ({written} files: {len(result.manifest.files)} encrypted)")
    return 0


def cmd_restore(args: argparse.Namespace) -> int:
    from notegate.services.restore import open_backup, rehearse, restore_into

    if args.rehearse and args.state_url:
        return _fail("notegate restore: --state-url goes with --to (a rehearsal restores into SQLite)", 2)
    backup = open_backup(Path(args.source), Path(args.identity) if args.identity else None)
    if not args.rehearse:
        config_path = restore_into(backup, Path(args.to), state_url=args.state_url)
        print(f"Restored into {config_path.parent}")
        print(f"Serve it with: {self_command()} serve --config {config_path}")
        return 0
    if args.json:
        checks = rehearse(backup)
        print(json.dumps([{"check": c.name, "status": "pass" if c.ok else "fail", "detail": c.detail} for c in checks]))
        return 1 if any(not c.ok for c in checks) else 0
    checks = rehearse(backup, say=lambda c: print(f"{'PASS' if c.ok else 'FAIL'} {c.name}: {c.detail}", flush=True))
    failed = [c for c in checks if not c.ok]
    print(f"Rehearsal: {len(checks) - len(failed)} of {len(checks)} checks passed")
    return 1 if failed else 0


def cmd_lab(args: argparse.Namespace) -> int:
    from notegate.lab.run import main as lab_main

    return lab_main(args.dir, args.keep, dict(os.environ))


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


if __name__ == "__main__":
    sys.exit(main())
