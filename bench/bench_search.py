"""Search relevance on a generated vault: do two-word phrase queries find the notes holding the phrase?

Why: a search whose right answers are the notes where two words stand together must rank those notes
first, the way a plain substring scan finds them.  This measures recall@10 of such queries against the
truth computed by scanning every note's text (adjacent words, as FTS5's tokenizer splits them), and the
latency of each query, in process (``NotesService``, a trusted caller: private notes count too).

How the queries are chosen (deterministic for ``--notes`` and ``--seed``): word pairs that stand together
in 2-15 notes while each word alone is in at least 3 % (and at most 60 %) of the notes, so that notes
holding both words apart, or one of them many times, compete with the right answers.

    python bench/bench_search.py [--notes 10000] [--seed 1] [--queries 20] [--quick] [--json OUT]
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import genvault  # a sibling script, not a package
from notegate.config import load_config
from notegate.policy import Caller
from notegate.services.notes import NotesService
from notegate.services.runtime import Runtime
from notegate.services.vaultinit import init_directory

CALLER = Caller(login="owner", display_name="Owner", client="bench", client_class="workstation", tier="trusted")
TOP = 10
_TOKEN = re.compile(r"[^\W_]+", re.UNICODE)  # unicode61: letters and digits; '_' and punctuation separate


def tokens(text: str) -> list[str]:
    return _TOKEN.findall(text.casefold())


def phrase_queries(texts: dict[str, str], count: int, seed: int) -> dict[str, set[str]]:
    """``count`` word pairs (see the module docstring) with the notes that hold each pair as a phrase."""
    per_note = {p: tokens(t) for p, t in texts.items()}
    df: Counter[str] = Counter()
    for words in per_note.values():
        df.update(set(words))
    n = len(texts)
    usable = {w for w, c in df.items() if 0.03 * n <= c <= 0.6 * n}
    holders: dict[tuple[str, str], set[str]] = {}
    for path, words in per_note.items():
        for a, b in itertools.pairwise(words):
            if a != b and a in usable and b in usable:
                holders.setdefault((a, b), set()).add(path)
    candidates = sorted(pair for pair, notes in holders.items() if 2 <= len(notes) <= 15)
    chosen = random.Random(seed).sample(candidates, min(count, len(candidates)))
    return {f"{a} {b}": holders[(a, b)] for a, b in chosen}


def recall_at(hits: list[str], truth: set[str], k: int = TOP) -> float:
    return len(set(hits[:k]) & truth) / min(k, len(truth))


def run(args: argparse.Namespace) -> dict:
    notes = 1000 if args.quick and args.notes == 10_000 else args.notes
    workdir = Path(tempfile.mkdtemp(prefix="notegate-bench-search-"))
    try:
        spec = genvault.generate(workdir / "src", notes, args.seed)
        cfg = init_directory(workdir / "vault")
        done = subprocess.run(
            [sys.executable, "-m", "notegate.cli", "import", "--config", str(cfg), str(workdir / "src"), "--quiet"],
            check=False,
            capture_output=True,
            timeout=900,
        )
        if done.returncode not in (0, 1):  # 1: some generated names are refused by the floor (a few of 10,000)
            raise SystemExit(f"import failed: {done.returncode}")
        texts = {p: (workdir / "src" / p).read_text(encoding="utf-8") for p in spec.paths}
        queries = phrase_queries(texts, args.queries, args.seed)
        runtime = Runtime(load_config(cfg))
        try:
            svc = NotesService(runtime)
            meaning = runtime.environment(None).meaning  # on where installed (search_meaning "auto")
            on = meaning is not None
            if on:  # the default's results: keyword and meaning fused, every vector there
                meaning.wait_idle(1800)
            svc.search_notes(CALLER, "warm up the index")
            rows = []
            for query, truth in queries.items():
                result = svc.search_notes(CALLER, query, limit=TOP)
                samples = []
                for _ in range(args.repeat):
                    started = time.perf_counter()
                    svc.search_notes(CALLER, query, limit=TOP)
                    samples.append((time.perf_counter() - started) * 1000)
                hits = [h.path for h in result.hits]
                quoted = [h.path for h in svc.search_notes(CALLER, f'"{query}"', limit=TOP).hits]
                rows.append(
                    {
                        "query": query,
                        "truth": len(truth),
                        "recall": recall_at(hits, truth),
                        "recall_quoted": recall_at(quoted, truth),
                        "matched": getattr(result, "matched", None),
                        "p50_ms": statistics.median(samples),
                    }
                )
        finally:
            runtime.close()
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return {"notes": notes, "seed": args.seed, "meaning": on, "rows": rows}


def render(report: dict) -> str:
    rows = report["rows"]
    lines = [
        f"{report['notes']} notes, seed {report['seed']}, {len(rows)} two-word phrase queries, "
        f"search by meaning {'on' if report.get('meaning') else 'off'}",
        "",
        "| query | notes with the phrase | recall@10 | recall@10 quoted | matched | p50 ms |",
        "| --- | ---: | ---: | ---: | --- | ---: |",
    ]
    for r in rows:
        lines.append(
            f"| {r['query']} | {r['truth']} | {r['recall']:.2f} | {r['recall_quoted']:.2f} | {r['matched'] or '-'} "
            f"| {r['p50_ms']:.2f} |"
        )
    if rows:
        mean = statistics.mean(r["recall"] for r in rows)
        mean_q = statistics.mean(r["recall_quoted"] for r in rows)
        none = sum(1 for r in rows if r["recall"] == 0)
        p50 = statistics.median(r["p50_ms"] for r in rows)
        lines += [
            "",
            f"mean recall@10 {mean:.2f} (quoted {mean_q:.2f}); queries with none of their notes in the top 10: "
            f"{none} of {len(rows)}; median of the p50s {p50:.2f} ms",
        ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notes", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--queries", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=20, help="timed runs of each query")
    parser.add_argument("--quick", action="store_true", help="1,000 notes")
    parser.add_argument("--json", type=Path, help="write the figures here as JSON")
    args = parser.parse_args(argv)
    report = run(args)
    print(render(report))
    if args.json:
        args.json.write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
