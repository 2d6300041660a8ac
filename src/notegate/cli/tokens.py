"""``token``: mint, list, revoke bearer tokens and change their tier (a value is shown once, never kept)."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from notegate.cli.common import _config_arg, _fail, _load, _print_rows, _state, _sub


def add_token(subs) -> None:
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
        from notegate.auth.members import Membership  # members live in the state database (the file seeds it)
        from notegate.policy import ClientClass

        if args.client_class != ClientClass.MACHINE and not Membership(db, lambda: config).may_use(login, env.name):
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
