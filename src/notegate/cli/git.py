"""The git side: the origin's ``pre-receive`` hook, ``hooks install`` and a workstation's ``sync``."""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from notegate.cli.common import _config_arg, _fail, _load, _sub


def add_pre_receive(subs) -> None:
    p = _sub(subs, "pre-receive", "a bare origin's pre-receive hook: refuse a push that breaks the policy")
    _config_arg(p)
    p.add_argument("--environment", default=None, help="whose rules and owner apply (default: the default one)")


def cmd_pre_receive(args: argparse.Namespace) -> int:
    """git's pre-receive hook: fail closed (exit 1) on any finding and on anything unexpected."""
    from notegate.policy import PUSHER_VARIABLES
    from notegate.sync.prereceive import check_push, parse_alternates
    from notegate.sync.quarantine import sweep_stale

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
    sweep_stale(git_dir, now=time.time(), keep=quarantine)  # what pushes cut short left (never raises)
    for line in report.lines():
        print(f"notegate: {line}", file=sys.stderr)
    return 0 if report.ok else 1


def add_hooks(subs) -> None:
    p = _sub(subs, "hooks", "install notegate's pre-receive hook into a bare origin")
    hsubs = p.add_subparsers(dest="hooks_command", required=True, metavar="ACTION")
    hi = hsubs.add_parser("install", help="write ORIGIN/hooks/pre-receive (refuses to replace another hook)")
    hi.add_argument("origin", help="the bare repository (e.g. /srv/git/vault.git)")
    _config_arg(hi)
    hi.add_argument("--environment", default=None, help="whose rules and owner apply (default: the default one)")
    hi.add_argument("--force", action="store_true", help="replace a pre-receive hook notegate did not write")


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


def add_sync(subs) -> None:
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
