"""The vault's own commands: ``init``, ``import`` (and the summary a person reads), ``reindex``, ``status``."""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from notegate.cli.common import _config_arg, _fail, _load, _progress, _sub, package_version, self_command


def add_init(subs) -> None:
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


def add_import(subs) -> None:
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


def add_reindex(subs) -> None:
    p = _sub(subs, "reindex", "rebuild the search index from git")
    _config_arg(p)
    p.add_argument("--environment", default=None)
    p.add_argument("--quiet", action="store_true", help="no progress bar")


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


def add_status(subs) -> None:
    p = _sub(subs, "status", "environments, origin and sync, last commit, index, tokens, inbox, last review/reflect")
    _config_arg(p)
    p.add_argument("--json", action="store_true", help="print the status as JSON")


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
