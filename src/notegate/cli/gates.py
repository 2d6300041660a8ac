"""The safety gates by hand: the ``floor`` and the output ``gate`` (what the jobs run on model output)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from notegate.cli.common import _config_arg, _fail, _load, _sub


def add_floor(subs) -> None:
    p = _sub(subs, "floor", "run the floor (checks that hold an inbox item whatever a model says)")
    fsubs = p.add_subparsers(dest="floor_command", required=True, metavar="ACTION")
    fc = fsubs.add_parser("check", help="print {verdict, reasons}; exit 0 pass, 1 hold")
    fc.add_argument("file", nargs="?", default="-")
    fc.add_argument("--path", default=None, help="the item's vault path, checked for instruction-file names")
    _config_arg(fc)


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


def add_gate(subs) -> None:
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
