"""The model jobs: ``review`` (the inbox) and ``reflect`` (conversation logs)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from notegate.cli.common import _config_arg, _load, _sub


def add_review(subs) -> None:
    p = _sub(subs, "review", "review the inbox with the configured model: promote or hold each item")
    _config_arg(p)
    p.add_argument("--dry-run", action="store_true", help="decide, print, change nothing")
    p.add_argument("--environment", default=None)
    p.add_argument("--json", action="store_true", help="print the summary as JSON")


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


def add_reflect(subs) -> None:
    p = _sub(subs, "reflect", "turn new conversation logs into session state and inbox captures")
    _config_arg(p)
    p.add_argument("--raw", required=True, help="folder of Claude Code / Codex JSONL transcripts")
    p.add_argument("--environment", default=None)
    p.add_argument("--force", action="store_true", help="ignore the minimum interval between runs")


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
