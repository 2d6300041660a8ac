"""``backup`` and ``restore``: an encrypted, consistent copy, and getting it back (or rehearsing that)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from notegate.cli.common import _config_arg, _fail, _load, _sub, package_version, self_command


def add_backup(subs) -> None:
    p = _sub(
        subs, "backup", "write an encrypted, consistent backup (state DB, every repository, config); safe while serving"
    )
    _config_arg(p)
    p.add_argument("--to", required=True, help="folder to write notegate-backup-<UTC time>/ into")
    p.add_argument("--recipient", required=True, help="the age public key (age1...) to encrypt to")
    p.add_argument("--json", action="store_true", help="print the backup folder and its manifest as JSON")


def cmd_backup(args: argparse.Namespace) -> int:
    from datetime import UTC, datetime

    from notegate.services.backup import take_backup
    from notegate.vault import durable

    config = _load(args)
    durable.enable(config.durability)  # the backup's files flushed before its folder is named whole
    result = take_backup(config, Path(args.to), args.recipient, now=datetime.now(UTC), version=package_version())
    if args.json:
        manifest = json.loads(result.manifest.to_json())
        print(json.dumps({"folder": str(result.folder), "manifest": manifest, "removed": list(result.removed)}))
    else:
        written = sum(1 for _ in result.folder.iterdir())  # the encrypted files, the manifest and its seal
        print(f"Backup written to {result.folder} ({written} files: {len(result.manifest.files)} encrypted)")
        if result.removed:
            print(f"Removed {len(result.removed)} folder(s) left by backups cut short: {', '.join(result.removed)}")
    return 0


def add_restore(subs) -> None:
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


def cmd_restore(args: argparse.Namespace) -> int:
    from notegate.services.restore import open_backup, rehearse, restore_into
    from notegate.vault import durable

    if args.rehearse and args.state_url:
        return _fail("notegate restore: --state-url goes with --to (a rehearsal restores into SQLite)", 2)
    backup = open_backup(Path(args.source), Path(args.identity) if args.identity else None)
    if not args.rehearse:
        durable.enable(True)  # a restore writes a whole deployment: flushed before its config names it whole
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
