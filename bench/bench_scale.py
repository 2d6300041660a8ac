"""How notegate grows from a 10,000-note to a 100,000-note vault (issue 15, "A 100,000-note vault").

One unattended command; for each size it measures, through the real CLI and the real server:

1. ``notegate import`` of a generated vault (wall time of the CLI subprocess, index built as it goes);
2. a confirmed write in process (``NotesService.write_note``), p50;
3. restart to searchable: ``notegate serve`` spawned on the imported vault → first ``search_notes`` that
   finds a planted word held by one note (only a complete index finds it);
4. over MCP (the official SDK client, Streamable HTTP, bearer token): search p50 for a rare word, a word
   in every note and two-word queries; a confirmed write p50; the server's peak RSS (``VmHWM``);
5. first start with the index removed: spawn → first ``read_note`` (reads are served before the index is
   ready) and → searchable, and that server's peak RSS.

Generated vaults are cached under ``--work`` (``src-<N>`` plus its spec as JSON), so a second run skips
generation; everything else is rebuilt each run.  Prints a table, writes ``scale.json`` and ``scale.svg``
(each figure against vault size, with its target) to ``--out``.

    .venv/bin/python bench/bench_scale.py --work var/scale --out bench/out/scale
    .venv/bin/python bench/bench_scale.py --work var/scale --quick   # smoke run: 1,000 and 2,000 notes
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import random
import shutil
import statistics
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_notes as bn  # a sibling script: its server, client and import helpers
import genvault
from notegate.config import load_config
from notegate.services.notes import NotesService
from notegate.services.runtime import Runtime
from notegate.services.vaultinit import init_directory


@dataclass(frozen=True)
class Figure:
    key: str
    label: str
    unit: str
    target: float | None  # at 100,000 notes; None: compared with the smaller vault instead
    lower_is_better: bool = True


FIGURES = (
    Figure("import_s", "notegate import", "s", 60),
    Figure("index_merge_s", "index merge after the import (serve: in the background, no target)", "s", None),
    Figure("restart_searchable_s", "restart → searchable", "s", 5),
    Figure("empty_first_read_s", "empty index: first read", "s", None),
    Figure("empty_searchable_s", "empty index → searchable", "s", 15),
    Figure("mcp_search_rare_ms", "MCP search p50, rare word", "ms", 15),
    Figure("mcp_search_common_ms", "MCP search p50, word in every note", "ms", 15),
    Figure("mcp_search_two_word_ms", "MCP search p50, two words", "ms", 15),
    # The same searches from the lean wire client (bench_notes.LeanMcpClient): the SDK client's own CPU (its
    # pydantic models and output-schema validation) runs on the same two cores and is part of the figures above.
    Figure("mcp_search_rare_lean_ms", "MCP search p50, rare word (lean client)", "ms", 15),
    Figure("mcp_search_common_lean_ms", "MCP search p50, every note (lean client)", "ms", 15),
    Figure("mcp_search_two_word_lean_ms", "MCP search p50, two words (lean client)", "ms", 15),
    Figure("peak_rss_mb", "server peak RSS (max of both starts)", "MB", 250),
    Figure("mcp_write_ms", "MCP confirmed write p50", "ms", None),
    Figure("inproc_write_ms", "in-process confirmed write p50", "ms", None),
)


def _log(message: str) -> None:
    print(f"[bench_scale {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def cached_vault(work: Path, notes: int, seed: int) -> genvault.VaultSpec:
    """The generated vault of this size, generated once and reused (same size and seed, same bytes)."""
    src = work / f"src-{notes}"
    spec_file = work / f"src-{notes}.spec.json"
    if spec_file.exists() and src.is_dir():
        data = json.loads(spec_file.read_text())
        if data.get("seed") == seed:
            return genvault.VaultSpec(**(data | {"out_dir": str(src)}))  # wherever the cache was made from
    shutil.rmtree(src, ignore_errors=True)
    _log(f"generating {notes} notes in {src}…")
    spec = genvault.generate(src, notes, seed)
    spec_file.write_text(json.dumps(asdict(spec)))
    return spec


def p50(samples: list[float]) -> float:
    return statistics.median(samples) if samples else float("nan")


async def mcp_phase(server: bn.ServerProcess, token: str, spec: genvault.VaultSpec, plan: bn.Plan, rng) -> dict:
    out: dict[str, Any] = {}
    queries = {
        "mcp_search_rare_ms": list(spec.rare_terms),
        "mcp_search_common_ms": [spec.common_terms[0]],
        "mcp_search_two_word_ms": spec.two_word_queries,
    }
    async with bn.McpClient(server.url, token) as client:
        for key, qs in queries.items():
            await client.call("search_notes", {"query": qs[0]})  # warm: the first call pays for imports
            samples = await bn.ameasure(
                lambda i, q=qs: client.call("search_notes", {"query": q[i % len(q)]}), plan.searches, plan.budget_s
            )
            out[key] = p50(samples)
            out[key.replace("_ms", "_n")] = len(samples)
        picked = bn.pick_notes(spec, rng, plan.writes, bn._taken)
        samples, skipped = await bn.mcp_write_samples(client, picked, plan, " by bench_scale")
        out["mcp_write_ms"] = p50(samples)
        out["mcp_write_n"] = len(samples)
        out["mcp_write_skipped"] = skipped
    async with bn.LeanMcpClient(server.url, token) as lean:
        for key, qs in queries.items():
            await lean.call("search_notes", {"query": qs[0]})
            samples = await bn.ameasure(
                lambda i, q=qs: lean.call("search_notes", {"query": q[i % len(q)]}), plan.searches, plan.budget_s
            )
            out[key.replace("_ms", "_lean_ms")] = p50(samples)
    return out


async def measure_size(work: Path, notes: int, seed: int, plan: bn.Plan) -> dict[str, Any]:
    spec = cached_vault(work, notes, seed)
    run = work / f"run-{notes}"
    shutil.rmtree(run, ignore_errors=True)
    run.mkdir(parents=True)
    result: dict[str, Any] = {"notes": notes, "vault_mb": round(spec.total_bytes / 1e6, 1)}
    rng = random.Random(seed)
    bn._taken.clear()
    probe = next(iter(spec.rare_terms))  # in one note: a hit means the whole vault is indexed
    read_path = spec.paths[0]

    cfg = init_directory(run / "vault")
    _log(f"{notes}: notegate import…")
    started = time.perf_counter()
    bn.import_vault(cfg, Path(spec.out_dir), spec)
    result["import_s"] = time.perf_counter() - started
    _log(f"{notes}: import {result['import_s']:.1f} s")
    token = bn.bench_token(cfg, run / "bench.token")

    _log(f"{notes}: in-process writes…")
    runtime = Runtime(load_config(cfg))
    try:
        svc = NotesService(runtime)
        result["index_merge_s"] = bn.compact_as_the_server_does(runtime) / 1000
        _log(f"{notes}: index merge after the import {result['index_merge_s']:.1f} s")
        samples = bn._write_samples(svc, spec, plan, rng)
        result["inproc_write_ms"] = p50(samples)
        result["inproc_write_n"] = len(samples)
    finally:
        runtime.close()

    _log(f"{notes}: restart…")
    server = bn.ServerProcess(cfg, run / "serve-restart.log").spawn()
    try:
        first, searchable = await bn.wait_until_answering(server, token, read_path, probe)
        result["restart_first_read_s"], result["restart_searchable_s"] = first, searchable
        _log(f"{notes}: over MCP…")
        result |= await mcp_phase(server, token, spec, plan, rng)
        rss_restart = server.peak_rss_mb()
    finally:
        server.stop()

    _log(f"{notes}: first start with the index removed…")
    index = cfg.parent / "state" / "envs" / "personal" / "index.sqlite"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{index}{suffix}").unlink(missing_ok=True)
    server = bn.ServerProcess(cfg, run / "serve-empty.log").spawn()
    try:
        first, searchable = await bn.wait_until_answering(server, token, read_path, probe)
        result["empty_first_read_s"], result["empty_searchable_s"] = first, searchable
        rss_empty = server.peak_rss_mb()
    finally:
        server.stop()
    result["rss_restart_mb"], result["rss_empty_mb"] = rss_restart, rss_empty
    result["peak_rss_mb"] = max(rss_restart, rss_empty)
    shutil.rmtree(run, ignore_errors=True)  # the imported vault is rebuilt each run; the source is cached
    return result


def render(results: list[dict[str, Any]]) -> str:
    sizes = [r["notes"] for r in results]
    head = ["figure", *(f"{n:,} notes" for n in sizes), "target @100k"]
    if len(results) > 1:
        head.append(f"×{sizes[-1] // sizes[0]} notes →")
    rows = [head]
    for fig in FIGURES:
        vals = [r.get(fig.key, float("nan")) for r in results]
        row = [f"{fig.label} ({fig.unit})", *(f"{v:.1f}" if fig.unit != "ms" else f"{v:.2f}" for v in vals)]
        row.append(f"≤ {fig.target:g}" if fig.target is not None else "no worse than 10k")
        if len(results) > 1:
            row.append(f"×{vals[-1] / vals[0]:.2f}" if vals[0] else "-")
        rows.append(row)
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def svg_plot(results: list[dict[str, Any]]) -> str:
    """Small multiples, one panel per figure: value against vault size (log x), the target dashed."""
    cols, pw, ph, pad = 5, 230, 170, 38
    rows = -(-len(FIGURES) // cols)
    width, height = cols * pw, rows * ph + 30
    sizes = [r["notes"] for r in results]
    lo, hi = math.log10(min(sizes)), math.log10(max(sizes))
    hi = hi if hi > lo else lo + 1
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" '
        'font-size="11">',
        f'<rect width="{width}" height="{height}" fill="white"/>',
        f'<text x="8" y="18" font-size="13">notegate: each figure against vault size '
        f"({', '.join(f'{n:,}' for n in sizes)} notes); dashed red = target at 100k</text>",
    ]
    for k, fig in enumerate(FIGURES):
        x0, y0 = (k % cols) * pw, 30 + (k // cols) * ph
        vals = [r.get(fig.key, float("nan")) for r in results]
        finite = [v for v in vals if v == v]
        top = max([*finite, fig.target or 0, 1e-9]) * 1.15
        left, right, up, down = x0 + pad, x0 + pw - 12, y0 + 22, y0 + ph - 28

        def px(n: int, left=left, right=right) -> float:
            return left + (math.log10(n) - lo) / (hi - lo) * (right - left)

        def py(v: float, up=up, down=down, top=top) -> float:
            return down - v / top * (down - up)

        out.append(f'<text x="{x0 + 6}" y="{y0 + 14}">{fig.label} ({fig.unit})</text>')
        out.append(f'<rect x="{left}" y="{up}" width="{right - left}" height="{down - up}" fill="none" stroke="#999"/>')
        for frac in (0, 0.5):  # no top label: the points carry their values
            v = top * frac
            out.append(f'<text x="{left - 4}" y="{py(v) + 4:.1f}" text-anchor="end">{v:.3g}</text>')
        for n in sizes:
            out.append(f'<text x="{px(n):.1f}" y="{down + 14}" text-anchor="middle">{n // 1000}k</text>')
        if fig.target is not None:
            ty = py(fig.target)
            out.append(
                f'<line x1="{left}" y1="{ty:.1f}" x2="{right}" y2="{ty:.1f}" stroke="red" stroke-dasharray="4 3"/>'
            )
        points = [(px(n), py(v)) for n, v in zip(sizes, vals, strict=True) if v == v]
        if len(points) > 1:
            path = " ".join(f"{x:.1f},{y:.1f}" for x, y in points)
            out.append(f'<polyline points="{path}" fill="none" stroke="#1f77b4" stroke-width="2"/>')
        for (x, y), v in zip(points, finite, strict=True):
            out.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3.5" fill="#1f77b4"/>')
            out.append(f'<text x="{x:.1f}" y="{y - 7:.1f}" text-anchor="middle">{v:.3g}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


async def run(args: argparse.Namespace) -> list[dict[str, Any]]:
    args.work.mkdir(parents=True, exist_ok=True)
    results = []
    for notes in args.sizes:
        plan = bn.make_plan(notes, args.quick)
        results.append(await measure_size(args.work, notes, args.seed, plan))
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=Path("var/scale"), help="cache of generated vaults and runs")
    parser.add_argument("--out", type=Path, default=Path("bench/out/scale"), help="where scale.json/.svg go")
    parser.add_argument("--sizes", type=int, nargs="+", help="vault sizes (default 10000 100000; --quick: 1000 2000)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--quick", action="store_true", help="fewer iterations (a smoke run)")
    args = parser.parse_args(argv)
    args.sizes = args.sizes or ([1000, 2000] if args.quick else [10_000, 100_000])
    started = time.perf_counter()
    results = asyncio.run(run(args))
    args.out.mkdir(parents=True, exist_ok=True)
    meta = bn.machine_meta(argparse.Namespace(notes=max(args.sizes), quick=args.quick, seed=args.seed), args.work)
    meta["wall_s"] = round(time.perf_counter() - started, 1)
    (args.out / "scale.json").write_text(json.dumps({"meta": meta, "results": results}, indent=1) + "\n")
    (args.out / "scale.svg").write_text(svg_plot(results))
    print(render(results))
    print(f"\nwrote {args.out / 'scale.json'} and {args.out / 'scale.svg'} ({meta['wall_s']:.0f} s)")
    print(f"calibration (this machine now): {meta['calibration']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
