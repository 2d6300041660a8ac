"""The owner's administration: passkeys (``owner``), ``grant``, ``device`` keys, the ``audit`` table,
``doctor`` and the ``lab`` that checks the whole stack's promises."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from notegate.cli.common import _config_arg, _fail, _load, _print_rows, _state, _sub, console_url


def add_owner(subs) -> None:
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


def cmd_owner(args: argparse.Namespace) -> int:
    from notegate.auth.members import Membership
    from notegate.auth.passkeys import create_enrol_link, list_passkeys, revoke_passkey
    from notegate.state import StateDB

    config = _load(args)
    db = StateDB.for_config(config)
    if args.owner_command == "enroll":
        login = args.login or config.environment(None).owner
        known = Membership(db, lambda: config).persons()  # members live in the state database (the file seeds it)
        token = create_enrol_link(db, login=login, known=known, now=time.time())
        print(f"{console_url(config, args.port)}/enroll/{token}")
        print(f"one-time link for {login}: open it within 15 minutes; it works once", file=sys.stderr)
        return 0
    if args.owner_command == "list":
        return _print_rows(list_passkeys(db), args.json, lambda r: f"{r.id}  {r.login:<12} {r.name:<24} {_state(r)}")
    if not revoke_passkey(db, args.passkey_id, now=time.time()):
        return _fail(f"no active passkey with id '{args.passkey_id}'")
    print(f"revoked passkey {args.passkey_id}; its sessions ended")
    return 0


def add_grant(subs) -> None:
    p = _sub(subs, "grant", "elevation grants the owner approved: list them, revoke one")
    gsub = p.add_subparsers(dest="grant_command", required=True, metavar="ACTION")
    gl = gsub.add_parser("list", help="list grants (their ids, never their values)")
    _config_arg(gl)
    gl.add_argument("--json", action="store_true")
    gr = gsub.add_parser("revoke", help="revoke a grant by its id (g-...): it stops counting at once")
    _config_arg(gr)
    gr.add_argument("grant_id")


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


def add_device(subs) -> None:
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


def add_audit(subs) -> None:
    p = _sub(subs, "audit", "show the audit table: who called which tool on which path, and the outcome")
    _config_arg(p)
    p.add_argument("--since", default=None, help="rows from this time on: 30m, 2h, 7d, or 2026-12-01[T10:00] (UTC)")
    p.add_argument("--connector", default=None, help="a client name (token name) or login")
    p.add_argument("--path", default=None, help="a note, or a folder: every path under it")
    p.add_argument("--tool", default=None, help="a tool name, e.g. write_note")
    p.add_argument("--outcome", default=None, help="ok, error, or a refusal's rule, e.g. stale-revision")
    p.add_argument("--limit", type=int, default=200, help="the newest rows to show (default: 200)")
    p.add_argument("--json", action="store_true")


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


def add_doctor(subs) -> None:
    p = _sub(subs, "doctor", "check the deployment and this workstation; exit 1 on any failure")
    p.add_argument(
        "--config",
        default=os.environ.get("NOTEGATE_CONFIG"),
        help="the server's notegate.toml (default: $NOTEGATE_CONFIG, else ./notegate.toml when present)",
    )
    p.add_argument("--vault", action="append", default=[], help="also check a workstation's vault clone (repeatable)")
    p.add_argument("--json", action="store_true", help="print the checks as a JSON list")


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


def add_lab(subs) -> None:
    p = _sub(subs, "lab", "run the whole stack on this machine (needs /usr/bin/chromium) and check its promises")
    p.add_argument("--dir", default=None, help="an empty or new directory for the lab (default: a temporary one)")
    p.add_argument("--keep", action="store_true", help="keep the lab's directory (vault, origins, logs) afterwards")


def cmd_lab(args: argparse.Namespace) -> int:
    from notegate.lab.run import main as lab_main

    return lab_main(args.dir, args.keep, dict(os.environ))
