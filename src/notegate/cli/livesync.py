"""``notegate livesync``: enrol, list and revoke Obsidian devices, and run the gate in front of CouchDB."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from notegate.cli.common import _config_arg, _load, _sub


def add_livesync(subs) -> None:
    p = _sub(subs, "livesync", "the LiveSync door: Obsidian devices through a gate in front of CouchDB")
    lsubs = p.add_subparsers(dest="livesync_command", required=True, metavar="ACTION")
    dev = lsubs.add_parser("device", help="enrol, list or revoke a device (its own key pair)")
    dsubs = dev.add_subparsers(dest="device_command", required=True, metavar="ACTION")
    add = dsubs.add_parser(
        "add",
        help="enrol a device: print its LiveSync Setup URI (holding its private key) and passphrase, once",
        description="example:\n  notegate livesync device add phone --person owner --config ./vault/notegate.toml",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add.add_argument("name", help="the device's name (lowercase letters, digits, - and _)")
    add.add_argument("--person", default=None, help="whose device (default: the environment's owner)")
    add.add_argument("--algorithm", choices=("ES256", "ES512"), default="ES256", help="pinned for this device")
    add.add_argument("--url", default=None, help="the gate's address as the device reaches it (default: public_url)")
    add.add_argument("--json", action="store_true", help="print the Setup URI, passphrase and settings as JSON")
    _config_arg(add)
    ls = dsubs.add_parser("list", help="the enrolled devices (kid, person, algorithm, last use)")
    ls.add_argument("--all", action="store_true", help="include revoked devices")
    ls.add_argument("--json", action="store_true")
    _config_arg(ls)
    rv = dsubs.add_parser("revoke", help="delete a device's public key: its tokens are refused at once")
    rv.add_argument("name")
    _config_arg(rv)
    cc = lsubs.add_parser(
        "couchdb-config",
        help="print the CouchDB settings the gate expects (local.ini, the member user, the database's members)",
    )
    _config_arg(cc)
    gate = lsubs.add_parser("gate", help="serve the gate ([livesync] host and port) in front of CouchDB")
    _config_arg(gate)
    gate.add_argument("--port", type=int, default=None, help="override [livesync] port")
    bridge = lsubs.add_parser(
        "bridge", help="replicate the notes database to and from the environment's repository, through the rules"
    )
    _config_arg(bridge)
    bridge.add_argument("--poll-seconds", type=float, default=10.0, help="longest one _changes long poll waits")
    bridge.add_argument("--once", action="store_true", help="one pass each way, then exit")


def _settings(config):
    from notegate.errors import NotegateError

    if config.livesync is None:
        raise NotegateError("notegate.toml has no [livesync] table", rule="livesync-not-configured")
    return config.livesync, config.livesync.environment or config.default_environment


def cmd_livesync(args: argparse.Namespace) -> int:
    if args.livesync_command == "gate":
        return _gate(args)
    if args.livesync_command == "bridge":
        return _bridge(args)
    if args.livesync_command == "couchdb-config":
        return _couchdb_config(args)
    return _device(args)


def _device(args: argparse.Namespace) -> int:
    from notegate.auth.members import Membership
    from notegate.errors import NotegateError
    from notegate.livesync.enrol import enrol_device
    from notegate.state import StateDB

    config = _load(args)
    settings, environment = _settings(config)
    db = StateDB.for_config(config)
    try:
        if args.device_command == "add":
            done = enrol_device(
                db,
                Membership(db, lambda: config),
                settings,
                environment=environment,
                owner=config.environment(environment).owner,
                name=args.name,
                person=args.person,
                algorithm=args.algorithm,
                url=args.url,
                now=time.time(),
            )
            kid, person, uri, passphrase = done.kid, done.person, done.setup_uri, done.passphrase
            device_settings = done.settings
            if args.json:
                print(json.dumps({"kid": kid, "setup_uri": uri, "passphrase": passphrase, "settings": device_settings}))
            else:
                print(uri)
                print(f"passphrase: {passphrase}")
            print(
                f"enrolled {args.name} as {kid} for {person} in {environment}. The private key is inside the Setup URI "
                "above and nowhere else: open it on the device (LiveSync: Use the copied setup URI), then close this "
                "terminal. Revoke with `notegate livesync device revoke NAME`.",
                file=sys.stderr,
            )
            return 0
        if args.device_command == "list":
            rows = db.livesync_devices(None if args.all else environment, include_revoked=args.all)
            shown = [
                {
                    "name": d.name,
                    "kid": d.kid,
                    "environment": d.environment,
                    "person": d.person,
                    "algorithm": d.algorithm,
                    "revoked": d.revoked_at is not None,
                    "last_used_at": d.last_used_at,
                }
                for d in rows
            ]
            if args.json:
                print(json.dumps(shown, indent=2))
            elif not shown:
                print("no devices enrolled", file=sys.stderr)
            for d in [] if args.json else shown:
                state = "revoked" if d["revoked"] else "active"
                print(f"{d['name']}\t{d['kid']}\t{d['person']}\t{d['algorithm']}\t{state}")
            return 0
        kids = db.revoke_livesync_devices(environment, args.name, now=time.time())
        if not kids:
            raise NotegateError(
                f"no active device named {args.name[:60]} in {environment}", rule="livesync-device-not-found"
            )
        print(
            f"revoked {', '.join(kids)}: its public key is deleted; the gate refuses its next request", file=sys.stderr
        )
        return 0
    finally:
        db.close()


def couchdb_config_text(settings) -> str:
    """What CouchDB needs for the gate: valid users only, the gate's bounds, no JWT handler (devices never
    reach CouchDB), and the one database with the gate's login as its only member (never an admin)."""
    user = settings.couchdb_user or "notegate-gate"
    db = settings.database
    security = json.dumps(
        {"admins": {"names": [], "roles": ["_admin"]}, "members": {"names": [user], "roles": []}}, separators=(",", ":")
    )
    user_doc = json.dumps({"name": user, "password": "<a long random password>", "roles": [], "type": "user"})
    return f"""; CouchDB settings for the notegate LiveSync gate (notegate livesync couchdb-config).
; Devices never reach CouchDB: only the gate does, as the member user below. Keep CouchDB on loopback or a
; private network, with an admin of its own that no device knows.
[chttpd]
bind_address = 127.0.0.1
require_valid_user = true
max_http_request_size = {settings.max_body_bytes}

[chttpd_auth]
require_valid_user = true

[couchdb]
single_node = true
max_document_size = {settings.max_body_bytes}

[cors]
; the gate answers Obsidian's CORS itself ([livesync] cors_origins); CouchDB needs none

; Then, once, as CouchDB's admin:
;   PUT /_users/org.couchdb.user:{user}   {user_doc}
;   PUT /{db}
;   PUT /{db}/_security   {security}
; and give the gate that password: [livesync] couchdb_user = "{user}", and couchdb_password_file or
; $NOTEGATE_COUCHDB_PASSWORD.
"""


def _couchdb_config(args: argparse.Namespace) -> int:
    settings, _environment = _settings(_load(args))
    print(couchdb_config_text(settings), end="")
    return 0


def _upstream_auth(settings, config_dir: Path) -> str | None:
    import base64

    if not settings.couchdb_user:
        return None
    if settings.couchdb_password_file:
        password = (config_dir / settings.couchdb_password_file).read_text(encoding="utf-8").strip()
    else:
        password = os.environ.get("NOTEGATE_COUCHDB_PASSWORD", "")
    token = base64.b64encode(f"{settings.couchdb_user}:{password}".encode()).decode("ascii")
    return f"Basic {token}"


def _passphrase(settings, config_dir: Path) -> str | None:
    """LiveSync's end-to-end encryption passphrase, a secret of the bridge process: the file [livesync]
    passphrase_file names, else $NOTEGATE_LIVESYNC_PASSPHRASE (never the config file itself, never printed)."""
    if settings.passphrase_file:
        return (config_dir / settings.passphrase_file).read_text(encoding="utf-8").strip() or None
    return os.environ.get("NOTEGATE_LIVESYNC_PASSPHRASE") or None


def _gate(args: argparse.Namespace) -> int:
    from notegate.auth.members import Membership
    from notegate.doors.listen import bind_listener, bounded_server
    from notegate.livesync.gate import Gate
    from notegate.state import StateDB

    config = _load(args)
    settings, environment = _settings(config)
    port = args.port or settings.port
    listener = bind_listener(settings.host, port)
    db = StateDB.for_config(config)

    def audit(**row) -> None:
        db.audit(**row)
        if row["login"] and row["client"]:
            db.touch_livesync_device(row["client"].removeprefix("livesync:"), now=row["now"])

    app = Gate(
        settings,
        environment=environment,
        lookup=db.livesync_device,
        audit=audit,
        upstream_auth=_upstream_auth(settings, config.path.parent),
        record=lambda kid, keys: db.record_livesync_revisions(environment, kid, keys, now=time.time()),
        members=Membership(db, lambda: config).check_caller,  # the MCP door's membership (auth/members.py)
    )
    print(
        f"livesync gate for {environment}/{settings.database} on http://{settings.host}:{port} -> "
        f"{settings.couchdb_url}",
        file=sys.stderr,
        flush=True,
    )
    # The same listener as `notegate serve` (doors/listen.py): admitted at accept, the SYNs of strangers over
    # their budget dropped; an address a device's request completed from is a caller's (Gate credits it).
    server = bounded_server(app, listener, settings, host=settings.host, port=port)
    server.run(sockets=[listener])
    db.close()
    return 0


def _bridge(args: argparse.Namespace) -> int:
    import httpx

    from notegate.livesync.bridge import Bridge
    from notegate.services.container import Services
    from notegate.services.runtime import Runtime

    config = _load(args)
    settings, environment = _settings(config)
    runtime = Runtime(config)
    bridge = Bridge(
        runtime,
        Services.build(runtime).notes,
        environment=environment,
        couchdb_url=settings.couchdb_url,
        database=settings.database,
        auth=_upstream_auth(settings, config.path.parent),
        passphrase=(passphrase := _passphrase(settings, config.path.parent)),
        obfuscate=settings.path_obfuscation,
        settings=settings,
    )
    sealed = ", end-to-end encrypted" if passphrase else ""
    print(
        f"livesync bridge for {environment}/{settings.database} <- {settings.couchdb_url}{sealed}",
        file=sys.stderr,
        flush=True,
    )
    try:
        while True:
            try:
                done = bridge.run_once(args.poll_seconds)
            except httpx.HTTPError as exc:  # CouchDB restarting or out of reach: try again, the checkpoint holds
                print(f"livesync bridge: CouchDB unreachable ({type(exc).__name__}); retrying", file=sys.stderr)
                if args.once:
                    return 1
                time.sleep(min(args.poll_seconds, 5.0) or 1.0)
                continue
            if done.committed or done.refused or done.exported:
                print(
                    f"committed {len(done.committed)}, refused {len(done.refused)}, exported {done.exported}",
                    file=sys.stderr,
                    flush=True,
                )
            if args.once:
                return 0
    finally:
        bridge.close()
        runtime.close()
